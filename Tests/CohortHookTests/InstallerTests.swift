import CohortHooks
import CohortTestSupport
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

        expectCode(.io) { try HookInstaller.install(into: bare, binary: cohortBinary, chain: false) }
        #expect(try String(decoding: Data(contentsOf: hooks.appendingPathComponent("pre-receive")), as: UTF8.self) == foreign)

        #expect(try HookInstaller.install(into: bare, binary: cohortBinary, chain: true).0 == .chained)
        #expect(try String(decoding: Data(contentsOf: hooks.appendingPathComponent(HookInstaller.chainedName)), as: UTF8.self) == foreign)
        #expect(try HookInstaller.install(into: bare, binary: cohortBinary, chain: false).0 == .updated)
        #expect(try HookInstaller.install(into: bare, binary: cohortBinary, chain: true).0 == .updated)
        let mode = try FileManager.default.attributesOfItem(atPath: hooks.appendingPathComponent("pre-receive").path)[.posixPermissions] as? Int
        #expect(mode == 0o755)
        #expect(try String(decoding: Data(contentsOf: bare.appendingPathComponent("HEAD")), as: UTF8.self) == "ref: refs/heads/main\n")
    }

    /// The chained hook runs after Cohort's checks, with the same input, and can still refuse.
    @Test func chainedHookRunsAfterwards() throws {
        let server = try HookServer(transport: .local, pushOwner: false)
        let hooks = server.bare.appendingPathComponent("hooks")
        try FileManager.default.moveItem(at: hooks.appendingPathComponent("pre-receive"), to: server.scenario.temp.path("ours"))
        try Data("#!/bin/sh\nwhile read old new ref; do echo \"policy saw $ref\" >&2; done\nexit 1\n".utf8).write(to: hooks.appendingPathComponent("pre-receive"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hooks.appendingPathComponent("pre-receive").path)
        _ = try HookInstaller.install(into: server.bare, binary: cohortBinary, chain: true)
        let result = try server.push(server.scenario.owner)
        #expect(result.status != 0)
        #expect(result.stderr.contains("policy saw refs/heads/main"), "\(result.stderr)")
        #expect(try server.tip() == nil)
    }

    @Test func refusesWhatIsNotARepository() throws {
        let temp = try TemporaryDirectory()
        expectCode(.git) { try HookInstaller.install(into: temp.path("nothing"), binary: cohortBinary, chain: false) }
    }
}
