import Foundation

/// A JSON document read strictly (RFC 8259, UTF-8, an optional UTF-8 byte order mark): for the
/// envelopes and notices verification opens by the thousand, where Foundation's decoder cost more than
/// checking their signatures. It reads what `JSONDecoder` reads, with one refusal more where signed
/// bytes need it: an object that names a key twice (`JSONDecoder` keeps the first value, Python's
/// `json` and most others the last, so two readers would see two notices). UTF-16 and UTF-32 files,
/// which `JSONDecoder` also detects, are refused; Cohort never writes them.
enum JSONValue: Equatable {
    case string(String)
    /// The number's text, as written (checked against JSON's grammar).
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object(JSONObject)

    /// `JSONDecoder`'s own limit.
    static let maxDepth = 512

    /// Parses a whole document; the reason is one short phrase.
    static func parse(_ data: Data) throws(JSONFailure) -> JSONValue {
        let result = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Result<JSONValue, JSONFailure> in
            var reader = JSONBytesReader(bytes: bytes)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
            return Result { () throws(JSONFailure) -> JSONValue in
                let value = try reader.value(depth: 0)
                reader.skipSpace()
                guard reader.position == bytes.count else { throw JSONFailure("trailing bytes after the JSON value") }
                return value
            }
        }
        return try result.get()
    }

    /// The value as an object, or a failure naming `field`.
    func object(_ field: String) throws(JSONFailure) -> JSONObject {
        guard case .object(let members) = self else { throw JSONFailure("'\(field)' is not an object") }
        return members
    }
}

/// Why a JSON document was refused.
struct JSONFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension JSONObject {
    func string(_ key: String) throws(JSONFailure) -> String {
        guard case .string(let text) = try field(key) else { throw JSONFailure("wrong type at '\(key)'") }
        return text
    }

    /// An integer, as `JSONDecoder` reads one into `Int`: digits, or a number with a fraction or
    /// exponent whose value is a whole number that `Int` holds exactly (`1.0`, `1e0`).
    func integer(_ key: String) throws(JSONFailure) -> Int {
        guard case .number(let text) = try field(key) else { throw JSONFailure("wrong type at '\(key)'") }
        if let value = Int(text) { return value }
        guard let double = Double(text), double.rounded() == double, abs(double) < 9.007_199_254_740_992e15, let value = Int(exactly: double) else {
            throw JSONFailure("bad value at '\(key)'")
        }
        return value
    }

    /// `true` or `false`, nothing else (as `JSONDecoder` reads `Bool`).
    func bool(_ key: String) throws(JSONFailure) -> Bool {
        guard case .bool(let value) = try field(key) else { throw JSONFailure("wrong type at '\(key)'") }
        return value
    }

    /// A field `Codable` reads with `decodeIfPresent`: absent or `null` is nil, any other type fails.
    func optionalString(_ key: String) throws(JSONFailure) -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard case .string(let text) = value else { throw JSONFailure("wrong type at '\(key)'") }
        return text
    }

    /// As `optionalString`, for an integer.
    func optionalInteger(_ key: String) throws(JSONFailure) -> Int? {
        guard let value = self[key], value != .null else { return nil }
        return try integer(key)
    }

    /// A string that must be one of `T`'s raw values.
    func value<T: RawRepresentable>(_ key: String, as type: T.Type) throws(JSONFailure) -> T where T.RawValue == String {
        guard let value = T(rawValue: try string(key)) else { throw JSONFailure("bad value at '\(key)'") }
        return value
    }

    /// An array whose items are all objects.
    func objects(_ key: String) throws(JSONFailure) -> [JSONObject] {
        var objects: [JSONObject] = []
        for item in try array(key) { objects.append(try item.object(key)) }
        return objects
    }

    func array(_ key: String) throws(JSONFailure) -> [JSONValue] {
        guard case .array(let items) = try field(key) else { throw JSONFailure("wrong type at '\(key)'") }
        return items
    }

    func object(_ key: String) throws(JSONFailure) -> JSONObject {
        try field(key).object(key)
    }

    /// The value of `key`; a missing field fails as `JSONDecoder` reports it.
    private func field(_ key: String) throws(JSONFailure) -> JSONValue {
        guard let value = self[key] else { throw JSONFailure("missing field '\(key)'") }
        return value
    }
}

private struct JSONBytesReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func skipSpace() {
        while position < bytes.count {
            let byte = bytes[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D else { return }
            position += 1
        }
    }

    mutating func value(depth: Int) throws(JSONFailure) -> JSONValue {
        guard depth < JSONValue.maxDepth else { throw JSONFailure("nested deeper than \(JSONValue.maxDepth) levels") }
        skipSpace()
        guard position < bytes.count else { throw JSONFailure("not JSON") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func object(depth: Int) throws(JSONFailure) -> JSONValue {
        position += 1
        var members = JSONObject()
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw JSONFailure("not JSON") }
            let key = try string()
            skipSpace()
            try expect(UInt8(ascii: ":"))
            let value = try value(depth: depth + 1)
            guard members.add(key, value) else { throw JSONFailure("field '\(key.prefix(40))' appears twice") }
            skipSpace()
            guard position < bytes.count else { throw JSONFailure("not JSON") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            try expect(UInt8(ascii: "}"))
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONFailure) -> JSONValue {
        position += 1
        var items: [JSONValue] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard position < bytes.count else { throw JSONFailure("not JSON") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            try expect(UInt8(ascii: "]"))
            return .array(items)
        }
    }

    private mutating func expect(_ byte: UInt8) throws(JSONFailure) {
        guard position < bytes.count, bytes[position] == byte else { throw JSONFailure("not JSON") }
        position += 1
    }

    private mutating func literal(_ word: StaticString) throws(JSONFailure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]).elementsEqual(UnsafeRawBufferPointer(start: word.utf8Start, count: count))
        else { throw JSONFailure("not JSON") }
        position += count
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(JSONFailure) -> String {
        let start = position
        func digits(_ reader: inout JSONBytesReader) -> Int {
            let from = reader.position
            while reader.position < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.position]) { reader.position += 1 }
            return reader.position - from
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let first = position
        guard digits(&self) > 0, bytes[first] != UInt8(ascii: "0") || position - first == 1 else { throw JSONFailure("not JSON") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits(&self) > 0 else { throw JSONFailure("not JSON") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits(&self) > 0 else { throw JSONFailure("not JSON") }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    private mutating func string() throws(JSONFailure) -> String {
        position += 1
        let start = position
        // The common case: no escapes; the bytes are taken as they are once checked as UTF-8 (at
        // once when all are ASCII, as keys, ids, base64 and hex are).
        // Every byte is or-ed in here: a high bit left says the string is not all ASCII.
        var seen: UInt64 = 0
        // Eight bytes at a time while none is a quote, a backslash or a control character (each test
        // is exact about whether a word holds such a byte, not which), then byte by byte.
        while bytes.count - position >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            let quote = word ^ 0x2222_2222_2222_2222, backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
            let found = ((quote &- Self.ones) & ~quote) | ((backslash &- Self.ones) & ~backslash) | ((word &- Self.ones &* 0x20) & ~word)
            guard found & Self.highBits == 0 else { break }
            seen |= word
            position += 8
        }
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
            guard bytes[position] >= 0x20 else { throw JSONFailure("a control character inside a string") }
            seen |= UInt64(bytes[position])
            position += 1
        }
        guard position < bytes.count else { throw JSONFailure("not JSON") }
        if bytes[position] == UInt8(ascii: "\"") {
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
            let text = seen & Self.highBits == 0 ? String(decoding: raw, as: UTF8.self) : try Self.utf8(raw)
            position += 1
            return text
        }
        var scalars = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while true {
            guard position < bytes.count else { throw JSONFailure("not JSON") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scalars, as: UTF8.self) else { throw JSONFailure("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw JSONFailure("not JSON") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var value = try hex4()
                    if (0xD800...0xDBFF).contains(value) {
                        guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                            throw JSONFailure("a lone UTF-16 surrogate in a string")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw JSONFailure("a lone UTF-16 surrogate in a string") }
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(value) {
                        throw JSONFailure("a lone UTF-16 surrogate in a string")
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw JSONFailure("not JSON") }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw JSONFailure("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw JSONFailure("a control character inside a string") }
                scalars.append(byte)
            }
        }
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    private mutating func hex4() throws(JSONFailure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw JSONFailure("not JSON") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw JSONFailure("not JSON")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// The bytes as a string, refused unless they are valid UTF-8.
    private static func utf8(_ bytes: UnsafeRawBufferPointer) throws(JSONFailure) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw JSONFailure("a string that is not UTF-8") }
        return text
    }
}
