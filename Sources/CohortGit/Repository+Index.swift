import CGit2
import CohortIdentity
import Foundation

extension Repository {
    /// Stages every change in the working directory (new, modified and deleted files), except paths
    /// for which `skip` returns true and paths `.gitignore` ignores; writes the index and returns its tree.
    public func stageAll(skipping skip: @escaping (String) -> Bool) throws -> ObjectID {
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        defer { git_index_free(index) }
        let filter = PathFilter(skip)
        let payload = Unmanaged.passUnretained(filter).toOpaque()
        let callback: git_index_matched_path_cb = { path, _, payload in
            guard let path, let payload else { return 0 }
            let filter = Unmanaged<PathFilter>.fromOpaque(payload).takeUnretainedValue()
            return filter.skip(String(cString: path)) ? 1 : 0
        }
        try withExtendedLifetime(filter) {
            try check(git_index_add_all(index, nil, GIT_INDEX_ADD_DEFAULT.rawValue, callback, payload), "cannot stage changes")
            try check(git_index_update_all(index, nil, callback, payload), "cannot stage deletions")
        }
        try check(git_index_write(index), "cannot write the index")
        var oid = git_oid()
        try check(git_index_write_tree(&oid, index), "cannot write the staged tree")
        return ObjectID(oid)
    }

    /// Makes the index match `tree` (after a commit written without the index), so the working
    /// directory shows no changes for what the commit holds.
    public func resetIndex(to tree: ObjectID) throws {
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        defer { git_index_free(index) }
        try withTree(tree) { try check(git_index_read_tree(index, $0), "cannot read tree \(tree.hex) into the index") }
        try check(git_index_write(index), "cannot write the index")
    }
}

/// Carries a Swift predicate through libgit2's C callback.
private final class PathFilter {
    let skip: (String) -> Bool
    init(_ skip: @escaping (String) -> Bool) { self.skip = skip }
}
