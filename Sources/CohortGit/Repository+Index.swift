import CGit2
import CohortIdentity
import Foundation

extension Repository {
    /// Stages every change in the working directory, except what `.gitignore` ignores: new and changed
    /// files unless `skipNew` says so, changes and deletions of tracked files unless `skipTracked` says
    /// so. Writes the index and returns its tree.
    public func stageAll(skippingNew skipNew: @escaping (String) -> Bool, skippingTracked skipTracked: @escaping (String) -> Bool) throws -> ObjectID {
        let index = try freshIndex()
        defer { git_index_free(index) }
        let newFilter = PathFilter(skipNew)
        let trackedFilter = PathFilter(skipTracked)
        let callback: git_index_matched_path_cb = { path, _, payload in
            guard let path, let payload else { return 0 }
            let filter = Unmanaged<PathFilter>.fromOpaque(payload).takeUnretainedValue()
            return filter.skip(String(cString: path)) ? 1 : 0
        }
        try withExtendedLifetime((newFilter, trackedFilter)) {
            try check(git_index_update_all(index, nil, callback, Unmanaged.passUnretained(trackedFilter).toOpaque()), "cannot stage changes")
            try check(git_index_add_all(index, nil, GIT_INDEX_ADD_DEFAULT.rawValue, callback, Unmanaged.passUnretained(newFilter).toOpaque()),
                      "cannot stage new files")
        }
        try check(git_index_write(index), "cannot write the index")
        var oid = git_oid()
        try check(git_index_write_tree(&oid, index), "cannot write the staged tree")
        return ObjectID(oid)
    }

    /// Makes the index entries under `paths` match `commit` (as `git reset COMMIT -- PATHS`), leaving
    /// the rest of the index as it was.
    public func resetIndex(_ paths: [String], to commit: ObjectID) throws {
        git_index_free(try freshIndex())
        var object: OpaquePointer?
        var oid = commit.raw
        try check(git_object_lookup(&object, pointer, &oid, GIT_OBJECT_COMMIT), "cannot read commit \(commit.hex)")
        defer { git_object_free(object) }
        var cStrings = paths.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        try cStrings.withUnsafeMutableBufferPointer { buffer in
            var array = git_strarray(strings: buffer.baseAddress, count: buffer.count)
            try check(git_reset_default(pointer, object, &array), "cannot update the index for \(paths.joined(separator: ", "))")
        }
    }

    /// Makes the whole index match `tree`.
    public func resetIndex(to tree: ObjectID) throws {
        let index = try freshIndex()
        defer { git_index_free(index) }
        try withTree(tree) { try check(git_index_read_tree(index, $0), "cannot read tree \(tree.hex) into the index") }
        try check(git_index_write(index), "cannot write the index")
    }
}

extension Repository {
    /// The repository's index, re-read from disk if someone (the git CLI, say) changed it since.
    func freshIndex() throws -> OpaquePointer? {
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        let result = git_index_read(index, 0)
        if result < 0 { git_index_free(index) }
        try check(result, "cannot read the index")
        return index
    }
}

/// Carries a Swift predicate through libgit2's C callback.
private final class PathFilter {
    let skip: (String) -> Bool
    init(_ skip: @escaping (String) -> Bool) { self.skip = skip }
}
