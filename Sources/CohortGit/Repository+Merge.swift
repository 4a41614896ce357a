import CGit2
import CohortBase
import Foundation

/// A path with its blob and mode, as an index holds it.
public struct IndexEntry: Hashable, Sendable {
    public let path: String
    public let id: ObjectID
    public let mode: UInt32

    public init(path: String, id: ObjectID, mode: UInt32) {
        self.path = path
        self.id = id
        self.mode = mode
    }
}

/// A path the three-way merge could not settle: what the ancestor, our side and their side hold
/// (nil where that side has nothing: added on one side, or deleted).
public struct MergeConflict: Hashable, Sendable {
    public let ancestor: IndexEntry?
    public let ours: IndexEntry?
    public let theirs: IndexEntry?
}

/// A file and a folder at one path after a merge: the file, and every entry beneath the folder.
public struct FolderClash: Sendable {
    public let file: IndexEntry
    public let beneath: [IndexEntry]

    /// The clashes among `entries` (path bytes → entry): each file that is also a folder on another
    /// entry's path.
    static func find(in entries: [[UInt8]: IndexEntry]) -> [FolderClash] {
        var beneath: [[UInt8]: [IndexEntry]] = [:]
        for (key, entry) in entries {
            var end = key.endIndex
            while let slash = key[..<end].lastIndex(of: UInt8(ascii: "/")) {
                end = slash
                let folder = Array(key[..<slash])
                if entries[folder] != nil { beneath[folder, default: []].append(entry) }
            }
        }
        return beneath.keys.sorted { $0.lexicographicallyPrecedes($1) }.compactMap { file in
            entries[file].map { FolderClash(file: $0, beneath: beneath[file]!.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }) }
        }
    }
}

extension Repository {
    /// The best common ancestor of two commits, or nil when they share none.
    public func mergeBase(_ one: ObjectID, _ other: ObjectID) throws -> ObjectID? {
        var base = git_oid()
        var a = one.raw
        var b = other.raw
        let result = git_merge_base(&base, pointer, &a, &b)
        if result == GIT_ENOTFOUND.rawValue { return nil }
        try check(result, "cannot find a common ancestor of \(one.hex) and \(other.hex)")
        return ObjectID(base)
    }

    /// Merges three trees in memory, renames detected and text merged where the two sides do not
    /// overlap (no conflict markers are ever written). Each remaining conflict is handed to `resolve`,
    /// whose entries take its place; `replacing` then sets (or, with nil, removes) whole paths.
    /// Where a file and a folder end up at one path (one side added `notes`, the other
    /// `notes/todo.md`), `settle` gets the file and everything beneath the folder and returns what
    /// takes their place, so that neither silently replaces the other. Returns the merged tree.
    public func mergeTrees(ancestor: ObjectID?, ours: ObjectID, theirs: ObjectID,
                           resolve: (MergeConflict) throws -> [IndexEntry],
                           replacing: [String: IndexEntry?] = [:],
                           settle: (FolderClash) throws -> [IndexEntry] = { [$0.file] + $0.beneath }) throws -> ObjectID {
        var options = git_merge_options()
        try check(git_merge_options_init(&options, UInt32(GIT_MERGE_OPTIONS_VERSION)), "merge options")
        options.flags = GIT_MERGE_FIND_RENAMES.rawValue
        options.file_favor = GIT_MERGE_FILE_FAVOR_NORMAL
        var index: OpaquePointer?
        func merge(from base: OpaquePointer?) throws {
            try withTree(ours) { ourTree in
                try withTree(theirs) { theirTree in
                    try check(git_merge_trees(&index, pointer, base, ourTree, theirTree, &options), "cannot merge")
                }
            }
        }
        if let ancestor { try withTree(ancestor) { try merge(from: $0) } } else { try merge(from: nil) }
        defer { git_index_free(index) }
        let conflicts = try Self.conflicts(of: index)
        for conflict in conflicts {
            for path in Set([conflict.ancestor?.path, conflict.ours?.path, conflict.theirs?.path].compactMap { $0 }) {
                _ = git_index_conflict_remove(index, path)
            }
        }
        // The merged entries, by the bytes of their paths (Swift strings would take two spellings of
        // one name, NFC and NFD, for the same key): adding a file where a folder is (or the reverse)
        // to a libgit2 index silently drops the other, so clashes are found and settled first.
        var original: [[UInt8]: IndexEntry] = [:]
        for position in 0..<git_index_entrycount(index) {
            if let entry = Self.entry(git_index_get_byindex(index, position)) { original[Array(entry.path.utf8)] = entry }
        }
        var resolutions: [IndexEntry] = []
        for conflict in conflicts { resolutions += try resolve(conflict) }
        var merged = original
        for entry in resolutions { merged[Array(entry.path.utf8)] = entry }
        for (path, entry) in replacing { merged[Array(path.utf8)] = entry }
        var clashes = FolderClash.find(in: merged)
        if clashes.isEmpty {
            for entry in resolutions { try Self.add(entry, to: index) }
            for (path, entry) in replacing {
                if let entry { try Self.add(entry, to: index) } else { _ = git_index_remove(index, path, 0) }
            }
        } else {
            for _ in 0..<16 where !clashes.isEmpty {
                for clash in clashes {
                    merged[Array(clash.file.path.utf8)] = nil
                    for entry in clash.beneath { merged[Array(entry.path.utf8)] = nil }
                    for entry in try settle(clash) { merged[Array(entry.path.utf8)] = entry }
                }
                clashes = FolderClash.find(in: merged)
            }
            guard clashes.isEmpty else {
                throw CohortError(.git, "cannot merge: \(clashes[0].file.path) is a file on one side and a folder on the other",
                                  hint: "rename or move one of them on this device, commit, and sync again")
            }
            // Only what changed is touched: entries that went or changed leave first, so that adding
            // the rest never meets a clash.
            for (key, entry) in original where merged[key] != entry {
                _ = git_index_remove(index, entry.path, 0)
            }
            for (key, entry) in merged.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where original[key] != entry {
                try Self.add(entry, to: index)
            }
        }
        var tree = git_oid()
        try check(git_index_write_tree_to(&tree, index, pointer), "cannot write the merged tree")
        return ObjectID(tree)
    }

    private static func conflicts(of index: OpaquePointer?) throws -> [MergeConflict] {
        var iterator: OpaquePointer?
        try check(git_index_conflict_iterator_new(&iterator, index), "cannot read the merge's conflicts")
        defer { git_index_conflict_iterator_free(iterator) }
        var found: [MergeConflict] = []
        var ancestor: UnsafePointer<git_index_entry>?
        var ours: UnsafePointer<git_index_entry>?
        var theirs: UnsafePointer<git_index_entry>?
        while git_index_conflict_next(&ancestor, &ours, &theirs, iterator) == 0 {
            found.append(MergeConflict(ancestor: entry(ancestor), ours: entry(ours), theirs: entry(theirs)))
        }
        return found
    }

    private static func entry(_ pointer: UnsafePointer<git_index_entry>?) -> IndexEntry? {
        guard let pointer, let path = pointer.pointee.path else { return nil }
        return IndexEntry(path: String(cString: path), id: ObjectID(pointer.pointee.id), mode: pointer.pointee.mode)
    }

    private static func add(_ entry: IndexEntry, to index: OpaquePointer?) throws {
        var raw = git_index_entry()
        raw.mode = entry.mode
        raw.id = entry.id.raw
        try entry.path.withCString { path in
            raw.path = path
            try check(git_index_add(index, &raw), "cannot add \(entry.path) to the merge")
        }
    }

    /// The blob id `data` would have.
    public func hashBlob(_ data: Data) throws -> ObjectID {
        var oid = git_oid()
        try data.withUnsafeBytes { raw in
            try check(git_odb_hash(&oid, raw.baseAddress, raw.count, GIT_OBJECT_BLOB), "cannot hash a blob")
        }
        return ObjectID(oid)
    }

    /// The blob id the file at `url` would have (nil when it is not a regular file).
    public func hashFile(at url: URL) -> ObjectID? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
        var oid = git_oid()
        guard git_odb_hashfile(&oid, url.path, GIT_OBJECT_BLOB) == 0 else { return nil }
        return ObjectID(oid)
    }
}
