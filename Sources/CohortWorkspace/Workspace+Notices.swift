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
        let head = try head().commit
        _ = try repository.verifyHistory(to: head)
        let hidden = since.map { [$0] }.flatMap { ids in ids.filter { repository.contains($0) } } ?? []
        return try repository.noticesAdded(by: repository.commits(from: head, hiding: hidden))
    }

    /// The notices for this workspace's sinks that arrived since the last delivery (a mention only
    /// if it mentions this identity).
    public func undeliveredNotices() throws -> [Notice] {
        try undeliveredNotices(in: state())
    }

    private func undeliveredNotices(in state: CollaborationState) throws -> [Notice] {
        let lastSeen = (try? AtomicFile.read(seenURL, maxBytes: 64, what: "last delivered commit"))
            .flatMap { try? ObjectID(hex: String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        let me = try signer(for: state).root.hex
        return try notices(since: lastSeen).filter { $0.type != .mention || $0.data["mentioned"] == me }
    }

    /// For each sink named: the notices it has not had yet, those waiting in the outbox past its place
    /// and those that arrived since the outbox last took notices in. No sinks, nothing pending.
    public func pendingNotices(forSinks names: [String]) throws -> [String: Int] {
        guard !names.isEmpty else { return [:] }
        let arrived = try undeliveredNotices().count
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        var pending: [String: Int] = [:]
        for name in names { pending[name] = try outbox.pending(for: name).count + arrived }
        return pending
    }

    /// Takes the notices that arrived since the last delivery into the workspace's outbox (a mention
    /// only if it mentions this workspace's own identity), then delivers what each sink has not had.
    public func deliverNotices(to sinks: [any NoticeSink]) async throws -> [NoticeOutbox.Report] {
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        let head = try head().commit
        let state = try state()
        try await outbox.accept(undeliveredNotices(in: state), handles: state.membership.everyHandle)
        try AtomicFile.write(Data((head.hex + "\n").utf8), to: seenURL, mode: 0o644, replacing: true)
        let reports = await outbox.deliver(to: sinks)
        for sink in sinks { await sink.shutdown() }
        return reports
    }
}
