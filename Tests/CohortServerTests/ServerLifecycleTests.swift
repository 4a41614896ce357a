import CohortGit
import CohortRemote
import CohortServerAPI
import CohortTestSupport
import Foundation
import Testing

/// Restarts, shutdown and TLS.
@Suite("cohort serve lifecycle", .serialized)
struct ServerLifecycleTests {
    @Test("a restart loses no collaboration, token or unanswered challenge, and puts its own hooks back; SIGTERM exits cleanly")
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
        // Hooks of an older version, calling a binary that moved: the restarted server installs its own again.
        let hooks = hosted.server.data.appendingPathComponent("collaborations/\(hosted.identifier).git/hooks")
        try Data("installed by an older version".utf8).write(to: hosted.server.data.appendingPathComponent("server/hooks"))
        var installed: [String: String] = [:]
        for name in ["pre-receive", "post-receive"] {
            let url = hooks.appendingPathComponent(name)
            let text = try String(contentsOf: url, encoding: .utf8)
            installed[name] = text
            try text.replacingOccurrences(of: cohortBinary.path, with: "/moved/away/cohort")
                .replacingOccurrences(of: "[ -e \"${COHORT_SERVER_SINKS:-}\" ]", with: "[ -n \"${COHORT_SERVER_SINKS:-}\" ]")
                .write(to: url, atomically: true, encoding: .utf8)
            #expect(try String(contentsOf: url, encoding: .utf8) != text)
        }
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

        for name in ["pre-receive", "post-receive"] {
            #expect(try String(contentsOf: hooks.appendingPathComponent(name), encoding: .utf8) == installed[name], "\(name)")
        }

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
        #expect(untrusted.stderr.contains("is not trusted here"), "\(untrusted.stderr)")
        // libgit2 in this process, with the system's certificate authorities (loaded at its first
        // transfer, not at its initialisation): the self-signed certificate is not trusted either.
        let systemTrust = Result { try Repository.clone(from: hosted.link, into: temp.path("libgit2")) }
        guard case .failure(let failure) = systemTrust else { Issue.record("libgit2 trusted a self-signed certificate"); return }
        #expect(String(describing: failure).lowercased().contains("certificate"), "\(failure)")
        // An authority file that cannot be read: named, in one line.
        let missing = temp.path("no-such-ca.pem").path
        let unreadable = try hosted.cohort(["clone", hosted.link, hosted.temp.path("unreadable").path], as: hosted.scenario.cy.home,
                                           environment: ["GIT_SSL_CAINFO": missing])
        expectOneLine(unreadable, "E_NETWORK", missing)
        // http:// to a TLS server: said in words, with the way out.
        let plain = hosted.link.replacingOccurrences(of: "https://", with: "http://")
        let wrongScheme = try hosted.cohort(["clone", plain, hosted.temp.path("plain").path], as: hosted.scenario.cy.home, environment: environment)
        expectOneLine(wrongScheme, "E_NETWORK", "try the link with https://")
    }

    @Test("libgit2's initialisation leaves the system's certificate bundle for the first transfer")
    func certificateBundleDeferred() throws {
        GitRuntime.start()
        // Read to its end: /proc files report no size.
        let maps = try String(decoding: #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readToEnd() ?? Data(), as: UTF8.self)
        let bundle = "/etc/ssl/certs/ca-certificates.crt"  // Debian's libgit2: GIT_DEFAULT_CERT_LOCATION
        if maps.contains("libmbedx509"), FileManager.default.fileExists(atPath: bundle) {
            #expect(GitRuntime.deferredCertificates.file == bundle)
        } else {
            #expect(GitRuntime.deferredCertificates.file == nil)
        }
        #expect(GitRuntime.deferredCertificates.directory == nil)
    }

    @Test("a server that is not there, a name that does not resolve, and https:// to a plain server, each in one plain line")
    func unreachableInPlainWords() throws {
        let hosted = try Hosted()
        let home = hosted.scenario.cy.home
        let secure = hosted.link.replacingOccurrences(of: "http://", with: "https://")
        expectOneLine(try hosted.cohort(["clone", secure, hosted.temp.path("a").path], as: home), "E_NETWORK", "does not speak HTTPS")
        // Port 1: privileged, and nothing listens there on a test machine.
        let closed = 1
        expectOneLine(try hosted.cohort(["clone", "http://127.0.0.1:\(closed)/c/\(hosted.identifier)", hosted.temp.path("b").path], as: home),
                      "E_NETWORK", "nothing is listening at 127.0.0.1:\(closed) (connection refused)")
        expectOneLine(try hosted.cohort(["clone", "http://no-such-host.invalid/c/\(hosted.identifier)", hosted.temp.path("c").path], as: home),
                      "E_NETWORK", "the name no-such-host.invalid does not resolve")
        for folder in ["a", "b", "c"] {
            #expect(!FileManager.default.fileExists(atPath: hosted.temp.path(folder).path))
        }
    }

    private func expectOneLine(_ result: ProcessResult, _ code: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("error: \(code): ") && result.stderr.contains(fragment), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("errno") && !result.stderr.contains("BoringSSL"), "\(result.stderr)", sourceLocation: sourceLocation)
    }
}
