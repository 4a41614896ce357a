import CohortTestSupport
import Foundation
import Testing

@Suite("cohort sync: nothing is lost")
struct SyncSafetyTests {
    static let faultPoints = ["after-commit", "after-fetch", "after-merge-commit", "after-journal", "after-branch-move",
                              "mid-checkout", "after-checkout", "after-push"]

    @Test("killed with SIGKILL at every step, the next sync finishes with every edit present", arguments: faultPoints)
    func killedAnywhere(point: String) throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        // Ann's side: several files, so the checkout on Bo's side has something to stop in the middle of.
        for index in 1...6 { try fixture.write("ann's recipe \(index)\n", "ann/recipe-\(index).md", in: fixture.ann) }
        try fixture.write("500 g flour\nann: salt\n", "bread/sourdough.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        // Bo's side: a new file and an overlapping edit, so the sync commits, merges and makes a copy.
        try fixture.write("bo's biscuits\n", "biscuits.md", in: bo)
        try fixture.write("500 g flour\nbo: water\n", "bread/sourdough.md", in: bo)

        let killed = try fixture.sync(bo, as: fixture.scenario.bo.home, environment: ["COHORT_SYNC_FAULT": point])
        #expect(killed.status != 0, "the fault point \(point) was not reached")
        // The person keeps working meanwhile.
        try fixture.write("written after the crash\n", "later.md", in: bo)

        let finished = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(finished.status == 0, "\(point): \(finished.stderr)")
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
        #expect(fixture.read("biscuits.md", in: bo) == "bo's biscuits\n")
        #expect(fixture.read("later.md", in: bo) == "written after the crash\n")
        #expect(fixture.read("ann/recipe-6.md", in: bo) == "ann's recipe 6\n")
        let breads = fixture.files(in: bo).filter { $0.hasPrefix("bread/sourdough") }
        let contents = Set(breads.compactMap { fixture.read($0, in: bo) })
        #expect(contents.contains("500 g flour\nann: salt\n"), "\(point): \(breads)")
        #expect(contents.contains("500 g flour\nbo: water\n"), "\(point): \(breads)")
        #expect(try fixture.head(of: bo) == fixture.serverTip())
    }

    @Test("a stale lock from a dead process is no obstacle; a live one makes the sync wait, then say so")
    func locks() throws {
        let fixture = try SyncFixture()
        let lock = fixture.ann.appendingPathComponent(".git/cohort/sync.lock")
        // What a sync killed with SIGKILL leaves: the file naming it, and no one holding the lock.
        try Data(#"{"pid":4194304,"host":"\#(ProcessInfo.processInfo.hostName)","since":0}"#.utf8).write(to: lock)
        try fixture.write("after a crash\n", "notes.md", in: fixture.ann)
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 0, "\(synced.stderr)")

        // This test process holds the lock, as a running sync would.
        let descriptor = open(lock.path, O_RDWR)
        #expect(descriptor >= 0)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let busy = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home, ["--wait", "1"])
        #expect(busy.status == 1)
        #expect(busy.stderr.hasPrefix("error: E_BUSY: another sync is running"), "\(busy.stderr)")
        close(descriptor)
        let after = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home, ["--wait", "5"])
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test("a mass deletion is held back until confirmed")
    func massDeletion() throws {
        let fixture = try SyncFixture()
        for index in 1...8 { try fixture.write("recipe \(index)\n", "box/recipe-\(index).md", in: fixture.ann) }
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let before = try fixture.serverTip()
        try FileManager.default.removeItem(at: fixture.ann.appendingPathComponent("box"))
        let held = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(held.status == 1)
        #expect(held.stderr.hasPrefix("error: E_NOT_PERMITTED: held back: 8 of 10 tracked files were deleted"), "\(held.stderr)")
        #expect(try fixture.serverTip() == before)
        let confirmed = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home, ["--allow-mass-delete"])
        #expect(confirmed.status == 0, "\(confirmed.stderr)")
        #expect(try fixture.serverTip() != before)
    }

    @Test("a read-only participant's sync pulls only and keeps local edits")
    func readOnly() throws {
        let fixture = try SyncFixture()
        let dee = try fixture.workspace("dee", for: fixture.dee.home)
        try fixture.write("dee's own notes\n", "dee.md", in: dee)
        try fixture.write("butter, sugar, flour (dee)\n", "shortbread.md", in: dee)
        try fixture.write("ann's scones\n", "scones.md", in: fixture.ann)
        try fixture.write("butter, sugar, flour (ann)\n", "shortbread.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let before = try fixture.serverTip()
        let synced = try fixture.sync(dee, as: fixture.dee.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("read only: pulled only"), "\(synced.stdout)")
        #expect(synced.stdout.contains("kept in this folder"))
        #expect(try fixture.serverTip() == before)
        #expect(fixture.read("scones.md", in: dee) == "ann's scones\n")
        #expect(fixture.read("dee.md", in: dee) == "dee's own notes\n")
        // Dee's edit of a file the collaboration changed is kept once, aside and named; the file follows.
        #expect(fixture.read("shortbread.md", in: dee) == "butter, sugar, flour (ann)\n")
        let aside = fixture.files(in: dee).filter { $0.hasPrefix("shortbread (conflict, dee@example.com, ") }
        #expect(aside.count == 1, "\(fixture.files(in: dee))")
        #expect(fixture.read(aside.first ?? "", in: dee) == "butter, sugar, flour (dee)\n")
        #expect(synced.stdout.contains("your edit of shortbread.md is saved as"), "\(synced.stdout)")
        // Later changes to the file arrive as they are, with no new copy each time.
        try fixture.write("butter, sugar, flour, salt (ann)\n", "shortbread.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let again = try fixture.sync(dee, as: fixture.dee.home)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(fixture.read("shortbread.md", in: dee) == "butter, sugar, flour, salt (ann)\n")
        #expect(fixture.files(in: dee).filter { $0.contains("(conflict, ") }.count == 1, "\(fixture.files(in: dee))")
    }

    @Test("a history that fails verification is refused and the workspace left as it was")
    func unverifiableRefused() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        // An unsigned commit lands on the server past the hook (fetched straight into the bare repository).
        let mallory = try fixture.workspace("mallory", for: fixture.scenario.bo.home)
        try fixture.write("evil\n", "evil.md", in: mallory)
        _ = try run("git", ["add", "-A"], in: mallory)
        _ = try run("git", ["-c", "user.name=M", "-c", "user.email=m@example.com", "commit", "-q", "-m", "evil"], in: mallory)
        #expect(try run("git", ["--git-dir", fixture.bare.path, "fetch", "-q", mallory.path, "+main:main"], in: fixture.temp.url).status == 0)

        try fixture.write("bo's edit\n", "bo.md", in: bo)
        let headBefore = try fixture.head(of: bo)
        let trackingBefore = try run("git", ["rev-parse", "refs/remotes/origin/main"], in: bo).stdout
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 1)
        #expect(synced.stderr.hasPrefix("error: E_BAD_SIGNATURE: the remote's history failed verification"), "\(synced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bo.appendingPathComponent("evil.md").path))
        #expect(fixture.read("bo.md", in: bo) == "bo's edit\n")
        #expect(try run("git", ["rev-parse", "refs/remotes/origin/main"], in: bo).stdout == trackingBefore)
        // Bo's own edit was committed locally (signed) and waits; nothing of the bad history is merged.
        #expect(try run("git", ["merge-base", "--is-ancestor", headBefore, "HEAD"], in: bo).status == 0)
        #expect(try run("git", ["log", "--format=%s", "HEAD"], in: bo).stdout.contains("evil") == false)
    }

    @Test("two syncs at once against one remote: both land")
    func pushRace() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let cy = try fixture.workspace("cy", for: fixture.scenario.cy.home)
        try fixture.write("bo\n", "bo.md", in: bo)
        try fixture.write("cy\n", "cy.md", in: cy)
        let results = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let (workspace, home) = index == 0 ? (bo, fixture.scenario.bo.home) : (cy, fixture.scenario.cy.home)
            results.set(index, (try? fixture.sync(workspace, as: home))?.status ?? -1)
        }
        #expect(results.all == [0, 0])
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(fixture.files(in: bo).contains("cy.md"))
        #expect(try fixture.head(of: bo) == fixture.serverTip())
    }

    @Test("a token or password written into a remote's URL never reaches a message")
    func secretsInRemoteURLsAreMasked() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        for url in ["https://ghp_SECRETTOKEN@127.0.0.1:1/x.git", "https://bo:SECRETPASSWORD@127.0.0.1:1/x.git"] {
            #expect(try run("git", ["remote", "set-url", "origin", url], in: bo).status == 0)
            let offline = try fixture.sync(bo, as: fixture.scenario.bo.home)
            #expect(offline.status == 75, "\(offline.stderr)")
            #expect(offline.stderr.contains("https://***@127.0.0.1:1/x.git"), "\(offline.stderr)")
            #expect(!offline.stderr.contains("SECRET") && !offline.stdout.contains("SECRET"), "\(offline.stderr)")
        }
    }

    @Test("offline edits over time, then one sync")
    func offlineThenSync() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        #expect(try run("git", ["remote", "set-url", "origin", "/nonexistent/offline.git"], in: bo).status == 0)
        try fixture.write("day 1\n", "diary/1.md", in: bo)
        let offline = try fixture.sync(bo, as: fixture.scenario.bo.home)
        // Saved here, not yet shared: EX_TEMPFAIL, and the report says what was committed.
        #expect(offline.status == 75, "\(offline.stderr)")
        #expect(offline.stdout.contains("committed "), "\(offline.stdout)")
        #expect(offline.stderr.hasPrefix("error: E_NETWORK: cannot reach /nonexistent/offline.git"), "\(offline.stderr)")
        #expect(offline.stderr.contains("committed 1 change here, and they go out at the next sync"), "\(offline.stderr)")
        try fixture.write("day 2\n", "diary/2.md", in: bo)
        try FileManager.default.moveItem(at: bo.appendingPathComponent("diary/1.md"), to: bo.appendingPathComponent("diary/first.md"))
        try fixture.write("ann meanwhile\n", "ann.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        #expect(try run("git", ["remote", "set-url", "origin", fixture.bare.path], in: bo).status == 0)
        let online = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(online.status == 0, "\(online.stderr)")
        #expect(fixture.files(in: bo).contains("diary/first.md"))
        #expect(fixture.files(in: bo).contains("diary/2.md"))
        #expect(fixture.files(in: bo).contains("ann.md"))
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
    }

    @Test("a remote named by a relative folder is reached from the workspace, wherever cohort sync --workspace runs")
    func relativeFolderRemote() throws {
        let fixture = try SyncFixture()
        let ann = fixture.ann.standardizedFileURL.pathComponents, bare = fixture.bare.standardizedFileURL.pathComponents
        let common = zip(ann, bare).prefix { $0 == $1 }.count
        let relative = (Array(repeating: "..", count: ann.count - common) + bare[common...]).joined(separator: "/")
        #expect(try run("git", ["remote", "set-url", "origin", relative], in: fixture.ann).status == 0)
        try fixture.write("flour\nsalt\n", "bread/relative.md", in: fixture.ann)
        let elsewhere = fixture.temp.path("elsewhere/deeper")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let synced = try run(cohortBinary.path, ["sync", "--workspace", fixture.ann.path], in: elsewhere,
                             environment: ["COHORT_HOME": fixture.scenario.ann.home.directory.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try fixture.serverTip() == fixture.head(of: fixture.ann))
        #expect(try run("git", ["remote", "get-url", "origin"], in: fixture.ann).stdout == relative + "\n")
    }
}

final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: Int32] = [:]

    func set(_ index: Int, _ value: Int32) {
        lock.lock()
        values[index] = value
        lock.unlock()
    }

    var all: [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return values.keys.sorted().compactMap { values[$0] }
    }
}
