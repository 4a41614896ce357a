import CohortGit
import CohortHooks
import CohortIdentity
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// "Baking Recipes" on a bare repository with Cohort's hooks: Ann owns it, Bo and Cy make changes,
/// Dee reads only. Each person works in a real workspace and syncs with the real `cohort` binary.
final class SyncFixture: @unchecked Sendable {
    let scenario: Scenario
    let dee: TestPerson
    let bare: URL

    var temp: TemporaryDirectory { scenario.temp }
    var ann: URL { scenario.owner.directory }

    init() throws {
        scenario = try Scenario()
        dee = try .make("dee", in: scenario.temp)
        try scenario.owner.addParticipants([dee.card()], settings: ParticipantSettings(permission: .readOnly))
        bare = scenario.temp.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: scenario.temp.url).status == 0)
        _ = try HookInstaller.install(into: bare, binary: cohortBinary, chain: false)
        #expect(try run("git", ["remote", "add", "origin", bare.path], in: ann).status == 0)
        let first = try sync(ann, as: scenario.ann.home)
        #expect(first.status == 0, "\(first.stderr)")
    }

    /// A workspace for `home` cloned from the server.
    func workspace(_ name: String, for home: IdentityHome) throws -> URL {
        let target = temp.path(name)
        let cloned = try run("git", ["clone", "-q", bare.path, target.path], in: temp.url)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        return target
    }

    @discardableResult
    func sync(_ workspace: URL, as home: IdentityHome, _ arguments: [String] = [], environment: [String: String] = [:]) throws -> ProcessResult {
        try cohort(["sync"] + arguments, in: workspace, as: home, environment: environment)
    }

    @discardableResult
    func cohort(_ arguments: [String], in workspace: URL, as home: IdentityHome, environment: [String: String] = [:]) throws -> ProcessResult {
        try run(cohortBinary.path, arguments, in: workspace, environment: environment.merging(["COHORT_HOME": home.directory.path]) { $1 })
    }

    func write(_ text: String, _ path: String, in workspace: URL) throws {
        let url = workspace.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ path: String, in workspace: URL) -> String? {
        (try? Data(contentsOf: workspace.appendingPathComponent(path))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The workspace's files (outside .git and .cohort), sorted.
    func files(in workspace: URL) -> [String] {
        let all = (try? FileManager.default.subpathsOfDirectory(atPath: workspace.path)) ?? []
        return all.filter { path in
            !path.hasPrefix(".git") && !path.hasPrefix(".cohort") && {
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: workspace.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
            }()
        }.sorted()
    }

    func serverTip() throws -> String {
        try run("git", ["--git-dir", bare.path, "rev-parse", "main"], in: temp.url).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func head(of workspace: URL) throws -> String {
        try run("git", ["rev-parse", "HEAD"], in: workspace).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `cohort verify` passes in `workspace`, and git sees no local changes.
    func expectClean(_ workspace: URL, as home: IdentityHome, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let verified = try cohort(["verify"], in: workspace, as: home)
        #expect(verified.status == 0, "\(verified.stderr)", sourceLocation: sourceLocation)
        let status = try run("git", ["status", "--porcelain"], in: workspace).stdout
        #expect(status.isEmpty, "uncommitted: \(status)", sourceLocation: sourceLocation)
    }
}
