import CohortTestSupport
import Foundation
import Testing

/// Nothing anyone wrote is lost when a file meets a folder, when the folder cannot take what
/// arrives (something of the person's in the way, no permission, a full disk), or when a special
/// file stands where a file lands; and what was not written never reads as a local change.
@Suite("cohort sync: clashes and paths not written")
struct SyncClashTests {
    @Test("a new file here against a new folder there: both survive, this side's file as a conflict copy")
    func fileAgainstFolder() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let cy = try fixture.workspace("cy", for: fixture.scenario.cy.home)
        try fixture.write("bo's notes\n", "notes", in: bo)
        try fixture.write("cy's todo\n", "notes/todo.md", in: cy)
        #expect(try fixture.sync(cy, as: fixture.scenario.cy.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        let copies = fixture.files(in: bo).filter { $0.hasPrefix("notes (conflict, bo@example.com, ") }
        #expect(copies.count == 1, "\(fixture.files(in: bo))")
        #expect(fixture.read(copies.first ?? "", in: bo) == "bo's notes\n")
        #expect(fixture.read("notes/todo.md", in: bo) == "cy's todo\n")
        #expect(synced.stdout.contains("conflict: notes was changed on both sides"), "\(synced.stdout)")
        try fixture.expectClean(bo, as: fixture.scenario.bo.home)
        #expect(try fixture.sync(cy, as: fixture.scenario.cy.home).status == 0)
        #expect(fixture.files(in: cy) == fixture.files(in: bo))
    }

    @Test("a folder edited here against a file there: the file keeps the name, the folder moves beside it")
    func folderAgainstFile() throws {
        let fixture = try SyncFixture()
        try fixture.write("first todo\n", "notes/todo.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let cy = try fixture.workspace("cy", for: fixture.scenario.cy.home)
        try FileManager.default.removeItem(at: bo.appendingPathComponent("notes"))
        try fixture.write("bo's single notes file\n", "notes", in: bo)
        try fixture.write("first todo\ncy: second todo\n", "notes/todo.md", in: cy)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        let synced = try fixture.sync(cy, as: fixture.scenario.cy.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(fixture.read("notes", in: cy) == "bo's single notes file\n")
        let moved = fixture.files(in: cy).filter { $0.hasPrefix("notes (conflict, cy@example.com, ") && $0.hasSuffix("/todo.md") }
        #expect(moved.count == 1, "\(fixture.files(in: cy))")
        #expect(fixture.read(moved.first ?? "", in: cy) == "first todo\ncy: second todo\n")
        try fixture.expectClean(cy, as: fixture.scenario.cy.home)
    }

    @Test("an ignored file where a folder arrives: not written, exit 1, and never shared as a deletion")
    func ignoredFileInTheWay() throws {
        let fixture = try SyncFixture()
        let bo = try Self.docsBlockedForAnn(fixture)
        let tip = try fixture.serverTip()
        for _ in 1...2 {
            let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
            #expect(synced.status == 1)
            #expect(synced.stdout.contains("not written to this folder: docs/guide.md (docs is a file here, not a folder"), "\(synced.stdout)")
            #expect(synced.stderr.hasPrefix("error: E_IO: 1 path was not written to this folder"), "\(synced.stderr)")
            #expect(try fixture.serverTip() == tip)
            let status = try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home)
            #expect(status.stdout.contains("no local changes"), "\(status.stdout)")
            #expect(status.stdout.contains("not written: docs/guide.md"), "\(status.stdout)")
        }
        #expect(fixture.read("docs", in: fixture.ann) == "ann's scratch\n")
        #expect(try run("git", ["--git-dir", fixture.bare.path, "show", "main:docs/guide.md"], in: fixture.temp.url).stdout == "bo's guide\n")
        // Once the way is clear, the next sync writes it and all is well.
        try FileManager.default.moveItem(at: fixture.ann.appendingPathComponent("docs"), to: fixture.ann.appendingPathComponent("scratch.txt"))
        let cleared = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(cleared.status == 0, "\(cleared.stdout) \(cleared.stderr)")
        #expect(fixture.read("docs/guide.md", in: fixture.ann) == "bo's guide\n")
        #expect(try run("git", ["--git-dir", fixture.bare.path, "show", "main:docs/guide.md"], in: fixture.temp.url).stdout == "bo's guide\n")
    }

    /// Ann keeps an ignored file `docs`; Bo shares `docs/guide.md`, which her folder cannot take.
    static func docsBlockedForAnn(_ fixture: SyncFixture) throws -> URL {
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try Data("docs\n".utf8).write(to: fixture.ann.appendingPathComponent(".git/info/exclude"))
        try fixture.write("ann's scratch\n", "docs", in: fixture.ann)
        try fixture.write("bo's guide\n", "docs/guide.md", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        return bo
    }

    @Test("a folder that cannot be written to: the edit waits, and is never reverted on the server")
    func readOnlyFolder() throws {
        let fixture = try SyncFixture()
        try fixture.write("500 g flour\n", "bread/sourdough.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("500 g flour\nbo: 10 g salt\n", "bread/sourdough.md", in: bo)
        try fixture.write("bo's rye\n", "bread/rye.md", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        let bread = fixture.ann.appendingPathComponent("bread")
        try ReadOnly.set(bread, true)
        defer { try? ReadOnly.set(bread, false) }
        for _ in 1...2 {
            let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
            #expect(synced.status == 1, "\(synced.stdout) \(synced.stderr)")
            #expect(synced.stdout.contains("not written to this folder: bread/"), "\(synced.stdout)")
            #expect(fixture.read("bread/sourdough.md", in: fixture.ann) == "500 g flour\n")
        }
        #expect(try run("git", ["--git-dir", fixture.bare.path, "show", "main:bread/sourdough.md"], in: fixture.temp.url).stdout == "500 g flour\nbo: 10 g salt\n")
        try ReadOnly.set(bread, false)
        let cleared = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(cleared.status == 0, "\(cleared.stdout) \(cleared.stderr)")
        #expect(fixture.read("bread/sourdough.md", in: fixture.ann) == "500 g flour\nbo: 10 g salt\n")
        #expect(fixture.read("bread/rye.md", in: fixture.ann) == "bo's rye\n")
        try fixture.expectClean(fixture.ann, as: fixture.scenario.ann.home)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(fixture.read("bread/sourdough.md", in: bo) == "500 g flour\nbo: 10 g salt\n")
    }

    @Test("a named pipe where a file lands stays; the incoming file goes beside it")
    func namedPipe() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        #expect(mkfifo(fixture.ann.appendingPathComponent("feed").path, 0o644) == 0)
        try Data("feed\n".utf8).write(to: fixture.ann.appendingPathComponent(".git/info/exclude"))
        try fixture.write("bo's feed\n", "feed", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 1)
        var info = stat()
        #expect(lstat(fixture.ann.appendingPathComponent("feed").path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        let copies = fixture.files(in: fixture.ann).filter { $0.hasPrefix("feed (conflict, incoming, ") }
        #expect(copies.count == 1, "\(fixture.files(in: fixture.ann))")
        #expect(fixture.read(copies.first ?? "", in: fixture.ann) == "bo's feed\n")
        #expect(synced.stdout.contains("a named pipe of yours is in its place"), "\(synced.stdout)")
    }

    @Test("git lock files a killed process left are cleared; one a live process holds is waited for, then named")
    func staleGitLocks() throws {
        let fixture = try SyncFixture()
        let lock = fixture.ann.appendingPathComponent(".git/index.lock")
        let branchLock = fixture.ann.appendingPathComponent(".git/refs/heads/main.lock")
        for url in [lock, branchLock] {
            try Data().write(to: url)
            var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
        }
        try fixture.write("after the crash\n", "after.md", in: fixture.ann)
        #expect(try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: lock.path))
        #expect(!FileManager.default.fileExists(atPath: branchLock.path))

        // A live process holding the lock open: the command waits, then names it.
        try Data().write(to: lock)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", "import sys,time; f=open(sys.argv[1]); time.sleep(60)", lock.path]
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        usleep(300_000)
        let waited = try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(waited.status == 1)
        #expect(waited.stderr.hasPrefix("error: E_BUSY: index.lock in ") && waited.stderr.contains("pid \(holder.processIdentifier) (python3)"), "\(waited.stderr)")
        #expect(FileManager.default.fileExists(atPath: lock.path))
    }

    @Test("ten editors syncing one shared file at once through a folder remote: every sync lands, every line is kept")
    func tenRacingEditors() throws {
        let fixture = try SyncFixture()
        let editors = try (0..<10).map { index in
            let folder = try fixture.workspace("editor-\(index)", for: index % 2 == 0 ? fixture.scenario.bo.home : fixture.scenario.cy.home)
            try fixture.write("line from editor \(index)\n", "shared/editor-\(index).md", in: folder)
            try fixture.write("editor \(index) was here\n", "shared/log-\(index % 3).md", in: folder)
            return folder
        }
        let results = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 10) { index in
            let home = index % 2 == 0 ? fixture.scenario.bo.home : fixture.scenario.cy.home
            results.set(index, (try? fixture.sync(editors[index], as: home))?.status ?? -1)
        }
        #expect(results.all == Array(repeating: 0, count: 10))
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let files = fixture.files(in: fixture.ann)
        for index in 0..<10 {
            #expect(fixture.read("shared/editor-\(index).md", in: fixture.ann) == "line from editor \(index)\n")
            // Every version of the shared logs is kept: at its name or as a conflict copy.
            let versions = files.filter { $0.hasPrefix("shared/log-\(index % 3)") }.compactMap { fixture.read($0, in: fixture.ann) }
            #expect(versions.contains("editor \(index) was here\n"), "\(files)")
        }
        #expect(try run("git", ["--git-dir", fixture.bare.path, "fsck", "--strict"], in: fixture.temp.url).status == 0)
    }
}

/// Makes a folder unwritable, also for root (which ignores permission bits): `chattr +i`.
enum ReadOnly {
    static func set(_ folder: URL, _ on: Bool) throws {
        if getuid() == 0 {
            let result = try run("chattr", [on ? "+i" : "-i", folder.path], in: folder.deletingLastPathComponent())
            #expect(result.status == 0, "\(result.stderr)")
        } else {
            try FileManager.default.setAttributes([.posixPermissions: on ? 0o555 : 0o755], ofItemAtPath: folder.path)
        }
    }
}

/// A workspace on a nearly full file system: whatever could not be written waits, and nobody's edit is
/// ever undone on the server. Needs a small tmpfs (root, or a machine that lets the test mount one).
@Suite("cohort sync: a nearly full disk")
struct FullDiskTests {
    @Test("ten free-space levels from 96 to 192 KiB: exit non-zero or all written, never a revert", .timeLimit(.minutes(5)))
    func nearlyFull() throws {
        let fixture = try SyncFixture()
        try fixture.write(String(repeating: "flour and water\n", count: 200), "bread/sourdough.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        // Bo's workspace as it stands before Cy's edits, kept as a tar to unpack onto each small disk.
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        let archive = fixture.temp.path("bo.tar")
        #expect(try run("tar", ["-cf", archive.path, "-C", bo.path, "."], in: fixture.temp.url).status == 0)
        let cy = try fixture.workspace("cy", for: fixture.scenario.cy.home)
        let edited = String(repeating: "flour, water and cy's salt\n", count: 200)
        // About 50 KB that compresses to about half: some levels fail while fetching, some while
        // writing the files, some have room for all.
        var seed: UInt64 = 0x9E3779B97F4A7C15
        let big = (0..<1500).map { _ -> String in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return String(seed, radix: 16) + String(seed >> 7, radix: 16)
        }.joined(separator: "\n") + "\n"
        try fixture.write(edited, "bread/sourdough.md", in: cy)
        try fixture.write(big, "bread/rye.md", in: cy)
        #expect(try fixture.sync(cy, as: fixture.scenario.cy.home).status == 0)
        let serverVersion = { try run("git", ["--git-dir", fixture.bare.path, "show", "main:bread/sourdough.md"], in: fixture.temp.url).stdout }

        let mountPoint = fixture.temp.path("small")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        for level in stride(from: 96, through: 192, by: 96 / 9) {
            guard try run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint.path], in: fixture.temp.url).status == 0 else {
                print("skipped: cannot mount a tmpfs here (needs root); the full-disk levels were not run")
                return
            }
            defer { _ = try? run("umount", ["-l", mountPoint.path], in: fixture.temp.url) }
            let small = mountPoint.appendingPathComponent("bo")
            try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
            #expect(try run("tar", ["-xf", archive.path, "-C", small.path], in: fixture.temp.url).status == 0)
            var info = statvfs()
            #expect(statvfs(mountPoint.path, &info) == 0)
            let free = Int(info.f_bavail) * Int(info.f_frsize)
            let filler = mountPoint.appendingPathComponent("filler")
            #expect(try run("fallocate", ["-l", "\(max(0, free - level * 1024))", filler.path], in: fixture.temp.url).status == 0)
            for _ in 1...2 {
                let synced = try fixture.sync(small, as: fixture.scenario.bo.home)
                let written = fixture.read("bread/sourdough.md", in: small) == edited && fixture.read("bread/rye.md", in: small) == big
                #expect(synced.status != 0 || written, "level \(level) KiB: exit 0 with the edit not written: \(synced.stdout)")
                #expect(synced.status == 0 || synced.stderr.hasPrefix("error: E_"), "level \(level) KiB: \(synced.stderr)")
                #expect(try serverVersion() == edited, "level \(level) KiB reverted cy's edit on the server: \(synced.stdout) \(synced.stderr)")
            }
            try FileManager.default.removeItem(at: filler)
            let cleared = try fixture.sync(small, as: fixture.scenario.bo.home)
            #expect(cleared.status == 0, "level \(level) KiB, space freed: \(cleared.stdout) \(cleared.stderr)")
            #expect(fixture.read("bread/sourdough.md", in: small) == edited, "level \(level) KiB")
            #expect(fixture.read("bread/rye.md", in: small) == big, "level \(level) KiB")
            try fixture.expectClean(small, as: fixture.scenario.bo.home)
        }
        #expect(try serverVersion() == edited)
    }
}

/// What an attacker's review of the first version found, each now a test.
@Suite("cohort sync: review findings")
struct SyncReviewFindingTests {
    @Test("a change of only the executable bit arrives, and the next sync does not undo it")
    func executableBit() throws {
        let fixture = try SyncFixture()
        try fixture.write("echo bake\n", "run.sh", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        #expect(chmod(bo.appendingPathComponent("run.sh").path, 0o755) == 0)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        for _ in 1...2 { #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0) }
        var info = stat()
        #expect(stat(fixture.ann.appendingPathComponent("run.sh").path, &info) == 0 && info.st_mode & 0o100 != 0)
        let mode = try run("git", ["--git-dir", fixture.bare.path, "ls-tree", "main", "run.sh"], in: fixture.temp.url).stdout
        #expect(mode.hasPrefix("100755"), "\(mode)")
        try fixture.expectClean(fixture.ann, as: fixture.scenario.ann.home)
    }

    @Test("a file whose name is 240 bytes long is written, and a conflict copy of it stays within 255 bytes")
    func longNames() throws {
        let fixture = try SyncFixture()
        let name = String(repeating: "r", count: 237) + ".md"
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("ann's\n", name, in: fixture.ann)
        try fixture.write("bo's\n", name, in: bo)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 0, "\(synced.stdout) \(synced.stderr)")
        #expect(fixture.read(name, in: bo) == "ann's\n")
        let copies = fixture.files(in: bo).filter { $0.contains("(conflict, bo@example.com") }
        #expect(copies.count == 1 && copies.allSatisfy { $0.utf8.count <= 255 }, "\(copies)")
        #expect(fixture.read(copies.first ?? "", in: bo) == "bo's\n")
    }

    @Test("a path waiting to be written that the collaboration then deletes stops waiting")
    func deletedWhileWaiting() throws {
        let fixture = try SyncFixture()
        let bo = try SyncClashTests.docsBlockedForAnn(fixture)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 1)
        try FileManager.default.removeItem(at: bo.appendingPathComponent("docs"))
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 0, "\(synced.stdout) \(synced.stderr)")
        #expect(fixture.read("docs", in: fixture.ann) == "ann's scratch\n")
    }

    @Test("restore refuses to replace a folder of other files, and a path waiting to be written")
    func restoreTouchesOneFile() throws {
        let fixture = try SyncFixture()
        try fixture.write("one file\n", "recipes", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let old = try fixture.head(of: fixture.ann)
        try FileManager.default.removeItem(at: fixture.ann.appendingPathComponent("recipes"))
        try fixture.write("a\n", "recipes/a.md", in: fixture.ann)
        try fixture.write("b\n", "recipes/b.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        let refused = try fixture.cohort(["restore", "recipes", "--at", old], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(refused.status == 1 && refused.stderr.hasPrefix("error: E_NOT_PERMITTED: restoring recipes would replace 2 other files"), "\(refused.stderr)")
        #expect(fixture.read("recipes/a.md", in: fixture.ann) == "a\n")
    }

    @Test("after a sync that died, its temporary files go; the person's own stay")
    func temporaryFilesAfterCrash() throws {
        let fixture = try SyncFixture()
        let lock = fixture.ann.appendingPathComponent(".git/cohort/sync.lock")
        try Data("{\"pid\":1,\"host\":\"h\",\"since\":0}".utf8).write(to: lock)
        try fixture.write("half\n", "bread/.sourdough.md.cohort-42.tmp", in: fixture.ann)
        try fixture.write("half\n", ".git/cohort/sync/.journal.json.cohort-7.tmp", in: fixture.ann)
        try fixture.write("mine\n", "bread/.notes.tmp", in: fixture.ann)
        try fixture.write("mine\n", "bread/.x.cohort-abc.tmp", in: fixture.ann)
        let synced = try fixture.sync(fixture.ann, as: fixture.scenario.ann.home)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(fixture.read("bread/.sourdough.md.cohort-42.tmp", in: fixture.ann) == nil)
        #expect(fixture.read(".git/cohort/sync/.journal.json.cohort-7.tmp", in: fixture.ann) == nil)
        #expect(fixture.read("bread/.notes.tmp", in: fixture.ann) == "mine\n")
        #expect(fixture.read("bread/.x.cohort-abc.tmp", in: fixture.ann) == "mine\n")
    }

    @Test("an interrupted move to a tree with a name git refuses finishes: the name is skipped and reported, and commit works")
    func journalWithRefusedName() throws {
        let fixture = try SyncFixture()
        let ann = fixture.ann
        let head = try fixture.head(of: ann)
        let blob = try run("git", ["hash-object", "-w", "--stdin"], in: ann, stdin: Data("[core]\n".utf8)).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let inner = try run("git", ["mktree"], in: ann, stdin: Data("100644 blob \(blob)\tconfig\n".utf8)).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let listing = try run("git", ["ls-tree", "HEAD"], in: ann).stdout
        let tree = try run("git", ["mktree"], in: ann, stdin: Data((listing + "040000 tree \(inner)\t.GIT\n").utf8)).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let odd = try run("git", ["-c", "user.name=X", "-c", "user.email=x@example.com", "commit-tree", tree, "-p", head, "-m", "odd"], in: ann).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(odd.count == 40)
        let journal = "{\"move\":{\"branch\":\"refs/heads/main\",\"from\":\"\(head)\",\"to\":\"\(odd)\"}}"
        try Data(journal.utf8).write(to: ann.appendingPathComponent(".git/cohort/sync/journal.json"))
        _ = try fixture.sync(ann, as: fixture.scenario.ann.home)
        #expect(!FileManager.default.fileExists(atPath: ann.appendingPathComponent(".GIT").path))
        let status = try fixture.cohort(["status"], in: ann, as: fixture.scenario.ann.home)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(!status.stdout.contains("interrupted"), "\(status.stdout)")
        #expect(status.stdout.contains("not written: .GIT/config (git refuses this name in a working folder)"), "\(status.stdout)")
        #expect(status.stdout.contains("no local changes"), "\(status.stdout)")
    }

    @Test("a step failing after the commit and the push: the report still says both, then the failed step; --json names it")
    func reportAfterLateFailure() throws {
        let fixture = try SyncFixture()
        let bo = try fixture.workspace("bo", for: fixture.scenario.bo.home)
        try fixture.write("ann's\n", "ann.md", in: fixture.ann)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        try FileManager.default.createDirectory(at: bo.appendingPathComponent(".git/cohort"), withIntermediateDirectories: true)
        try Data("[[sinks]]\ntype = \"carrier-pigeon\"\n".utf8).write(to: bo.appendingPathComponent(".git/cohort/config.toml"))
        try fixture.write("bo's\n", "bo.md", in: bo)
        let synced = try fixture.sync(bo, as: fixture.scenario.bo.home)
        #expect(synced.status == 1)
        #expect(synced.stdout.contains("committed "), "\(synced.stdout)")
        #expect(synced.stdout.contains("received 1 commit: content.created ann.md (ann@example.com)"), "\(synced.stdout)")
        #expect(synced.stdout.contains("pushed"), "\(synced.stdout)")
        #expect(synced.stdout.contains("stopped at deliver"), "\(synced.stdout)")
        #expect(synced.stderr.hasPrefix("error: E_MALFORMED: "), "\(synced.stderr)")
        try fixture.write("bo's second\n", "bo2.md", in: bo)
        let json = try fixture.sync(bo, as: fixture.scenario.bo.home, ["--json"])
        let report = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let failed = try #require(report["failed"] as? [String: Any])
        #expect(failed["step"] as? String == "deliver" && failed["code"] as? String == "E_MALFORMED", "\(report)")
        #expect(report["pushed"] as? Bool == true && report["committed"] is [String: Any], "\(report)")
        #expect(json.status == 1)
    }

    @Test("status shows a held-back mass deletion and a running sync")
    func statusShowsHeldBackAndRunning() throws {
        let fixture = try SyncFixture()
        for index in 1...6 { try fixture.write("recipe \(index)\n", "box/recipe-\(index).md", in: fixture.ann) }
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 0)
        try FileManager.default.removeItem(at: fixture.ann.appendingPathComponent("box"))
        let held = try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(held.stdout.contains("held back: 6 of 8 tracked files are deleted here"), "\(held.stdout)")
        // A sync holding the lock: status names it instead of staging beside it.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", "import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
                            fixture.ann.appendingPathComponent(".git/cohort/sync.lock").path]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        _ = output.fileHandleForReading.availableData
        let running = try fixture.cohort(["status"], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(running.status == 0, "\(running.stderr)")
        #expect(running.stdout.contains("a sync is running"), "\(running.stdout)")
    }

    @Test("restore refuses a path a sync is still waiting to write")
    func restoreWaitsForUnwritten() throws {
        let fixture = try SyncFixture()
        let bo = try SyncClashTests.docsBlockedForAnn(fixture)
        let first = try fixture.serverTip()
        try fixture.write("bo's guide, second\n", "docs/guide.md", in: bo)
        #expect(try fixture.sync(bo, as: fixture.scenario.bo.home).status == 0)
        #expect(try fixture.sync(fixture.ann, as: fixture.scenario.ann.home).status == 1)
        let refused = try fixture.cohort(["restore", "docs/guide.md", "--at", first], in: fixture.ann, as: fixture.scenario.ann.home)
        #expect(refused.status == 1 && refused.stderr.hasPrefix("error: E_NOT_PERMITTED: docs/guide.md is where a sync could not write"), "\(refused.stderr)")
        #expect(fixture.read("docs", in: fixture.ann) == "ann's scratch\n")
    }
}
