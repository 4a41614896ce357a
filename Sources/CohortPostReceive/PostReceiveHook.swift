import CohortBase
import CohortCollaboration
import CohortGit
import CohortHooks
import CohortNotices
import CohortVerification
import Foundation

/// `cohort hook post-receive`: after a push was accepted, the notices its new commits carry go into
/// the repository's outbox (`<git dir>/cohort/outbox`) and out to the sinks configured in
/// `<git dir>/cohort/config.toml` (and, under `cohort serve`, the server's own sinks file). A server's sinks receive every notice, mentions included (a
/// mention's `data.mentioned` names its recipient).
public enum PostReceiveHook {
    /// Takes the notices of the pushed branches' new commits into the outbox and delivers to the
    /// sinks configured, of the types `registry` knows. Returns the sinks' reports (empty when none is
    /// configured). A sink seen for the first time starts with this push, or with `history = "all"`,
    /// with everything the outbox holds: the first push after sinks are configured takes every
    /// branch's history before it in first, ahead of placing any sink.
    public static func run(input: Data, registry: SinkRegistry) async throws -> [NoticeOutbox.Report] {
        let updates = try PreReceiveHook.updates(from: input)
        let repository = try Repository.openFromEnvironment()
        let specs = try SinkConfiguration.load(sinkFiles(of: repository), registry: registry)
        // No sink, nothing to keep: notices stay in the repository, where any later reader finds them.
        guard !specs.isEmpty else { return [] }
        let outbox = try NoticeOutbox(directory: repository.cohortDirectory.outbox)
        if !outbox.hasLog {
            try await outbox.accept(noticesAdded(by: commitsBefore(updates, in: repository), in: repository))
        }
        try await outbox.place(specs)
        var commits: [ObjectID] = []
        for update in updates where update.name.hasPrefix("refs/heads/") && !update.isDeletion {
            guard let tip = repository.peelToCommit(update.new) else { continue }
            let old = update.isCreation ? [] : [update.old].filter { repository.contains($0) }
            commits += try repository.commits(from: tip, hiding: old)
        }
        try await outbox.accept(noticesAdded(by: commits, in: repository))
        return await outbox.deliver(to: specs, stateDirectory: repository.cohortDirectory.sinkState)
    }

    /// The sinks files of a hooked repository: its own (`<git dir>/cohort/config.toml`), then the
    /// server's that `COHORT_SERVER_SINKS` names.
    public static func sinkFiles(of repository: Repository) -> [URL] {
        var files = [repository.cohortDirectory.sinksFile]
        if let serverWide = ProcessInfo.processInfo.environment[HookInstaller.serverSinksVariable], !serverWide.isEmpty {
            files.append(URL(fileURLWithPath: serverWide))
        }
        return files
    }

    /// Every commit the branches reached before this push (what they point at now, but the pushed
    /// ones where they were), from the branches whose history verifies: one written into the
    /// repository past the hook is left out, with a line on standard error, so none of its notices
    /// goes out.
    static func commitsBefore(_ updates: [RefUpdate], in repository: Repository) throws -> [ObjectID] {
        var tips = try repository.referenceTips().filter { $0.key.hasPrefix("refs/heads/") }
        for update in updates where update.name.hasPrefix("refs/heads/") {
            tips[update.name] = update.isCreation ? nil : update.old
        }
        var verified: [ObjectID] = []
        for (name, tip) in tips.sorted(by: { $0.key < $1.key }) {
            guard repository.contains(tip), let commit = repository.peelToCommit(tip) else { continue }
            do {
                _ = try repository.verifyHistory(to: commit)
                verified.append(commit)
            } catch {
                FileHandle.standardError.write(Data("cohort: branch \(name) fails verification, so its notices are not sent: \(error) (it was written past the hook: delete or reset it with git update-ref)\n".utf8))
            }
        }
        return try repository.commits(fromAll: verified, hiding: [])
    }

    /// The notices `commits` add, each once, ready for the sinks: with the actors' handles as the
    /// repository's main names them (main was verified before it landed), the envelopes and the
    /// collaboration's salt.
    public static func noticesAdded(by commits: [ObjectID], in repository: Repository) throws -> [NoticeDelivery] {
        var handles: [String: String] = [:]
        var salt: Data?
        if let main = try? repository.resolve(CohortLayout.defaultBranch),
           let state = try? CollaborationState(repository: repository, tree: repository.tree(ofCommit: main)) {
            handles = state.membership.everyHandle
            salt = state.context.salt
        }
        return try repository.signedNoticesAdded(by: commits).map { NoticeDelivery($0, handles: handles, salt: salt) }
    }
}
