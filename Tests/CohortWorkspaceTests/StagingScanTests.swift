@testable import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// The scan that stages a sync's changes: git's `status` where git is installed, libgit2's diff where
/// it is not. Both must stage exactly the same tree, whatever the folder holds.
@Suite struct StagingScanTests {
    @Test func gitAndLibgit2StageTheSameTree() throws {
        let temporary = try TemporaryDirectory()
        let byGit = try prepareFolder(temporary.path("by-git"))
        let byLibgit2 = try prepareFolder(temporary.path("by-libgit2"))
        let skipNew: (String) -> Bool = { $0.hasPrefix(".cohort/") }
        let fromGit = try byGit.stageAll(skippingNew: skipNew, skippingTracked: { _ in false }, git: try #require(GitCommand.executable))
        let fromLibgit2 = try byLibgit2.stageAll(skippingNew: skipNew, skippingTracked: { _ in false }, git: nil)
        #expect(fromGit == fromLibgit2)

        let entry = { (path: String) in try byGit.entry(at: path, inTree: fromGit) }
        #expect(try entry("a.txt")?.id == byGit.writeBlob(Data("a, edited\n".utf8)))
        #expect(try entry("keep.txt")?.id == byGit.writeBlob(Data("keep\n".utf8)))
        #expect(try entry("gone.txt") == nil)
        #expect(try entry("notes")?.isTree == true)
        #expect(try entry("notes/todo.md") != nil)
        #expect(try entry("docs")?.isTree == false)
        #expect(try entry("sp ace/\u{FC}ber.md") != nil)
        #expect(try entry("tool.sh")?.mode == 0o100755)
        #expect(try entry("link")?.mode == 0o120000)
        #expect(try entry("link")?.id == byGit.writeBlob(Data("keep.txt".utf8)))
        // A pipe in a tracked file's place is the person's: the index keeps the file (reading the pipe
        // would wait for ever).
        #expect(try entry("was-a-file")?.id == byGit.writeBlob(Data("a file\n".utf8)))
        for absent in ["x.log", "build", "sub", ".cohort", "pipe"] {
            #expect(try entry(absent) == nil, "\(absent) was staged")
        }
        // A second look finds nothing more to stage.
        #expect(try byGit.stageAll(skippingNew: skipNew, skippingTracked: { _ in false }) == fromGit)
    }

    @Test func statusRecordsAreReadByTheirBytes() throws {
        let hash = String(repeating: "0", count: 40)
        var output = Data("# branch.oid \(hash)\0# branch.head main\0".utf8)
        for record in ["1 .M N... 100644 100644 100644 \(hash) \(hash) a b.txt", "2 R. N... 100644 100644 100644 \(hash) \(hash) R100 new name",
                       "old name", "1 .D N... 100644 100644 000000 \(hash) \(hash) gone", "u UU N... 100644 100644 100644 100644 \(hash) \(hash) \(hash) both",
                       "1 .T N... 100644 100644 120000 \(hash) \(hash) now a link", "? dir/new\nline"] {
            output += Data(record.utf8) + Data([0])
        }
        output += Data("? odd-".utf8) + Data([0xFF, 0xFE, 0])
        let status = try Repository.parseStatus(output)
        #expect(status.head == hash)
        #expect(status.records == 7)
        #expect(status.changes.map(\.kind) == [.modified, .deleted, .modified, .untracked, .untracked])
        #expect(status.changes.map { String(decoding: $0.path, as: UTF8.self) }.prefix(4) == ["a b.txt", "gone", "now a link", "dir/new\nline"])
        #expect(status.changes.last?.path == Array("odd-".utf8) + [0xFF, 0xFE])
        // Headers alone: nothing changed.
        #expect(try Repository.parseStatus(Data("# branch.oid \(hash)\0".utf8)).records == 0)
        expectCode(.git) { try Repository.parseStatus(Data("x what\0".utf8)) }
        expectCode(.git) { try Repository.parseStatus(Data("1 .M N...\0".utf8)) }
    }

    /// git's `gc --auto` carries on in the background; the sync that started it must not wait for it.
    @Test func whatGitLeavesRunningIsNotWaitedFor() throws {
        let temporary = try TemporaryDirectory()
        for collect in [true, false] {
            let run = try GitCommand.run(["-c", "sleep 60 </dev/null >/dev/null 2>&1 & echo $! > pid"], in: temporary.url, git: "/bin/sh",
                                         collect: collect)
            #expect(run.status == 0)
            let pid = try #require(Int32(String(decoding: Data(contentsOf: temporary.path("pid")), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(pid, 0) == 0, "the background process had already ended: run waited for it")
            kill(pid, SIGKILL)
        }
        let failed = try GitCommand.run(["-c", "echo out; echo err >&2; exit 3"], in: temporary.url, git: "/bin/sh")
        #expect(failed.status == 3)
        #expect(String(decoding: failed.output, as: UTF8.self) == "out\n")
        #expect(String(decoding: failed.errors, as: UTF8.self) == "err\n")
    }

    /// A collaborator can commit an executable `git` into the folder, and a user's environment can
    /// point git at another repository or configuration: neither reaches the git Cohort runs.
    @Test func gitIsFoundOutsideTheFolderAndPointedNowhereElse() throws {
        let temporary = try TemporaryDirectory()
        let planted = temporary.path("bin/git")
        try FileManager.default.createDirectory(at: planted.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("#!/bin/sh\necho planted\n".utf8).write(to: planted)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: planted.path)
        // The same folder named relative to this process's directory: found by a lookup, never used.
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + temporary.path("bin").path.dropFirst()
        #expect(FileManager.default.isExecutableFile(atPath: relative + "/git"))
        #expect(GitCommand.locate(onPath: "\(relative):.:\(temporary.path("none").path)") == nil)
        #expect(GitCommand.locate(onPath: "bin:\(temporary.path("bin").path)") == planted.path)

        let cleaned = GitCommand.environment(from: ["GIT_DIR": "/elsewhere", "GIT_INDEX_FILE": "/x", "GIT_CONFIG_GLOBAL": "/evil",
                                                    "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.excludesFile", "HOME": "/home/ann"])
        #expect(cleaned == ["HOME": "/home/ann", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"])
    }

    /// A folder with one of every kind of change, committed first with git.
    private func prepareFolder(_ folder: URL) throws -> Repository {
        let manager = FileManager.default
        try manager.createDirectory(at: folder.appendingPathComponent("docs"), withIntermediateDirectories: true)
        let write = { (path: String, text: String) in
            let url = folder.appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        for (path, text) in [("a.txt", "a\n"), ("keep.txt", "keep\n"), ("notes", "a file\n"), ("docs/guide.md", "guide\n"),
                             ("gone.txt", "gone\n"), ("tool.sh", "echo\n"), ("was-a-file", "a file\n"), (".gitignore", "*.log\nbuild/\n")] {
            try write(path, text)
        }
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("link").path, withDestinationPath: "a.txt")
        let git = { (arguments: [String]) in
            _ = try run("/usr/bin/git", ["-c", "user.name=T", "-c", "user.email=t@example.com"] + arguments, in: folder)
        }
        try git(["init", "-q", "-b", "main"])
        try git(["add", "-A"])
        try git(["commit", "-q", "-m", "base"])

        try write("a.txt", "a, edited\n")
        try manager.removeItem(at: folder.appendingPathComponent("gone.txt"))
        try manager.removeItem(at: folder.appendingPathComponent("notes"))
        try write("notes/todo.md", "todo\n")
        try manager.removeItem(at: folder.appendingPathComponent("docs"))
        try write("docs", "now a file\n")
        try write("sp ace/\u{FC}ber.md", "new\n")
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent("tool.sh").path)
        try manager.removeItem(at: folder.appendingPathComponent("link"))
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("link").path, withDestinationPath: "keep.txt")
        try manager.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: folder.appendingPathComponent("keep.txt").path)
        try write("x.log", "ignored\n")
        try write("build/out", "ignored\n")
        try write(".cohort/skip", "left out\n")
        try manager.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        _ = try run("/usr/bin/git", ["init", "-q"], in: folder.appendingPathComponent("sub"))
        try write("sub/inner.txt", "a nested repository's\n")
        #expect(mkfifo(folder.appendingPathComponent("pipe").path, 0o644) == 0)
        try manager.removeItem(at: folder.appendingPathComponent("was-a-file"))
        #expect(mkfifo(folder.appendingPathComponent("was-a-file").path, 0o644) == 0)
        return try Repository(at: folder)
    }
}
