import CohortBase
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
    public var maxAttempts = 12
    /// Seconds to wait for another sync of this workspace to finish.
    public var wait: TimeInterval = 60
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// Commit the folder's changes first (false: share only what is committed, e.g. a membership
    /// change pushed by `cohort participants … --push`, leaving the folder's edits for later).
    public var commitLocalChanges = true

    public init() {}

    /// The pause after losing push race `round`: 0.1 s doubling to a 3.2 s cap, times a random
    /// factor from 0.5 to 1.5, so that editors who raced spread out.
    func backoff(_ round: Int) -> TimeInterval {
        min(3.2, 0.1 * pow(2, Double(min(round, 8) - 1))) * Double.random(in: 0.5...1.5)
    }
}

/// What one sync did: what went up, what came down, what could not be settled, and where it stopped.
public struct SyncReport: Sendable {
    /// The steps of a sync, named in reports.
    public enum Step: String, Sendable {
        case prepare, checkout, commit, fetch, merge, push, deliver
    }

    /// The step that failed, and why. Everything before it in the report happened.
    public struct Failure: Sendable {
        public var step: Step
        public var error: CohortError

        public init(step: Step, error: CohortError) {
            self.step = step
            self.error = error
        }
    }

    /// The local changes committed (nil: none).
    public var committed: CommitSummary?
    /// Whether the remote now has this workspace's commits.
    public var pushed = false
    /// Commits that arrived (in history order), and the notices they carry that this side lacked.
    public var received: [ObjectID] = []
    public var receivedNotices: [Notice] = []
    /// The merge commit made (nil: none needed).
    public var merge: ObjectID?
    /// Conflict copies made by the merge: (copy, original).
    public var conflicts: [(copy: String, of: String)] = []
    /// Files the person changed while the sync ran (or, read only, before it) that the new commit also
    /// changed: kept as they are, with where the incoming version was saved (nil: the commit deleted
    /// the file, or it is a link).
    public var keptLocal: [(path: String, copy: String?)] = []
    /// Read only: edits moved aside (path, copy) so that the file follows the collaboration.
    public var movedAside: [(path: String, copy: String)] = []
    /// Paths of the collaboration not written to the folder, and why (all that are still unwritten).
    public var unwritten: [UnwrittenPaths.Path] = []
    /// Read only: the sync pulled and left local changes in place, uncommitted.
    public var readOnly = false
    public var localChangesKept = 0
    /// An interrupted sync was finished first.
    public var resumed = false
    /// Fetch-merge-push rounds it took.
    public var rounds = 0
    /// Handles of the collaboration's participants, by root (hex), for naming people.
    public var handles: [String: String] = [:]
    /// Where the sync stopped, if it did not finish.
    public var failure: Failure?

    public init() {}

    /// Paths not written that this sync should answer for: every one still waiting, and names git
    /// refuses only when they first arrive.
    public var unwrittenToReport: [UnwrittenPaths.Path] {
        unwritten.filter { $0.refused != true || newlyRefused.contains($0.path) }
    }

    var newlyRefused: Set<String> = []

    mutating func add(_ outcome: CheckoutOutcome) {
        keptLocal += outcome.keptLocal
        movedAside += outcome.movedAside
        unwritten = outcome.unwritten
        newlyRefused.formUnion(outcome.newlyUnwritten.filter { $0.refused == true }.map(\.path))
    }

    /// A person's handle, or the first 12 digits of their root.
    public func name(_ root: String) -> String {
        handles[root] ?? String(root.prefix(12))
    }

    /// One line for the journal and `cohort status`.
    public var summaryLine: String {
        var parts: [String] = []
        if let committed { parts.append("committed \(committed.notices.count) change\(committed.notices.count == 1 ? "" : "s")") }
        let arrived = received.filter { $0 != merge }.count
        if arrived > 0 { parts.append("received \(arrived) commit\(arrived == 1 ? "" : "s")") }
        if pushed { parts.append("pushed") }
        if !conflicts.isEmpty { parts.append("\(conflicts.count) conflict cop\(conflicts.count == 1 ? "y" : "ies")") }
        if readOnly, localChangesKept > 0 { parts.append("\(localChangesKept) local change\(localChangesKept == 1 ? "" : "s") kept (read only)") }
        let waiting = unwrittenToReport.count
        if waiting > 0 { parts.append("\(waiting) path\(waiting == 1 ? "" : "s") not written") }
        if let failure { parts.append("stopped at \(failure.step.rawValue): \(failure.error.code)") }
        return parts.isEmpty ? "up to date" : parts.joined(separator: ", ")
    }
}
