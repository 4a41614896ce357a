import CohortRemote
import CohortTestSupport
import Foundation
import Testing

extension SharedStateTests {
    @Test("PostgreSQL stopped during requests: 503 with Retry-After and E_UNAVAILABLE, nothing spent; started again: service, and what was spent stays spent")
    func databaseOutage() async throws {
        let cluster = try PostgresCluster()
        // Under 32 a minute, identity requests are counted one at a time in the database (no
        // instance holds a reservation), so a challenge during the outage needs the database too.
        let hosted = try Hosted(serverArguments: ["--identity-rate", "30"], instances: 2, cluster: cluster)
        let bo = hosted.scenario.bo.home
        let spent = try await Self.proof(hosted, bo, at: 0)
        #expect(try await Self.token(hosted, spent, at: 1).status == 200)
        let unanswered = try await Self.proof(hosted, bo, at: 1)
        let token = try await Self.pushToken(hosted, bo, at: 0)

        cluster.stop()
        for instance in [0, 1] {
            let answer = try await Self.token(hosted, unanswered, at: instance)
            #expect(answer.status == 503 && answer.code == "E_UNAVAILABLE", "\(answer.status) \(answer.text)")
            #expect(answer.headers.first(name: "Retry-After") == "5")
        }
        let challenge = try await IdentityAPITests.send(.POST, "\(hosted.link)/challenge", headers: [("Content-Type", "application/json")],
                                                        body: Data(#"{"operation":"pull"}"#.utf8))
        #expect(challenge.status == 503 && challenge.code == "E_UNAVAILABLE")
        // git needs no database: a token bought before still fetches through nginx.
        let listed = try run("git", ["-c", "http.extraHeader=Authorization: Bearer \(token)", "ls-remote", hosted.link],
                             in: hosted.temp.url, environment: ["GIT_TERMINAL_PROMPT": "0"])
        #expect(listed.status == 0, "\(listed.stderr)")
        // cohort clone says what is wrong, in one line.
        let clone = try hosted.cohort(["clone", hosted.link, hosted.temp.path("during").path], as: bo)
        #expect(clone.status != 0)
        #expect(clone.stderr.hasPrefix("error: E_UNAVAILABLE: "), "\(clone.stderr)")

        try cluster.start()
        #expect(try await Self.eventually(async: 30) { try await Self.token(hosted, unanswered, at: 0).status == 200 },
                "an answer refused during the outage was not spent, and the instance recovered by itself")
        for instance in [0, 1] {
            let replay = try await Self.token(hosted, spent, at: instance)
            #expect(replay.code == "E_CHALLENGE_REPLAYED", "\(replay.text)")
        }
        let fresh = try await Self.proof(hosted, bo, at: 1)
        #expect(try await Self.token(hosted, fresh, at: 1).status == 200)
        #expect(try hosted.cohort(["clone", hosted.link, hosted.temp.path("after").path], as: bo).status == 0)
    }

    static func eventually(async seconds: TimeInterval, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? await condition()) == true { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return try await condition()
    }
}
