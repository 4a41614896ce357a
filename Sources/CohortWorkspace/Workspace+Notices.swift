import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortNotices
import CohortVerification
import Foundation

extension Workspace {
    /// The workspace's sink configuration files: the user's, then the workspace's own (never committed).
    public var configurationFiles: [URL] {
        [home.directory.appendingPathComponent("config.toml"), repository.gitDirectory.appendingPathComponent("cohort/config.toml")]
    }

    /// Where the workspace's outbox lives.
    var outboxDirectory: URL { repository.gitDirectory.appendingPathComponent("cohort/outbox") }
    private var seenURL: URL { repository.gitDirectory.appendingPathComponent("cohort/notices-seen") }

    /// The notices the commits from `since` (exclusive; nil: the genesis) to HEAD added, oldest first,
    /// after verifying that history.
    public func notices(since: ObjectID? = nil) throws -> [Notice] {
        let head = try head().commit
        _ = try repository.verifyHistory(to: head)
        var notices: [Notice] = []
        var seen = Set<String>()
        let hidden = since.map { [$0] }.flatMap { ids in ids.filter { repository.contains($0) } } ?? []
        for id in try repository.commits(from: head, hiding: hidden) {
            let commit = try repository.commit(id)
            guard let mine = try repository.entry(at: CohortLayout.folder, inTree: commit.tree)?.id else { continue }
            let parent = try commit.parents.first.flatMap { try repository.entry(at: CohortLayout.folder, inTree: repository.tree(ofCommit: $0))?.id }
            for change in try repository.treeChanges(from: parent, to: mine, maxDepth: 3) where change.kind == .added {
                let path = CohortLayout.folder + "/" + (change.newPath ?? "")
                guard let blob = change.newID, CohortLayout.isNoticePath(path) else { continue }
                let notice = try Envelope.open(repository.blob(blob, maxBytes: Notice.maxEnvelopeBytes), as: Notice.self, path: path).value
                if seen.insert(notice.id).inserted { notices.append(notice) }
            }
        }
        return notices
    }

    /// Takes the notices that arrived since the last delivery into the workspace's outbox (a mention
    /// only if it mentions this workspace's own identity), then delivers what each sink has not had.
    public func deliverNotices(to sinks: [any NoticeSink]) async throws -> [NoticeOutbox.Report] {
        let outbox = try NoticeOutbox(directory: outboxDirectory)
        let head = try head().commit
        let lastSeen = (try? AtomicFile.read(seenURL, maxBytes: 64, what: "last delivered commit"))
            .flatMap { try? ObjectID(hex: String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        let state = try state()
        let me = try signer(for: state).root.hex
        let arrived = try notices(since: lastSeen).filter { $0.type != .mention || $0.data["mentioned"] == me }
        try outbox.accept(arrived)
        try AtomicFile.write(Data((head.hex + "\n").utf8), to: seenURL, mode: 0o644, replacing: true)
        let reports = await outbox.deliver(to: sinks)
        for sink in sinks { await sink.shutdown() }
        return reports
    }
}
