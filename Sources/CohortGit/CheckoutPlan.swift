import CGit2
import CohortBase
import Foundation

/// The folders and files of one tree as the first checkout of a clone writes them, every name kept as
/// the bytes the tree stores (never as a `String`, which would take two spellings of one character as
/// one name). Every name is checked against `GitPath`, whoever writes the files. A tree that only
/// libgit2's own checkout writes as git would is marked `forLibgit2`: an entry named twice or out of
/// git's order, a name that is not UTF-8, a mode stored in a form other than git's own, a submodule,
/// an attributes file, or a link whose target is empty, holds a NUL or is longer than a path may be.
struct CheckoutPlan {
    struct Folder {
        /// The folder it is in (-1 for the top of the working folder, which is folder 0).
        let parent: Int
        let name: [UInt8]
        let depth: Int
        /// Whether a file or link lies somewhere beneath it (git makes no folder for an empty tree).
        var holdsFiles = false
    }

    struct File {
        let folder: Int
        /// Slash-separated, from the top of the working folder, as the index names it.
        let path: [UInt8]
        let id: ObjectID
        let mode: UInt32

        /// The last part of the path.
        var name: ArraySlice<UInt8> {
            path[(path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0)...]
        }
    }

    /// Parents before their folders, depth first (folder 0 is the top).
    private(set) var folders = [Folder(parent: -1, name: [], depth: 0, holdsFiles: true)]
    /// In the order of a walk of the tree, which is the index's order.
    private(set) var files: [File] = []
    /// Why libgit2's checkout must write the tree instead, if it must.
    private(set) var forLibgit2: String?
    /// The longest link target written (Linux's PATH_MAX, with its NUL).
    static let maxLinkTarget = 4095

    /// The plan for tree `tree`; throws `E_NOT_PERMITTED` for a name git refuses to check out anywhere.
    init(_ repository: Repository, tree: ObjectID) throws {
        try visit(repository, tree: tree, folder: 0, prefix: [])
        for file in files {
            var folder = file.folder
            while folder > 0, !folders[folder].holdsFiles {
                folders[folder].holdsFiles = true
                folder = folders[folder].parent
            }
        }
    }

    var hasLinks: Bool { files.contains { $0.mode == 0o120000 } }

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

    /// The path of folder `folder`, slash-separated.
    func path(of folder: Int) -> [UInt8] {
        Array(chain(of: folder).joined(separator: [UInt8(ascii: "/")]))
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

    private mutating func leaveToLibgit2(_ reason: String) {
        if forLibgit2 == nil { forLibgit2 = reason }
    }

    private mutating func visit(_ repository: Repository, tree: ObjectID, folder: Int, prefix: [UInt8]) throws {
        let depth = folders[folder].depth + 1
        guard depth <= GitPath.maxDepth else {
            throw CohortError(.tooLarge, "folders are nested deeper than \(GitPath.maxDepth) levels at \(Self.shown(prefix))",
                              hint: "nothing was checked out; tell the collaboration's owner")
        }
        enum Item {
            case folder(ObjectID, name: [UInt8])
            case file(File)
        }
        var items: [Item] = []
        try repository.withTree(tree) { pointer in
            var previous: [UInt8]?
            var names: [[UInt8]] = []
            var seen: Set<Name>?
            for index in 0..<git_tree_entrycount(pointer) {
                guard let entry = git_tree_entry_byindex(pointer, index), let raw = git_tree_entry_name(entry),
                      let oid = git_tree_entry_id(entry) else { throw CohortError(.git, "cannot read tree \(tree.hex)", hint: "clone again") }
                let name = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
                let mode = git_tree_entry_filemode(entry).rawValue
                try check(name, mode: mode, path: prefix + name)
                // Modes as git writes them, names strictly in git's order (a folder sorts as if its
                // name ended in '/') and no name twice, as a file and a folder either (which need not
                // be neighbours: `a`, `a-b`, `a/`): git's fsck refuses such trees as well.
                if git_tree_entry_filemode_raw(entry).rawValue != mode { leaveToLibgit2("a mode stored otherwise than git writes it") }
                let sortKey = mode == 0o040000 ? name + [UInt8(ascii: "/")] : name
                if let previous, !previous.lexicographicallyPrecedes(sortKey) { leaveToLibgit2("names out of git's order") }
                // In that order a name comes twice only as a file before a folder, and every name
                // between them starts with it: the names seen so far are looked through only then.
                if mode == 0o040000, let previous, previous.starts(with: name) {
                    if seen == nil { seen = Set(names.map(Name.init)) }
                    if seen?.contains(Name(name)) == true { leaveToLibgit2("a name given twice") }
                }
                previous = sortKey
                names.append(name)
                seen?.insert(Name(name))
                switch mode {
                case 0o040000:
                    items.append(.folder(ObjectID(oid), name: name))
                case 0o100644, 0o100755, 0o120000:
                    items.append(.file(File(folder: folder, path: prefix + name, id: ObjectID(oid), mode: mode)))
                default:
                    leaveToLibgit2("a submodule")
                }
            }
        }
        // Files and subtrees in the tree's own order, so that the files come in the index's order and
        // each folder right after its parent's (depth first).
        for item in items {
            switch item {
            case .folder(let id, let name):
                folders.append(Folder(parent: folder, name: name, depth: depth))
                try visit(repository, tree: id, folder: folders.count - 1, prefix: prefix + name + [UInt8(ascii: "/")])
            case .file(let file):
                if file.mode == 0o120000 {
                    let target = try repository.withBlobContent(file.id) { Array($0.prefix(Self.maxLinkTarget + 1)) }
                    if target.isEmpty || target.contains(0) || target.count > Self.maxLinkTarget { leaveToLibgit2("a link git writes otherwise") }
                }
                files.append(file)
            }
        }
    }

    /// Throws for a name git refuses; leaves to libgit2 a name only it writes as git would (not UTF-8,
    /// an attributes file).
    private mutating func check(_ name: [UInt8], mode: UInt32, path: [UInt8]) throws {
        if GitPath.isPlain(name) { return }
        // A name that is not UTF-8 is checked with its bad bytes replaced: '/', '\\', NUL, `..` and
        // every spelling of `.git` are ASCII, and survive.
        let valid = String(validating: name, as: UTF8.self)
        if valid == nil { leaveToLibgit2("a name that is not UTF-8") }
        let text = valid ?? String(decoding: name, as: UTF8.self)
        if let reason = GitPath.refusal(component: text, mode: mode) {
            throw CohortError(.notPermitted, "the path '\(Self.shown(path))' \(reason)", hint: "nothing was checked out; tell the collaboration's owner")
        }
        if text.lowercased() == ".gitattributes" { leaveToLibgit2("an attributes file") }
    }
}
