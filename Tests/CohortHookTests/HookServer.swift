import CohortBase
import CohortCollaboration
import CohortGit
import CohortHooks
import CohortTestSupport
import CohortIdentity
import CohortWorkspace
import Foundation
import Testing

/// How a test reaches the bare repository: both run git's receive-pack and the hook.
enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    case local
    case file

    var description: String { rawValue }
}

/// A bare repository with Cohort's hook, and the scenario's collaboration pushed into it.
final class HookServer {
    let scenario: Scenario
    let bare: URL
    let transport: Transport

    init(transport: Transport, scenario: Scenario? = nil, pushOwner: Bool = true) throws {
        self.scenario = try scenario ?? Scenario()
        self.transport = transport
        bare = self.scenario.temp.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: self.scenario.temp.url).status == 0)
        _ = try HookInstaller.install(into: bare, binary: cohortBinary, chain: false)
        if pushOwner {
            let pushed = try push(self.scenario.owner)
            #expect(pushed.status == 0, "\(pushed.stderr)")
        }
    }

    /// Every push kept as a pack (git unpacks fewer than 100 objects into loose files by default), so
    /// that the hook reads the pushed objects through its own pack reader.
    func keepPushesAsPacks() throws {
        #expect(try run("git", ["--git-dir", bare.path, "config", "receive.unpackLimit", "1"], in: scenario.temp.url).status == 0)
    }

    /// `workspace` edits a file and commits it the usual way, with its notice, and pushes it (accepted):
    /// the commit, and the path of the notice it added.
    func acceptedEditWithNotice(by workspace: Workspace, sourceLocation: SourceLocation = #_sourceLocation) throws -> (commit: ObjectID, notice: String) {
        let before = try workspace.head().commit
        try Data("rye \(UUID().uuidString)\n".utf8).write(to: workspace.directory.appendingPathComponent("rye.md"))
        _ = try #require(try workspace.commitChanges(message: "rye"), sourceLocation: sourceLocation)
        try expectAccepted(workspace, sourceLocation: sourceLocation)
        let commit = try workspace.head().commit
        let listed = try run("git", ["diff-tree", "-r", "--no-commit-id", "--name-only", before.hex, commit.hex, "--", CohortLayout.notices],
                             in: workspace.directory)
        let notice = try #require(listed.stdout.split(separator: "\n").first.map(String.init), sourceLocation: sourceLocation)
        return (commit, notice)
    }

    /// The URL git pushes to.
    var remote: String {
        transport == .local ? bare.path : "file://" + bare.path
    }

    /// `git push` from `workspace` (stock git, so the real receive-pack runs the hook).
    @discardableResult
    func push(_ workspace: Workspace, refspec: String = "main", force: Bool = false) throws -> ProcessResult {
        try run("git", ["push", "--porcelain"] + (force ? ["--force"] : []) + [remote, refspec], in: workspace.directory)
    }

    /// Where the server's ref points, or nil.
    func tip(_ ref: String = "refs/heads/main") throws -> String? {
        let result = try run("git", ["--git-dir", bare.path, "rev-parse", "--verify", "-q", ref], in: scenario.temp.url)
        return result.status == 0 ? result.stdout.trimmingCharacters(in: .newlines) : nil
    }

    /// A clone of the server for `home`.
    func clone(_ name: String, for home: IdentityHomeProvider) throws -> Workspace {
        let target = scenario.temp.path(name)
        #expect(try run("git", ["clone", "-q", remote, target.path], in: scenario.temp.url).status == 0)
        return try Workspace(containing: target, home: home.home)
    }

    /// Which program the installed `pre-receive` runs: `cohort-hook` (beside the cohort binary, as
    /// `make release` and `swift build` leave it) or `cohort hook pre-receive` (a cohort alone).
    enum Verifier { case cohortHook, cohortAlone }

    /// Installs the hooks again, running `verifier`.
    func use(_ verifier: Verifier) throws {
        var binary = cohortBinary
        if verifier == .cohortAlone {
            let alone = scenario.temp.path("cohort-alone")
            binary = alone.appendingPathComponent("cohort")
            if !FileManager.default.fileExists(atPath: binary.path) {
                try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(at: binary, withDestinationURL: cohortBinary)
            }
        }
        _ = try HookInstaller.install(into: bare, binary: binary, chain: false)
        let script = try String(decoding: Data(contentsOf: bare.appendingPathComponent("hooks/pre-receive")), as: UTF8.self)
        #expect(script.contains(verifier == .cohortHook ? "/cohort-hook' pre-receive --expect-version" : "/cohort-alone/cohort' hook pre-receive"), "\(script)")
    }

    /// Installs the hooks again, `pre-receive` asking the resident verifier at `socket` first.
    func useResident(_ socket: URL) throws {
        _ = try HookInstaller.install(into: bare, binary: cohortBinary, chain: false, resident: socket)
        let script = try String(decoding: Data(contentsOf: bare.appendingPathComponent("hooks/pre-receive")), as: UTF8.self)
        #expect(script.contains("/cohort-hook-client' '\(socket.path)' '\(CohortVersion.text)' '"), "\(script)")
    }

    /// Pushes and asserts the refusal: the code in a `cohort: rejected` line for `commit` (any code when
    /// nil: one that depends on where a changed byte fell), and the server's ref where it was. Returns
    /// the `cohort:` lines git relayed.
    @discardableResult
    func expectRefused(_ workspace: Workspace, _ code: String?, at commit: ObjectID? = nil, refspec: String = "main", force: Bool = false,
                       ref: String = "refs/heads/main", sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let before = try tip(ref)
        let result = try push(workspace, refspec: refspec, force: force)
        #expect(result.status != 0, "push was accepted", sourceLocation: sourceLocation)
        let line = "cohort: rejected \(commit?.hex ?? "")"
        #expect(result.stderr.contains(line) && code.map { result.stderr.contains(": \($0): ") } != false, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(try tip(ref) == before, "the server's \(ref) moved", sourceLocation: sourceLocation)
        return result.stderr.split(separator: "\n").map { $0.replacingOccurrences(of: "remote: ", with: "") }.filter { $0.hasPrefix("cohort:") }
    }

    func expectAccepted(_ workspace: Workspace, refspec: String = "main", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try push(workspace, refspec: refspec)
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(try tip() == workspace.head().commit.hex, sourceLocation: sourceLocation)
    }
}

/// Anything that names an identity home (a person).
protocol IdentityHomeProvider {
    var home: IdentityHome { get }
}

extension TestPerson: IdentityHomeProvider {}
