import CohortTestSupport
import Foundation
import Testing

@Suite("cohort sync: merging")
struct SyncMergeTests {
    @Test("two people edit different files; a third joins; everyone ends with everything")
    func differentFiles() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let cy = try fixture.workspace("cy", for: fixture.scenario.cy.home)
        try fixture.write("ann's scones\n", "scones.md", in: fixture.ann)
        try fixture.write("500 g flour\nbo: more water\n", "bread/sourdough.md", in: bo)
        try fixture.write("cy's cake\n", "cakes/lemon.md", in: cy)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let boSync = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(boSync.status == 0, "\(boSync.stderr)")
        #expect(boSync.stdout.contains("received 1 commit"))
        let cySync = try fixture.sync(cy, as: fixture.scenario.cy.home)
        #expect(cySync.status == 0, "\(cySync.stderr)")
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        let expected = ["bread/sourdough.md", "cakes/lemon.md", "scones.md", "shortbread.md"]
        for (workspace, home) in [(fixture.ann, fixture.scenario.ann.home), (bo, fixture.scenario.bo.home), (cy, fixture.scenario.cy.home)] {
            #expect(fixture.files(in: workspace) == expected)
            try fixture.expectClean(workspace, as: home)
        }
        #expect(fixture.read("bread/sourdough.md", in: fixture.ann) == "500 g flour\nbo: more water\n")
        #expect(try fixture.head(of: fixture.ann) == fixture.serverTip())
        #expect(try fixture.head(of: bo) == fixture.serverTip())
    }

    @Test("the same file, overlapping: the remote's version keeps the name, the other becomes a conflict copy")
    func conflictCopy() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("500 g flour\nann: 20 g salt\n", "bread/sourdough.md", in: fixture.ann)
        try fixture.write("500 g flour\nbo: 10 g salt\n", "bread/sourdough.md", in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("conflict: bread/sourdough.md"))
        #expect(fixture.read("bread/sourdough.md", in: bo) == "500 g flour\nann: 20 g salt\n")
        let copies = fixture.files(in: bo).filter { $0.hasPrefix("bread/sourdough (conflict, bo@example.com, ") && $0.hasSuffix("Z).md") }
        #expect(copies.count == 1, "\(fixture.files(in: bo))")
        #expect(fixture.read(copies.first ?? "", in: bo) == "500 g flour\nbo: 10 g salt\n")
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
        // A content.edited notice names the copy; no conflict markers anywhere.
        let notices = try fixture.cohort(["notices", "--json"], in: bo, as: fixture.scenario.bo.home).stdout
        #expect(notices.contains("\"conflictOf\":\"bread/sourdough.md\"") || notices.contains("\"conflictOf\" : \"bread/sourdough.md\""), "\(notices)")
        let grep = try run("git", ["grep", "-l", "<<<<<<<", "HEAD"], in: bo)
        #expect(grep.stdout.isEmpty)
        // Ann gets the copy too.
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(fixture.files(in: fixture.ann) == fixture.files(in: bo))
    }

    @Test("sync --json reports what went up, what came down and the conflict copies")
    func jsonReport() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("ann\n", "shortbread.md", in: fixture.ann)
        try fixture.write("bo\n", "shortbread.md", in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home, ["--json"])
        #expect(synced.status == 0, "\(synced.stderr)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(synced.stdout.utf8)) as? [String: Any])
        #expect(report["pushed"] as? Bool == true)
        #expect((report["committed"] as? [String: Any])?["notices"] as? Int == 1)
        #expect((report["received"] as? [String])?.count == 1)
        #expect(report["merge"] is String)
        let conflicts = try #require(report["conflicts"] as? [[String: String]])
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["of"] == "shortbread.md")
        #expect(fixture.files(in: bo).contains(conflicts.first?["copy"] ?? "-"))
    }

    @Test("the same file, apart: a clean three-way merge, no copy")
    func cleanMerge() throws {
        let fixture = try SyncFixture()
        let lines = (1...12).map { "step \($0)\n" }.joined()
        try fixture.write(lines, "method.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write(lines.replacingOccurrences(of: "step 1\n", with: "step 1: preheat\n"), "method.md", in: fixture.ann)
        try fixture.write(lines.replacingOccurrences(of: "step 12\n", with: "step 12: serve\n"), "method.md", in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(!synced.stdout.contains("conflict"))
        let merged = fixture.read("method.md", in: bo) ?? ""
        #expect(merged.hasPrefix("step 1: preheat\n"))
        #expect(merged.hasSuffix("step 12: serve\n"))
        #expect(!fixture.files(in: bo).contains { $0.contains("(conflict") })
    }

    @Test("edit versus delete: the edit survives")
    func editBeatsDelete() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try FileManager.default.removeItem(at: fixture.ann.appendingPathComponent("shortbread.md"))
        try fixture.write("butter, sugar, flour, a pinch of salt\n", "shortbread.md", in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(fixture.read("shortbread.md", in: bo) == "butter, sugar, flour, a pinch of salt\n")
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(fixture.read("shortbread.md", in: fixture.ann) == "butter, sugar, flour, a pinch of salt\n")

        // And the other way round: deleted here, edited there.
        try fixture.write("butter, sugar, flour, salt, vanilla\n", "shortbread.md", in: fixture.ann)
        try FileManager.default.removeItem(at: bo.appendingPathComponent("shortbread.md"))
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(fixture.read("shortbread.md", in: bo) == "butter, sugar, flour, salt, vanilla\n")
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
    }

    @Test("rename versus edit: the edit lands at the new name; a move to a folder too")
    func renameVersusEdit() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let original = (1...10).map { "line \($0) of a long recipe for shortbread\n" }.joined()
        try fixture.write(original, "shortbread.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)

        try FileManager.default.createDirectory(at: fixture.ann.appendingPathComponent("biscuits"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: fixture.ann.appendingPathComponent("shortbread.md"),
                                         to: fixture.ann.appendingPathComponent("biscuits/shortbread.md"))
        try fixture.write(original.replacingOccurrences(of: "line 5 ", with: "line 5 (bo's fix) "), "shortbread.md", in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bo.appendingPathComponent("shortbread.md").path))
        #expect(fixture.read("biscuits/shortbread.md", in: bo)?.contains("line 5 (bo's fix)") == true)
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
    }

    @Test("cohort clone takes a plain folder remote too, verified, and syncs from it")
    func cloneFromFolder() throws {
        let fixture = try SyncFixture()
        let target = fixture.temp.path("cy-folder")
        let cloned = try fixture.cohort(["clone", fixture.bare.path, target.path], in: fixture.temp.url, as: fixture.scenario.cy.home)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(cloned.stdout.trimmingCharacters(in: .newlines) == target.path)
        #expect(cloned.stderr.contains("commits verified"))
        try fixture.write("cy's\n", "cy.md", in: target)
        #expect(try fixture.sync(target, as: fixture.scenario.cy.home).status == 0)
        #expect(try fixture.head(of: target) == fixture.serverTip())
    }

    @Test("editor temp and lock files stay out of the collaboration")
    func editorFilesIgnored() throws {
        let fixture = try SyncFixture()
        for name in [".shortbread.md.swp", "shortbread.md~", "~$cake.docx", ".~lock.cake.odt#", "#notes.md#"] {
            try fixture.write("scratch\n", name, in: fixture.ann)
        }
        try fixture.write("real\n", "real.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let tree = try run("git", ["--git-dir", fixture.bare.path, "ls-tree", "-r", "--name-only", "main"], in: fixture.temp.url).stdout
        #expect(tree.contains("real.md"))
        #expect(!tree.contains("swp") && !tree.contains("~") && !tree.contains("#"))
    }
}
