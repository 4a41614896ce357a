import CohortTestSupport
import Foundation
import Testing

/// The fuzz targets' seed corpus and every input that once crashed one (Fuzz/regressions/TARGET),
/// replayed through a regular build of `cohort-fuzz`: what fuzzing found stays fixed.
@Suite struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binary = cohortBinary.deletingLastPathComponent().appendingPathComponent("cohort-fuzz")

    @Test func everyTargetReplaysItsCorpusAndRegressions() throws {
        let listed = try run(Self.binary.path, ["list"], in: Self.root)
        #expect(listed.status == 0, "\(listed.stderr)")
        let targets = listed.stdout.split(separator: "\n").map(String.init)
        #expect(targets.count >= 12)
        for target in targets {
            let folders = ["Fuzz/corpus/\(target)", "Fuzz/regressions/\(target)"].map { Self.root.appendingPathComponent($0).path }
            #expect(FileManager.default.fileExists(atPath: folders[0]), "no seed corpus for \(target)")
            let replayed = try run(Self.binary.path, ["replay", target] + folders, in: Self.root)
            #expect(replayed.status == 0, "\(target): \(replayed.stderr)")
            #expect(replayed.stdout.hasPrefix("\(target): "), "\(replayed.stdout)")
        }
    }

    @Test func anUnknownTargetIsAUsageError() throws {
        let result = try run(Self.binary.path, ["replay", "nothing"], in: Self.root)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: E_MALFORMED: "))
    }
}
