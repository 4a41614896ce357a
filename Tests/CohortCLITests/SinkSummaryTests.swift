import CohortTestSupport
import Foundation
import Testing

/// A sink that gave up, or stopped on a failure, shows in every summary: `notices deliver`, `sync`
/// (text and JSON) and `status` (text and JSON), with its reason.
@Suite struct SinkSummaryTests {
    /// A `[[sinks]]` table of an exec sink named `name` running `command` (TOML array items, quoted).
    static func execSink(_ name: String, _ command: String) -> String {
        """
        [[sinks]]
        type = "exec"
        name = "\(name)"
        command = [\(command)]
        history = "all"

        """
    }

    @Test func failingSinksAreNamedWithTheirReasons() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        #expect(try run("git", ["init", "-q", "--bare", sandbox.path("origin.git").path], in: sandbox.url).status == 0)
        #expect(try run("git", ["remote", "add", "origin", sandbox.path("origin.git").path], in: sandbox.path("recipes")).status == 0)
        let closed = try freePort()
        try sandbox.write("recipes/.git/cohort/config.toml", Self.execSink("refuser", #""sh", "-c", "echo not for me >&2; exit 3""#) + """
            [[sinks]]
            type = "webhook"
            name = "down"
            url = "http://127.0.0.1:\(closed)/hooks"
            secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
            timeout = 2
            history = "all"

            """)
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0)
        #expect(delivered.stderr.contains("refuser: 0 delivered, 1 given up") && delivered.stderr.contains("cohort sinks replay refuser"), "\(delivered.stderr)")
        #expect(delivered.stderr.contains("down: 0 delivered, 1 waiting: down: "), "\(delivered.stderr)")

        let status = try ann.run(["status"])
        #expect(status.stdout.contains("sink refuser: gave up on 1 notice"), "\(status.stdout)")
        #expect(status.stdout.contains("sink down: its last delivery stopped: down: "), "\(status.stdout)")
        let json = try #require(jsonLines(try ann.run(["status", "--json"]).stdout).first)
        let sinks = try #require(json["sinks"] as? [[String: Any]])
        #expect(sinks.first { $0["name"] as? String == "refuser" }?["givenUp"] as? Int == 1)
        #expect((sinks.first { $0["name"] as? String == "down" }?["stoppedBecause"] as? String)?.hasPrefix("down: ") == true)

        try sandbox.write("recipes/bread.md", "flour\nwater\n")
        let synced = try ann.run(["sync"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("notices: 0 delivered to refuser, 1 given up"), "\(synced.stdout)")
        #expect(synced.stdout.contains("notices: 0 delivered to down, "), "\(synced.stdout)")
        try sandbox.write("recipes/bread.md", "flour\nwater\nsalt\n")
        let report = try #require(jsonLines(try ann.run(["sync", "--json"]).stdout).first)
        let reported = try #require(report["sinks"] as? [[String: Any]])
        #expect(reported.first { $0["name"] as? String == "refuser" }?["givenUp"] as? Int == 1, "\(reported)")
        #expect(reported.first { $0["name"] as? String == "down" }?["stoppedBecause"] is String, "\(reported)")
    }

    /// The command a summary names for a sink that gave up works: once the sink accepts again,
    /// `cohort sinks replay NAME` delivers what it gave up on, once. An unknown name says where it looked.
    @Test func theReplayCommandASummaryNamesDeliversWhatWasGivenUp() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        let received = sandbox.path("received.jsonl")
        func configure(_ command: String) throws {
            try sandbox.write("recipes/.git/cohort/config.toml", Self.execSink("picky", #""sh", "-c", "\#(command)""#))
        }
        try configure("exit 3")
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.stderr.contains("picky: 0 delivered, 1 given up") && delivered.stderr.contains("`cohort sinks replay picky` tries again"),
                "\(delivered.stderr)")
        try configure("cat >> '\(received.path)'")
        let replayed = try ann.run(["sinks", "replay", "picky"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(try String(decoding: Data(contentsOf: received), as: UTF8.self).split(separator: "\n").count == 1)
        #expect(try ann.run(["notices", "deliver"]).status == 0)
        #expect(try String(decoding: Data(contentsOf: received), as: UTF8.self).split(separator: "\n").count == 1)

        let unknown = try ann.run(["sinks", "replay", "nosuch"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("error: E_MALFORMED: no sink is named 'nosuch' in ") && unknown.stderr.contains("config.toml"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("`cohort sinks list`") && !unknown.stderr.contains("COHORT_SERVER_SINKS"), "\(unknown.stderr)")
    }

    /// A sink whose state cannot be read does not start, says why, and keeps its notices; the other
    /// sinks go on.
    @Test func aSinkThatCannotStartIsReportedAndTheOthersGoOn() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        try sandbox.write("recipes/.git/cohort/config.toml", """
            [[sinks]]
            type = "file"
            path = "\(sandbox.path("filed.jsonl").path)"
            history = "all"

            [[sinks]]
            type = "webhook"
            name = "hook"
            url = "http://127.0.0.1:\(try freePort())/hooks"
            secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
            history = "all"

            """)
        let state = sandbox.path("recipes/.git/cohort/sinks/hook-\(try sinkDigest("hook"))")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: state.appendingPathComponent("state.json"))
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0)
        #expect(delivered.stderr.contains("hook: 0 delivered, 1 waiting: the sink cannot start: E_MALFORMED: the webhook state"), "\(delivered.stderr)")
        #expect(delivered.stderr.contains("remove it to start the sink afresh"), "\(delivered.stderr)")
        #expect(try sandbox.read("filed.jsonl").split(separator: "\n").count == 1)
        #expect(try ann.run(["status"]).stdout.contains("sink hook: its last delivery stopped: the sink cannot start"))
    }

    /// The folder name `NoticeOutbox.fileName(for:)` gives a sink: its name and the first 4 bytes of
    /// the SHA-256 of the name, in hex.
    func sinkDigest(_ name: String) throws -> String {
        let result = try run("sh", ["-c", "printf %s \"$1\" | sha256sum | cut -c1-8", "sh", name], in: URL(fileURLWithPath: "/"))
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A workspace that never delivered: a sink configured, then a commit and a comment; the first
    /// delivery gives the sink those two notices and none of the history before them.
    @Test func aSinkConfiguredBeforeTheFirstChangesGetsThem() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n", "cake.md": "eggs\n"])
        try sandbox.write("recipes/.git/cohort/config.toml", "[[sinks]]\ntype = \"file\"\npath = \"\(sandbox.path("filed.jsonl").path)\"\n")
        try sandbox.write("recipes/bread.md", "flour\nsalt\n")
        #expect(try ann.run(["commit", "-m", "salt"]).status == 0)
        #expect(try ann.run(["comment", "cake.md", "--text", "more eggs"]).status == 0)
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0, "\(delivered.stderr)")
        let lines = try sandbox.read("filed.jsonl").split(separator: "\n")
        #expect(lines.count == 2 && lines.first?.contains("content.edited") == true && lines.last?.contains("content.commented") == true,
                "\(lines)")
    }

    /// A program that exits without reading its notice closes the pipe before Cohort writes: the
    /// delivery goes on (the exit status decides) instead of the process dying of SIGPIPE.
    @Test func anExecSinkThatNeverReadsDoesNotEndTheProcess() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(Dictionary(uniqueKeysWithValues: (0..<40).map { ("r\($0).md", "recipe \($0)\n") }))
        try sandbox.write("recipes/.git/cohort/config.toml", Self.execSink("deaf", #""true""#))
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0 && delivered.stderr.contains("deaf: 40 delivered"), "\(delivered.status) \(delivered.stderr)")
    }
}

