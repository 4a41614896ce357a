import CohortBase
import CohortCollaboration
import CohortGit
import CohortHooks
import CohortTestSupport
import CohortVerification
import Foundation
import Testing

@Suite struct InstallerTests {
    @Test func installIsIdempotentAndNeverOverwritesAForeignHook() throws {
        let temp = try TemporaryDirectory()
        let bare = temp.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: temp.url).status == 0)
        let hooks = bare.appendingPathComponent("hooks")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        let foreign = "#!/bin/sh\necho foreign hook ran >&2\nexit 0\n"
        try Data(foreign.utf8).write(to: hooks.appendingPathComponent("pre-receive"))

        // Refused as a whole: not even post-receive is written.
        expectCode(.io) { try HookInstaller.install(into: bare, binary: cohortBinary, chain: false) }
        #expect(try String(decoding: Data(contentsOf: hooks.appendingPathComponent("pre-receive")), as: UTF8.self) == foreign)
        #expect(!FileManager.default.fileExists(atPath: hooks.appendingPathComponent("post-receive").path))

        let chained = try HookInstaller.install(into: bare, binary: cohortBinary, chain: true)
        #expect(chained.map(\.outcome) == [.chained, .installed])
        #expect(try String(decoding: Data(contentsOf: hooks.appendingPathComponent(HookInstaller.chainedName("pre-receive"))), as: UTF8.self) == foreign)
        #expect(try HookInstaller.install(into: bare, binary: cohortBinary, chain: false).map(\.outcome) == [.updated, .updated])
        #expect(try HookInstaller.install(into: bare, binary: cohortBinary, chain: true).map(\.outcome) == [.updated, .updated])
        for name in HookInstaller.hooks {
            let mode = try FileManager.default.attributesOfItem(atPath: hooks.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o755)
        }
        #expect(try String(decoding: Data(contentsOf: bare.appendingPathComponent("HEAD")), as: UTF8.self) == "ref: refs/heads/main\n")
    }

    /// The chained hook runs after Cohort's checks, with the same input, and can still refuse.
    @Test func chainedHookRunsAfterwards() throws {
        let server = try HookServer(transport: .local, pushOwner: false)
        let hooks = server.bare.appendingPathComponent("hooks")
        try FileManager.default.removeItem(at: hooks.appendingPathComponent("pre-receive"))
        try FileManager.default.removeItem(at: hooks.appendingPathComponent("post-receive"))
        try Data("#!/bin/sh\nwhile read old new ref; do echo \"policy saw $ref\" >&2; done\nexit 1\n".utf8).write(to: hooks.appendingPathComponent("pre-receive"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hooks.appendingPathComponent("pre-receive").path)
        _ = try HookInstaller.install(into: server.bare, binary: cohortBinary, chain: true)
        let result = try server.push(server.scenario.owner)
        #expect(result.status != 0)
        #expect(result.stderr.contains("policy saw refs/heads/main"), "\(result.stderr)")
        #expect(try server.tip() == nil)
    }

    /// Without a chained hook, git's input goes straight to Cohort, and `post-receive` starts Cohort
    /// only when a sinks file exists; a chained `post-receive` still gets the input either way.
    @Test func postReceiveStartsCohortOnlyForSinks() throws {
        let server = try HookServer(transport: .local, pushOwner: false)
        let scenario = server.scenario
        // The hooks call a wrapper that logs each start, then runs Cohort.
        let log = scenario.temp.path("starts.log")
        let wrapper = scenario.temp.path("cohort wrapper")
        try Data("#!/bin/sh\necho \"$*\" >> '\(log.path)'\nexec '\(cohortBinary.path)' \"$@\"\n".utf8).write(to: wrapper)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper.path)
        _ = try HookInstaller.install(into: server.bare, binary: wrapper, chain: false)
        func starts() throws -> [String] {
            guard FileManager.default.fileExists(atPath: log.path) else { return [] }
            return try String(decoding: Data(contentsOf: log), as: UTF8.self).split(separator: "\n").map(String.init)
        }

        #expect(try server.push(scenario.owner).status == 0)
        #expect(try starts() == ["hook pre-receive"])

        // A sinks file: the next push's notices reach it.
        let jsonl = scenario.temp.path("notices.jsonl")
        try FileManager.default.createDirectory(at: server.bare.appendingPathComponent("cohort"), withIntermediateDirectories: true)
        try Data("[[sinks]]\ntype = \"file\"\npath = \"\(jsonl.path)\"\n".utf8)
            .write(to: server.bare.appendingPathComponent(CohortDirectory.sinksFileInGitDirectory))
        _ = try scenario.owner.comment(on: "shortbread.md", text: "more butter")
        let pushed = try server.push(scenario.owner)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(try starts() == ["hook pre-receive", "hook pre-receive", "hook post-receive"])
        #expect(try String(decoding: Data(contentsOf: jsonl), as: UTF8.self).split(separator: "\n").count == 1)

        // No sinks file, but a chained post-receive: it still reads git's input, Cohort stays out.
        try FileManager.default.removeItem(at: server.bare.appendingPathComponent(CohortDirectory.sinksFileInGitDirectory))
        let hooks = server.bare.appendingPathComponent("hooks")
        let seen = scenario.temp.path("chained.log")
        try FileManager.default.removeItem(at: hooks.appendingPathComponent("post-receive"))
        try Data("#!/bin/sh\ncat > '\(seen.path)'\n".utf8).write(to: hooks.appendingPathComponent("post-receive"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hooks.appendingPathComponent("post-receive").path)
        #expect(try HookInstaller.install(into: server.bare, binary: wrapper, chain: true).map(\.outcome) == [.updated, .chained])
        _ = try scenario.owner.comment(on: "shortbread.md", text: "less sugar")
        #expect(try server.push(scenario.owner).status == 0)
        #expect(try starts().count == 4)
        let tip = try #require(try server.tip())
        #expect(try String(decoding: Data(contentsOf: seen), as: UTF8.self).hasSuffix(" \(tip) refs/heads/main\n"))
    }

    /// Input cut short never passes: empty or stopping inside a line, straight to Cohort or through a
    /// chained hook's copy that cannot be written (a file size limit stands in for a full disk).
    @Test func inputCutShortIsRefused() throws {
        let server = try HookServer(transport: .local, pushOwner: true)
        let tip = try #require(try server.tip())
        let line = "\(String(repeating: "0", count: 40)) \(tip) refs/heads/other"
        for input in ["", line] {
            let result = try run(cohortBinary.path, ["hook", "pre-receive"], in: server.bare, environment: ["GIT_DIR": "."], stdin: Data(input.utf8))
            #expect(result.status == 1)
            #expect(result.stderr.contains("E_MALFORMED"), "\(result.stderr)")
        }
        // More than the hook reads, through either program: refused, never read as fewer updates.
        let verifier = HookInstaller.sibling(of: cohortBinary)
        let oversized = Data(repeating: UInt8(ascii: "\n"), count: PreReceiveHook.maxInputBytes + 1)
        for (program, arguments) in [(cohortBinary, ["hook", "pre-receive"]), (verifier, ["pre-receive", "--expect-version", CohortVersion.text])] {
            let result = try run(program.path, arguments, in: server.bare, environment: ["GIT_DIR": "."], stdin: oversized)
            #expect(result.status == 1)
            #expect(result.stderr == "cohort: error: E_TOO_LARGE: pre-receive input on standard input is larger than \(PreReceiveHook.maxInputBytes) bytes (\(PushLimits.tooManyUpdatesHint))\n", "\(result.stderr)")
        }
        let hooks = server.bare.appendingPathComponent("hooks")
        try FileManager.default.removeItem(at: hooks.appendingPathComponent("pre-receive"))
        try Data("#!/bin/sh\nexit 0\n".utf8).write(to: hooks.appendingPathComponent("pre-receive"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hooks.appendingPathComponent("pre-receive").path)
        _ = try HookInstaller.install(into: server.bare, binary: cohortBinary, chain: true)
        let limited = try run("sh", ["-c", "ulimit -f 0; exec hooks/pre-receive"], in: server.bare, environment: ["GIT_DIR": "."],
                              stdin: Data((line + "\n").utf8))
        #expect(limited.status != 0, "\(limited.stderr)")
    }

    /// The hook runs `cohort-hook` when it sits beside cohort, and refuses every push when that program
    /// is not the installer's version (one left behind by an earlier install); a cohort alone runs
    /// `cohort hook pre-receive`. Both accept what is good.
    @Test func theVerifierBesideCohortIsTheInstallersVersion() throws {
        let verifier = HookInstaller.sibling(of: cohortBinary)
        let server = try HookServer(transport: .local, pushOwner: false)
        let scenario = server.scenario
        let script = server.bare.appendingPathComponent("hooks/pre-receive")
        #expect(try String(decoding: Data(contentsOf: script), as: UTF8.self).contains("'\(verifier.path)' pre-receive --expect-version '\(CohortVersion.text)'"))
        #expect(try run(verifier.path, ["--version"], in: scenario.temp.url).stdout == CohortVersion.text + "\n")
        let usage = try run(verifier.path, [], in: scenario.temp.url)
        #expect(usage.status == 64 && usage.stderr.hasPrefix("error: E_USAGE: cohort-hook takes"), "\(usage.stderr)")

        // Installed by another version: every push is refused, with what to do.
        let current = try String(decoding: Data(contentsOf: script), as: UTF8.self)
        try Data(current.replacingOccurrences(of: "--expect-version '\(CohortVersion.text)'", with: "--expect-version '0.1.9'").utf8).write(to: script)
        let stale = try server.push(scenario.owner)
        #expect(stale.status != 0)
        #expect(stale.stderr.contains("cohort: error: E_GIT: this hook was installed by cohort 0.1.9, but \(verifier.path) is version \(CohortVersion.text)"),
                "\(stale.stderr)")
        #expect(stale.stderr.contains("run `cohort hook install` on the repository again"), "\(stale.stderr)")
        #expect(try server.tip() == nil)

        // A cohort alone, then cohort-hook again: both accept the good push.
        try server.use(.cohortAlone)
        #expect(try server.push(scenario.owner).status == 0)
        try server.use(.cohortHook)
        _ = try scenario.owner.comment(on: "shortbread.md", text: "more butter")
        #expect(try server.push(scenario.owner).status == 0)
        #expect(try server.tip() == scenario.owner.head().commit.hex)
    }

    /// Only a `cohort-hook` that answers `--version` with this version is handed pushes: a program that
    /// merely bears the name (one that accepts everything, one of another version) is passed over for
    /// `cohort hook pre-receive`. A program replaced in place changes what a server compares at start.
    @Test func aProgramThatOnlyBearsTheNameIsNotTheVerifier() throws {
        let temp = try TemporaryDirectory()
        let folder = temp.path("bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let binary = folder.appendingPathComponent("cohort")
        try FileManager.default.createSymbolicLink(at: binary, withDestinationURL: cohortBinary)
        let sibling = folder.appendingPathComponent(HookInstaller.verifierName)
        for (index, impostor) in ["#!/bin/sh\nexit 0\n", "#!/bin/sh\necho 0.1.9\n", "#!/bin/sh\necho \(CohortVersion.text); echo more\n"].enumerated() {
            try? FileManager.default.removeItem(at: sibling)
            try Data(impostor.utf8).write(to: sibling)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sibling.path)
            #expect(HookInstaller.program("pre-receive", binary: binary) == binary, "impostor \(index)")
        }
        let before = HookInstaller.scripts(binary: binary)
        try FileManager.default.removeItem(at: sibling)
        try FileManager.default.createSymbolicLink(at: sibling, withDestinationURL: HookInstaller.sibling(of: cohortBinary))
        #expect(HookInstaller.program("pre-receive", binary: binary) == sibling)
        #expect(HookInstaller.program("post-receive", binary: binary) == binary)
        #expect(HookInstaller.scripts(binary: binary) != before)
    }

    @Test func refusesWhatIsNotARepository() throws {
        let temp = try TemporaryDirectory()
        expectCode(.git) { try HookInstaller.install(into: temp.path("nothing"), binary: cohortBinary, chain: false) }
    }
}

@Suite struct PostReceiveTests {
    /// After an accepted push, the server's sinks get the push's notices, mentions included, once.
    @Test(arguments: Transport.allCases)
    func acceptedPushDeliversItsNotices(transport: Transport) throws {
        let server = try HookServer(transport: transport, pushOwner: false)
        let scenario = server.scenario
        let jsonl = scenario.temp.path("server-notices.jsonl")
        try FileManager.default.createDirectory(at: server.bare.appendingPathComponent("cohort"), withIntermediateDirectories: true)
        try Data("[[sinks]]\ntype = \"file\"\npath = \"\(jsonl.path)\"\n".utf8).write(to: server.bare.appendingPathComponent("cohort/config.toml"))
        #expect(try server.push(scenario.owner).status == 0)
        let first = try String(decoding: Data(contentsOf: jsonl), as: UTF8.self).split(separator: "\n")
        #expect(first.count == 4)  // two files created, Bo and Cy added

        _ = try scenario.owner.comment(on: "shortbread.md", text: "for @cy@example.com")
        let pushed = try server.push(scenario.owner)
        #expect(pushed.status == 0)
        #expect(pushed.stderr.contains("cohort: file:\(jsonl.path): 2 notices delivered"), "\(pushed.stderr)")
        let all = try String(decoding: Data(contentsOf: jsonl), as: UTF8.self).split(separator: "\n")
        #expect(all.count == 6)
        #expect(all.suffix(2).contains { $0.contains("\"type\":\"mention\"") })

        // A refused push delivers nothing.
        let bo = try server.clone("bo-clone", for: scenario.bo)
        let eve = try TestPerson.make("eve", in: scenario.temp)
        _ = try forge(bo, signer: signer(eve.home, in: bo), files: ["eve.md": Data("eve".utf8)])
        #expect(try server.push(bo).status != 0)
        #expect(try String(decoding: Data(contentsOf: jsonl), as: UTF8.self).split(separator: "\n").count == 6)
    }

    /// Sinks configured on a repository that already has a history: the first push after that gives
    /// a new sink only what it brings, and one asking for everything every branch's history too.
    @Test func sinksAddedLaterStartFromThePushUnlessTheyAskForEverything() throws {
        let server = try HookServer(transport: .local, pushOwner: false)
        let scenario = server.scenario
        #expect(try server.push(scenario.owner).status == 0)
        let history = try scenario.owner.notices().count
        let fresh = scenario.temp.path("fresh.jsonl")
        let everything = scenario.temp.path("everything.jsonl")
        try FileManager.default.createDirectory(at: server.bare.appendingPathComponent("cohort"), withIntermediateDirectories: true)
        try Data("""
            [[sinks]]
            type = "file"
            path = "\(fresh.path)"

            [[sinks]]
            type = "file"
            path = "\(everything.path)"
            history = "all"

            """.utf8).write(to: server.bare.appendingPathComponent("cohort/config.toml"))
        _ = try scenario.owner.comment(on: "shortbread.md", text: "crisp")
        #expect(try server.push(scenario.owner).status == 0)
        let freshLines = try String(decoding: Data(contentsOf: fresh), as: UTF8.self).split(separator: "\n")
        let everyLine = try String(decoding: Data(contentsOf: everything), as: UTF8.self).split(separator: "\n")
        #expect(freshLines.count == 1 && freshLines[0].contains("\"type\":\"content.commented\""), "\(freshLines)")
        #expect(everyLine.count == history + 1 && everyLine.last?.contains("content.commented") == true, "\(everyLine.count) for \(history) + 1")
    }

    /// An outsider's commit, with a notice she signed herself, refused by the hook and by `cohort
    /// verify`, then written onto a branch of the server past the hook: when sinks are added later and
    /// one asks for every branch's history, her notice is not among what goes out.
    @Test func aBranchWrittenPastTheHookNeverReachesASinkAskingForEverything() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let eveSigner = try signer(eve.home, in: bo)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: eveSigner.root, data: ["path": "eve.md"], signer: eveSigner.signer)
        let attack = try forge(bo, signer: eveSigner, files: [notice.path: try sealed(notice, by: eveSigner), "eve.md": Data("eve\n".utf8)])
        try server.expectRefused(bo, "E_UNKNOWN_ROOT", at: attack)
        expectViolation(.unknownRoot, in: bo, at: attack)
        #expect(try run("git", ["--git-dir", server.bare.path, "fetch", "-q", bo.directory.path, "+\(attack.hex):refs/heads/side"],
                        in: scenario.temp.url).status == 0)

        let everything = scenario.temp.path("everything.jsonl")
        try FileManager.default.createDirectory(at: server.bare.appendingPathComponent("cohort"), withIntermediateDirectories: true)
        try Data("[[sinks]]\ntype = \"file\"\npath = \"\(everything.path)\"\nhistory = \"all\"\n".utf8)
            .write(to: server.bare.appendingPathComponent("cohort/config.toml"))
        _ = try scenario.owner.comment(on: "shortbread.md", text: "crisp")
        let pushed = try server.push(scenario.owner)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("branch refs/heads/side fails verification"), "\(pushed.stderr)")
        let delivered = try String(decoding: Data(contentsOf: everything), as: UTF8.self)
        #expect(delivered.contains("content.commented") && !delivered.contains(notice.id) && !delivered.contains(eveSigner.root.hex), "\(delivered)")
    }
}

