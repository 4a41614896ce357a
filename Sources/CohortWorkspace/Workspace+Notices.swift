import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortNotices
import CohortVerification
import Foundation

extension Workspace {
    /// The workspace's sink configuration files: the user's, then the workspace's own (never committed).
    public var configurationFiles: [URL] {
        [home.directory.appendingPathComponent("config.toml"), repository.gitDirectory.appendingPathComponent(CohortLayout.sinksInGitDirectory)]
    }

    /// Where the workspace's sinks keep what they remember between runs (a webhook's retries).
    public var sinkStateDirectory: URL { repository.gitDirectory.appendingPathComponent("cohort/sinks") }

    /// Where the workspace's outbox lives.
    var outboxDirectory: URL { repository.gitDirectory.appendingPathComponent("cohort/outbox") }
    private var seenURL: URL { repository.gitDirectory.appendingPathComponent("cohort/notices-seen") }

    /// The notices the commits from `since` (exclusive; nil: the genesis) to HEAD added, oldest first,
    /// after verifying that history.
    public func notices(since: ObjectID? = nil) throws -> [Notice] {
        try signedNotices(since: since).map(\.notice)
    }

    /// The same notices with the envelopes they are stored in; up to `upTo` (an ancestor of HEAD)
    /// instead of HEAD when given.
    public func signedNotices(since: ObjectID? = nil, upTo: ObjectID? = nil) throws -> [SignedNotice] {
        let head = try head().commit
        _ = try repository.verifyHistory(to: head)
        let hidden = since.map { [$0] }.flatMap { ids in ids.filter { repository.contains($0) } } ?? []
        return try repository.signedNoticesAdded(by: repository.commits(from: upTo ?? head, hiding: hidden))
    }

    /// The notices for this workspace's sinks that arrived since the last delivery (a mention only
    /// if it mentions this identity).
    public func undeliveredNotices() throws -> [Notice] {
        try undeliveredNotices(in: state(), since: lastDelivered()).map(\.notice)
    }

    /// The commit the last round took notices in up to (nil before the first).
    private func lastDelivered() -> ObjectID? {
        (try? AtomicFile.read(seenURL, maxBytes: 64, what: "last delivered commit"))
            .flatMap { try? ObjectID(hex: String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Records that the notices up to `commit` were there before this workspace's sinks could have had
    /// them (a clone's history): the first round takes them in as history, before placing any sink.
    public func markNoticesTakenIn(upTo commit: ObjectID) throws {
        try AtomicFile.write(Data((commit.hex + "\n").utf8), to: seenURL, mode: 0o644, replacing: true)
    }

    private func undeliveredNotices(in state: CollaborationState, since lastSeen: ObjectID?, upTo: ObjectID? = nil) throws -> [SignedNotice] {
        let me = try signer(for: state).root.hex
        return try signedNotices(since: lastSeen, upTo: upTo)
            .filter { $0.notice.type != .mention || $0.notice.data["mentioned"] == me }
    }

    /// For each sink: the notices it has not had yet, those waiting in the outbox past its place and
    /// those that arrived since the outbox last took notices in. No sinks, nothing pending.
    public func pendingNotices(for specs: [SinkSpec]) throws -> [String: Int] {
        guard !specs.isEmpty else { return [:] }
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        let last = lastDelivered()
        // Before the first round, what the history holds is not news to a new sink.
        let history = outbox.hasLog ? 0 : try undeliveredNotices(in: state(), since: nil, upTo: last).count
        let arrived = !outbox.hasLog && last == nil ? 0 : try undeliveredNotices().count
        var pending: [String: Int] = [:]
        for spec in specs { pending[spec.name] = try outbox.pending(for: spec).count + arrived + (spec.history == .all ? history : 0) }
        return pending
    }

    /// How each sink named stands: the notices it gave up on, why its last run stopped early.
    public func sinkStandings(_ names: [String]) throws -> [String: NoticeOutbox.Standing] {
        guard !names.isEmpty else { return [:] }
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        return Dictionary(uniqueKeysWithValues: names.map { ($0, outbox.standing(of: $0)) })
    }

    /// One round: takes the notices that arrived since the last round into the workspace's outbox (a
    /// mention only if it mentions this workspace's own identity), then delivers to each sink what it
    /// has not had. The outbox keeps them with no sink configured too, for sinks added later.
    ///
    /// A sink seen for the first time starts with what arrives from now on, or with `history =
    /// "all"`, with everything the outbox holds. The first round takes the history before it in (a
    /// clone's, or one from before the outbox) ahead of placing any sink, so it reaches only those.
    public func deliverNotices(to specs: [SinkSpec]) async throws -> [NoticeOutbox.Report] {
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        let head = try head().commit
        let state = try state()
        let handles = state.membership.everyHandle
        func deliveries(_ signed: [SignedNotice]) -> [NoticeDelivery] {
            signed.map { NoticeDelivery(notice: $0.notice, actorHandle: handles[$0.notice.actor], envelope: $0.envelope, salt: state.context.salt) }
        }
        var since = lastDelivered()
        if !outbox.hasLog {
            let history = since ?? head
            try await outbox.accept(deliveries(undeliveredNotices(in: state, since: nil, upTo: history)))
            since = history
        }
        try await outbox.place(specs)
        try await outbox.accept(deliveries(undeliveredNotices(in: state, since: since)))
        try markNoticesTakenIn(upTo: head)
        return await outbox.deliver(to: specs, stateDirectory: sinkStateDirectory)
    }
}
