import CohortBase
import CohortNotices
import CohortSinks
import CohortTestSupport
import ExecSink
import FileSink
import StdoutSink
import WebhookSink
import Foundation
import Testing

@Suite struct SinkConfigurationTests {
    let file = URL(fileURLWithPath: "/srv/cohort/config.toml")
    let shipped = ShippedSinks.registry

    @Test func readsEveryKindOfSink() async throws {
        let specs = try SinkConfiguration.parse("""
        # notices for the team
        [[sinks]]
        type = "stdout"
        format = "json"

        [[sinks]]
        type = "file"
        path = "notices.jsonl"

        [[sinks]]
        type = "exec"
        name = "chat"
        command = ["python3", "my_sink.py"]
        timeout = 10

        [[sinks]]
        type = "webhook"
        url = "http://127.0.0.1:9000/hooks"
        secret = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"]
        retry_schedule = [5, 60]
        disable_after = 3600
        history = "all"
        """, file: file, registry: shipped)
        #expect(specs.map(\.type) == ["stdout", "file", "exec", "webhook"])
        #expect(specs.map(\.history) == [.new, .new, .new, .all])
        #expect(specs.map(\.name) == ["stdout", "file:/srv/cohort/notices.jsonl", "chat", "webhook:http://127.0.0.1:9000/hooks"])
        let temp = try TemporaryDirectory()
        let sinks = try specs.map { try $0.make(stateDirectory: temp.path("state")) }
        let stdout = try #require(sinks[0] as? StdoutNoticeSink)
        #expect(stdout.format == .json && stdout.name == "stdout")
        #expect((sinks[1] as? FileNoticeSink)?.path.path == "/srv/cohort/notices.jsonl")
        let exec = try #require(sinks[2] as? ExecNoticeSink)
        #expect(exec.name == "chat" && exec.command == ["python3", "my_sink.py"] && exec.timeout == .seconds(10))
        #expect(exec.directory?.path == "/srv/cohort")
        let webhook = try #require(sinks[3] as? WebhookNoticeSink)
        #expect(webhook.settings.url == "http://127.0.0.1:9000/hooks" && webhook.settings.secrets.count == 2)
        #expect(webhook.settings.retrySchedule == [5, 60] && webhook.settings.disableAfter == 3600)
        for sink in sinks { await sink.shutdown() }
        #expect(try SinkConfiguration.parse("", file: file, registry: shipped).isEmpty)
    }

    /// A type this program was not given is refused like a typo, naming the types it knows.
    @Test func onlyRegisteredTypesAreRead() throws {
        let text = "[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n"
        do {
            _ = try SinkConfiguration.parse(text, file: file, registry: SinkRegistry([StdoutSinkFactory(), FileSinkFactory()]))
            Issue.record("an unregistered type was read")
        } catch let error as CohortError {
            #expect(error.reason.contains(":2: unknown sink type 'webhook'") && error.hint?.contains("\"file\", \"stdout\"") == true, "\(error)")
        }
    }

    /// Each mistake is named with its file, line and key.
    @Test(arguments: [
        ("[[sinks]]\ntype = \"stdout\"\ncolour = \"red\"\n", ":3: unknown key 'colour'"),
        ("[[sinks]]\ntype = \"pigeon\"\n", ":2: unknown sink type 'pigeon'"),
        ("[[sinks]]\nformat = \"json\"\n", ":1: a sink needs type"),
        ("[[sinks]]\ntype = \"stdout\"\nformat = \"yaml\"\n", ":3: format must be"),
        ("[[sinks]]\ntype = \"file\"\n", ":1: a file sink needs path"),
        ("[[sinks]]\ntype = \"exec\"\ncommand = \"python3 x.py\"\n", ":3: 'command' must be a list"),
        ("[[sinks]]\ntype = \"exec\"\ncommand = [\"x\"]\ntimeout = 0\n", ":4: timeout must be"),
        ("[[sinks]]\ntype = \"stdout\"\n\n[[sinks]]\ntype = \"file\"\npath = 3\n", ":6: 'path' must be a non-empty string"),
        ("sinks = 3\n", ":1: 'sinks' must be written [[sinks]]"),
        ("[server]\nport = 1\n", ":1: unknown key 'server'"),
        ("[[sinks]\ntype = \"stdout\"\n", ":1: "),
        ("[[sinks]]\ntype = \"webhook\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n", ":1: a webhook sink needs url"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"ftp://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n", ":3: url must be"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\nsecret = \"abc\"\n", ":4: a webhook secret is whsec_"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\n", ":1: a webhook sink needs secret"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\nretry_schedule = [-1]\n", ":5: retry_schedule must be"),
        ("[[sinks]]\ntype = \"stdout\"\nhistory = \"some\"\n", ":3: history must be \"new\" or \"all\""),
    ])
    func mistakesAreNamed(text: String, expected: String) {
        do {
            _ = try SinkConfiguration.parse(text, file: file, registry: shipped)
            Issue.record("accepted: \(text)")
        } catch let error as CohortError {
            #expect(error.code == .malformed)
            #expect(error.reason.hasPrefix(file.path) && error.reason.contains(expected), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func namesStayUniqueAcrossLevels() throws {
        let temp = try TemporaryDirectory()
        let user = temp.path("user.toml")
        let workspace = temp.path("workspace.toml")
        try Data("[[sinks]]\ntype = \"stdout\"\n".utf8).write(to: user)
        try Data("[[sinks]]\ntype = \"stdout\"\nformat = \"json\"\n".utf8).write(to: workspace)
        expectCode(.malformed) { try SinkConfiguration.load([user, workspace], registry: shipped) }
        try Data("[[sinks]]\ntype = \"stdout\"\nname = \"json-out\"\nformat = \"json\"\n".utf8).write(to: workspace)
        #expect(try SinkConfiguration.load([user, workspace, temp.path("missing.toml")], registry: shipped).map(\.name) == ["stdout", "json-out"])
    }
}
