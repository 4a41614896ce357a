import CohortTestSupport
import Foundation
import Glibc
import Testing

/// `cohort start` in a folder that already is a git repository: its files become the first content,
/// its history stays reachable beside the collaboration, and a start that fails leaves it as it was.
@Suite struct AdoptionTests {
    let sandbox: Sandbox
    let project: URL
    let ann: CLI

    init() throws {
        sandbox = try Sandbox()
        project = sandbox.path("project")
        ann = CLI(home: sandbox.path("ann"), directory: project)
        try FileManager.default.createDirectory(at: project.appendingPathComponent("docs"), withIntermediateDirectories: true)
        #expect(try ann.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        try git(["init", "-q", "-b", "master"])
        try sandbox.write("project/readme.md", "hello\n")
        try sandbox.write("project/docs/guide.md", "guide\n")
        try git(["add", "."])
        try git(["commit", "-qm", "first"])
        try git(["checkout", "-qb", "feature"])
        try sandbox.write("project/feature.md", "feature\n")
        try git(["add", "feature.md"])
        try git(["commit", "-qm", "feature"])
        try git(["remote", "add", "origin", "https://git.example.org/ann/project.git"])
        // Work in progress: an edit and a file git does not track yet.
        try sandbox.write("project/readme.md", "hello, edited\n")
        try sandbox.write("project/notes.md", "untracked\n")
    }

    @discardableResult
    func git(_ arguments: [String]) throws -> String {
        let result = try run("git", ["-c", "user.name=Ann", "-c", "user.email=ann@example.com"] + arguments, in: project)
        #expect(result.status == 0, "git \(arguments): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Everything `git` knows about the repository that adoption may touch.
    func snapshot() throws -> [String] {
        [try git(["for-each-ref", "--format=%(refname) %(objectname)"]), try git(["remote", "-v"]),
         try git(["symbolic-ref", "-q", "HEAD"]), try git(["status", "--porcelain"]), try git(["ls-files", "-s"])]
    }

    @Test func aRepositoryIsAdoptedWithItsFilesAsTheyAreAndItsHistoryKept() throws {
        let feature = try git(["rev-parse", "feature"])
        let master = try git(["rev-parse", "master"])
        let started = try ann.run(["start", ".", "--title", "Project"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stderr.contains("adopted the git repository") && started.stderr.contains("pre-cohort/feature, pre-cohort/master")
            && started.stderr.contains("its remotes are now pre-cohort-origin"), "\(started.stderr)")
        #expect(try git(["rev-parse", "pre-cohort/feature"]) == feature && git(["rev-parse", "pre-cohort/master"]) == master)
        #expect(try git(["remote"]) == "pre-cohort-origin")
        #expect(try git(["symbolic-ref", "HEAD"]) == "refs/heads/main")
        #expect(try git(["rev-list", "--count", "main"]) == "1")
        // The files as they were, edits and untracked files included, are the first content.
        #expect(try sandbox.read("project/readme.md") == "hello, edited\n")
        #expect(try git(["show", "main:readme.md"]) == "hello, edited")
        #expect(try git(["show", "main:notes.md"]) == "untracked")
        #expect(try git(["show", "main:feature.md"]) == "feature")
        #expect(try ann.run(["verify"]).stdout == "ok: 1 commit\n")
        #expect(try ann.run(["status"]).stdout.contains("no local changes"))
        let notices = try ann.run(["notices"]).stdout
        #expect(["readme.md", "notes.md", "feature.md", "docs/guide.md"].allSatisfy { notices.contains("content.created \($0) ") }, "\(notices)")
        // A second start is refused: it already is a collaboration.
        let again = try ann.run(["start", ".", "--title", "Again"])
        expectRefusal(again, "E_GIT")
        #expect(again.stderr.contains("already has .cohort/"), "\(again.stderr)")
    }

    /// An attacker's repository: its history tracks forged files under `.cohort/` (gone from the
    /// folder, still in the index). They never reach the genesis; the old branch they sit on is kept
    /// here, and refused by the hook if pushed; sync shares main only, and a fresh clone verifies.
    @Test func forgedCohortFilesInTheOldHistoryNeverReachTheCollaboration() throws {
        for (path, text) in [(".cohort/members.json", "forged\n"), (".cohort/notices/ab/abcd.json", "{\"payload\":\"x\"}\n"), (".cohort/extra", "[]\n")] {
            try FileManager.default.createDirectory(at: project.appendingPathComponent(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try sandbox.write("project/\(path)", text)
        }
        try git(["add", "-f", ".cohort"])
        try git(["commit", "-qm", "forged .cohort"])
        let forged = try git(["rev-parse", "HEAD"])
        try FileManager.default.removeItem(at: project.appendingPathComponent(".cohort"))
        let started = try ann.run(["start", ".", "--title", "Project"])
        #expect(started.status == 0, "\(started.stderr)")
        let tree = try git(["ls-tree", "-r", "--name-only", "main"]).split(separator: "\n").map(String.init)
        #expect(!tree.contains(".cohort/extra") && !tree.contains(".cohort/notices/ab/abcd.json"), "\(tree)")
        #expect(try ann.run(["verify"]).stdout == "ok: 1 commit\n")
        #expect(try git(["rev-parse", "pre-cohort/feature"]) == forged)

        let bare = sandbox.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: sandbox.url).status == 0)
        #expect(try ann.run(["hook", "install", bare.path]).status == 0)
        let all = try run("git", ["push", bare.path, "--all"], in: project)
        #expect(all.status != 0 && all.stderr.contains("(refs/heads/pre-cohort/feature): E_BAD_SIGNATURE"), "\(all.stderr)")
        // pre-receive answers for the whole push: nothing of it lands.
        let refs = { try run("git", ["--git-dir", bare.path, "for-each-ref", "--format=%(refname)"], in: self.sandbox.url).stdout }
        let before = try refs()
        #expect(before == "", "\(before)")
        try git(["remote", "add", "origin", bare.path])
        try sandbox.write("project/readme.md", "after adoption\n")
        let synced = try ann.run(["sync"])
        #expect(synced.status == 0 && synced.stdout.contains("pushed"), "\(synced.stdout)\(synced.stderr)")
        #expect(try git(["rev-parse", "pre-cohort/feature"]) == forged)
        let after = try refs()
        #expect(after == "refs/heads/main\n", "\(after)")
        let clone = sandbox.path("clone")
        let cloned = try ann.run(["clone", bare.path, clone.path])
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(try sandbox.read("clone/readme.md") == "after adoption\n")
    }

    @Test func aDetachedHeadIsKeptToo() throws {
        let commit = try git(["rev-parse", "HEAD~1"])
        try git(["checkout", "-q", "--detach", "HEAD~1"])
        #expect(try ann.run(["start", ".", "--title", "Project"]).status == 0)
        #expect(try git(["rev-parse", "pre-cohort/detached-head"]) == commit)
    }

    @Test func aStartThatFailsLeavesTheRepositoryAsItWas() throws {
        let before = try snapshot()
        let index = try Data(contentsOf: project.appendingPathComponent(".git/index"))
        // A lock on main (another git at work) stops the start after the old branches moved aside.
        let lock = project.appendingPathComponent(".git/refs/heads/main.lock")
        try Data().write(to: lock)
        let failed = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(failed, "E_GIT")
        try FileManager.default.removeItem(at: lock)
        #expect(try snapshot() == before)
        #expect(try Data(contentsOf: project.appendingPathComponent(".git/index")) == index)
        #expect(!FileManager.default.fileExists(atPath: project.appendingPathComponent(".cohort").path))
        #expect(try sandbox.read("project/readme.md") == "hello, edited\n")
    }

    @Test func aStartKilledHalfWayIsUndoneByTheNextOne() throws {
        let feature = try git(["rev-parse", "feature"])
        try git(["config", "remote.pushDefault", "origin"])
        let killed = try CohortTestSupport.run(CLI.binary.path, ["start", ".", "--title", "Project"], in: project,
                                               environment: ["COHORT_HOME": ann.home.path, "COHORT_START_FAULT": "after-move-aside"])
        #expect(killed.status == SIGKILL || killed.status == 128 + SIGKILL, "\(killed.stderr)")
        #expect(try git(["rev-parse", "pre-cohort/feature"]) == feature)
        #expect(try git(["config", "remote.pushDefault"]) == "pre-cohort-origin")
        // Nothing is lost, and the way on is named: start again.
        let status = try ann.run(["status"])
        #expect(status.stderr.contains("`cohort start . --title T` here adopts it"), "\(status.stderr)")
        let again = try ann.run(["start", ".", "--title", "Project"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try git(["rev-parse", "pre-cohort/feature"]) == feature && git(["rev-list", "--count", "main"]) == "1")
        #expect(try git(["remote"]) == "pre-cohort-origin" && git(["config", "remote.pushDefault"]) == "pre-cohort-origin")
        #expect(try git(["show", "main:readme.md"]) == "hello, edited")
        #expect(!FileManager.default.fileExists(atPath: project.appendingPathComponent(".git/cohort/adoption.json").path))
    }

    @Test func whatAdoptionCannotKeepIsRefusedUntouched() throws {
        // A file staged and then edited again: the first commit would drop what was staged.
        try git(["add", "readme.md"])
        try sandbox.write("project/readme.md", "hello, edited twice\n")
        let partly = try snapshot()
        let staged = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(staged, "E_GIT")
        #expect(staged.stderr.contains("staged changes and other changes on disk (first: readme.md)"), "\(staged.stderr)")
        #expect(try snapshot() == partly)
        try git(["reset", "-q"])

        // A branch that is a symbolic reference.
        try git(["symbolic-ref", "refs/heads/alias", "refs/heads/master"])
        let symbolic = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(symbolic, "E_GIT")
        #expect(symbolic.stderr.contains("alias is a symbolic reference"), "\(symbolic.stderr)")
        try git(["symbolic-ref", "-d", "refs/heads/alias"])

        // A bare repository: its internals are never content.
        let bare = sandbox.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: sandbox.url).status == 0)
        let refused = try ann.run(["start", bare.path, "--title", "Bare"])
        expectRefusal(refused, "E_GIT")
        #expect(refused.stderr.contains("is a bare git repository"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bare.appendingPathComponent(".git").path))

        // A repository whose files live elsewhere (core.worktree).
        let elsewhere = sandbox.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try git(["config", "core.worktree", elsewhere.path])
        let moved = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(moved, "E_GIT")
        #expect(moved.stderr.contains("keeps its files elsewhere"), "\(moved.stderr)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent(".cohort").path))
    }

    @Test func aRepositoryMidMergeOrWithBranchesInTheWayIsRefusedUntouched() throws {
        try git(["branch", "pre-cohort/x"])
        let before = try snapshot()
        let clash = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(clash, "E_GIT")
        #expect(clash.stderr.contains("already has a branch pre-cohort/x"), "\(clash.stderr)")
        #expect(try snapshot() == before)
        try git(["branch", "-D", "pre-cohort/x"])

        try git(["checkout", "-q", "master"])
        try git(["stash", "-q", "-u"])
        try sandbox.write("project/readme.md", "master side\n")
        try git(["commit", "-qam", "master side"])
        try git(["checkout", "-q", "feature"])
        try sandbox.write("project/readme.md", "feature side\n")
        try git(["commit", "-qam", "feature side"])
        _ = try run("git", ["-c", "user.name=Ann", "-c", "user.email=ann@example.com", "merge", "-q", "master"], in: project)
        let merging = try snapshot()
        let refused = try ann.run(["start", ".", "--title", "Project"])
        expectRefusal(refused, "E_GIT")
        #expect(refused.stderr.contains("in the middle of a merge"), "\(refused.stderr)")
        #expect(try snapshot() == merging)
    }
}
