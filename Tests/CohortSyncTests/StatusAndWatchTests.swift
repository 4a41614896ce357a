import CohortTestSupport
import Foundation
import Testing

@Suite("cohort status and cohort watch")
struct StatusAndWatchTests {
    @Test("status shows local changes, ahead and behind, conflict copies, the last sync and pending notices")
    func status() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let home = fixture.scenario.bo.home
        let fresh = try fixture.cohort(["status", "--json"], in: bo, as: home)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let initial = try #require(JSONSerialization.jsonObject(with: Data(fresh.stdout.utf8)) as? [String: Any])
        #expect((initial["changes"] as? [Any])?.isEmpty == true)
        #expect(initial["ahead"] as? Int == 0)

        try fixture.write("new\n", "new.md", in: bo)
        try fixture.write("ann's\n", "ann.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try run("git", ["fetch", "-q", "origin"], in: bo).status == 0)
        let text = try fixture.cohort(["status"], in: bo, as: home)
        #expect(text.stdout.contains("local changes (1):"), "\(text.stdout)")
        #expect(text.stdout.contains("created  new.md"))
        #expect(text.stdout.contains("0 commits to push, 1 to pull"))

        try fixture.write("500 g flour\nbo\n", "bread/sourdough.md", in: bo)
        try fixture.write("500 g flour\nann\n", "bread/sourdough.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: home).status == 0)
        let after = try #require(JSONSerialization.jsonObject(with: Data(try fixture.cohort(["status", "--json"], in: bo, as: home).stdout.utf8)) as? [String: Any])
        #expect((after["conflictCopies"] as? [String])?.count == 1)
        #expect(after["lastSync"] is String)
        #expect(after["ahead"] as? Int == 0 && after["behind"] as? Int == 0)
        // No sinks: nothing is waiting for one. With a sink, what it has not had, by name.
        #expect(after["pendingNotices"] as? Int == 0)
        // A sink added now starts from now; one with history = "all" has what the syncs took in.
        try Data("[[sinks]]\ntype = \"file\"\nname = \"log\"\npath = \"notices.jsonl\"\n\n[[sinks]]\ntype = \"file\"\nname = \"all\"\npath = \"all.jsonl\"\nhistory = \"all\"\n".utf8)
            .write(to: bo.appendingPathComponent(".git/cohort/config.toml"))
        let withSink = try #require(JSONSerialization.jsonObject(with: Data(try fixture.cohort(["status", "--json"], in: bo, as: home).stdout.utf8)) as? [String: Any])
        let bySink = try #require(withSink["pendingBySink"] as? [String: Int])
        #expect(bySink["log"] == 0 && (bySink["all"] ?? 0) > 0, "\(withSink)")
        try fixture.write("500 g flour\nann\nmore\n", "bread/sourdough.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: home).status == 0)
        let delivered = try fixture.cohort(["status"], in: bo, as: home).stdout
        #expect(delivered.contains("notices not yet delivered: 0 to log, 0 to all"), "\(delivered)")
        let logged = try String(decoding: Data(contentsOf: bo.appendingPathComponent(".git/cohort/notices.jsonl")), as: UTF8.self)
        #expect(logged.split(separator: "\n").count == 1 && logged.contains("bread/sourdough.md"), "\(logged)")
        let all = try String(decoding: Data(contentsOf: bo.appendingPathComponent(".git/cohort/all.jsonl")), as: UTF8.self)
        #expect(all.split(separator: "\n").count == (bySink["all"] ?? 0) + 1)
    }

    @Test("watch syncs when changes settle, and stops cleanly on SIGTERM", .timeLimit(.minutes(3)))
    func watch() throws {
        let fixture = try SyncFixture()
        let output = fixture.temp.path("watch.out")
        let process = try Self.startWatch(in: fixture, ["--interval", "600", "--settle", "0.5"], output: output)
        let before = try fixture.serverTip()
        // Let the first (interval) sync pass, then change a file.
        Thread.sleep(forTimeInterval: 3)
        try fixture.write("written while watching\n", "watched.md", in: fixture.ann)
        let deadline = Date().addingTimeInterval(60)
        var landed = false
        while Date() < deadline, !landed {
            Thread.sleep(forTimeInterval: 0.5)
            let tree = try run("git", ["--git-dir", fixture.bare.path, "ls-tree", "--name-only", "main"], in: fixture.temp.url).stdout
            landed = tree.contains("watched.md")
        }
        #expect(landed, "\((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
        #expect(try fixture.serverTip() != before)
        kill(process.processIdentifier, SIGTERM)
        let stopBy = Date().addingTimeInterval(60)
        while process.isRunning, Date() < stopBy { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 0)
        #expect((try? String(contentsOf: output, encoding: .utf8))?.contains("stopped") == true)
    }

    @Test("watch offline: errors carry the time and the next try, the pause doubles, and edits are still committed here", .timeLimit(.minutes(2)))
    func watchOffline() throws {
        let fixture = try SyncFixture()
        #expect(try run("git", ["remote", "set-url", "origin", fixture.temp.path("unplugged.git").path], in: fixture.ann).status == 0)
        try fixture.write("offline edit\n", "offline.md", in: fixture.ann)
        let commitsBefore = try run("git", ["rev-list", "--count", "HEAD"], in: fixture.ann).stdout
        let output = fixture.temp.path("watch.out")
        let process = try Self.startWatch(in: fixture, ["--interval", "1", "--settle", "0.5"], output: output)
        let deadline = Date().addingTimeInterval(30)
        var text = ""
        while Date() < deadline, !text.contains("next try in 10 s") {
            Thread.sleep(forTimeInterval: 0.5)
            text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let errors = text.split(separator: "\n").filter { $0.hasPrefix("20") && $0.contains("Z error: ") }
        #expect(errors.count >= 2, "\(text)")
        #expect(errors.first?.contains("Z error: E_NETWORK: cannot reach") == true && errors.first?.hasSuffix("(next try in 5 s)") == true, "\(text)")
        #expect(errors.dropFirst().first?.hasSuffix("(next try in 10 s)") == true, "\(text)")
        #expect(try run("git", ["rev-list", "--count", "HEAD"], in: fixture.ann).stdout != commitsBefore)
    }

    /// `cohort watch ARGUMENTS` in Ann's workspace, standard output and error into `output`.
    static func startWatch(in fixture: SyncFixture, _ arguments: [String], output: URL) throws -> Process {
        let process = Process()
        process.executableURL = cohortBinary
        process.arguments = ["watch"] + arguments
        process.currentDirectoryURL = fixture.ann
        process.environment = ProcessInfo.processInfo.environment.merging(["COHORT_HOME": fixture.scenario.ann.home.directory.path]) { $1 }
        FileManager.default.createFile(atPath: output.path, contents: nil)
        // One handle for both, so that lines from the two streams never overwrite each other.
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }
}
