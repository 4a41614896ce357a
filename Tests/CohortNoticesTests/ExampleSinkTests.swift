import CohortNotices
import CohortTestSupport
import ExecSink
import Foundation
import Testing

/// The examples Docs/Plugins.md walks through work as described.
@Suite struct ExampleSinkTests {
    @Test func execExampleScript() async throws {
        let temp = try TemporaryDirectory()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Plugins/Examples/exec-sink.py")
        let inbox = temp.path("inbox")
        let sink = ExecNoticeSink(command: ["python3", script.path, inbox.path])
        let notice = try #require(try sampleNotices(1).first)
        do {
            try await sink.deliver(notice)
            Issue.record("delivered without an inbox")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .retryLater(after: nil))
        }
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try await sink.deliver(notice)
        #expect(FileManager.default.fileExists(atPath: inbox.appendingPathComponent("\(notice.notice.id).json").path))
    }
}
