import CohortCollaboration
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
    let server: ServerProcess
    let link: String

    var temp: TemporaryDirectory { scenario.temp }
    var identifier: String { scenario.identifier }

    /// `serverSinks`: the text of `DATA/sinks.toml`, written before the server starts.
    init(serverArguments: [String] = [], environment: [String: String] = [:], serverSinks: String? = nil) throws {
        scenario = try Scenario()
        if let serverSinks {
            try FileManager.default.createDirectory(at: scenario.temp.path("data"), withIntermediateDirectories: true)
            try Data(serverSinks.utf8).write(to: scenario.temp.path("data/sinks.toml"))
        }
        dee = try .make("dee", in: scenario.temp)
        eve = try .make("eve", in: scenario.temp)
        try scenario.owner.addParticipants([dee.card()], settings: ParticipantSettings(permission: .readOnly))
        server = try ServerProcess(data: scenario.temp.path("data"), arguments: serverArguments, environment: environment)
        let published = try run(cohortBinary.path, ["publish", server.url, "--workspace", scenario.owner.directory.path],
                                in: scenario.temp.url,
                                environment: environment.merging(["COHORT_HOME": scenario.ann.home.directory.path]) { $1 })
        guard published.status == 0 else {
            throw ServerFailure(description: "publish failed: \(published.stderr)\n\(server.logText())")
        }
        link = published.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
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
        server.stop()
    }
}
