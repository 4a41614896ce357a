import CohortGit
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// A participant may commit any tree outside `.cohort/`; a sync must never let one write outside the
/// workspace or through a link. (Trees naming `.git` in any spelling are refused by libgit2 when they
/// are built, and by the checkout as well.)
@Suite("cohort sync: hostile trees")
struct HostileTreeTests {
    /// Bo commits `files` (and `links`: path → link target) signed by his own key, straight onto his
    /// branch, and pushes them with stock git through the verifying hook.
    static func push(_ fixture: SyncFixture, from bo: URL, files: [String: Data] = [:], removing: Set<String> = [],
                     links: [String: String] = [:]) throws {
        let workspace = try Workspace(containing: bo, home: fixture.scenario.bo.home)
        let boSigner = try signer(fixture.scenario.bo.home, in: workspace)
        if !files.isEmpty || !removing.isEmpty { try forge(workspace, signer: boSigner, files: files, removing: removing) }
        if !links.isEmpty {
            try forge(workspace, signer: boSigner, files: links.mapValues { Data($0.utf8) }, mode: 0o120000)
        }
        let pushed = try run("git", ["push", "-q", "origin", "main"], in: bo)
        #expect(pushed.status == 0, "\(pushed.stderr)")
    }

    @Test("a link followed by a folder of the same name writes nothing where the link pointed")
    func linkThenFolder() throws {
        let fixture = try SyncFixture()
        let outside = fixture.temp.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try Self.push(fixture, from: bo, links: ["s": outside.path])
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: fixture.ann.appendingPathComponent("s").path)) == outside.path)

        try Self.push(fixture, from: bo, files: ["s/x.md": Data("through the link?\n".utf8)], removing: ["s"])
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: fixture.ann.appendingPathComponent("s").path, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(fixture.read("s/x.md", in: fixture.ann) == "through the link?\n")
    }

    @Test("a link the person already has in place of a folder stops writes beneath it")
    func localLinkIsNeverFollowed() throws {
        let fixture = try SyncFixture()
        let outside = fixture.temp.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        // Ann's folder has a link `notes -> outside` that is not in the collaboration.
        try FileManager.default.createSymbolicLink(atPath: fixture.ann.appendingPathComponent("notes").path, withDestinationPath: outside.path)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try Self.push(fixture, from: bo, files: ["notes/plan.md": Data("plan\n".utf8)])
        let synced = try run(cohortBinary.path, ["sync", "--mass-delete-share", "1"], in: fixture.ann,
                             environment: ["COHORT_HOME": fixture.scenario.ann.home.directory.path])
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "\(synced.stdout) \(synced.stderr)")
    }
}
