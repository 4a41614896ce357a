import CGit2
import CohortBase
import Foundation

/// One entry of a git tree.
public struct TreeEntry: Hashable, Sendable {
    public let name: String
    public let id: ObjectID
    /// The git file mode (0o100644, 0o100755, 0o40000, 0o120000, 0o160000).
    public let mode: UInt32

    public var isTree: Bool { mode == 0o040000 }
    public var isBlob: Bool { mode == 0o100644 || mode == 0o100755 }
    /// A plain, non-executable file: the only kind Cohort writes under `.cohort/`.
    public var isPlainFile: Bool { mode == 0o100644 }
}

extension Repository {
    /// Writes `data` as a blob.
    public func writeBlob(_ data: Data) throws -> ObjectID {
        var oid = git_oid()
        try data.withUnsafeBytes { raw in
            try check(git_blob_create_from_buffer(&oid, pointer, raw.baseAddress, raw.count), "cannot write a blob")
        }
        return ObjectID(oid)
    }

    /// The size and type of object `id`, read from its header without inflating it.
    public func objectHeader(_ id: ObjectID) throws -> (size: Int, type: git_object_t) {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, pointer), "cannot open the object database")
        defer { git_odb_free(odb) }
        var size = 0
        var type = GIT_OBJECT_INVALID
        var oid = id.raw
        try check(git_odb_read_header(&size, &type, odb, &oid), "cannot read object \(id.hex)")
        return (size, type)
    }

    /// The raw content of object `id` (any type), refused before it is inflated if larger than `maxBytes`.
    public func rawObject(_ id: ObjectID, maxBytes: Int) throws -> Data {
        let size = try objectHeader(id).size
        guard size <= maxBytes else {
            throw CohortError(.tooLarge, "object \(id.hex) is \(size) bytes, more than the \(maxBytes) allowed")
        }
        return try rawObject(id)
    }

    /// The raw content of object `id`, whose size the caller has checked.
    func rawObject(_ id: ObjectID) throws -> Data {
        try withObject(id) { _, bytes in Data(bytes) }
    }

    /// Runs `body` with the type and content of object `id` where libgit2 read it, not copied.
    private func withObject<T>(_ id: ObjectID, _ body: (git_object_t, UnsafeRawBufferPointer) throws -> T) throws -> T {
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, pointer), "cannot open the object database")
        defer { git_odb_free(odb) }
        var object: OpaquePointer?
        var oid = id.raw
        try check(git_odb_read(&object, odb, &oid), "cannot read object \(id.hex)")
        defer { git_odb_object_free(object) }
        return try body(git_odb_object_type(object), UnsafeRawBufferPointer(start: git_odb_object_data(object), count: git_odb_object_size(object)))
    }

    /// The content of blob `id`, refused (before it is inflated) if larger than `maxBytes`.
    public func blob(_ id: ObjectID, maxBytes: Int) throws -> Data {
        let header = try objectHeader(id)
        guard header.type == GIT_OBJECT_BLOB else {
            throw CohortError(.malformed, "object \(id.hex) is not a file")
        }
        guard header.size <= maxBytes else {
            throw CohortError(.tooLarge, "blob \(id.hex) is \(header.size) bytes, more than the \(maxBytes) allowed")
        }
        return try withBlobContent(id) { Data($0) }
    }

    /// Runs `body` with the content of blob `id` where libgit2 read it, not copied (for a checkout).
    func withBlobContent<T>(_ id: ObjectID, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try withObject(id) { type, bytes in
            guard type == GIT_OBJECT_BLOB else {
                throw CohortError(.malformed, "object \(id.hex) is not a file", hint: "the tree that names it is damaged; tell the collaboration's owner")
            }
            return try body(bytes)
        }
    }

    /// The entry at `path` (slash-separated) inside tree `tree`, or nil.
    public func entry(at path: String, inTree tree: ObjectID) throws -> TreeEntry? {
        try withTree(tree) { treePointer in
            var entry: OpaquePointer?
            let result = git_tree_entry_bypath(&entry, treePointer, path)
            if result == GIT_ENOTFOUND.rawValue { return nil }
            try check(result, "cannot read \(path) in tree \(tree.hex)")
            defer { git_tree_entry_free(entry) }
            return Self.treeEntry(entry)
        }
    }

    /// The entries of tree `tree`, in git's order.
    public func entries(ofTree tree: ObjectID, memo: TreeMemo? = nil) throws -> [TreeEntry] {
        try withTree(tree, memo: memo) { parsed in
            (0..<(parsed?.count ?? 0)).compactMap { index in
                parsed.map { TreeEntry(name: $0[index].name, id: $0[index].id, mode: $0[index].filemode) }
            }
        }
    }

    /// The tree of commit `commit`.
    public func tree(ofCommit commit: ObjectID) throws -> ObjectID {
        try withCommit(commit) { ObjectID(git_commit_tree_id($0)) }
    }

    func withTree<T>(_ id: ObjectID, _ body: (OpaquePointer?) throws -> T) throws -> T {
        var tree: OpaquePointer?
        var oid = id.raw
        try check(git_tree_lookup(&tree, pointer, &oid), "cannot read tree \(id.hex)")
        defer { git_tree_free(tree) }
        return try body(tree)
    }

    private static func treeEntry(_ entry: OpaquePointer?) -> TreeEntry? {
        guard let entry, let name = git_tree_entry_name(entry), let oid = git_tree_entry_id(entry) else { return nil }
        return TreeEntry(name: String(cString: name), id: ObjectID(oid), mode: git_tree_entry_filemode(entry).rawValue)
    }

    /// Builds a tree from `base` (or empty) with blobs put at slash-separated paths (folders created
    /// as needed) and paths removed (folders left empty disappear). Used to write `.cohort/` files
    /// without touching the working directory.
    public func tree(from base: ObjectID?, putting files: [String: ObjectID], removing removals: Set<String> = [],
                     mode: UInt32 = 0o100644) throws -> ObjectID {
        var edits: [String: IndexEntry?] = [:]
        for path in removals { edits[path] = .some(nil) }
        for (path, blob) in files { edits[path] = IndexEntry(path: path, id: blob, mode: mode) }
        return try tree(from: base, setting: edits)
    }

    /// Builds a tree from `base` (or empty) with each path set to its entry's blob and mode, or
    /// removed where the entry is nil; folders are created as needed and disappear when left empty.
    /// Entries of `base` that no edit touches are kept as they are, whatever their names.
    public func tree(from base: ObjectID?, setting edits: [String: IndexEntry?]) throws -> ObjectID {
        var byFolder: [String: [String: IndexEntry?]] = [:]
        var direct: [String: IndexEntry?] = [:]
        for (path, entry) in edits {
            if let slash = path.firstIndex(of: "/") {
                byFolder[String(path[..<slash]), default: [:]][String(path[path.index(after: slash)...])] = .some(entry)
            } else {
                direct[path] = .some(entry)
            }
        }
        var builder: OpaquePointer?
        if let base {
            try withTree(base) { try check(git_treebuilder_new(&builder, pointer, $0), "cannot start a tree") }
        } else {
            try check(git_treebuilder_new(&builder, pointer, nil), "cannot start a tree")
        }
        defer { git_treebuilder_free(builder) }
        func insert(_ name: String, _ id: ObjectID, mode: git_filemode_t) throws {
            var oid = id.raw
            try check(git_treebuilder_insert(nil, builder, name, &oid, mode), "cannot add \(name) to a tree")
        }
        func remove(_ name: String) throws {
            if git_treebuilder_get(builder, name) != nil {
                try check(git_treebuilder_remove(builder, name), "cannot remove \(name) from a tree")
            }
        }
        for (name, entry) in direct {
            if let entry {
                try insert(name, entry.id, mode: git_filemode_t(rawValue: entry.mode))
            } else {
                try remove(name)
            }
        }
        for (folder, inner) in byFolder {
            let existing = try base.flatMap { try entry(at: folder, inTree: $0) }.flatMap { $0.isTree ? $0.id : nil }
            let subtree = try tree(from: existing, setting: inner)
            if try withTree(subtree, { git_tree_entrycount($0) }) == 0 {
                try remove(folder)
            } else {
                try insert(folder, subtree, mode: GIT_FILEMODE_TREE)
            }
        }
        var oid = git_oid()
        try check(git_treebuilder_write(&oid, builder), "cannot write a tree")
        return ObjectID(oid)
    }
}

extension Repository {
    /// `tree` with its top-level entry `name` set to `entry` (or removed when nil).
    public func tree(_ tree: ObjectID, replacing name: String, with entry: TreeEntry?) throws -> ObjectID {
        var builder: OpaquePointer?
        try withTree(tree) { try check(git_treebuilder_new(&builder, pointer, $0), "cannot start a tree") }
        defer { git_treebuilder_free(builder) }
        if let entry {
            var oid = entry.id.raw
            try check(git_treebuilder_insert(nil, builder, name, &oid, git_filemode_t(rawValue: entry.mode)), "cannot set \(name)")
        } else if git_treebuilder_get(builder, name) != nil {
            try check(git_treebuilder_remove(builder, name), "cannot remove \(name)")
        }
        var oid = git_oid()
        try check(git_treebuilder_write(&oid, builder), "cannot write a tree")
        return ObjectID(oid)
    }

    /// Whether the object database holds `id`.
    public func contains(_ id: ObjectID) -> Bool {
        var odb: OpaquePointer?
        guard git_repository_odb(&odb, pointer) == 0 else { return false }
        defer { git_odb_free(odb) }
        var oid = id.raw
        return git_odb_exists(odb, &oid) == 1
    }
}
