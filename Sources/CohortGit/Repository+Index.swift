import CGit2
import CGit2Shim
import CohortBase
import Foundation

extension Repository {
    /// Stages every change in the working directory, except what `.gitignore` ignores: new and changed
    /// files unless `skipNew` says so, changes and deletions of tracked files unless `skipTracked` says
    /// so. One pass over the files, which also records the stat data of unchanged files so the next
    /// pass need not hash them: `git status` where git is installed (its scan is several times faster
    /// than libgit2's), else a diff of the index against the files. Writes the index when something
    /// changed (unless `writeIndex` is false: a commit about to write it again says so, and the
    /// repository's index keeps what was staged until then) and returns its tree.
    public func stageAll(skippingNew skipNew: (String) -> Bool, skippingTracked skipTracked: (String) -> Bool,
                         writeIndex: Bool = true, git: String? = GitCommand.executable) throws -> ObjectID {
        let scanned = git.flatMap { try? scanWithGit($0) }
        if let scanned, scanned.clean, let head = scanned.head {
            return try tree(ofCommit: head)
        }
        let index = try freshIndex()
        defer { git_index_free(index) }
        let changes = try scanned?.changes ?? scanWithLibgit2(index)
        for change in changes {
            // A folder reported whole (a nested repository) is not Cohort's to take in.
            guard change.path.last != UInt8(ascii: "/") else { continue }
            let path = String(decoding: change.path, as: UTF8.self)
            let raw = change.path.map { CChar(bitPattern: $0) } + [0]
            // What is there now decides: a pipe, socket or device in a file's place is the person's,
            // not content (reading a pipe would wait for ever) and no deletion either, and a file back
            // in its place is not deleted. The index keeps what it had.
            let found = fileType(change.path)
            guard change.kind == .deleted ? (found == nil || found == S_IFDIR) : (found == S_IFREG || found == S_IFLNK) else { continue }
            switch change.kind {
            case .untracked where !skipNew(path):
                try check(git_index_add_bypath(index, raw), "cannot stage \(path)")
            case .modified where !skipTracked(path):
                try check(git_index_add_bypath(index, raw), "cannot stage \(path)")
            case .deleted where !skipTracked(path):
                try check(git_index_remove_bypath(index, raw), "cannot stage the deletion of \(path)")
            default:
                continue
            }
        }
        // The tree first: writing it fills the index's tree cache, and the index written after it
        // keeps the cache, so the next run reuses every unchanged folder's tree instead of building
        // all of them again.
        var oid = git_oid()
        try check(GitRuntime.trustingIndexEntries { git_index_write_tree(&oid, index) }, "cannot write the staged tree")
        // libgit2's look at the files refreshes stat data in memory, which the index must keep; after
        // git's, an index with nothing staged is as it was.
        if scanned == nil || !changes.isEmpty {
            if writeIndex { try self.writeIndex(index) } else { indexUnwritten = true }
        }
        return ObjectID(oid)
    }

    /// The type (`S_IFREG`, `S_IFDIR` …) of what is at working-directory path `path` (its bytes,
    /// whatever their encoding), not following a link; nil when nothing is there.
    private func fileType(_ path: [UInt8]) -> mode_t? {
        guard let directory = workingDirectory else { return nil }
        let full = (Array(directory.path.utf8) + [UInt8(ascii: "/")] + path + [0]).map { CChar(bitPattern: $0) }
        var status = stat()
        guard lstat(full, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }

    /// Stages the files at `paths` as they are in the working directory (with their stat data).
    public func stage(_ paths: [String]) throws {
        let index = try freshIndex()
        defer { git_index_free(index) }
        for path in paths {
            try check(git_index_add_bypath(index, path), "cannot stage \(path)")
        }
        try writeIndex(index)
    }

    /// Records files Cohort has just written (mode 0644) with `written` contents in the index, with the
    /// stat data the files have now and without reading them back. A file that is no longer there is left out.
    public func stage(written: [String: Data]) throws {
        guard let directory = workingDirectory, !written.isEmpty else { return }
        let index = try freshIndex()
        defer { git_index_free(index) }
        for (path, data) in written.sorted(by: { $0.key < $1.key }) {
            var status = stat()
            guard lstat(directory.appendingPathComponent(path).path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG,
                  status.st_size == data.count else { continue }
            var oid = git_oid()
            try data.withUnsafeBytes { bytes in
                try check(git_odb_hash(&oid, bytes.baseAddress, bytes.count, GIT_OBJECT_BLOB), "cannot hash \(path)")
            }
            var entry = git_index_entry()
            entry.stamp(with: status)
            entry.mode = 0o100644
            entry.id = oid
            let added = path.withCString { raw in
                entry.path = raw
                return git_index_add(index, &entry)
            }
            try check(added, "cannot stage \(path)")
        }
        // The folders' trees are in the database already (the commit holds them): writing them again
        // only refreshes the index's tree cache, so that the next sync need not build them.
        var tree = git_oid()
        try check(GitRuntime.trustingIndexEntries { git_index_write_tree(&tree, index) }, "cannot write the staged tree")
        try writeIndex(index)
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
        try flushObjects()
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
        try writeIndex(index)
        return refused
    }

    /// Writes what `stageAll(writeIndex: false)` staged, as it is in memory (not read again from disk),
    /// for when no commit follows to write it.
    public func writeStagedIndex() throws {
        guard indexUnwritten else { return }
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        defer { git_index_free(index) }
        try writeIndex(index)
    }

    /// Writes `index` to disk, after the objects it may name (see `batchingObjects`).
    func writeIndex(_ index: OpaquePointer?) throws {
        try flushObjects()
        try check(git_index_write(index), "cannot write the index")
        indexUnwritten = false
    }

    /// Every file, link and submodule entry of `tree` with its full path, in tree order.
    public func blobEntries(ofTree tree: ObjectID, prefix: String = "", depth: Int = 1) throws -> [IndexEntry] {
        guard depth <= GitPath.maxDepth else {
            throw CohortError(.malformed, "tree \(tree.hex) is nested deeper than \(GitPath.maxDepth) folders")
        }
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

extension git_index_entry {
    /// Takes the stat data git compares before reading a file (times, device, inode, owner, size)
    /// from `info`, cut to the index's 32 bits as git and libgit2 cut them.
    mutating func stamp(with info: stat) {
        ctime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_ctim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_ctim.tv_nsec))
        mtime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_mtim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_mtim.tv_nsec))
        dev = UInt32(truncatingIfNeeded: info.st_dev)
        ino = UInt32(truncatingIfNeeded: info.st_ino)
        uid = info.st_uid
        gid = info.st_gid
        file_size = UInt32(truncatingIfNeeded: info.st_size)
    }
}
