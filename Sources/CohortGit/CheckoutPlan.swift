import CGit2
import CohortBase
import Foundation

/// The folders and files of one tree as the first checkout of a clone writes them, every name kept as
/// the bytes the tree stores (never as a `String`, which would take two spellings of one character as
/// one name). A tree that only libgit2's own checkout writes as git would gives no plan: an entry
/// named twice or out of git's order, a name that is not UTF-8, a mode stored in a form other than
/// git's own, a submodule, or an attributes file.
struct CheckoutPlan {
    struct Folder {
        /// The folder it is in (-1 for the top of the working folder, which is folder 0).
        let parent: Int
        let name: [UInt8]
        let depth: Int
    }

    struct File {
        let folder: Int
        let name: [UInt8]
        /// Slash-separated, from the top of the working folder, as the index names it.
        let path: [UInt8]
        let id: ObjectID
        let mode: UInt32
    }

    /// Parents before their folders (folder 0 is the top).
    private(set) var folders = [Folder(parent: -1, name: [], depth: 0)]
    /// In the order of a walk of the tree, which is the index's order.
    private(set) var files: [File] = []
    private(set) var hasLinks = false
    static let maxDepth = 64

    /// The plan for tree `tree`, or nil when libgit2's checkout must write it; throws `E_NOT_PERMITTED`
    /// for a name git refuses to check out anywhere.
    init?(_ repository: Repository, tree: ObjectID) throws {
        guard try visit(repository, tree: tree, folder: 0, prefix: []) else { return nil }
    }

    /// The names of `folder` and the folders above it, top first (the top itself left out).
    func chain(of folder: Int) -> [[UInt8]] {
        var names: [[UInt8]] = []
        var current = folder
        while current > 0 {
            names.append(folders[current].name)
            current = folders[current].parent
        }
        return names.reversed()
    }

    /// A name hashed as one run of bytes (an array of bytes hashes byte by byte).
    private struct Name: Hashable {
        let bytes: [UInt8]

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    static func shown(_ path: [UInt8]) -> String {
        GitPath.shown(String(decoding: path, as: UTF8.self))
    }

    private mutating func visit(_ repository: Repository, tree: ObjectID, folder: Int, prefix: [UInt8]) throws -> Bool {
        let depth = folders[folder].depth + 1
        guard depth <= Self.maxDepth else {
            throw CohortError(.tooLarge, "folders are nested deeper than \(Self.maxDepth) levels at \(Self.shown(prefix))",
                              hint: "nothing was checked out; tell the collaboration's owner")
        }
        enum Item {
            case folder(ObjectID, name: [UInt8])
            case file(File)
        }
        var items: [Item] = []
        let fitting = try repository.withTree(tree) { pointer -> Bool in
            var previous: [UInt8]?
            var names: [[UInt8]] = []
            var seen: Set<Name>?
            for index in 0..<git_tree_entrycount(pointer) {
                guard let entry = git_tree_entry_byindex(pointer, index), let raw = git_tree_entry_name(entry),
                      let oid = git_tree_entry_id(entry) else { return false }
                let name = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
                let mode = git_tree_entry_filemode(entry).rawValue
                // Modes as git writes them, names strictly in git's order (a folder sorts as if its
                // name ended in '/') and no name twice, as a file and a folder either (which need not
                // be neighbours: `a`, `a-b`, `a/`): git's fsck refuses such trees as well.
                guard git_tree_entry_filemode_raw(entry).rawValue == mode else { return false }
                let sortKey = mode == 0o040000 ? name + [UInt8(ascii: "/")] : name
                if let previous, !previous.lexicographicallyPrecedes(sortKey) { return false }
                // In that order a name comes twice only as a file before a folder, and every name
                // between them starts with it: the names seen so far are looked through only then.
                if mode == 0o040000, let previous, previous.starts(with: name) {
                    if seen == nil { seen = Set(names.map(Name.init)) }
                    if seen?.contains(Name(name)) == true { return false }
                }
                previous = sortKey
                names.append(name)
                seen?.insert(Name(name))
                guard try Self.check(name, mode: mode, path: prefix + name) else { return false }
                switch mode {
                case 0o040000:
                    items.append(.folder(ObjectID(oid), name: name))
                case 0o100644, 0o100755, 0o120000:
                    items.append(.file(File(folder: folder, name: name, path: prefix + name, id: ObjectID(oid), mode: mode)))
                    hasLinks = hasLinks || mode == 0o120000
                default:
                    return false
                }
            }
            return true
        }
        guard fitting else { return false }
        // Files and subtrees in the tree's own order, so that the files come in the index's order and
        // each folder right after its parent's (depth first).
        for item in items {
            switch item {
            case .folder(let id, let name):
                folders.append(Folder(parent: folder, name: name, depth: depth))
                guard try visit(repository, tree: id, folder: folders.count - 1, prefix: prefix + name + [UInt8(ascii: "/")]) else { return false }
            case .file(let file):
                files.append(file)
            }
        }
        return true
    }

    /// Whether a component may be written by this plan: true for a name git accepts everywhere, false
    /// for one only libgit2's checkout writes as git would (not UTF-8, an attributes file); throws
    /// for a name git refuses.
    private static func check(_ name: [UInt8], mode: UInt32, path: [UInt8]) throws -> Bool {
        if GitPath.isPlain(name) { return true }
        guard let text = String(validating: name, as: UTF8.self) else { return false }
        if let reason = GitPath.refusal(component: text, mode: mode) {
            throw CohortError(.notPermitted, "the path '\(shown(path))' \(reason)", hint: "nothing was checked out; tell the collaboration's owner")
        }
        return text.lowercased() != ".gitattributes"
    }
}
