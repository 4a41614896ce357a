import AsyncHTTPClient
import CohortIdentity
import CohortRemote
import CohortServerAPI
import CohortTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `cohort serve --state postgres://…`: instances sharing PostgreSQL and the data directory, behind
/// nginx, every server a real process started by the test.
@Suite("instances sharing PostgreSQL, behind nginx", .serialized,
       .enabled(if: PostgresCluster.available, "PostgreSQL is not installed: make deps installs it"),
       .enabled(if: NginxProxy.available, "nginx is not installed: make deps installs it"))
struct SharedStateTests {
    typealias Answer = IdentityAPITests.Answer

    /// One request straight to an instance, addressed (`Host`) as clients address the server.
    static func send(_ method: HTTPMethod, _ base: String, _ path: String, host: String, body: Data? = nil,
                     headers: [(String, String)] = []) async throws -> Answer {
        try await IdentityAPITests.send(method, base + path, headers: [("Host", host), ("Content-Type", "application/json")] + headers, body: body)
    }

    /// A challenge fetched at instance `at`, signed by `home`'s device.
    static func proof(_ hosted: Hosted, _ home: IdentityHome, at instance: Int, operation: ChallengeOperation = .pull) async throws -> SignedIdentityProof {
        let link = try CollaborationLink(hosted.link)
        let host = try #require(URL(string: hosted.link)).authority
        let answer = try await send(.POST, hosted.addresses[instance], "/c/\(hosted.identifier)/challenge", host: host,
                                    body: ServerAPI.encode(ServerAPI.ChallengeRequest(operation: operation)))
        #expect(answer.status == 200, "\(answer.text)")
        let challenge = try ServerAPI.decode(ServerAPI.ChallengeResponse.self, from: answer.body, what: "challenge")
        return try TokenExchange.sign(challenge, for: link, operation: operation, device: home.loadDevice(), card: home.requireCard())
    }

    static func token(_ hosted: Hosted, _ proof: SignedIdentityProof, at instance: Int, operation: ChallengeOperation = .pull) async throws -> Answer {
        let host = try #require(URL(string: hosted.link)).authority
        return try await send(.POST, hosted.addresses[instance], "/c/\(hosted.identifier)/token", host: host,
                              body: ServerAPI.encode(ServerAPI.TokenRequest(operation: operation, proof: proof)))
    }

    @Test("the server creates its schema in an empty database, migrates once, and refuses a newer one")
    func schemaMigration() throws {
        let cluster = try PostgresCluster.shared()
        let database = try cluster.createDatabase()
        let temp = try TemporaryDirectory()
        let first = try ServerProcess(data: temp.path("data"), arguments: ["--state", database], environment: cluster.environment)
        #expect(first.logText().contains("\"message\":\"state store schema migrated\""))
        #expect(try cluster.psql(database, "SELECT version FROM cohort_schema") == "1")
        let tables = try cluster.psql(database, "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE tablename LIKE 'cohort_%'")
        #expect(tables == "cohort_collaborations cohort_delivery_failures cohort_identity_requests cohort_notices cohort_schema cohort_sinks cohort_spent_challenges cohort_store")
        first.stop()
        // A second start finds the schema current; a second instance beside it too.
        let again = try ServerProcess(data: temp.path("data"), arguments: ["--state", database], environment: cluster.environment)
        let beside = try ServerProcess(data: temp.path("data"), arguments: ["--state", database], environment: cluster.environment)
        #expect(!again.logText().contains("schema migrated") && !beside.logText().contains("schema migrated"))
        again.stop()
        beside.stop()
        // A database a newer Cohort migrated is not written in an older shape.
        try cluster.psql(database, "UPDATE cohort_schema SET version = 99")
        let refused = try run(cohortBinary.path, ["serve", "--data", temp.path("data").path, "--listen", "127.0.0.1:0", "--state", database],
                              in: temp.url, environment: cluster.environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("error: E_MALFORMED: the state store's schema is version 99; this cohort knows versions up to 1"), "\(refused.stderr)")
    }

    @Test("a state store that cannot be reached, or a bad URL, is one line that never shows the password")
    func unreachableStore() throws {
        let temp = try TemporaryDirectory()
        let port = try freePort()
        let secret = "hunter2-\(UUID().uuidString.prefix(6))"
        let down = try run(cohortBinary.path, ["serve", "--data", temp.path("data").path, "--listen", "127.0.0.1:0"], in: temp.url,
                           environment: ["COHORT_SERVE_STATE": "postgres://cohort:\(secret)@127.0.0.1:\(port)/cohort"])
        #expect(down.status == 1)
        let last = down.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last == "error: E_UNAVAILABLE: cannot reach the state store postgres://cohort@127.0.0.1:\(port)/cohort?sslmode=prefer (start PostgreSQL, or check --state, the password in PGPASSWORD and ?sslmode=, which is require by default off loopback; the log has the details)",
                "\(down.stderr)")
        #expect(!down.stderr.contains(secret) && !down.stdout.contains(secret))
        // A database that answers but refuses this password: its own line, PostgreSQL's reason in the log.
        let cluster = try PostgresCluster.shared()
        let refused = try run(cohortBinary.path, ["serve", "--data", temp.path("data").path, "--listen", "127.0.0.1:0", "--state", cluster.url("postgres")],
                              in: temp.url, environment: ["PGPASSWORD": secret])
        #expect(refused.status == 1)
        let refusal = refused.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(refusal.hasPrefix("error: E_IO: the state store \(cluster.url("postgres")) refused this server (check the user, the password in PGPASSWORD"),
                "\(refused.stderr)")
        #expect(refused.stderr.contains("28P01") && !refused.stderr.contains(secret), "\(refused.stderr)")
        for (url, reason) in [("mysql://a@b/c", "is not a postgres:// URL"), ("postgres://127.0.0.1/db", "names no user"),
                              ("postgres://u:\(secret)@h/", "names no database"), ("postgres://u@h/d?sslmode=maybe", "sslmode must be")] {
            let bad = try run(cohortBinary.path, ["serve", "--data", temp.path("data").path, "--state", url], in: temp.url)
            #expect(bad.status == 1)
            #expect(bad.stderr.hasPrefix("error: E_MALFORMED: ") && bad.stderr.contains(reason), "\(url): \(bad.stderr)")
            #expect(!bad.stderr.contains(secret))
        }
    }

    @Test("a challenge fetched at one instance buys one token at the other; every replay, and 15 of 16 racing answers, are refused")
    func challengeAcrossInstances() async throws {
        let hosted = try Hosted(instances: 2)
        let bo = hosted.scenario.bo.home
        let proof = try await Self.proof(hosted, bo, at: 0)
        let bought = try await Self.token(hosted, proof, at: 1)
        #expect(bought.status == 200, "\(bought.text)")
        for instance in [0, 1] {
            let replay = try await Self.token(hosted, proof, at: instance)
            #expect(replay.status == 401 && replay.code == "E_CHALLENGE_REPLAYED", "\(replay.text)")
        }
        // Sixteen answers of one fresh challenge at once, half at each instance: exactly one token.
        let racing = try await Self.proof(hosted, bo, at: 1)
        let statuses = try await withThrowingTaskGroup(of: Answer.self) { group in
            for index in 0..<16 {
                group.addTask { try await Self.token(hosted, racing, at: index % 2) }
            }
            var answers: [Answer] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        #expect(statuses.filter { $0.status == 200 }.count == 1, "\(statuses.map(\.status))")
        #expect(statuses.filter { $0.code == "E_CHALLENGE_REPLAYED" }.count == 15)
        #expect(try hosted.cluster?.psql(hosted.database!, "SELECT count(*) FROM cohort_spent_challenges") == "3", "the publish's, and these two")
    }

    @Test("identity requests are counted per client across instances, the client read through nginx only")
    func sharedRateLimit() async throws {
        let hosted = try Hosted(serverArguments: ["--identity-rate", "6"], instances: 2)
        let body = Data(#"{"operation":"pull"}"#.utf8)
        // Counts are per minute: the burst must not straddle one.
        let second = Int(Date().timeIntervalSince1970) % 60
        if second >= 45 { try await Task.sleep(for: .seconds(61 - second)) }
        // The publish made two (its challenge and the publish), in this minute or the one before.
        // Through nginx, round-robin over both instances, a client naming another address in
        // X-Forwarded-For: the 7th of this minute is refused.
        var statuses: [Int] = []
        for _ in 0..<8 {
            statuses.append(try await IdentityAPITests.send(.POST, "\(hosted.link)/challenge", headers: [
                ("Content-Type", "application/json"), ("X-Forwarded-For", "203.0.113.9"),
            ], body: body).status)
        }
        let admitted = statuses.prefix { $0 == 200 }.count
        #expect([4, 6].contains(admitted) && statuses.dropFirst(admitted).allSatisfy { $0 == 429 }, "\(statuses)")
        // Straight at an instance with a forged X-Forwarded-For: this peer is not the proxy, so the header is not read.
        let host = try #require(URL(string: hosted.link)).authority
        let direct = try await Self.send(.POST, hosted.addresses[1], "/c/\(hosted.identifier)/challenge", host: host, body: body,
                                         headers: [("X-Forwarded-For", "203.0.113.9")])
        #expect(direct.status == 429)
        let addresses = try hosted.cluster!.psql(hosted.database!, "SELECT string_agg(DISTINCT address, ' ') FROM cohort_identity_requests")
        #expect(addresses == "127.0.0.1", "\(addresses)")
    }

    @Test("at 48 a minute, reservations through both instances admit at most the limit, and the database holds every one")
    func reservedRateLimit() async throws {
        let hosted = try Hosted(serverArguments: ["--identity-rate", "48"], instances: 2)
        let body = Data(#"{"operation":"pull"}"#.utf8)
        let second = Int(Date().timeIntervalSince1970) % 60
        if second >= 40 { try await Task.sleep(for: .seconds(61 - second)) }
        let minute = Int(Date().timeIntervalSince1970) / 60
        var statuses: [Int] = []
        for _ in 0..<64 {
            statuses.append(try await IdentityAPITests.send(.POST, "\(hosted.link)/challenge", headers: [("Content-Type", "application/json")],
                                                            body: body).status)
        }
        try #require(Int(Date().timeIntervalSince1970) / 60 == minute, "the requests straddled a minute")
        let admitted = statuses.filter { $0 == 200 }.count
        #expect(statuses.allSatisfy { [200, 429].contains($0) }, "\(statuses)")
        // The publish's two requests may be in this minute; each instance may strand up to 2 (48 / 16 - 1).
        #expect(admitted <= 48 && admitted >= 48 - 2 - 2 * 2, "\(admitted) admitted: \(statuses)")
        let reserved = try hosted.cluster!.psql(hosted.database!, "SELECT max(count) FROM cohort_identity_requests WHERE address = '127.0.0.1'")
        #expect(Int(reserved) ?? 0 >= admitted, "\(reserved) reserved for \(admitted) admitted")
    }
}

extension URL {
    /// `host:port` as a `Host` header carries it.
    var authority: String { port.map { "\(host ?? ""):\($0)" } ?? (host ?? "") }
}
