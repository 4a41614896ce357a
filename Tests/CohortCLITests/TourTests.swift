import CohortTestSupport
import Foundation
import Testing

/// The README's tour, played as written by Scripts/tour.sh with the binaries under test.
@Suite struct TourTests {
    @Test func theReadmeTourRunsAsWritten() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try run("bash", [root.appendingPathComponent("Scripts/tour.sh").path, cohortBinary.deletingLastPathComponent().path], in: root)
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        #expect(result.stdout.hasSuffix("tour: all 3 blocks of README.md ran\n"), "\(result.stdout.suffix(2000))")
        // What the tour says it shows, it shows.
        #expect(result.stdout.contains("ok: 4 commits"), "\(result.stdout.suffix(2000))")
        #expect(result.stdout.contains("received 1 commit: content.created rye.md (bo@example.com)"), "\(result.stdout.suffix(2000))")
        #expect(result.stdout.contains("Bo is refused from now on"), "\(result.stdout.suffix(2000))")
    }
}
