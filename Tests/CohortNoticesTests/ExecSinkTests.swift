import CohortNotices
import CohortTestSupport
import ExecSink
import Foundation
import Testing

@Suite struct ExecSinkTests {
    /// A sink written in Python: it appends what it reads, and its exit status decides.
    func script(_ temp: TemporaryDirectory, body: String) throws -> URL {
        let url = temp.path("sink.py")
        try Data("""
        import json, sys
        notice = json.loads(sys.stdin.readline())
        \(body)
        """.utf8).write(to: url)
        return url
    }

    @Test func exitStatusesDecide() async throws {
        let temp = try TemporaryDirectory()
        let received = temp.path("received.jsonl")
        let sink = ExecNoticeSink(command: ["python3", try script(temp, body: """
        open(sys.argv[1], "a").write(json.dumps(notice) + "\\n")
        path = notice["data"]["path"]
        if path == "file-1.md": sys.exit(75)
        if path == "file-2.md":
            print("cannot take " + path, file=sys.stderr)
            sys.exit(3)
        """).path, received.path], directory: temp.url)
        let notices = try sampleNotices(3)
        try await sink.deliver(notices[0])
        do {
            try await sink.deliver(notices[1])
            Issue.record("exit 75 was taken as delivered")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .retryLater(after: nil))
        }
        do {
            try await sink.deliver(notices[2])
            Issue.record("exit 3 was taken as delivered")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .giveUp)
            #expect(failure.reason.contains("status 3") && failure.reason.contains("cannot take file-2.md"))
        }
        let lines = try String(decoding: Data(contentsOf: received), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["id"] as? String == notices[0].notice.id)
    }

    @Test func hangingProgramTimesOutAndMissingProgramGivesUp() async throws {
        let temp = try TemporaryDirectory()
        let slow = ExecNoticeSink(command: ["sleep", "30"], timeout: .milliseconds(300))
        let notice = try #require(try sampleNotices(1).first)
        do {
            try await slow.deliver(notice)
            Issue.record("a hanging program was taken as delivered")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .retryLater(after: nil))
        }
        let missing = ExecNoticeSink(command: [temp.path("no-such-program").path])
        await #expect(throws: SinkFailure.self) { try await missing.deliver(notice) }
    }
}
