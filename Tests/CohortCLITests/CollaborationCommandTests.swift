import CohortTestSupport
import Foundation
import Testing

/// The collaboration commands through the real binary, with stock git beside them.
@Suite struct CollaborationCommandTests {
    @Test func startAddCommitCommentVerifyExport() throws {
        let sandbox = try Sandbox()
        let ann = sandbox.cli("ann")
        let bo = sandbox.cli("bo")
        #expect(try ann.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"]).status == 0)
        #expect(try bo.run(["id", "init", "--handle", "bo@example.com", "--name", "Bo", "--device", "desk"]).status == 0)
        #expect(try bo.run(["id", "card", "--output", "bo.json"]).status == 0)
        try FileManager.default.createDirectory(at: sandbox.path("recipes"), withIntermediateDirectories: true)
        try sandbox.write("recipes/bread.md", "flour\n")

        let started = try ann.run(["start", "recipes", "--title", "Baking Recipes", "--no-comments"])
        #expect(started.status == 0, "\(started.stderr)")
        let identifier = started.stdout.trimmingCharacters(in: .newlines)
        #expect(UUID(uuidString: identifier) != nil)

        let inside = CLI(home: sandbox.path("ann"), directory: sandbox.path("recipes"))
        let added = try inside.run(["participants", "add", "../bo.json", "--read-only"])
        #expect(added.status == 0, "\(added.stderr)")
        let list = try inside.run(["participants", "list", "--json"])
        let participants = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(participants.map { $0["handle"] as? String } == ["ann@example.com", "bo@example.com"])
        #expect(participants[1]["permission"] as? String == "read-only")

        try sandbox.write("recipes/bread.md", "flour\nwater\n")
        let committed = try inside.run(["commit", "-m", "Water"])
        #expect(committed.status == 0, "\(committed.stderr)")
        #expect(committed.stdout.contains("content.edited  bread.md"))
        #expect(try inside.run(["commit", "-m", "again"]).stdout == "nothing to commit\n")
        expectRefusal(try inside.run(["comment", "bread.md", "--text", "hi"]), "E_NOT_PERMITTED")

        let verified = try inside.run(["verify"])
        #expect(verified.stdout == "ok: 3 commits\n", "\(verified.stderr)")
        let json = try inside.run(["verify", "--json"])
        #expect(json.stdout.contains("\"ok\":true"))

        // Bo, read-only, cannot commit in his clone; his file stays as he wrote it.
        #expect(try run("git", ["clone", "-q", "recipes", "bo-recipes"], in: sandbox.url).status == 0)
        let boInside = CLI(home: sandbox.path("bo"), directory: sandbox.path("bo-recipes"))
        try sandbox.write("bo-recipes/bread.md", "bo's version\n")
        expectRefusal(try boInside.run(["commit", "-m", "mine"]), "E_NOT_PERMITTED")
        #expect(try sandbox.read("bo-recipes/bread.md") == "bo's version\n")

        // Stock git accepts the signatures with the exported allowed-signers file.
        #expect(try inside.run(["export", "allowed-signers", "--output", "../signers"]).status == 0)
        let gitVerify = try run("git", ["-c", "gpg.ssh.allowedSignersFile=\(sandbox.path("signers").path)", "verify-commit", "HEAD"], in: sandbox.path("recipes"))
        #expect(gitVerify.status == 0, "\(gitVerify.stderr)")

        // A plain unsigned commit breaks the history: verify names it, with the code.
        let environment = ["GIT_AUTHOR_NAME": "X", "GIT_AUTHOR_EMAIL": "x@example.com", "GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@example.com"]
        try sandbox.write("recipes/plain.md", "plain\n")
        #expect(try run("git", ["add", "plain.md"], in: sandbox.path("recipes")).status == 0)
        #expect(try run("git", ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "plain"], in: sandbox.path("recipes"), environment: environment).status == 0)
        let head = try run("git", ["rev-parse", "HEAD"], in: sandbox.path("recipes")).stdout.trimmingCharacters(in: .newlines)
        let broken = try inside.run(["verify"])
        expectRefusal(broken, "E_BAD_SIGNATURE")
        #expect(broken.stderr.contains("commit \(head): commit is not signed"))
        let brokenJSON = try inside.run(["verify", "--json"])
        #expect(brokenJSON.status == 1)
        #expect(brokenJSON.stdout.contains("\"code\":\"E_BAD_SIGNATURE\""))
    }

    @Test func workspaceCommandsOutsideAWorkspace() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        expectRefusal(try cli.run(["verify"]), "E_GIT")
        expectRefusal(try cli.run(["participants", "list"]), "E_GIT")
        expectRefusal(try cli.run(["start", "x", "--title", ""]), "E_MALFORMED")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("x").path))
    }
}

@Suite struct RotateAndRemoveCommandTests {
    /// Bo adds a phone, rotates his root in his clone, and the owner later removes him: all through the binary.
    @Test func rotateThenRemove() throws {
        let sandbox = try Sandbox()
        let ann = sandbox.cli("ann")
        let bo = sandbox.cli("bo")
        #expect(try ann.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        #expect(try bo.run(["id", "init", "--handle", "bo@example.com", "--name", "Bo", "--device", "desk"]).status == 0)
        #expect(try bo.run(["id", "card", "--output", "bo.json"]).status == 0)
        #expect(try ann.run(["start", "recipes", "--title", "Recipes"]).status == 0)
        let annInside = CLI(home: sandbox.path("ann"), directory: sandbox.path("recipes"))
        #expect(try annInside.run(["participants", "add", "../bo.json"]).status == 0)
        #expect(try run("git", ["clone", "-q", "recipes", "bo-recipes"], in: sandbox.url).status == 0)
        let boInside = CLI(home: sandbox.path("bo"), directory: sandbox.path("bo-recipes"))

        let phone = sandbox.cli("bo-phone")
        #expect(try phone.run(["id", "enroll", "--handle", "bo@example.com", "--device", "phone", "--output", "request.json"]).status == 0)
        #expect(try bo.run(["id", "add-device", "request.json", "--output", "bo-v2.json"]).status == 0)
        #expect(try phone.run(["id", "import-card", "bo-v2.json"]).status == 0)
        #expect(try phone.run(["id", "card", "--output", "bo-complete.json"]).status == 0)
        #expect(try bo.run(["id", "import-card", "bo-complete.json"]).status == 0)

        let rotated = try boInside.run(["participants", "rotate"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let said = rotated.stdout.split(separator: "\n")
        #expect(said.count == 2 && said[1].contains("only here until pushed: the server knows you by your old root"), "\(rotated.stdout)")
        let newRoot = try #require(said.first?.split(separator: " ").last.map(String.init))
        #expect(try boInside.run(["verify"]).stdout == "ok: 3 commits\n")
        #expect(try run("git", ["pull", "-q", "--ff-only", "../bo-recipes", "main"], in: sandbox.path("recipes")).status == 0)
        let list = try annInside.run(["participants", "list"])
        #expect(list.stdout.contains(String(newRoot.prefix(12))) && !list.stdout.contains(newRoot), "\(list.stdout)")
        // Aligned columns: every participant's permission starts in the same column.
        let rows = list.stdout.split(separator: "\n").dropFirst().filter { $0.hasPrefix("  ") }
        let columns = Set(rows.compactMap { row in
            ["owner", "read-write", "read-only"].compactMap { word in row.range(of: "  " + word + "  ").map { row.distance(from: row.startIndex, to: $0.lowerBound) } }.first
        })
        #expect(rows.count == 2 && columns.count == 1, "\(list.stdout)")
        #expect(list.stdout.hasPrefix("Recipes (") && list.stdout.contains("2 participants, membership version"), "\(list.stdout)")

        let removed = try annInside.run(["participants", "remove", String(newRoot.prefix(12))])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.hasPrefix("removed bo@example.com"))
        #expect(removed.stdout.contains("this collaboration has no remote yet"), "\(removed.stdout)")
        expectRefusal(try annInside.run(["participants", "remove", "ann@example.com"]), "E_NOT_PERMITTED")
        #expect(try annInside.run(["verify"]).stdout == "ok: 4 commits\n")
    }
}

@Suite struct NoticeCommandTests {
    @Test func noticesAndSinksThroughTheBinary() throws {
        let sandbox = try Sandbox()
        let inside = try sandbox.recipes(["bread.md": "flour\n"])

        let listed = try inside.run(["notices"])
        #expect(listed.status == 0 && listed.stdout.contains("content.created bread.md by ann@example.com"), "\(listed.stdout)\(listed.stderr)")
        let json = try inside.run(["notices", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.split(separator: "\n")[0].utf8)) as? [String: Any])
        #expect(object["type"] as? String == "content.created")

        // A workspace configuration with a file sink and an exec sink written in Python.
        try sandbox.write("sink.py", "import sys\nopen(sys.argv[1], 'a').write(sys.stdin.read())\n")
        try sandbox.write("recipes/.git/cohort/config.toml", """
        [[sinks]]
        type = "file"
        path = "../../../notices.jsonl"
        history = "all"

        [[sinks]]
        type = "exec"
        name = "python"
        command = ["python3", "../../../sink.py", "../../../exec.jsonl"]
        history = "all"

        [[sinks]]
        type = "stdout"
        history = "all"
        """)
        let sinks = try inside.run(["sinks", "list"])
        #expect(sinks.stdout.contains("python  exec  every notice, history included") && sinks.stdout.contains("  file  "), "\(sinks.stdout)\(sinks.stderr)")
        let delivered = try inside.run(["notices", "deliver"])
        #expect(delivered.status == 0, "\(delivered.stderr)")
        // The readable line names the actor by handle.
        #expect(delivered.stdout.contains("content.created bread.md by ann@example.com"), "\(delivered.stdout)")
        #expect(try sandbox.read("notices.jsonl").split(separator: "\n").count == 1)
        #expect(try sandbox.read("exec.jsonl").split(separator: "\n").count == 1)
        #expect(try inside.run(["sinks", "test", "python"]).status == 0)
        #expect(try sandbox.read("exec.jsonl").contains("cohort-sinks-test"))

        try sandbox.write("recipes/.git/cohort/config.toml", "[[sinks]]\ntype = \"file\"\npath = 3\n")
        let broken = try inside.run(["notices", "deliver"])
        expectRefusal(broken, "E_MALFORMED")
        #expect(broken.stderr.contains("config.toml:3"))
    }
}

@Suite struct DeliveryCrashTests {
    /// `cohort notices deliver` killed with SIGKILL in the middle of delivering: the next run delivers
    /// everything (at least once).
    @Test func killedMidDeliveryThenRestarted() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.recipes(Dictionary(uniqueKeysWithValues: (0..<6).map { ("r\($0).md", "recipe \($0)\n") }))
        // The sink records each notice, and is slow on the third one the first time round.
        try sandbox.write("slow-sink.py", """
        import json, os, sys, time
        notice = json.loads(sys.stdin.readline())
        seen = open(sys.argv[1], 'a+'); seen.seek(0); count = len(seen.readlines())
        if count == 2 and not os.path.exists(sys.argv[2]):
            open(sys.argv[2], 'w').close()
            time.sleep(30)
        seen.write(notice['id'] + '\\n')
        """)
        try FileManager.default.createDirectory(at: sandbox.path("recipes/.git/cohort"), withIntermediateDirectories: true)
        try sandbox.write("recipes/.git/cohort/config.toml", """
        [[sinks]]
        type = "exec"
        name = "slow"
        command = ["python3", "../../../slow-sink.py", "../../../seen.txt", "../../../slowed"]
        history = "all"
        """)
        let inside = CLI(home: sandbox.path("ann"), directory: sandbox.path("recipes"))
        let process = try inside.start(["notices", "deliver"])
        for _ in 0..<300 where !FileManager.default.fileExists(atPath: sandbox.path("slowed").path) { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: sandbox.path("slowed").path), "the sink never slowed down")
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<300 where process.isRunning { usleep(10_000) }
        #expect(try sandbox.read("seen.txt").split(separator: "\n").count == 2)

        let again = try inside.run(["notices", "deliver"])
        #expect(again.status == 0, "\(again.stderr)")
        let seen = try sandbox.read("seen.txt").split(separator: "\n").map(String.init)
        let expected = jsonLines(try inside.run(["notices", "--json"]).stdout).compactMap { $0["id"] as? String }
        #expect(expected.count == 6)
        #expect(Set(seen) == Set(expected), "every notice arrived at least once")
    }
}

@Suite struct FollowTests {
    /// `cohort notices --follow` prints notices as commits arrive.
    @Test func followPrintsNewNotices() throws {
        let sandbox = try Sandbox()
        let inside = try sandbox.recipes(["bread.md": "flour\n"])
        let output = sandbox.path("follow.out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = try inside.start(["notices", "--follow", "--interval", "0.2"], output: FileHandle(forWritingTo: output))
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func printed() -> String { (try? sandbox.read("follow.out")) ?? "" }
        for _ in 0..<500 where !printed().contains("bread.md") { usleep(20_000) }
        #expect(printed().contains("content.created bread.md"))

        try sandbox.write("recipes/cake.md", "sugar\n")
        #expect(try inside.run(["commit", "-m", "cake"]).status == 0)
        for _ in 0..<500 where !printed().contains("cake.md") { usleep(20_000) }
        #expect(printed().contains("content.created cake.md"))
        #expect(printed().components(separatedBy: "bread.md").count == 2, "nothing is printed twice")
    }
}
