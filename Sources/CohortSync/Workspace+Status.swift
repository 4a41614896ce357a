import CohortBase
import CohortCollaboration
import CohortGit
import CohortVerification
import CohortWorkspace
import Foundation

/// What `cohort status` shows.
public struct SyncStatus: Sendable {
    /// Local changes not yet committed, as the next sync would commit them.
    public var changes: [Change] = []
    /// Commits here and not on the remote (as last fetched), and the reverse.
    public var ahead = 0
    public var behind = 0
    /// Whether the remote-tracking branch exists (the workspace fetched at least once).
    public var tracking = false
    /// Conflict copies in the workspace.
    public var conflictCopies: [String] = []
    public var lastSync: Date?
    public var lastSummary: String?
    /// A sync stopped while updating the files; the next one finishes it.
    public var interrupted = false
    public var readOnly = false
    /// Paths of the collaboration not in the folder as it has them, and why.
    public var unwritten: [UnwrittenPaths.Path] = []
    /// A sync running now: its process, host and start.
    public var running: (pid: Int32, host: String, since: Date)?
    /// Local deletions the next sync holds back (deleted, tracked), and the share that holds them.
    public var heldBack: (deleted: Int, tracked: Int)?
    /// Membership changes committed here that the remote (as last fetched) does not have: until
    /// they are pushed, the server still admits whom they remove and refuses whom they add.
    public var unpublishedMembership: MembershipDelta?
}

/// Who a newer membership version adds, removes, or changes (permission, switches), by label.
public struct MembershipDelta: Sendable, Equatable {
    public var version: Int
    public var publishedVersion: Int
    public var added: [String] = []
    public var removed: [String] = []
    public var changed: [String] = []

    /// What changed from `old` to `new`; nil when nothing did.
    public static func between(_ old: Membership, _ new: Membership) -> MembershipDelta? {
        guard new.version > old.version else { return nil }
        var delta = MembershipDelta(version: new.version, publishedVersion: old.version)
        for participant in new.participants {
            // By root, else by handle: a person whose root rotated is changed, not added and removed.
            let before = old.participants.first { $0.root == participant.root }
                ?? old.participants.first { $0.handle != nil && $0.handle == participant.handle }
            if let before {
                if before.root != participant.root || before.permission != participant.permission || before.mentions != participant.mentions
                    || before.comments != participant.comments || before.handle != participant.handle {
                    delta.changed.append(participant.label)
                }
            } else {
                delta.added.append(participant.label)
            }
        }
        delta.removed = old.participants.filter { gone in
            !new.participants.contains { $0.root == gone.root || ($0.handle != nil && $0.handle == gone.handle) }
        }.map(\.label)
        return delta
    }

    /// "removed bo@example.com; added cy@example.com", for one line.
    public var summary: String {
        let parts = [("added", added), ("removed", removed), ("changed", changed)].filter { !$0.1.isEmpty }
            .map { "\($0.0) \($0.1.joined(separator: ", "))" }
        return parts.isEmpty ? "version \(version)" : parts.joined(separator: "; ")
    }
}

extension Workspace {
    /// The workspace against `remote` (as last fetched): nothing here changes but the index, which
    /// is refreshed the way `cohort commit` stages.
    public func syncStatus(remote: String = "origin") throws -> SyncStatus {
        var status = SyncStatus()
        let journal = SyncJournal.load(from: repository.gitDirectory)
        status.lastSync = journal.lastSync
        status.lastSummary = journal.lastSummary
        status.interrupted = journal.move != nil
        // Staging refreshes the index: never beside a running sync, which moves it. When one runs,
        // the local changes are left for later and the sync is named.
        let lock: SyncLock?
        do {
            lock = try SyncLock.acquire(in: repository.gitDirectory, wait: 3)
        } catch let error as CohortError where error.code == .busy {
            lock = nil
            status.running = SyncLock.runningHolder(in: repository.gitDirectory).map { ($0.pid, $0.host, $0.since) }
                ?? (0, "?", Date())
        }
        if let lock {
            defer { lock.release() }
            let pending = try pendingChanges()
            status.changes = pending.changes
            status.heldBack = try massDeletion(pending, share: SyncOptions().massDeleteShare)
        }
        let head = try head().commit
        if let upstream = try repository.resolve("refs/remotes/\(remote)/main") {
            status.tracking = true
            (status.ahead, status.behind) = try repository.aheadBehind(head, upstream)
            // Only what is ahead can be unpublished; an upstream that does not verify (fetched by
            // stock git) leaves the rest of the status to say.
            if status.ahead > 0 { status.unpublishedMembership = try? unpublishedMembership(head: head, upstream: upstream) }
        }
        status.conflictCopies = conflictCopiesOnDisk()
        status.unwritten = try UnwrittenPaths.load(from: repository.gitDirectory).paths
        if let state = try? state(), let signer = try? signer(for: state), let me = try? self.me(in: state, signer: signer) {
            status.readOnly = me.permission == .readOnly
        }
        return status
    }

    /// The membership change at `head` that `upstream` lacks (read from both trees; only when the
    /// members file differs).
    func unpublishedMembership(head: ObjectID, upstream: ObjectID) throws -> MembershipDelta? {
        let (headTree, upstreamTree) = (try repository.tree(ofCommit: head), try repository.tree(ofCommit: upstream))
        let here = try repository.entry(at: CohortLayout.members, inTree: headTree)
        let there = try repository.entry(at: CohortLayout.members, inTree: upstreamTree)
        guard here?.id != there?.id else { return nil }
        return try MembershipDelta.between(CollaborationState(repository: repository, tree: upstreamTree).membership,
                                           CollaborationState(repository: repository, tree: headTree).membership)
    }

    /// The conflict copies in the folder, committed or not (one walk, `.git` skipped), sorted.
    func conflictCopiesOnDisk() -> [String] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var copies: [String] = []
        let prefix = directory.standardizedFileURL.path.count + 1
        for case let url as URL in walker {
            if url.lastPathComponent == ".git" {
                walker.skipDescendants()
            } else if ConflictCopy.isCopy(url.lastPathComponent) {
                copies.append(String(url.standardizedFileURL.path.dropFirst(prefix)))
            }
        }
        return copies.sorted()
    }
}
