import CGit2
import CGit2Shim
import CohortBase
import Foundation

/// The object database a batch writes to: an in-memory store in front of the repository's own
/// folders, and the database it replaced.
final class ObjectBatch {
    let database: OpaquePointer
    let memory: OpaquePointer
    let replaced: OpaquePointer

    init(database: OpaquePointer, memory: OpaquePointer, replaced: OpaquePointer) {
        self.database = database
        self.memory = memory
        self.replaced = replaced
    }

    deinit {
        git_odb_free(database)
        git_odb_free(replaced)
    }
}

private extension String {
    var withTrailingSlash: String { hasSuffix("/") ? self : self + "/" }
}

extension Repository {
    /// Runs `body` with every new object kept in memory and written out as one pack file, instead of
    /// one file per object: a sync of 100 edits creates some 400 objects, and creating that many small
    /// files is a large share of its time. The pack is written before anything on disk can name one
    /// of its objects (an index write, a reference move: see `flushObjects`) and when `body` ends, so
    /// a crash loses only objects nothing refers to.
    public func batchingObjects<T>(_ body: () throws -> T) throws -> T {
        // Inside a hook git names the object folders through its environment (the quarantine):
        // objects go where libgit2 puts them there.
        guard batch == nil, case .path = origin else { return try body() }
        var replaced: OpaquePointer?
        try check(git_repository_odb(&replaced, pointer), "cannot open the object database")
        guard let replaced else { throw CohortError(.git, "cannot open the object database: libgit2 returned nothing") }
        var objects = git_buf()
        defer { git_buf_dispose(&objects) }
        var database: OpaquePointer?
        var memory: OpaquePointer?
        guard git_repository_item_path(&objects, pointer, GIT_REPOSITORY_ITEM_OBJECTS) == 0, let path = objects.ptr,
              git_odb_open(&database, path) == 0, let database
        else {
            git_odb_free(replaced)
            throw gitFailure(-1, "cannot open the object database")
        }
        let packs = String(cString: path).withTrailingSlash + "pack"
        try? FileManager.default.createDirectory(atPath: packs, withIntermediateDirectories: true)
        guard cohort_batch_new(&memory, packs) == 0, let memory, git_odb_add_backend(database, memory, 999) == 0 else {
            git_odb_free(database)
            git_odb_free(replaced)
            throw gitFailure(-1, "cannot keep new objects in memory")
        }
        // Owned from here on: freed with the batch, also when the swap below fails.
        let made = ObjectBatch(database: database, memory: memory, replaced: replaced)
        try check(git_repository_set_odb(pointer, database), "cannot keep new objects in memory")
        batch = made
        defer {
            if let batch {
                _ = git_repository_set_odb(pointer, batch.replaced)
                self.batch = nil
            }
        }
        let result: T
        do {
            result = try body()
        } catch {
            try? flushObjects()
            throw error
        }
        try flushObjects()
        return result
    }

    /// Writes the objects a batch holds in memory as one pack in the repository's folder (nothing
    /// outside a batch). Called before anything that names an object is written.
    func flushObjects() throws {
        guard let batch else { return }
        try check(cohort_batch_flush(batch.memory), "cannot write the new objects as a pack")
    }
}
