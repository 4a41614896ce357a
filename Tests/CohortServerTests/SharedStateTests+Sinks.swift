import CohortRemote
import CohortTestSupport
import Foundation
import Testing

extension SharedStateTests {
    /// Waits (up to `seconds`) for `condition`.
    static func eventually(_ seconds: TimeInterval = 60, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    static func noticeIDs(in file: URL) -> [String] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    @Test("a server sink gets every notice exactly once while both instances run")
    func serverSinkExactlyOnce() throws {
        let temp = try TemporaryDirectory()
        let jsonl = temp.path("server-notices.jsonl")
        let hosted = try Hosted(serverSinks: "[[sinks]]\ntype = \"file\"\npath = \"\(jsonl.path)\"\n", instances: 2)
        let cluster = try #require(hosted.cluster)
        let database = try #require(hosted.database)
        let ann = hosted.scenario.owner.directory
        for round in 0..<8 {
            try Data("500 g flour\nround \(round)\n".utf8).write(to: ann.appendingPathComponent("bread/sourdough.md"))
            let synced = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
            #expect(synced.status == 0, "\(synced.stderr)")
        }
        let taken = try #require(Int(cluster.psql(database, "SELECT count(*) FROM cohort_notices")))
        #expect(taken > 8)
        #expect(try Self.eventually { Self.noticeIDs(in: jsonl).count >= taken })
        Thread.sleep(forTimeInterval: 3)  // both instances poll every second: nothing more may come
        let ids = Self.noticeIDs(in: jsonl)
        #expect(ids.count == taken, "\(ids.count) lines for \(taken) notices")
        #expect(Set(ids).count == ids.count, "no notice twice")
        let outbox = try cluster.psql(database, "SELECT string_agg(notice_id, ' ' ORDER BY seq) FROM cohort_notices")
        #expect(ids.joined(separator: " ") == outbox, "in the outbox's order")
        #expect(try cluster.psql(database, "SELECT cursor = (SELECT max(seq) FROM cohort_notices) FROM cohort_sinks") == "t")
    }

    @Test("when the instance delivering dies, the other carries on from its cursor: every notice arrives")
    func sinkSurvivesItsInstance() throws {
        let temp = try TemporaryDirectory()
        let received = temp.path("received.jsonl")
        // A slow receiver: half a second per notice.
        let sinks = """
            [[sinks]]
            type = "exec"
            name = "slow"
            command = ["/bin/sh", "-c", "sleep 0.5; cat >> \(received.path); echo >> \(received.path)"]
            """
        let hosted = try Hosted(serverArguments: ["--delivery-lease", "3"], serverSinks: sinks, instances: 2)
        let cluster = try #require(hosted.cluster)
        let database = try #require(hosted.database)
        #expect(try Self.eventually { try Self.noticeIDs(in: received).count == Int(cluster.psql(database, "SELECT count(*) FROM cohort_notices")) })
        let ann = hosted.scenario.owner.directory
        for index in 0..<16 {
            try Data("note \(index)\n".utf8).write(to: ann.appendingPathComponent("note-\(index).md"))
        }
        let synced = try hosted.cohort(["sync"], as: hosted.scenario.ann.home, in: ann)
        #expect(synced.status == 0, "\(synced.stderr)")
        let start = Self.noticeIDs(in: received).count
        #expect(try Self.eventually { Self.noticeIDs(in: received).count >= start + 3 })
        // Kill whichever instance holds the sink now, in the middle of its run.
        let holder = try cluster.psql(database, "SELECT holder FROM cohort_sinks WHERE name = 'slow'")
        let pid = try #require(holder.split(separator: ":").dropFirst().first.flatMap { Int32($0) }, "holder \(holder)")
        let victim = try #require(hosted.servers.first { $0.process.processIdentifier == pid })
        kill(victim.process.processIdentifier, SIGKILL)
        let all = try cluster.psql(database, "SELECT string_agg(notice_id, ' ' ORDER BY seq) FROM cohort_notices").split(separator: " ").map(String.init)
        #expect(try Self.eventually(60) { Set(Self.noticeIDs(in: received)).isSuperset(of: all) }, "every notice arrives")
        let ids = Self.noticeIDs(in: received)
        #expect(ids.count - Set(ids).count <= 1, "at most the notice in flight is sent again: \(ids.count) lines, \(Set(ids).count) notices")
        let survivor = try #require(hosted.servers.first { $0.process.processIdentifier != pid })
        #expect(survivor.logText().contains("\"message\":\"request\""))
    }
}
