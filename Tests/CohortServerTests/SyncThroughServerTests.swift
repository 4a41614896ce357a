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

    @Test("the server-wide sinks file (DATA/sinks.toml) gets the notices of every accepted push")
    func serverWideSinks() throws {
        let temp = try TemporaryDirectory()
        let jsonl = temp.path("server-notices.jsonl")
        let hosted = try Hosted(serverSinks: "[[sinks]]\ntype = \"file\"\npath = \"\(jsonl.path)\"\n")
        func lines() throws -> [String] {
            try String(decoding: Data(contentsOf: jsonl), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        let published = try lines().count
        #expect(published > 0)  // the publishing push: the documents created, the participants added
        let ann = hosted.scenario.owner.directory
        try Data("500 g flour\nann: salt\n".utf8).write(to: ann.appendingPathComponent("bread/sourdough.md"))
        let synced = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
        #expect(synced.status == 0, "\(synced.stderr)")
        let after = try lines()
        #expect(after.count == published + 1)
        #expect(after.last?.contains("bread/sourdough.md") == true, "\(after.last ?? "")")
    }

    @Test("DATA/sinks.toml written or changed while the server runs counts from the next push, without a restart")
    func serverWideSinksAreReadAtEveryPush() throws {
        let temp = try TemporaryDirectory()
        let hosted = try Hosted()
        let ann = hosted.scenario.owner.directory
        func push(_ text: String) throws {
            try Data(text.utf8).write(to: ann.appendingPathComponent("bread/sourdough.md"))
            let synced = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
            #expect(synced.status == 0, "\(synced.stderr)")
        }
        func lines(_ url: URL) -> [String] {
            ((try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) } ?? "").split(separator: "\n").map(String.init)
        }
        try push("500 g flour\n")
        let first = temp.path("first.jsonl"), second = temp.path("second.jsonl")
        let sinks = hosted.scenario.temp.path("data/sinks.toml")
        try Data("[[sinks]]\ntype = \"file\"\npath = \"\(first.path)\"\n".utf8).write(to: sinks)
        // A sink added now starts from now: the next push's notice, none of the history before it.
        try push("500 g flour\nann: salt\n")
        #expect(lines(first).count == 1 && lines(first).last?.contains("bread/sourdough.md") == true, "\(lines(first))")
        try Data("[[sinks]]\ntype = \"file\"\npath = \"\(first.path)\"\n[[sinks]]\nname = \"second\"\ntype = \"file\"\npath = \"\(second.path)\"\n".utf8)
            .write(to: sinks)
        try push("500 g flour\nann: salt\nann: water\n")
        #expect(lines(first).count == 2, "\(lines(first))")
        #expect(lines(second).count == 1, "\(lines(second))")
    }

    @Test("a membership change says it is local until pushed, status shows it, and --push sends it while the folder's edits stay")
    func membershipIsLocalUntilPushed() throws {
        let hosted = try Hosted()
        let ann = hosted.scenario.owner.directory
        let bo = hosted.scenario.bo
        let removed = try hosted.cohort(["participants", "remove", bo.handle], as: hosted.scenario.ann.home, in: ann)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("only here until pushed: the server still lets \(bo.handle) pull and push"), "\(removed.stdout)")
        // Until it is pushed the server goes by the old membership: Bo still clones.
        #expect(try hosted.cohort(["clone", hosted.link, hosted.temp.path("bo-1").path], as: bo.home).status == 0)
        let status = try hosted.cohort(["status"], as: hosted.scenario.ann.home, in: ann)
        #expect(status.stdout.contains("NOT YET SHARED: membership version") && status.stdout.contains("removed \(bo.handle)"), "\(status.stdout)")
        let json = try hosted.cohort(["status", "--json"], as: hosted.scenario.ann.home, in: ann)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let unpublished = object?["unpublishedMembership"] as? [String: Any]
        #expect(unpublished?["removed"] as? [String] == [bo.handle], "\(json.stdout)")

        // --push shares the change and nothing else: an edit in the folder stays uncommitted.
        try Data("draft\n".utf8).write(to: ann.appendingPathComponent("draft.md"))
        let cy = hosted.scenario.cy
        let pushed = try hosted.cohort(["participants", "remove", cy.handle, "--push"], as: hosted.scenario.ann.home, in: ann)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stdout.contains("origin now has this membership change"), "\(pushed.stdout)")
        #expect(try run("git", ["rev-parse", "HEAD"], in: ann).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == hosted.serverTip())
        let after = try hosted.cohort(["status", "--json"], as: hosted.scenario.ann.home, in: ann)
        let afterObject = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any]
        #expect(afterObject?["unpublishedMembership"] is NSNull, "\(after.stdout)")
        #expect((afterObject?["changes"] as? [[String: Any]])?.first?["path"] as? String == "draft.md", "\(after.stdout)")
        for person in [bo, cy] {
            let refused = try hosted.cohort(["clone", hosted.link, hosted.temp.path("late-\(person.handle)").path], as: person.home)
            #expect(refused.status == 1 && refused.stderr.contains("E_REVOKED"), "\(person.handle): \(refused.stderr)")
        }
        // The remote moves (Ann's other workspace) while this folder holds an uncommitted edit:
        // --push merges nothing and pushes nothing, and the edit stays; a full sync then shares all.
        let other = hosted.temp.path("ann-2")
        #expect(try hosted.cohort(["clone", hosted.link, other.path], as: hosted.scenario.ann.home).status == 0)
        try Data("from elsewhere\n".utf8).write(to: other.appendingPathComponent("elsewhere.md"))
        #expect(try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: other).status == 0)
        let moved = try hosted.serverTip()
        let eveFile = hosted.temp.path("eve-card.json")
        try hosted.eve.card().jsonData().write(to: eveFile)
        let held = try hosted.cohort(["participants", "add", eveFile.path, "--push"], as: hosted.scenario.ann.home, in: ann)
        #expect(held.status == 1 && held.stderr.contains("nothing was merged or pushed"), "\(held.stdout)\(held.stderr)")
        #expect(held.stderr.contains("the membership change is committed here"), "\(held.stderr)")
        #expect(try hosted.serverTip() == moved)
        #expect(try String(decoding: Data(contentsOf: ann.appendingPathComponent("draft.md")), as: UTF8.self) == "draft\n")
        #expect(!FileManager.default.fileExists(atPath: ann.appendingPathComponent("elsewhere.md").path))
        let synced = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
        #expect(synced.status == 0 && synced.stdout.contains("pushed"), "\(synced.stdout)\(synced.stderr)")
        #expect(FileManager.default.fileExists(atPath: ann.appendingPathComponent("elsewhere.md").path))

        // A read-only participant's --push is refused before anything changes.
        let dee = hosted.temp.path("dee")
        #expect(try hosted.cohort(["clone", hosted.link, dee.path], as: hosted.dee.home).status == 0)
        let deeHead = try run("git", ["rev-parse", "HEAD"], in: dee).stdout
        let readOnly = try hosted.cohort(["participants", "rotate", "--push"], as: hosted.dee.home, in: dee)
        #expect(readOnly.status == 1 && readOnly.stderr.hasPrefix("error: E_NOT_PERMITTED: --push: you take part read-only"), "\(readOnly.stderr)")
        #expect(try run("git", ["rev-parse", "HEAD"], in: dee).stdout == deeHead)
        // Adding someone is the owner's: that is the reason a read-only participant hears, not rotation advice.
        let notOwner = try hosted.cohort(["participants", "add", eveFile.path, "--push"], as: hosted.dee.home, in: dee)
        #expect(notOwner.status == 1 && notOwner.stderr.hasPrefix("error: E_NOT_PERMITTED: only the owner"), "\(notOwner.stderr)")
        #expect(try run("git", ["rev-parse", "HEAD"], in: dee).stdout == deeHead)

        // --push with no such remote changes nothing.
        let noRemote = try hosted.cohort(["participants", "add", eveFile.path, "--push", "--remote", "nowhere"],
                                         as: hosted.scenario.ann.home, in: ann)
        #expect(noRemote.status == 1 && noRemote.stderr.contains("nothing was changed"), "\(noRemote.stderr)")
        #expect(try run("git", ["rev-parse", "HEAD"], in: ann).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == hosted.serverTip())
    }

    @Test("eight editors syncing at once through the server: a lost race is fetched, merged and pushed again, and every sync lands")
    func racingThroughServer() throws {
        let hosted = try Hosted()
        let homes = [hosted.scenario.bo.home, hosted.scenario.cy.home]
        let editors = try (0..<8).map { index in
            let folder = hosted.temp.path("editor-\(index)")
            let cloned = try hosted.cohort(["clone", hosted.link, folder.path], as: homes[index % 2])
            #expect(cloned.status == 0, "\(cloned.stderr)")
            try Data("editor \(index)\n".utf8).write(to: folder.appendingPathComponent("editor-\(index).md"))
            try Data("editor \(index) was here\n".utf8).write(to: folder.appendingPathComponent("shared.md"))
            return folder
        }
        let results = Statuses()
        DispatchQueue.concurrentPerform(iterations: editors.count) { index in
            let result = try? hosted.cohort(["sync", "--json"], as: homes[index % 2], in: editors[index])
            results.set(index, result?.status ?? -1, result?.stdout ?? "")
        }
        for (index, outcome) in results.all.enumerated() {
            #expect(outcome.status == 0, "editor \(index): \(outcome.output)")
        }
        let ann = hosted.scenario.owner.directory
        #expect(try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann).status == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: ann.path)
        for index in 0..<editors.count {
            #expect(files.contains("editor-\(index).md"))
            let versions = files.filter { $0.hasPrefix("shared") }.compactMap { try? String(contentsOfFile: ann.appendingPathComponent($0).path, encoding: .utf8) }
            #expect(versions.contains("editor \(index) was here\n"), "\(files)")
        }
    }
}

/// Exit statuses and outputs collected from concurrent runs.
final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: (status: Int32, output: String)] = [:]

    func set(_ index: Int, _ status: Int32, _ output: String) {
        lock.lock()
        values[index] = (status, output)
        lock.unlock()
    }

    var all: [(status: Int32, output: String)] {
        lock.lock()
        defer { lock.unlock() }
        return values.keys.sorted().compactMap { values[$0] }
    }
}
