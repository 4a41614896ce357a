import CohortBase
import CohortGit
import CohortWorkspace
import Foundation

/// What a sync has started and not finished, in `<git dir>/cohort/sync/journal.json` (written
/// atomically, fsynced). The one step that cannot simply be run again is moving the branch and the
/// working files to a new commit: it is written here before the branch moves, and the next sync
/// finishes it before anything else.
struct SyncJournal: Codable {
    /// The branch moves from `from` to `to`, and the files follow.
    struct Move: Codable, Equatable {
        var branch: String
        var from: String
        var to: String
    }

    var move: Move?
    /// When the last sync finished, and what it did (for `cohort status`).
    var lastSync: Date?
    var lastSummary: String?

    static func url(in gitDirectory: URL) -> URL {
        CohortDirectory(gitDirectory: gitDirectory).syncJournal
    }

    static func load(from gitDirectory: URL) -> SyncJournal {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let data = try? AtomicFile.read(url(in: gitDirectory), maxBytes: 64 << 10, what: "sync journal"),
              let journal = try? decoder.decode(SyncJournal.self, from: data)
        else { return SyncJournal() }
        return journal
    }

    func save(to gitDirectory: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let url = Self.url(in: gitDirectory)
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o700)
        try AtomicFile.write(try encoder.encode(self), to: url, mode: 0o600, replacing: true)
    }
}

/// Test seam: `COHORT_SYNC_FAULT=<point>` kills the sync with SIGKILL at that point, so tests can
/// show that every point is recoverable. Never set outside tests.
enum FaultPoint: String {
    case afterCommit = "after-commit"
    case afterFetch = "after-fetch"
    case afterMergeCommit = "after-merge-commit"
    case afterJournal = "after-journal"
    case afterBranchMove = "after-branch-move"
    case midCheckout = "mid-checkout"
    case afterCheckout = "after-checkout"
    case afterPush = "after-push"

    static let configured = ProcessInfo.processInfo.environment["COHORT_SYNC_FAULT"].flatMap(FaultPoint.init(rawValue:))

    static func reach(_ point: FaultPoint) {
        if configured == point { kill(getpid(), SIGKILL) }
    }
}
