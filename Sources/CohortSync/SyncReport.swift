import CohortCollaboration
import CohortGit
import CohortWorkspace
import Foundation

/// What `cohort sync` is asked to do.
public struct SyncOptions: Sendable {
    /// The message of the commit of local changes.
    public var message: String?
    public var remote = "origin"
    /// Commit even when more than `massDeleteShare` of the tracked files were deleted.
    public var allowMassDelete = false
    /// The share of tracked files (0 to 1) whose deletion is held back (3 files at least).
    public var massDeleteShare = 0.5
    /// Fetch-merge-push rounds when others push first.
    public var maxAttempts = 5
    /// Seconds to wait for another sync of this workspace to finish.
    public var wait: TimeInterval = 60
    public var progress: (@Sendable (TransferProgress) -> Void)?

    public init() {}
}

/// What one sync did: what went up, what came down, what could not be settled.
public struct SyncReport: Sendable {
    /// The local changes committed (nil: none).
    public var committed: CommitSummary?
    /// Whether the remote now has this workspace's commits.
    public var pushed = false
    /// Commits that arrived, and the notices they carry.
    public var received: [ObjectID] = []
    public var receivedNotices: [Notice] = []
    /// The merge commit made (nil: none needed).
    public var merge: ObjectID?
    /// Conflict copies made by the merge: (copy, original).
    public var conflicts: [(copy: String, of: String)] = []
    /// Files the person changed while the sync ran (or, read only, before it) that the new commit also
    /// changed: kept as they are, the incoming version beside them.
    public var keptLocal: [String] = []
    public var incomingCopies: [String] = []
    /// Paths of the new commit that were not written to the folder, and why.
    public var skipped: [(path: String, reason: String)] = []
    /// Read only: the sync pulled and left local changes in place, uncommitted.
    public var readOnly = false
    public var localChangesKept = 0
    /// An interrupted sync was finished first.
    public var resumed = false
    /// Fetch-merge-push rounds it took.
    public var rounds = 0

    public init() {}

    /// One line for the journal and `cohort status`.
    public var summaryLine: String {
        var parts: [String] = []
        if let committed { parts.append("committed \(committed.notices.count) change\(committed.notices.count == 1 ? "" : "s")") }
        if !received.isEmpty { parts.append("received \(received.count) commit\(received.count == 1 ? "" : "s")") }
        if pushed { parts.append("pushed") }
        if !conflicts.isEmpty { parts.append("\(conflicts.count) conflict cop\(conflicts.count == 1 ? "y" : "ies")") }
        if readOnly, localChangesKept > 0 { parts.append("\(localChangesKept) local change\(localChangesKept == 1 ? "" : "s") kept (read only)") }
        return parts.isEmpty ? "up to date" : parts.joined(separator: ", ")
    }
}
