import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortNotices
import CohortSinks
import CohortVerification
import Foundation

/// `cohort hook post-receive`: after a push was accepted, the notices its new commits carry go into
/// the repository's outbox (`<git dir>/cohort/outbox`) and out to the sinks configured in
/// `<git dir>/cohort/config.toml` (and, under `cohort serve`, the server's own sinks file). A server's sinks receive every notice, mentions included (a
/// mention's `data.mentioned` names its recipient).
public enum PostReceiveHook {
    /// Names a sinks file that applies to every repository of a server (`cohort serve` sets it to
    /// `<data>/sinks.toml` when that file exists).
    public static let serverSinksVariable = "COHORT_SERVER_SINKS"
    /// The repository's own sinks file, inside its git directory.
    public static let repositorySinksFile = CohortLayout.sinksInGitDirectory

    /// Takes the notices of the pushed branches' new commits into the outbox and delivers. Returns
    /// the sinks' reports (empty when none is configured).
    public static func run(input: Data) async throws -> [NoticeOutbox.Report] {
        let updates = try PreReceiveHook.updates(from: input)
        let repository = try Repository.openFromEnvironment()
        var files = [repository.gitDirectory.appendingPathComponent(repositorySinksFile)]
        if let serverWide = ProcessInfo.processInfo.environment[serverSinksVariable], !serverWide.isEmpty {
            files.append(URL(fileURLWithPath: serverWide))
        }
        let specs = try SinkConfiguration.load(files)
        // No sink, nothing to keep: notices stay in the repository, where any later reader finds them.
        guard !specs.isEmpty else { return [] }
        var commits: [ObjectID] = []
        for update in updates where update.name.hasPrefix("refs/heads/") && !update.isDeletion {
            guard let tip = repository.peelToCommit(update.new) else { continue }
            let old = update.isCreation ? [] : [update.old].filter { repository.contains($0) }
            commits += try repository.commits(from: tip, hiding: old)
        }
        let outbox = try NoticeOutbox(directory: repository.gitDirectory.appendingPathComponent("cohort/outbox"))
        let (notices, handles) = try noticesAdded(by: commits, in: repository)
        try await outbox.accept(notices, handles: handles)
        let state = repository.gitDirectory.appendingPathComponent("cohort/sinks")
        let sinks = try specs.map { try SinkFactory.make($0, stateDirectory: state) }
        let reports = await outbox.deliver(to: sinks)
        for sink in sinks { await sink.shutdown() }
        return reports
    }

    /// The notices `commits` add, each once, and the actors' handles as the repository's main names
    /// them (main was verified before it landed).
    public static func noticesAdded(by commits: [ObjectID], in repository: Repository) throws -> (notices: [Notice], handles: [String: String]) {
        var handles: [String: String] = [:]
        if let main = try? repository.resolve(CohortLayout.defaultBranch),
           let state = try? CollaborationState(repository: repository, tree: repository.tree(ofCommit: main)) {
            handles = state.membership.everyHandle
        }
        return (try repository.noticesAdded(by: commits), handles)
    }
}
