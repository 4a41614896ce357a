import CohortTestSupport
import Foundation
import Testing

/// `cohort serve` runs a resident verifier (`cohort hook serve`) beside it, which the hosted
/// repositories' hooks ask first.
@Suite("cohort serve's resident verifier", .serialized)
struct ResidentVerifierServiceTests {
    @Test("pushes through cohort serve are verified by the resident verifier it runs, with the hook's lines; it stops with the server and says how many it verified")
    func pushesVerifiedByTheServersVerifier() throws {
        let hosted = try Hosted()
        let socket = try #require(hosted.server.verifierSocket)
        let preReceive = try String(contentsOf: hosted.server.data.appendingPathComponent("collaborations/\(hosted.identifier).git/hooks/pre-receive"),
                                    encoding: .utf8)
        #expect(preReceive.contains("cohort-hook-client") && preReceive.contains(socket.path), "\(preReceive)")
        let verifiers = hosted.server.verifierProcesses()
        #expect(verifiers.count == 1)

        let bo = hosted.scenario.bo.home
        let clone = hosted.temp.path("bo")
        #expect(try hosted.git(["clone", hosted.link, clone.path], as: bo).status == 0)
        try Data("500 g flour, 10 g salt\n".utf8).write(to: clone.appendingPathComponent("bread/sourdough.md"))
        #expect(try hosted.cohort(["commit", "-m", "salt"], as: bo, in: clone).status == 0)
        let pushed = try hosted.git(["push", "origin", "main"], as: bo, in: clone)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let tip = try hosted.serverTip()
        _ = try run("git", ["-c", "user.name=Bo", "-c", "user.email=bo@example.com", "commit", "-q", "--allow-empty", "-m", "unsigned"], in: clone)
        let unsigned = try run("git", ["rev-parse", "HEAD"], in: clone).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try hosted.git(["push", "origin", "main"], as: bo, in: clone)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("remote: cohort: rejected \(unsigned) (refs/heads/main): E_BAD_SIGNATURE"), "\(refused.stderr)")
        #expect(try hosted.serverTip() == tip)

        #expect(hosted.server.stop() == 0)
        // The publish, the accepted push and the refused one: all three answered by the verifier.
        #expect(hosted.server.logText().contains("resident verifier: stopped; 3 pushes verified"), "\(hosted.server.logText())")
        #expect(!ServerProcess.isSocket(socket.path))
        for pid in verifiers { #expect(!Self.isRunning(pid), "verifier \(pid) outlived the server") }

        // Started again without one: the hosted repository's hook is installed again to verify each push itself.
        let again = try ServerProcess(data: hosted.server.data, arguments: ["--no-resident-verifier"])
        defer { again.stop() }
        let plain = try String(contentsOf: hosted.server.data.appendingPathComponent("collaborations/\(hosted.identifier).git/hooks/pre-receive"),
                               encoding: .utf8)
        #expect(!plain.contains("cohort-hook-client") && !plain.contains(socket.path), "\(plain)")
        #expect(again.verifierProcesses().isEmpty)
    }

    @Test("a verifier that dies is started again, pushes meanwhile verified by the hook program; the group's SIGTERM is left to the server")
    func verifierReplaced() throws {
        let hosted = try Hosted()
        let socket = try #require(hosted.server.verifierSocket)
        let bo = hosted.scenario.bo.home
        let clone = hosted.temp.path("bo")
        #expect(try hosted.git(["clone", hosted.link, clone.path], as: bo).status == 0)
        try Data("500 g flour, 10 g salt\n".utf8).write(to: clone.appendingPathComponent("bread/sourdough.md"))
        #expect(try hosted.cohort(["commit", "-m", "salt"], as: bo, in: clone).status == 0)

        // A SIGTERM meant for the server's whole group (a service manager's stop) is the server's to act on.
        let first = try #require(hosted.server.verifierProcesses().first)
        kill(first, SIGTERM)
        usleep(300_000)
        #expect(Self.isRunning(first))
        kill(first, SIGKILL)
        // Pushed at once: the hook finds no verifier (or the new one) and the push lands either way.
        let pushed = try hosted.git(["push", "origin", "main"], as: bo, in: clone)
        #expect(pushed.status == 0, "\(pushed.stderr)")

        let deadline = Date().addingTimeInterval(30)
        var second: pid_t?
        while second == nil, Date() < deadline {
            second = hosted.server.verifierProcesses().first { $0 != first }
            if second == nil { usleep(50_000) }
        }
        _ = try #require(second, "no verifier started again; log: \(hosted.server.logText())")
        while !ServerProcess.isSocket(socket.path), Date() < deadline { usleep(20_000) }
        _ = try run("git", ["-c", "user.name=Bo", "-c", "user.email=bo@example.com", "commit", "-q", "--allow-empty", "-m", "unsigned"], in: clone)
        let refused = try hosted.git(["push", "origin", "main"], as: bo, in: clone)
        #expect(refused.stderr.contains("E_BAD_SIGNATURE"), "\(refused.stderr)")

        #expect(hosted.server.stop() == 0)
        let log = hosted.server.logText()
        #expect(log.contains("the resident verifier ended"), "\(log)")
        // Only the new verifier says how many it verified (the first was killed): the refused push at least.
        let count = log.components(separatedBy: "resident verifier: stopped; ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
        #expect((count ?? 0) >= 1, "\(log)")
    }

    @Test("a server killed outright leaves no verifier behind: its verifier's input ends and it stops, removing its socket")
    func neverOrphaned() throws {
        let temp = try TemporaryDirectory()
        let server = try ServerProcess(data: temp.path("data"))
        let socket = try #require(server.verifierSocket)
        let verifier = try #require(server.verifierProcesses().first)
        kill(server.process.processIdentifier, SIGKILL)
        let gone = Date().addingTimeInterval(30)
        while Self.isRunning(verifier) || ServerProcess.isSocket(socket.path), Date() < gone { usleep(50_000) }
        #expect(!Self.isRunning(verifier), "the verifier outlived a killed server")
        #expect(!ServerProcess.isSocket(socket.path))
    }

    @Test("--no-resident-verifier runs none and installs hooks that verify each push themselves; a socket path too long is one plain line")
    func optingOut() throws {
        let temp = try TemporaryDirectory()
        let server = try ServerProcess(data: temp.path("data"), arguments: ["--no-resident-verifier"])
        defer { server.stop() }
        #expect(server.verifierProcesses().isEmpty)
        #expect(!ServerProcess.isSocket(temp.path("data/server/verifier.sock").path))
        #expect(!(try String(contentsOf: temp.path("data/server/hooks"), encoding: .utf8)).contains("cohort-hook-client"))
        #expect(server.logText().contains("no resident verifier (--no-resident-verifier)"), "\(server.logText())")

        let long = "/" + String(repeating: "v", count: 120)
        let result = try run(cohortBinary.path, ["serve", "--data", temp.path("other").path, "--listen", "127.0.0.1:0", "--verifier-socket", long], in: temp.url)
        #expect(result.status != 0)
        #expect(result.stderr.hasPrefix("error: E_USAGE: --verifier-socket is 121 bytes long; a socket's path may have at most 107"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        let relative = try run(cohortBinary.path, ["serve", "--data", temp.path("other").path, "--listen", "127.0.0.1:0", "--verifier-socket", "verifier.sock"], in: temp.url)
        #expect(relative.stderr.hasPrefix("error: E_USAGE: --verifier-socket verifier.sock is not the absolute path"), "\(relative.stderr)")
        #expect(!FileManager.default.fileExists(atPath: temp.path("other").path))
    }

    /// Whether `pid` is a live process (not gone, not a zombie waiting for its parent).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }
}
