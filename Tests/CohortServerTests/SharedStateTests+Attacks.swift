import CohortGit
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

extension SharedStateTests {
    /// Bo's commit of 100 notices made with his real key outside `cohort commit`, one of them signed
    /// by Cy: refused through nginx with the code `cohort verify` gives, at that commit; written into
    /// the shared repository past the hook (a branch the hook never saw), none of its notices reaches
    /// the outbox or the server sink, while Ann's next edit does; a fresh clone still works.
    @Test("a hostile commit is refused through nginx as cohort verify refuses it, and written past the hook, its notices never go out")
    func hostileCommitThroughTwoInstances() throws {
        let temp = try TemporaryDirectory()
        let jsonl = temp.path("server-notices.jsonl")
        let hosted = try Hosted(serverSinks: "[[sinks]]\ntype = \"file\"\npath = \"\(jsonl.path)\"\n", instances: 2)
        let cluster = try #require(hosted.cluster)
        let database = try #require(hosted.database)
        let scenario = hosted.scenario
        let (folder, bo, tip, attack) = try hosted.boForgingAForeignNotice(at: 40)
        expectViolation(.notPermitted, in: bo, at: attack)
        for _ in 0..<2 {  // round-robin: each instance gets a turn
            let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
            #expect(pushed.status != 0)
            #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_NOT_PERMITTED"), "\(pushed.stderr)")
            #expect(try hosted.serverTip() == tip.hex)
        }
        let taken = try #require(Int(cluster.psql(database, "SELECT count(*) FROM cohort_notices")))
        #expect(try Self.eventually { Self.noticeIDs(in: jsonl).count == taken })

        // Past the hook, as a careless admin would: the branch is in the repository both instances serve.
        let bare = hosted.temp.path("data/collaborations/\(hosted.identifier).git")
        #expect(try run("git", ["--git-dir", bare.path, "fetch", "-q", folder.path, "+\(attack.hex):refs/heads/side"], in: hosted.temp.url).status == 0)
        // Ann's edit lands and is announced; the side branch's 100 notices are not.
        let ann = scenario.owner.directory
        try Data("500 g flour\nann: more salt\n".utf8).write(to: ann.appendingPathComponent("bread/sourdough.md"))
        let synced = try hosted.cohort(["sync"], as: scenario.ann.home, in: ann)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try Self.eventually { Self.noticeIDs(in: jsonl).count == taken + 1 })
        Thread.sleep(forTimeInterval: 11)  // a sweep by each instance
        #expect(try cluster.psql(database, "SELECT count(*) FROM cohort_notices") == "\(taken + 1)")
        #expect(Self.noticeIDs(in: jsonl).count == taken + 1)
        #expect(hosted.servers.contains { $0.logText().contains("a branch fails verification; its notices are not sent") })
        // The collaboration itself is untouched: a fresh clone verifies, Ann's edit in it.
        let fresh = hosted.temp.path("fresh")
        let cloned = try hosted.cohort(["clone", hosted.link, fresh.path], as: hosted.dee.home)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(try String(contentsOf: fresh.appendingPathComponent("bread/sourdough.md"), encoding: .utf8) == "500 g flour\nann: more salt\n")
    }
}
