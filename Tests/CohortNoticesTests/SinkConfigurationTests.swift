import CohortIdentity
import CohortNotices
import CohortTestSupport
import Foundation
import Testing

@Suite struct SinkConfigurationTests {
    let file = URL(fileURLWithPath: "/srv/cohort/config.toml")

    @Test func readsEveryKindOfSink() throws {
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
        """, file: file)
        #expect(specs.map(\.kind) == [.stdout, .file, .exec, .webhook])
        #expect(specs[3].url == "http://127.0.0.1:9000/hooks" && specs[3].secrets?.count == 2)
        #expect(specs[3].retrySchedule == [5, 60] && specs[3].disableAfter == 3600 && specs[3].name == "webhook:http://127.0.0.1:9000/hooks")
        #expect(specs[0].format == "json" && specs[0].name == "stdout")
        #expect(specs[1].path?.path == "/srv/cohort/notices.jsonl")
        #expect(specs[2].name == "chat" && specs[2].command == ["python3", "my_sink.py"] && specs[2].timeout == 10)
        #expect(specs[2].directory?.path == "/srv/cohort")
        #expect(try SinkConfiguration.parse("", file: file).isEmpty)
    }

    /// Each mistake is named with its file, line and key.
    @Test(arguments: [
        ("[[sinks]]\ntype = \"stdout\"\ncolour = \"red\"\n", ":3: unknown key 'colour'"),
        ("[[sinks]]\ntype = \"pigeon\"\n", ":2: unknown sink type 'pigeon'"),
        ("[[sinks]]\nformat = \"json\"\n", ":1: a sink needs type"),
        ("[[sinks]]\ntype = \"stdout\"\nformat = \"yaml\"\n", ":3: format must be"),
        ("[[sinks]]\ntype = \"file\"\n", ":1: a file sink needs path"),
        ("[[sinks]]\ntype = \"exec\"\ncommand = \"python3 x.py\"\n", ":3: an exec sink needs command"),
        ("[[sinks]]\ntype = \"exec\"\ncommand = [\"x\"]\ntimeout = 0\n", ":4: timeout must be"),
        ("[[sinks]]\ntype = \"stdout\"\n\n[[sinks]]\ntype = \"file\"\npath = 3\n", ":6: 'path' must be a non-empty string"),
        ("sinks = 3\n", ":1: 'sinks' must be written [[sinks]]"),
        ("[server]\nport = 1\n", ":1: unknown key 'server'"),
        ("[[sinks]\ntype = \"stdout\"\n", ":1: "),
        ("[[sinks]]\ntype = \"webhook\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n", ":1: a webhook sink needs url"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"ftp://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\n", ":3: url must be"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\nsecret = \"abc\"\n", ":4: a secret is whsec_"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\n", ":1: a webhook sink needs secret"),
        ("[[sinks]]\ntype = \"webhook\"\nurl = \"http://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\nretry_schedule = [-1]\n", ":5: retry_schedule must be"),
    ])
    func mistakesAreNamed(text: String, expected: String) {
        do {
            _ = try SinkConfiguration.parse(text, file: file)
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
        expectCode(.malformed) { try SinkConfiguration.load([user, workspace]) }
        try Data("[[sinks]]\ntype = \"stdout\"\nname = \"json-out\"\nformat = \"json\"\n".utf8).write(to: workspace)
        #expect(try SinkConfiguration.load([user, workspace, temp.path("missing.toml")]).map(\.name) == ["stdout", "json-out"])
    }
}
