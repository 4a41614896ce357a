import CohortTestSupport
import Foundation
import Testing

/// `make demo`'s script, run as CI runs it: without pauses, in a folder of its own. It fails on any
/// step that does not do what it announces.
@Suite("make demo")
struct DemoTests {
    @Test("the whole lifecycle plays through", .timeLimit(.minutes(10)))
    func demoPlays() throws {
        let temp = try TemporaryDirectory()
        let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try run("bash", [repositoryRoot.appendingPathComponent("Scripts/demo.sh").path, "--batch"], in: repositoryRoot,
                             environment: ["COHORT_DEMO_DIR": temp.path("run").path])
        #expect(result.status == 0, "\(result.stdout.suffix(3000))\n\(result.stderr.suffix(2000))")
        #expect(result.stdout.contains("demo complete: 12 steps, each as announced."))
        #expect(FileManager.default.fileExists(atPath: temp.path("run/notices.jsonl").path))
    }
}
