import CohortTestSupport
import Foundation
import Testing

/// `cohort history`, `cohort restore` and `cohort discard`: a way back that itself loses nothing.
@Suite("cohort history, restore and discard")
struct EscapeHatchTests {
    @Test("history lists who changed a file, by handle, newest first, across a rename; restore brings a version back as a signed edit")
    func historyAndRestore() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("v1 by ann\n", "bread/rye.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let first = try fixture.head(of: fixture.ann)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        try fixture.write("v2 by bo\n", "bread/rye.md", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        try FileManager.default.moveItem(at: bo.appendingPathComponent("bread/rye.md"), to: bo.appendingPathComponent("bread/dark-rye.md"))
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)

        let history = try fixture.cohort(["history", "bread/dark-rye.md"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(history.status == 0, "\(history.stderr)")
        let lines = history.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(history.stdout)")
        #expect(lines.first?.contains("bo@example.com  content.renamed bread/dark-rye.md (from bread/rye.md)") == true, "\(history.stdout)")
        #expect(lines.dropFirst().first?.contains("bo@example.com  content.edited bread/rye.md") == true)
        #expect(lines.last?.hasPrefix(String(first.prefix(12))) == true && lines.last?.contains("ann@example.com  content.created bread/rye.md") == true)
        let json = try fixture.cohort(["history", "bread/dark-rye.md", "--json"], in: fixture.ann, as: fixture.scenario.ann.home)
        let events = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(events.map { $0["type"] as? String } == ["content.renamed", "content.edited", "content.created"])
        #expect(events.last?["commit"] as? String == first)

        // An uncommitted local edit is saved aside before the old version comes back.
        try fixture.write("ann's unsaved idea\n", "bread/dark-rye.md", in: fixture.ann)
        let restored = try fixture.cohort(["restore", "bread/dark-rye.md", "--at", String(first.prefix(10))], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(restored.status == 1, "restoring a path the file did not have then: \(restored.stdout)")
        #expect(restored.stderr.hasPrefix("error: E_NOT_FOUND: bread/dark-rye.md is not a file at"), "\(restored.stderr)")
        // The rename means the old version lives at the old name: bring it back there.
        let back = try fixture.cohort(["restore", "bread/rye.md", "--at", String(first.prefix(10))], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(fixture.read("bread/rye.md", in: fixture.ann) == "v1 by ann\n")
        #expect(fixture.read("bread/dark-rye.md", in: fixture.ann) == "ann's unsaved idea\n")
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        try fixture.expectClean(fixture.ann, as: fixture.scenario.ann.home)
        #expect(try run("git", ["--git-dir", fixture.bare.path, "show", "main:bread/rye.md"], in: fixture.temp.url).stdout == "v1 by ann\n")

        // Restoring over an unsaved edit keeps the edit aside; restoring what is there does nothing.
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        try fixture.write("v3 by bo\n", "bread/rye.md", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        try fixture.write("ann's thoughts\n", "bread/rye.md", in: fixture.ann)
        let over = try fixture.cohort(["restore", "bread/rye.md", "--at", first], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(over.status == 0, "\(over.stderr)")
        #expect(fixture.read("bread/rye.md", in: fixture.ann) == "v1 by ann\n")
        let savedLine = try #require(over.stdout.split(separator: "\n").first { $0.hasPrefix("your uncommitted version is saved at ") })
        #expect((try? String(contentsOfFile: String(savedLine.dropFirst("your uncommitted version is saved at ".count)), encoding: .utf8)) == "ann's thoughts\n")
        let again = try fixture.cohort(["restore", "bread/rye.md", "--at", first], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(again.status == 0 && again.stdout.contains("is already as it was at"), "\(again.stdout) \(again.stderr)")
        try fixture.expectClean(fixture.ann, as: fixture.scenario.ann.home)
    }

    @Test("restore refuses commits outside the collaboration's history and a read-only participant")
    func restoreRefusals() throws {
        let fixture = try SyncFixture()
        try fixture.write("one\n", "a.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let missing = try fixture.cohort(["restore", "a.md", "--at", "0123456789abcdef"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(missing.status == 1 && missing.stderr.hasPrefix("error: E_NOT_FOUND: '0123456789abcdef' names no commit here"), "\(missing.stderr)")
        let dash = try fixture.cohort(["restore", "a.md", "--at=--help"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(dash.status == 1 && dash.stderr.contains("E_NOT_FOUND"), "\(dash.stderr)")
        let dee = try fixture.workspace("dee", for: fixture.dee.home)
        let readOnly = try fixture.cohort(["restore", "a.md", "--at", "HEAD~1"], in: dee, as: fixture.dee.home)
        #expect(readOnly.status == 1 && readOnly.stderr.hasPrefix("error: E_NOT_PERMITTED: "), "\(readOnly.stderr)")
    }

    @Test("discard throws away local changes, some or all, after saving each version aside where status points")
    func discard() throws {
        let fixture = try SyncFixture()
        try fixture.write("flour\n", "bread/sourdough.md", in: fixture.ann)
        let keep = (1...10).map { "keep line \($0)\n" }.joined()
        try fixture.write(keep, "keep.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        try fixture.write("flour, oops\n", "bread/sourdough.md", in: fixture.ann)
        try fixture.write("a stray new file\n", "bread/stray.md", in: fixture.ann)
        try fixture.write(keep + "edited\n", "keep.md", in: fixture.ann)
        try FileManager.default.removeItem(at: fixture.ann.appendingPathComponent("shortbread.md"))
        try FileManager.default.moveItem(at: fixture.ann.appendingPathComponent("keep.md"), to: fixture.ann.appendingPathComponent("kept.md"))

        let some = try fixture.cohort(["discard", "bread/"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(some.status == 0, "\(some.stderr)")
        #expect(some.stdout.hasPrefix("discarded 2 local changes; your versions are saved in "), "\(some.stdout)")
        #expect(fixture.read("bread/sourdough.md", in: fixture.ann) == "flour\n")
        #expect(!FileManager.default.fileExists(atPath: fixture.ann.appendingPathComponent("bread/stray.md").path))
        #expect(fixture.read("kept.md", in: fixture.ann) == keep + "edited\n")
        let status = try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home)
        let savedLine = try #require(status.stdout.split(separator: "\n").first { $0.hasPrefix("saved aside: ") })
        let folder = String(savedLine.dropFirst("saved aside: ".count).split(separator: " (").first ?? "")
        #expect((try? String(contentsOfFile: folder + "/bread/sourdough.md", encoding: .utf8)) == "flour, oops\n")
        #expect((try? String(contentsOfFile: folder + "/bread/stray.md", encoding: .utf8)) == "a stray new file\n")
        #expect(status.stdout.contains("local changes (2):"), "\(status.stdout)")

        let all = try fixture.cohort(["discard"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(all.status == 0, "\(all.stderr)")
        // The rename goes back too: the old name returns as the collaboration has it, the new one goes.
        #expect(fixture.read("keep.md", in: fixture.ann) == keep)
        #expect(fixture.read("kept.md", in: fixture.ann) == nil)
        #expect(fixture.read("shortbread.md", in: fixture.ann) != nil)
        try fixture.expectClean(fixture.ann, as: fixture.scenario.ann.home)
        let none = try fixture.cohort(["discard"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(none.stdout == "no local changes\n")
    }
}
