import CohortBase
import CohortCollaboration
import CohortGit
import CohortNotices
import CohortVerification
import Foundation

extension Workspace {
    /// The workspace's sink configuration files: the user's, then the workspace's own (never committed).
    public var configurationFiles: [URL] {
        [home.directory.appendingPathComponent("config.toml"), repository.cohortDirectory.sinksFile]
    }

    /// Where the workspace's sinks keep what they remember between runs (a webhook's retries).
    public var sinkStateDirectory: URL { repository.cohortDirectory.sinkState }

    /// Where the workspace's outbox lives.
    var outboxDirectory: URL { repository.cohortDirectory.outbox }
    private var seenURL: URL { repository.cohortDirectory.noticesSeen }

    /// The notices the commits from `since` (exclusive; nil: the genesis) to HEAD added, oldest first,
    /// after verifying that history.
    public func notices(since: ObjectID? = nil) throws -> [Notice] {
        try signedNotices(since: since).map(\.notice)
    }

    /// The same notices with the envelopes they are stored in.
    public func signedNotices(since: ObjectID? = nil) throws -> [SignedNotice] {
        let head = try head().commit
        _ = try repository.verifyHistory(to: head)
        return try added(since: since, upTo: head)
    }

    /// What the commits from `since` (exclusive) to `upTo` added; the caller verified the history.
    private func added(since: ObjectID?, upTo: ObjectID) throws -> [SignedNotice] {
        let hidden = since.map { [$0] }.flatMap { ids in ids.filter { repository.contains($0) } } ?? []
        return try repository.signedNoticesAdded(by: repository.commits(from: upTo, hiding: hidden))
    }

    /// Records that the notices up to `commit` were there before this workspace's sinks could have had
    /// them (a clone's history): the first round takes them in as history, before placing any sink.
    public func markNoticesTakenIn(upTo commit: ObjectID) throws {
        // A workspace cloned with plain git has no `.git/cohort/` yet.
        try AtomicFile.createDirectory(repository.cohortDirectory.url, mode: 0o700)
        try AtomicFile.write(Data((commit.hex + "\n").utf8), to: seenURL, mode: 0o644, replacing: true)
    }

    /// Before the branch moves (a commit, a comment, a sync's merge): where no delivery round has run
    /// yet and nothing marks where the history ends, `head` (HEAD when nil) is that end. So the first
    /// round after it gives a sink configured before the change what the change brought, instead of
    /// counting it as history. Two `stat`s when there is nothing to do.
    public func markHistoryBeforeChanges(head: ObjectID? = nil) throws {
        guard !FileManager.default.fileExists(atPath: seenURL.path), !NoticeOutbox.hasLog(in: outboxDirectory) else { return }
        try markNoticesTakenIn(upTo: head ?? self.head().commit)
    }

    /// Where delivery rounds stand: HEAD (its history verified), the commit the last round took notices
    /// in up to, and what the sinks of this workspace are given.
    private struct Rounds {
        let workspace: Workspace
        let head: ObjectID
        let state: CollaborationState
        let me: String
        /// The commit the last round took notices in up to (nil before the first).
        let last: ObjectID?

        init(_ workspace: Workspace) throws {
            self.workspace = workspace
            head = try workspace.head().commit
            _ = try workspace.repository.verifyHistory(to: head)
            state = try workspace.state()
            me = try workspace.signer(for: state).root.hex
            last = (try? AtomicFile.read(workspace.seenURL, maxBytes: 64, what: "last delivered commit"))
                .flatMap { try? ObjectID(hex: String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        }

        /// The notices for the sinks from `since` to `upTo`: a mention only if it mentions this identity.
        func forSinks(since: ObjectID?, upTo: ObjectID) throws -> [SignedNotice] {
            try workspace.added(since: since, upTo: upTo).filter { $0.notice.type != .mention || $0.notice.data["mentioned"] == me }
        }

        /// As the outbox keeps them: with the actor's handle, the envelope and the salt.
        func deliveries(since: ObjectID?, upTo: ObjectID) throws -> [NoticeDelivery] {
            let handles = state.membership.everyHandle
            return try forSinks(since: since, upTo: upTo).map { NoticeDelivery($0, handles: handles, salt: state.context.salt) }
        }
    }

    /// For each sink: the notices it has not had yet, those waiting in the outbox past its place and
    /// those that arrived since the outbox last took notices in. No sinks, nothing pending.
    public func pendingNotices(for specs: [SinkSpec]) throws -> [String: Int] {
        guard !specs.isEmpty else { return [:] }
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        let rounds = try Rounds(self)
        // Before the first round, the history up to it goes only to sinks that ask for everything.
        let history = outbox.hasLog ? 0 : try rounds.forSinks(since: nil, upTo: rounds.last ?? rounds.head).count
        let arrived = !outbox.hasLog && rounds.last == nil ? 0 : try rounds.forSinks(since: rounds.last, upTo: rounds.head).count
        var pending: [String: Int] = [:]
        for spec in specs { pending[spec.name] = try outbox.pending(for: spec).count + arrived + (spec.history == .all ? history : 0) }
        return pending
    }

    /// How each sink named stands: the notices it gave up on, why its last run stopped early.
    public func sinkStandings(_ names: [String]) throws -> [String: NoticeOutbox.Standing] {
        guard !names.isEmpty else { return [:] }
        return try NoticeOutbox(directory: outboxDirectory).standings(of: names)
    }

    /// One round: takes the notices that arrived since the last round into the workspace's outbox (a
    /// mention only if it mentions this workspace's own identity), then delivers to each sink what it
    /// has not had. With no sink, nothing is taken in: where no sink ever was, the round moves the mark
    /// (what came before is history to the first sink); where sinks were, the mark stays, so sinks
    /// that come back get what arrived meanwhile.
    ///
    /// A sink seen for the first time starts with what arrives from now on, or with `history =
    /// "all"`, with everything the outbox holds. The first round takes the history before it in (a
    /// clone's, or what came before the first sink was configured) ahead of placing any sink, so it
    /// reaches only those.
    public func deliverNotices(to specs: [SinkSpec]) async throws -> [NoticeOutbox.Report] {
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        guard !specs.isEmpty else {
            // Never a sink here yet: what the collaboration holds so far will be history to the first.
            if !outbox.hasLog { try markNoticesTakenIn(upTo: head().commit) }
            return []
        }
        let rounds = try Rounds(self)
        var since = rounds.last
        if !outbox.hasLog {
            let history = since ?? rounds.head
            try await outbox.accept(rounds.deliveries(since: nil, upTo: history))
            since = history
        }
        try await outbox.place(specs)
        try await outbox.accept(rounds.deliveries(since: since, upTo: rounds.head))
        try markNoticesTakenIn(upTo: rounds.head)
        return await outbox.deliver(to: specs, stateDirectory: sinkStateDirectory)
    }
}
