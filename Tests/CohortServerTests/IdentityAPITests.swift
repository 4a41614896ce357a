import AsyncHTTPClient
import CohortIdentity
import CohortRemote
import CohortServerAPI
import CohortTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The identity API and the link, over HTTP, with every refusal's code and status.
@Suite("identity API of cohort serve", .serialized)
struct IdentityAPITests {
    /// One HTTP exchange: status, headers, body.
    struct Answer {
        let status: Int
        let headers: HTTPHeaders
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var code: String? { try? ServerAPI.decode(ServerAPI.ErrorBody.self, from: body, what: "error").error.code }
    }

    static func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: Data? = nil) async throws -> Answer {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Data(buffer.readableBytesView))
    }

    /// A proof over a fresh challenge for `operation`, by `home`'s device, after `tamper` changed
    /// the challenge bytes.
    static func proof(_ hosted: Hosted, _ home: IdentityHome, operation: ChallengeOperation, client: ServerClient,
                      tamper: (inout Data) -> Void = { _ in }) async throws -> SignedIdentityProof {
        let link = try CollaborationLink(hosted.link)
        var challenge = try await client.challenge(link, operation: operation)
        var bytes = try #require(Data(base64Encoded: challenge.challenge))
        tamper(&bytes)
        challenge.challenge = bytes.base64EncodedString()
        return try TokenExchange.sign(challenge, for: link, operation: operation, device: home.loadDevice(), card: home.requireCard())
    }

    static func tokenAnswer(_ hosted: Hosted, operation: String, proof: SignedIdentityProof) async throws -> Answer {
        let body = ServerAPI.encode(ServerAPI.TokenRequest(operation: try ChallengeOperation(name: operation), proof: proof))
        return try await send(.POST, "\(hosted.link)/token", headers: [("Content-Type", "application/json")], body: body)
    }

    @Test("a participant's proof buys a token; the token opens the git endpoint")
    func tokenOpensGit() async throws {
        let hosted = try Hosted()
        let client = ServerClient()
        let bo = hosted.scenario.bo.home
        let answer = try await Self.tokenAnswer(hosted, operation: "push", proof: Self.proof(hosted, bo, operation: .push, client: client))
        #expect(answer.status == 200, "\(answer.text)")
        let token = try ServerAPI.decode(ServerAPI.TokenResponse.self, from: answer.body, what: "token")
        #expect(token.access == .readWrite)

        let refs = try await Self.send(.GET, "\(hosted.link)/info/refs?service=git-upload-pack", headers: [("Authorization", "Bearer \(token.token)")])
        #expect(refs.status == 200)
        #expect(refs.headers.first(name: "Content-Type") == "application/x-git-upload-pack-advertisement")
        #expect(refs.text.hasPrefix("001e# service=git-upload-pack\n0000"))
        #expect(refs.text.contains("refs/heads/main"))

        // Without a token: 401 with a challenge git understands; a forged token: 401 too.
        let anonymous = try await Self.send(.GET, "\(hosted.link)/info/refs?service=git-upload-pack")
        #expect(anonymous.status == 401)
        #expect(anonymous.headers.first(name: "WWW-Authenticate")?.hasPrefix("Basic realm=") == true)
        #expect(anonymous.text.contains("E_UNAUTHORIZED"))
        var tampered = Array(token.token)
        let middle = tampered.count - 12
        tampered[middle] = tampered[middle] == "A" ? "B" : "A"
        let forged = try await Self.send(.GET, "\(hosted.link)/info/refs?service=git-upload-pack",
                                         headers: [("Authorization", "Bearer \(String(tampered))")])
        #expect(forged.status == 401)
        await client.shutdown()
    }

    @Test("forged, out-of-scope and replayed challenges are refused with their codes")
    func challengeRefusals() async throws {
        let hosted = try Hosted()
        let client = ServerClient()
        let bo = hosted.scenario.bo.home

        let forged = try await Self.tokenAnswer(hosted, operation: "pull", proof: Self.proof(hosted, bo, operation: .pull, client: client) { $0[40] ^= 1 })
        #expect(forged.status == 401)
        #expect(forged.code == "E_CHALLENGE_FORGED")

        let scoped = try await Self.tokenAnswer(hosted, operation: "push", proof: Self.proof(hosted, bo, operation: .pull, client: client))
        #expect(scoped.status == 401)
        #expect(scoped.code == "E_CHALLENGE_SCOPE")

        let proof = try await Self.proof(hosted, bo, operation: .pull, client: client)
        #expect(try await Self.tokenAnswer(hosted, operation: "pull", proof: proof).status == 200)
        let replayed = try await Self.tokenAnswer(hosted, operation: "pull", proof: proof)
        #expect(replayed.status == 401)
        #expect(replayed.code == "E_CHALLENGE_REPLAYED")

        // Not a participant: 403, and no token.
        let outsider = try await Self.tokenAnswer(hosted, operation: "pull", proof: Self.proof(hosted, hosted.eve.home, operation: .pull, client: client))
        #expect(outsider.status == 403)
        #expect(outsider.code == "E_UNKNOWN_ROOT")
        #expect(!outsider.text.contains("token\""))

        // Read only: a push token is refused, a pull token is not.
        let dee = hosted.dee.home
        let readOnlyPush = try await Self.tokenAnswer(hosted, operation: "push", proof: Self.proof(hosted, dee, operation: .push, client: client))
        #expect(readOnlyPush.status == 403)
        #expect(readOnlyPush.code == "E_NOT_PERMITTED")
        await client.shutdown()
    }

    @Test("an expired challenge is refused", .timeLimit(.minutes(2)))
    func expiredChallenge() async throws {
        let hosted = try Hosted(serverArguments: ["--challenge-lifetime", "1"])
        let client = ServerClient()
        let proof = try await Self.proof(hosted, hosted.scenario.bo.home, operation: .pull, client: client)
        try await Task.sleep(for: .seconds(2.5))
        let answer = try await Self.tokenAnswer(hosted, operation: "pull", proof: proof)
        #expect(answer.status == 401)
        #expect(answer.code == "E_CHALLENGE_EXPIRED")
        await client.shutdown()
    }

    @Test("the link answers a browser with a page and a client with JSON")
    func linkPage() async throws {
        let hosted = try Hosted()
        let page = try await Self.send(.GET, hosted.link, headers: [("Accept", "text/html")])
        #expect(page.status == 200)
        #expect(page.headers.first(name: "Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.text.contains("<h1>Baking Recipes</h1>"))
        #expect(page.text.contains("Ann"))
        #expect(page.text.contains("4 participants"))
        #expect(page.text.contains("cohort clone \(hosted.link)"))

        let json = try await Self.send(.GET, hosted.link, headers: [("Accept", "application/json")])
        let info = try ServerAPI.decode(ServerAPI.LinkInfo.self, from: json.body, what: "link")
        #expect(info.identifier == hosted.identifier)
        #expect(info.title == "Baking Recipes")
        #expect(info.initiator.handle == "ann@example.com")
        #expect(info.gitURL == hosted.link)

        let missing = try await Self.send(.GET, hosted.link.replacingOccurrences(of: hosted.identifier, with: "nothing-here"),
                                          headers: [("Accept", "application/json")])
        #expect(missing.status == 404)
        #expect(missing.code == "E_NOT_FOUND")
    }

    @Test("a newcomer's view: what Cohort is, the whole link, HEAD for previewers, a page at /, a readable 404")
    func newcomerPages() async throws {
        let hosted = try Hosted()
        let page = try await Self.send(.GET, hosted.link, headers: [("Accept", "text/html")])
        #expect(page.text.contains("<pre id=\"link\">\(hosted.link)</pre>"))
        #expect(page.text.contains("<b>Cohort</b> keeps a shared folder"))
        #expect(page.text.contains("(ann@example.com)") && !page.text.contains("@ann@"))
        #expect(page.text.contains("--handle you@example.com"))
        #expect(page.text.contains("white-space:pre-wrap"))
        let head = try await Self.send(.HEAD, hosted.link, headers: [("Accept", "text/html")])
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers.first(name: "Content-Type")?.hasPrefix("text/html") == true)
        let missingHead = try await Self.send(.HEAD, hosted.link.replacingOccurrences(of: hosted.identifier, with: "nothing-here"))
        #expect(missingHead.status == 404)
        let root = try await Self.send(.GET, hosted.server.url + "/")
        #expect(root.status == 200 && root.text.contains("<h1>A Cohort server</h1>"), "\(root.text)")
        let rootHead = try await Self.send(.HEAD, hosted.server.url + "/")
        #expect(rootHead.status == 200 && rootHead.body.isEmpty)
        let notHere = try await Self.send(.GET, hosted.link.replacingOccurrences(of: hosted.identifier, with: "nothing-here"))
        #expect(notHere.status == 404 && notHere.text.contains("<h1>Not here</h1>") && notHere.text.contains("<style>"))
        #expect(!notHere.text.contains("E_NOT_FOUND:"), "the page shows the reason, the code apart")
        // Every other address, under /c too, gets the page (JSON when asked for), never an empty 404.
        for path in ["/c", "/c/", "/c/\(hosted.identifier)/no/such/thing", "/some/where", "/favicon.ico"] {
            let other = try await Self.send(.GET, hosted.server.url + path)
            #expect(other.status == 404 && other.text.contains("<h1>Not here</h1>"), "\(path): \(other.status) \(other.text)")
        }
        let json = try await Self.send(.GET, hosted.server.url + "/some/where", headers: [("Accept", "application/json")])
        #expect(json.status == 404 && json.text.contains("\"E_NOT_FOUND\""), "\(json.text)")
    }

    @Test("only the owner publishes; publishing again is harmless")
    func publishing() throws {
        let hosted = try Hosted()
        let again = try hosted.cohort(["publish", hosted.server.url, "--workspace", hosted.scenario.owner.directory.path],
                                      as: hosted.scenario.ann.home)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.trimmingCharacters(in: .newlines) == hosted.link)
        #expect(again.stderr.contains("already published"))

        let clone = try hosted.scenario.clone("bo", for: hosted.scenario.bo.home)
        let notOwner = try hosted.cohort(["publish", hosted.server.url, "--workspace", clone.directory.path, "--remote", "server"],
                                         as: hosted.scenario.bo.home)
        #expect(notOwner.status == 1)
        #expect(notOwner.stderr.hasPrefix("error: E_NOT_PERMITTED: "), "\(notOwner.stderr)")
    }

    @Test("limits: oversized bodies get 413, too many identity requests 429")
    func limits() async throws {
        let hosted = try Hosted(serverArguments: ["--max-push-mb", "1", "--identity-rate", "30"])
        let client = ServerClient()
        let answer = try await Self.tokenAnswer(hosted, operation: "push",
                                                proof: Self.proof(hosted, hosted.scenario.bo.home, operation: .push, client: client))
        let token = try ServerAPI.decode(ServerAPI.TokenResponse.self, from: answer.body, what: "token").token
        let big = try await Self.send(.POST, "\(hosted.link)/git-receive-pack", headers: [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/x-git-receive-pack-request"),
        ], body: Data(count: 2 << 20))
        #expect(big.status == 413)
        #expect(big.text.contains("E_TOO_LARGE"))

        let bigJSON = try await Self.send(.POST, "\(hosted.link)/challenge", headers: [("Content-Type", "application/json")],
                                          body: Data(repeating: 0x20, count: 300 << 10))
        #expect(bigJSON.status == 413)

        var statuses: [Int] = []
        for _ in 0..<32 {
            statuses.append(try await Self.send(.POST, "\(hosted.link)/challenge", headers: [("Content-Type", "application/json")],
                                                body: Data(#"{"operation":"pull"}"#.utf8)).status)
        }
        #expect(statuses.contains(429))
        let limited = try await Self.send(.POST, "\(hosted.link)/challenge", body: Data(#"{"operation":"pull"}"#.utf8))
        #expect(limited.status == 429)
        #expect(limited.code == "E_BUSY")
        #expect(limited.headers.first(name: "Retry-After") != nil)
        await client.shutdown()
    }

    @Test("a gzip request body reaches git inflated (protocol v2 ls-refs)")
    func gzipRequest() async throws {
        let hosted = try Hosted()
        let client = ServerClient()
        let answer = try await Self.tokenAnswer(hosted, operation: "pull",
                                                proof: Self.proof(hosted, hosted.scenario.bo.home, operation: .pull, client: client))
        let token = try ServerAPI.decode(ServerAPI.TokenResponse.self, from: answer.body, what: "token").token
        func packet(_ text: String) -> String { String(format: "%04x", text.utf8.count + 4) + text }
        let request = packet("command=ls-refs\n") + "0001" + packet("peel\n") + "0000"
        let plain = hosted.temp.path("request")
        try Data(request.utf8).write(to: plain)
        #expect(try run("gzip", ["-f", plain.path], in: hosted.temp.url).status == 0)
        let compressed = try Data(contentsOf: hosted.temp.path("request.gz"))
        let listed = try await Self.send(.POST, "\(hosted.link)/git-upload-pack", headers: [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/x-git-upload-pack-request"),
            ("Content-Encoding", "gzip"), ("Git-Protocol", "version=2"),
        ], body: compressed)
        #expect(listed.status == 200)
        #expect(listed.text.contains("refs/heads/main"), "\(listed.text)")
        await client.shutdown()
    }
}
