import CohortCollaboration
import CohortIdentity
import CohortRemote
import CohortTestSupport
import Foundation
import Testing

/// Restarts, shutdown and TLS.
@Suite("cohort serve lifecycle", .serialized)
struct ServerLifecycleTests {
    @Test("a restart loses no collaboration, token or unanswered challenge; SIGTERM exits cleanly")
    func restart() async throws {
        let hosted = try Hosted()
        let client = ServerClient()
        let bo = hosted.scenario.bo.home
        let tokenBefore = try ServerAPI.decode(ServerAPI.TokenResponse.self, from: await IdentityAPITests.tokenAnswer(
            hosted, operation: "pull", proof: IdentityAPITests.proof(hosted, bo, operation: .pull, client: client)).body, what: "token")
        let pending = try await IdentityAPITests.proof(hosted, bo, operation: .pull, client: client)
        let used = try await IdentityAPITests.proof(hosted, bo, operation: .pull, client: client)
        #expect(try await IdentityAPITests.tokenAnswer(hosted, operation: "pull", proof: used).status == 200)

        #expect(hosted.server.stop() == 0)
        // Back at the same address (challenges name the address a client reached).
        let port = try #require(URLComponents(string: hosted.server.url)?.port)
        let again = try ServerProcess(data: hosted.server.data, listen: "127.0.0.1:\(port)")
        defer { again.stop() }
        let link = "\(again.url)/c/\(hosted.identifier)"
        let refs = try await IdentityAPITests.send(.GET, "\(link)/info/refs?service=git-upload-pack",
                                                   headers: [("Authorization", "Bearer \(tokenBefore.token)")])
        #expect(refs.status == 200)
        // Issued before the restart, answered after: accepted once; a spent one stays spent.
        #expect(try await IdentityAPITests.send(.POST, "\(link)/token", headers: [("Content-Type", "application/json")],
                                                body: ServerAPI.encode(ServerAPI.TokenRequest(operation: .pull, proof: pending))).status == 200)
        let replay = try await IdentityAPITests.send(.POST, "\(link)/token", headers: [("Content-Type", "application/json")],
                                                     body: ServerAPI.encode(ServerAPI.TokenRequest(operation: .pull, proof: used)))
        #expect(replay.code == "E_CHALLENGE_REPLAYED")

        let clone = hosted.temp.path("after-restart")
        let cloned = try hosted.git(["clone", link, clone.path], as: hosted.scenario.cy.home)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        await client.shutdown()
    }

    @Test("HTTPS with a self-signed certificate, for git and for cohort clone")
    func tls() throws {
        let temp = try TemporaryDirectory()
        let certificate = temp.path("cert.pem")
        let key = temp.path("key.pem")
        let made = try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=127.0.0.1",
                                       "-addext", "subjectAltName=IP:127.0.0.1,DNS:127.0.0.1"], in: temp.url)
        #expect(made.status == 0, "\(made.stderr)")
        let environment = ["GIT_SSL_CAINFO": certificate.path]
        let hosted = try Hosted(serverArguments: ["--tls-cert", certificate.path, "--tls-key", key.path], environment: environment)
        #expect(hosted.link.hasPrefix("https://127.0.0.1:"))

        let viaGit = try hosted.git(["clone", hosted.link, hosted.temp.path("bo").path], as: hosted.scenario.bo.home, environment: environment)
        #expect(viaGit.status == 0, "\(viaGit.stderr)")
        let viaCohort = try hosted.cohort(["clone", hosted.link, hosted.temp.path("cy").path], as: hosted.scenario.cy.home, environment: environment)
        #expect(viaCohort.status == 0, "\(viaCohort.stderr)")

        // Without trusting the certificate, nothing is sent.
        let untrusted = try hosted.cohort(["clone", hosted.link, hosted.temp.path("untrusted").path], as: hosted.scenario.cy.home,
                                          environment: ["GIT_SSL_CAINFO": ""])
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.hasPrefix("error: E_NETWORK: "), "\(untrusted.stderr)")
    }
}
