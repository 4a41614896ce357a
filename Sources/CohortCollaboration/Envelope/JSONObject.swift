/// A JSON object's members in the order read. Objects in signed files have a handful of keys, which
/// a look along the list finds sooner than hashing them would; a key named twice is refused as the
/// object is read (keys compare as `String`s do, so as a dictionary's keys would).
struct JSONObject: Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private(set) var members: [(key: String, value: JSONValue)] = []
    /// The keys, once an object has more than `listedKeys` of them: an object built to be large is
    /// still read in linear time.
    private var keys: Set<String>?
    private static let listedKeys = 16

    init() {}

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { _ = add(key, value) }
    }

    var count: Int { members.count }

    subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// Adds a member; false (and nothing added) when `key` is already there.
    mutating func add(_ key: String, _ value: JSONValue) -> Bool {
        if members.count >= Self.listedKeys {
            if keys == nil { keys = Set(members.map(\.key)) }
            guard keys?.insert(key).inserted == true else { return false }
        } else if members.contains(where: { $0.key == key }) {
            return false
        }
        members.append((key, value))
        return true
    }

    func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Equal as dictionaries are: the same keys with equal values, in any order.
    static func == (left: JSONObject, right: JSONObject) -> Bool {
        left.count == right.count && left.members.allSatisfy { member in right[member.key] == member.value }
    }
}
