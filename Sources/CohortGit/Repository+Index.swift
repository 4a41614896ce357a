import CGit2
import CGit2Shim
import CohortIdentity
import Foundation

extension Repository {
    /// Stages every change in the working directory, except what `.gitignore` ignores: new and changed
    /// files unless `skipNew` says so, changes and deletions of tracked files unless `skipTracked` says
    /// so. One pass over the files (a diff of the index against them, which also records the stat data
    /// of unchanged files so the next pass need not hash them). Writes the index and returns its tree.
    public func stageAll(skippingNew skipNew: (String) -> Bool, skippingTracked skipTracked: (String) -> Bool) throws -> ObjectID {
        let index = try freshIndex()
        defer { git_index_free(index) }
        var options = git_diff_options()
        try check(git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)), "diff options")
        options.flags = GIT_DIFF_UPDATE_INDEX.rawValue | GIT_DIFF_INCLUDE_UNTRACKED.rawValue | GIT_DIFF_RECURSE_UNTRACKED_DIRS.rawValue
            | GIT_DIFF_INCLUDE_TYPECHANGE.rawValue
        var diff: OpaquePointer?
        try check(git_diff_index_to_workdir(&diff, pointer, index, &options), "cannot compare the index with the files")
        defer { git_diff_free(diff) }
        for position in 0..<git_diff_num_deltas(diff) {
            guard let delta = git_diff_get_delta(diff, position)?.pointee else { continue }
            switch delta.status {
            case GIT_DELTA_UNTRACKED:
                guard let raw = delta.new_file.path else { continue }
                let path = String(cString: raw)
                // A folder reported whole (a nested repository) is not Cohort's to take in.
                if !path.hasSuffix("/"), !skipNew(path) { try check(git_index_add_bypath(index, raw), "cannot stage \(path)") }
            case GIT_DELTA_MODIFIED, GIT_DELTA_TYPECHANGE:
                guard let raw = delta.new_file.path else { continue }
                let path = String(cString: raw)
                if !skipTracked(path) { try check(git_index_add_bypath(index, raw), "cannot stage \(path)") }
            case GIT_DELTA_DELETED:
                guard let raw = delta.old_file.path else { continue }
                let path = String(cString: raw)
                if !skipTracked(path) { try check(git_index_remove_bypath(index, raw), "cannot stage the deletion of \(path)") }
            default:
                continue
            }
        }
        // The tree first: writing it fills the index's tree cache, and the index written after it
        // keeps the cache, so the next run reuses every unchanged folder's tree instead of building
        // all of them again.
        var oid = git_oid()
        try check(GitRuntime.trustingIndexEntries { git_index_write_tree(&oid, index) }, "cannot write the staged tree")
        try check(git_index_write(index), "cannot write the index")
        return ObjectID(oid)
    }

    /// Stages the files at `paths` as they are in the working directory (with their stat data).
    public func stage(_ paths: [String]) throws {
        let index = try freshIndex()
        defer { git_index_free(index) }
        for path in paths {
            try check(git_index_add_bypath(index, path), "cannot stage \(path)")
        }
        try check(git_index_write(index), "cannot write the index")
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

    /// Makes the whole index match `tree`, except paths git refuses to hold in an index (`.GIT/config`,
    /// `a/.git/x`: histories from before the gate refused them can carry them): those are left out
    /// and returned, so that one odd path never stops the rest.
    @discardableResult
    public func resetIndex(to tree: ObjectID) throws -> [String] {
        let index = try freshIndex()
        defer { git_index_free(index) }
        var refused: [String] = []
        let read = try withTree(tree) { git_index_read_tree(index, $0) }
        if read < 0 {
            // One bad path fails the whole read: add the entries one by one instead.
            try check(git_index_clear(index), "cannot clear the index")
            for entry in try blobEntries(ofTree: tree) {
                var raw = git_index_entry()
                raw.mode = entry.mode
                raw.id = entry.id.raw
                let added = entry.path.withCString { path in
                    raw.path = path
                    return git_index_add(index, &raw)
                }
                if added < 0 { refused.append(entry.path) }
            }
        }
        try check(git_index_write(index), "cannot write the index")
        return refused
    }

    /// Every file, link and submodule entry of `tree` with its full path, in tree order.
    public func blobEntries(ofTree tree: ObjectID, prefix: String = "", depth: Int = 1) throws -> [IndexEntry] {
        guard depth <= 64 else { throw CohortError(.malformed, "tree \(tree.hex) is nested deeper than 64 folders") }
        var found: [IndexEntry] = []
        for entry in try entries(ofTree: tree) {
            let path = prefix + entry.name
            if entry.isTree {
                found += try blobEntries(ofTree: entry.id, prefix: path + "/", depth: depth + 1)
            } else {
                found.append(IndexEntry(path: path, id: entry.id, mode: entry.mode))
            }
        }
        return found
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
