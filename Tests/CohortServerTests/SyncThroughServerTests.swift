import CohortTestSupport
import Foundation
import Testing

/// `cohort sync` against `cohort serve`: tokens bought on the way, pushes verified by the hook.
@Suite("cohort sync through cohort serve", .serialized)
struct SyncThroughServerTests {
    @Test("two participants edit the same file and sync through the server; a removed one is refused")
    func syncThroughServer() throws {
        let hosted = try Hosted()
        let bo = hosted.temp.path("bo")
        #expect(try hosted.cohort(["clone", hosted.link, bo.path], as: hosted.scenario.bo.home).status == 0)
        let ann = hosted.scenario.owner.directory
        try Data("500 g flour\nann: salt\n".utf8).write(to: ann.appendingPathComponent("bread/sourdough.md"))
        try Data("500 g flour\nbo: water\n".utf8).write(to: bo.appendingPathComponent("bread/sourdough.md"))
        try Data("bo's\n".utf8).write(to: bo.appendingPathComponent("bo.md"))
        let annSync = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
        #expect(annSync.status == 0, "\(annSync.stderr)")
        let boSync = try hosted.cohort(["sync"], as: hosted.scenario.bo.home, in: bo)
        #expect(boSync.status == 0, "\(boSync.stderr)")
        #expect(boSync.stdout.contains("conflict: bread/sourdough.md"))
        #expect(boSync.stdout.contains("pushed"))
        #expect(try run("git", ["rev-parse", "HEAD"], in: bo).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == hosted.serverTip())

        // Ann removes Bo; his next sync is refused, and his new edit stays in his folder.
        #expect(try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann).status == 0)
        #expect(try hosted.cohort(["participants", "remove", hosted.scenario.bo.handle], as: hosted.scenario.ann.home, in: ann).status == 0)
        #expect(try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann).status == 0)
        try Data("after removal\n".utf8).write(to: bo.appendingPathComponent("late.md"))
        let refused = try hosted.cohort(["sync"], as: hosted.scenario.bo.home, in: bo)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("E_REVOKED"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: bo.appendingPathComponent("late.md").path))
    }
}
