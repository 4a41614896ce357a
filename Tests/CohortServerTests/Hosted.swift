import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// "Baking Recipes" published on a real `cohort serve`: Ann owns it; Bo and Cy may make changes; Dee
/// reads only; Eve was never invited. Immutable once made, so threads may share it.
final class Hosted: @unchecked Sendable {
    let scenario: Scenario
    let dee: TestPerson
    let eve: TestPerson
    /// The first (or only) instance.
    let server: ServerProcess
    /// Every instance, and where each one listens (direct, not through nginx).
    let servers: [ServerProcess]
    let addresses: [String]
    /// With several instances: their shared database, and nginx in front.
    let cluster: PostgresCluster?
    let database: String?
    let proxy: NginxProxy?
    let link: String

    var temp: TemporaryDirectory { scenario.temp }
    var identifier: String { scenario.identifier }

    /// `serverSinks`: the text of `DATA/sinks.toml`, written before the server starts. With more than
    /// one instance, they share the data directory and a fresh PostgreSQL database (`--state`), behind
    /// nginx, whose address is the public URL.
    init(serverArguments: [String] = [], environment: [String: String] = [:], serverSinks: String? = nil, instances: Int = 1,
         cluster ownCluster: PostgresCluster? = nil) throws {
        scenario = try Scenario()
        if let serverSinks {
            try FileManager.default.createDirectory(at: scenario.temp.path("data"), withIntermediateDirectories: true)
            try Data(serverSinks.utf8).write(to: scenario.temp.path("data/sinks.toml"))
        }
        dee = try .make("dee", in: scenario.temp)
        eve = try .make("eve", in: scenario.temp)
        try scenario.owner.addParticipants([dee.card()], settings: ParticipantSettings(permission: .readOnly))
        var environment = environment
        if instances == 1 {
            server = try ServerProcess(data: scenario.temp.path("data"), arguments: serverArguments, environment: environment)
            servers = [server]
            addresses = [server.url]
            cluster = nil
            database = nil
            proxy = nil
        } else {
            let cluster = try ownCluster ?? PostgresCluster.shared()
            let database = try cluster.createDatabase()
            environment.merge(cluster.environment) { $1 }
            let front = try freePort()
            let ports = try (0..<instances).map { _ in try freePort() }
            let data = scenario.temp.path("data")
            servers = try ports.map { port in
                try ServerProcess(data: data, arguments: serverArguments + [
                    "--state", database, "--public-url", "http://127.0.0.1:\(front)", "--trusted-proxy", NginxProxy.proxyAddress,
                ], environment: environment, listen: "127.0.0.1:\(port)")
            }
            server = servers[0]
            addresses = ports.map { "http://127.0.0.1:\($0)" }
            proxy = try NginxProxy(port: front, upstreams: ports.map { "127.0.0.1:\($0)" })
            self.cluster = cluster
            self.database = database
        }
        let published = try run(cohortBinary.path, ["publish", server.url, "--workspace", scenario.owner.directory.path],
                                in: scenario.temp.url,
                                environment: environment.merging(["COHORT_HOME": scenario.ann.home.directory.path]) { $1 })
        guard published.status == 0 else {
            throw ServerFailure(description: "publish failed: \(published.stderr)\n\(server.logText())")
        }
        link = published.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Bo's `cohort clone` of the collaboration, its tip, and on top a sync-sized commit signed with
    /// Bo's real key whose notice `foreignAt` (of 100) is signed by Cy: an attack to push.
    func boForgingAForeignNotice(at foreignAt: Int) throws -> (folder: URL, bo: Workspace, tip: ObjectID, attack: ObjectID) {
        try boForging { me, cy in try Attacks.noticeFiles(100, by: me, in: self.scenario.identifier, foreign: cy, at: foreignAt) }
    }

    /// Bo's clone through the server, and a commit he signs (outside `cohort commit`) of the files
    /// `files` gives from his signer and Cy's.
    func boForging(_ files: (CollaborationSigner, CollaborationSigner) throws -> [String: Data]) throws
        -> (folder: URL, bo: Workspace, tip: ObjectID, attack: ObjectID) {
        let (folder, bo, tip) = try boCloned()
        let me = try signer(scenario.bo.home, in: bo)
        let cy = try signer(scenario.cy.home, in: bo)
        let attack = try forge(bo, signer: me, files: files(me, cy))
        return (folder, bo, tip, attack)
    }

    /// Bo's clone through the server (`cohort clone` of the link) and its head.
    func boCloned() throws -> (folder: URL, bo: Workspace, tip: ObjectID) {
        let folder = temp.path("bo")
        #expect(try cohort(["clone", link, folder.path], as: scenario.bo.home).status == 0)
        let bo = try Workspace(containing: folder, home: scenario.bo.home)
        return (folder, bo, try bo.head().commit)
    }

    /// Runs the `cohort` binary as the person whose device is `home`.
    @discardableResult
    func cohort(_ arguments: [String], as home: IdentityHome, in directory: URL? = nil, environment: [String: String] = [:]) throws -> ProcessResult {
        try run(cohortBinary.path, arguments, in: directory ?? temp.url,
                environment: environment.merging(["COHORT_HOME": home.directory.path]) { $1 })
    }

    /// Runs stock git as `home`'s person, with `git-credential-cohort` as the credential helper.
    @discardableResult
    func git(_ arguments: [String], as home: IdentityHome, in directory: URL? = nil, environment: [String: String] = [:]) throws -> ProcessResult {
        let helpers = cohortBinary.deletingLastPathComponent().path
        let path = helpers + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try run("git", ["-c", "credential.helper=cohort", "-c", "credential.useHttpPath=true"] + arguments,
                       in: directory ?? temp.url,
                       environment: environment.merging(["COHORT_HOME": home.directory.path, "PATH": path, "GIT_TERMINAL_PROMPT": "0"]) { $1 })
    }

    /// Where the server's main branch points.
    func serverTip() throws -> String {
        let bare = temp.path("data/collaborations/\(identifier).git")
        return try run("git", ["--git-dir", bare.path, "rev-parse", "refs/heads/main"], in: temp.url).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        proxy?.stop()
        for server in servers { server.stop() }
    }
}
