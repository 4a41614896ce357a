import CGit2
import CGit2Shim
import Foundation

/// Cohort's own indexer of a clone's pack (`PackIndexer.c`). A clone's fetch uses it through the
/// pack's copy (`PackTee`); this entry point indexes a pack already whole, for tests and fuzzing.
public enum PackIndexer {
    public enum Outcome: Sendable, Equatable {
        /// The pack and its index are in the folder, named as git names them.
        case written
        /// Not a pack the indexer takes (libgit2's indexer would be given it): nothing was written.
        case declined
    }

    /// Indexes `pack`, handed to the indexer in pieces of `piece` bytes as a fetch would, into `folder`.
    public static func index(_ pack: Data, into folder: URL, piece: Int = 0) -> Outcome {
        let result = pack.withUnsafeBytes { bytes in
            cohort_pack_index(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, max(0, piece), folder.path)
        }
        return result == 0 ? .written : .declined
    }

    /// Indexes `pack` into `folder` with libgit2's own indexer, as a fetch did before Cohort had one:
    /// the name of the pack it wrote, or nil when it refused the pack. For checking one against the other.
    public static func indexWithLibgit2(_ pack: Data, into folder: URL) -> String? {
        GitRuntime.start()
        var indexer: OpaquePointer?
        guard git_indexer_new(&indexer, folder.path, 0, nil, nil) == 0 else { return nil }
        defer { git_indexer_free(indexer) }
        var stats = git_indexer_progress()
        let appended = pack.withUnsafeBytes { git_indexer_append(indexer, $0.baseAddress, $0.count, &stats) }
        guard appended == 0, git_indexer_commit(indexer, &stats) == 0, let name = git_indexer_name(indexer) else { return nil }
        return String(cString: name)
    }
}
