import CohortBase
import Crypto
import Foundation
import Glibc
import CohortTestSupport
import Testing

/// Bad input through the CLI: one line, the stable code, exit 1; nothing the user had is touched.
@Suite struct ErrorContractTests {
    let sandbox: Sandbox
    let cli: CLI

    init() throws {
        sandbox = try Sandbox()
        cli = sandbox.cli("home")
        let created = try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"])
        #expect(created.status == 0, "\(created.stderr)")
    }

    @Test func secondInitIsRefusedAndKeepsTheKey() throws {
        let before = try sandbox.read("home/device.key")
        expectRefusal(try cli.run(["id", "init", "--handle", "x@example.com", "--name", "X"]), "E_IDENTITY_EXISTS")
        #expect(try sandbox.read("home/device.key") == before)
    }

    @Test func noIdentity() throws {
        expectRefusal(try cli.run(["id", "card"], home: sandbox.path("nobody")), "E_NO_IDENTITY")
        expectRefusal(try cli.run(["proof", "create", "--collaboration", "c", "--salt", String(repeating: "0", count: 32), "--message", "aGk="],
                                  home: sandbox.path("nobody")), "E_NO_IDENTITY")
    }

    @Test func outputNeverOverwritesWithoutForce() throws {
        try sandbox.write("mine.json", "my notes")
        expectRefusal(try cli.run(["id", "card", "--output", "mine.json"]), "E_IO")
        #expect(try sandbox.read("mine.json") == "my notes")
        #expect(try cli.run(["id", "card", "--output", "mine.json", "--force"]).status == 0)
        #expect(try sandbox.read("mine.json").contains("\"handle\""))
    }

    @Test func badArgumentsToRootAndProof() throws {
        let card = try cli.run(["id", "card", "--output", "card.json"])
        #expect(card.status == 0)
        expectRefusal(try cli.run(["id", "root", "--card", "card.json", "--collaboration", "c", "--salt", "abc"]), "E_MALFORMED")
        expectRefusal(try cli.run(["id", "root", "--card", "card.json", "--collaboration", "has space", "--salt", String(repeating: "0", count: 32)]), "E_MALFORMED")
        expectRefusal(try cli.run(["id", "root", "--card", "missing.json", "--collaboration", "c", "--salt", String(repeating: "0", count: 32)]), "E_IO")
        expectRefusal(try cli.run(["proof", "create", "--collaboration", "c", "--salt", String(repeating: "0", count: 32), "--message", "not base64"]), "E_MALFORMED")
        expectRefusal(try cli.run(["proof", "create", "--collaboration", "c", "--salt", String(repeating: "0", count: 32), "--message", ""]), "E_MALFORMED")
    }

    @Test func tamperedCardIsRefused() throws {
        #expect(try cli.run(["id", "card", "--output", "card.json"]).status == 0)
        try sandbox.write("tampered.json", try sandbox.read("card.json").replacingOccurrences(of: "\"Ann\"", with: "\"Mallory\""))
        expectRefusal(try cli.run(["id", "root", "--card", "tampered.json", "--collaboration", "c", "--salt", String(repeating: "0", count: 32)]), "E_BAD_SIGNATURE")
    }

    @Test func proofVerifyRefusesGarbage() throws {
        try sandbox.write("roots", "cohort-v1 \(String(repeating: "ab", count: 32))\n")
        let verify = ["proof", "verify", "--roots", "roots"]
        expectRefusal(try cli.run(verify, stdin: Data("{".utf8)), "E_MALFORMED")
        expectRefusal(try cli.run(verify, stdin: Data()), "E_MALFORMED")
        expectRefusal(try cli.run(verify, stdin: Data(repeating: 0x20, count: 70_000)), "E_TOO_LARGE")
        expectRefusal(try cli.run(verify, stdin: Data([0xff, 0xfe, 0x00])), "E_MALFORMED")
        try sandbox.write("bad-roots", "cohort-v1 nothex\n")
        expectRefusal(try cli.run(["proof", "verify", "--roots", "bad-roots"], stdin: Data("{}".utf8)), "E_MALFORMED")

        let proof = try cli.run(["proof", "create", "--collaboration", "c", "--salt", String(repeating: "0", count: 32), "--message", "aGk="])
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(proof.stdout.utf8)) as? [String: Any])
        let encoded = try #require(fields["signature"] as? String)
        var signature = try #require(Data(base64Encoded: encoded))
        signature[signature.count - 1] ^= 1
        fields["signature"] = signature.base64EncodedString()
        expectRefusal(try cli.run(verify, stdin: JSONSerialization.data(withJSONObject: fields)), "E_BAD_SIGNATURE")
        fields["publicKey"] = Data(count: 33).base64EncodedString()
        expectRefusal(try cli.run(verify, stdin: JSONSerialization.data(withJSONObject: fields)), "E_BAD_KEY")
    }

    @Test func usageErrorsExit64() throws {
        let result = try cli.run(["id", "init", "--name", "No Handle"])
        #expect(result.status == 64, "\(result.stderr)")
    }
}

/// What a newcomer meets with bad input: one line `error: CODE: what (what to do)`, the right exit
/// status, and nothing created by a command that refused.
@Suite struct NewcomerMessageTests {
    func expectUsage(_ result: CLI.Result, _ fragment: String, help: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 64, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("error: E_USAGE: ") && result.stderr.contains(fragment)
                && result.stderr.hasSuffix("(see '\(help)')\n"), "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func usageErrorsAreOneLineWithTheHelpToRead() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        expectUsage(try cli.run(["sync", "--max-attempts", "3"]), "Unknown option '--max-attempts'", help: "cohort sync --help")
        expectUsage(try cli.run(["id", "init", "--name", "Ann"]), "--handle", help: "cohort id init --help")
        expectUsage(try cli.run(["nosuch"]), "nosuch", help: "cohort --help")
        // A negative duration is out of range, not a missing value.
        expectUsage(try cli.run(["sync", "--wait", "-3"]), "--wait must be 0 to 86400 seconds", help: "cohort sync --help")
        expectUsage(try cli.run(["watch", "--settle", "-1"]), "--settle must be", help: "cohort watch --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--challenge-lifetime", "900"]),
                    "--challenge-lifetime must be 1 to", help: "cohort serve --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--max-transfers", "-1"]),
                    "--max-transfers must be", help: "cohort serve --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--tls-cert", "cert.pem"]),
                    "--tls-cert and --tls-key go together", help: "cohort serve --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--trusted-proxy", "nginx.local"]),
                    "--trusted-proxy nginx.local is not an IP address", help: "cohort serve --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--state", "postgres://u@h/d", "--delivery-lease", "1"]),
                    "--delivery-lease must be 3 to 3600 seconds", help: "cohort serve --help")
        expectUsage(try cli.run(["serve", "--data", sandbox.path("data").path, "--delivery-lease", "10"]),
                    "--delivery-lease applies only with --state", help: "cohort serve --help")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("data").path))
        // `cohort` alone: the overview, on standard error, and a usage status.
        let bare = try cli.run([])
        #expect(bare.status == 64 && bare.stdout.isEmpty && bare.stderr.contains("SUBCOMMANDS:"), "\(bare.stderr)")
        // Help and version still succeed; defaults print as people write them.
        let help = try cli.run(["sync", "--help"])
        #expect(help.status == 0 && help.stdout.contains("(default: 60)"), "\(help.stdout)")
        // Paragraphs are wrapped by the terminal's width only, never in the middle by the source.
        let paragraph = help.stdout.split(separator: "\n\n")[1]
        #expect(paragraph.split(separator: "\n").allSatisfy { $0.count >= 60 || $0.hasSuffix(".") }, "\(paragraph)")
        #expect(try cli.run(["--version"]).status == 0)
    }

    @Test func serveChecksBeforeItCreatesAnything() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        let data = sandbox.path("data")
        let missing = try cli.run(["serve", "--data", data.path, "--tls-cert", sandbox.path("none.pem").path, "--tls-key", sandbox.path("none.key").path])
        expectRefusal(missing, "E_IO")
        #expect(missing.stderr.contains(sandbox.path("none.pem").path), "\(missing.stderr)")
        try sandbox.write("garbage.pem", "not a certificate\n")
        try sandbox.write("garbage.key", "not a key\n")
        expectRefusal(try cli.run(["serve", "--data", data.path, "--tls-cert", sandbox.path("garbage.pem").path,
                                   "--tls-key", sandbox.path("garbage.key").path]), "E_MALFORMED")
        // A port something else listens on.
        let (taken, port) = try loopbackSocket(listening: true)
        defer { close(taken) }
        let busy = try cli.run(["serve", "--data", data.path, "--listen", "127.0.0.1:\(port)"])
        expectRefusal(busy, "E_NETWORK")
        #expect(busy.stderr.contains("127.0.0.1:\(port): the port is already in use"), "\(busy.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data.path), "serve created its data directory before refusing")
    }

    @Test func outsideAWorkspaceAndInAPlainRepository() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        let outside = try cli.run(["status"])
        expectRefusal(outside, "E_GIT")
        #expect(outside.stderr.contains("is not in a Cohort workspace") && outside.stderr.contains("cohort start"), "\(outside.stderr)")
        let plain = sandbox.path("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: plain.appendingPathComponent("a.txt"))
        for arguments in [["init", "-q"], ["add", "a.txt"], ["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "plain"]] {
            #expect(try run("git", arguments, in: plain).status == 0)
        }
        for command in [["status"], ["verify"], ["sync"], ["commit", "-m", "x"]] {
            let result = try cli.run(command + ["--workspace", plain.path])
            expectRefusal(result, "E_GIT")
            #expect(result.stderr.contains("is a git repository but not a Cohort collaboration"), "\(command): \(result.stderr)")
        }
    }

    @Test func cloneOfAFolderThatIsNotThere() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann"]).status == 0)
        let result = try cli.run(["clone", sandbox.path("nowhere").path, sandbox.path("copy").path])
        expectRefusal(result, "E_IO")
        #expect(result.stderr.contains("there is no folder \(sandbox.path("nowhere").path) to clone"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("copy").path))
    }

    /// `git init --bare` names an unborn `master` as HEAD; a collaboration pushed there lives on `main`.
    @Test func cloneOfABareRepositoryWhoseHeadNamesAnUnbornMaster() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        let bare = sandbox.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: sandbox.url).status == 0)
        #expect(try run("git", ["symbolic-ref", "HEAD", "refs/heads/master"], in: bare).status == 0)
        #expect(try run("git", ["push", "-q", bare.path, "main"], in: ann.directory).status == 0)
        let clone = try ann.run(["clone", bare.path, sandbox.path("copy").path])
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(try sandbox.read("copy/bread.md") == "flour\n")
        let head = try run("git", ["symbolic-ref", "HEAD"], in: sandbox.path("copy"))
        #expect(head.stdout == "refs/heads/main\n")
    }

    /// A card and an enrolment request passed in place of each other, and the laptop's card after
    /// the phone imported it: each named for what it is, with the step that helps.
    @Test func filesPassedInPlaceOfEachOtherAndTheLaptopsCard() throws {
        let sandbox = try Sandbox()
        let laptop = sandbox.cli("laptop")
        let phone = sandbox.cli("phone")
        #expect(try laptop.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"]).status == 0)
        #expect(try phone.run(["id", "enroll", "--handle", "ann@example.com", "--device", "phone", "--output", "request.json"]).status == 0)
        #expect(try laptop.run(["start", "w", "--title", "W"]).status == 0)
        let asCard = try laptop.run(["participants", "add", "request.json", "--workspace", "w"])
        expectRefusal(asCard, "E_MALFORMED")
        #expect(asCard.stderr.contains("is an enrolment request, not an identity card") && asCard.stderr.contains("cohort id add-device"), "\(asCard.stderr)")
        #expect(try laptop.run(["id", "card", "--output", "ann.json"]).status == 0)
        let asRequest = try laptop.run(["id", "add-device", "ann.json"])
        expectRefusal(asRequest, "E_MALFORMED")
        #expect(asRequest.stderr.contains("is an identity card, not an enrolment request") && asRequest.stderr.contains("cohort id enroll"), "\(asRequest.stderr)")

        #expect(try laptop.run(["id", "add-device", "request.json", "--output", "card.json"]).status == 0)
        #expect(try phone.run(["id", "import-card", "card.json"]).status == 0)
        // The phone signed; the laptop's copy still lacks that signature, and is told where it is.
        let stale = try laptop.run(["id", "card"])
        expectRefusal(stale, "E_CARD_INCOMPLETE")
        #expect(stale.stderr.contains("if 'phone' already imported it, bring the complete card here"), "\(stale.stderr)")
        #expect(try phone.run(["id", "card", "--output", "complete.json"]).status == 0)
        let imported = try laptop.run(["id", "import-card", "complete.json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try laptop.run(["id", "card"]).status == 0)
        let again = try laptop.run(["participants", "add", "complete.json", "--workspace", "w"])
        expectRefusal(again, "E_MALFORMED")
        #expect(again.stderr.contains("nothing was changed"), "\(again.stderr)")
    }

    @Test func identityTextsGitCannotCarryAreRefusedBeforeAKeyExists() throws {
        let sandbox = try Sandbox()
        for (handle, name) in [("a<b@example.com", "Ann"), ("ann@example.com", "Ann <Lee>"), ("ann@example.com", "Ann\u{2028}Lee"),
                               ("ann>@example.com", "Ann"), ("ann@example.com", "Ann\nLee")] {
            let cli = sandbox.cli("home-\(UUID().uuidString)")
            expectRefusal(try cli.run(["id", "init", "--handle", handle, "--name", name]), "E_MALFORMED")
            #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("device.key").path))
            if name == "Ann" {
                expectRefusal(try cli.run(["id", "enroll", "--handle", handle]), "E_MALFORMED")
                #expect(!FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("device.key").path))
            }
        }
    }
}

/// Oversized inputs through every file-reading command, and apple-v1 proofs through the CLI.
@Suite struct BoundsAndSchemesTests {
    @Test func oversizedFilesAreRefused() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"]).status == 0)
        let big = Data(repeating: UInt8(ascii: " "), count: 70 << 10)
        try big.write(to: sandbox.path("big.json"))
        try Data("cohort-v1 \(String(repeating: "ab", count: 32))\n".utf8).write(to: sandbox.path("roots"))
        expectRefusal(try cli.run(["proof", "verify", "--roots", "roots", "--proof", "big.json"]), "E_TOO_LARGE")
        expectRefusal(try cli.run(["id", "add-device", "big.json"]), "E_TOO_LARGE")
        expectRefusal(try cli.run(["id", "import-card", "big.json"]), "E_TOO_LARGE")
        expectRefusal(try cli.run(["id", "root", "--card", "big.json", "--collaboration", "c", "--salt", String(repeating: "0", count: 32)]), "E_TOO_LARGE")
        // A roots file over 64 MiB, made sparse so the test stays cheap.
        let handle = try FileHandle(forWritingTo: sandbox.path("roots"))
        try handle.truncate(atOffset: (64 << 20) + 1)
        try handle.close()
        expectRefusal(try cli.run(["proof", "verify", "--roots", "roots"], stdin: Data("{}".utf8)), "E_TOO_LARGE")
    }

    @Test func malformedEnrolmentRequests() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"]).status == 0)
        #expect(try sandbox.cli("phone").run(["id", "enroll", "--handle", "ann@example.com", "--device", "phone", "--output", "request.json"]).status == 0)
        let request = try sandbox.read("request.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.utf8)) as? [String: Any])
        let key = try #require((object["device"] as? [String: Any])?["publicKey"] as? String)
        try sandbox.write("short-key.json", request.replacingOccurrences(of: String(key), with: String(key.prefix(44))))
        expectRefusal(try cli.run(["id", "add-device", "short-key.json"]), "E_BAD_KEY")
        try sandbox.write("bad-base64.json", request.replacingOccurrences(of: String(key), with: "not*base64"))
        expectRefusal(try cli.run(["id", "add-device", "bad-base64.json"]), "E_MALFORMED")
        try sandbox.write("other-handle.json", request.replacingOccurrences(of: "ann@example.com", with: "eve@example.com"))
        expectRefusal(try cli.run(["id", "add-device", "other-handle.json"]), "E_BAD_SIGNATURE")
    }

    /// A genuine-style apple-v1 proof (undomain-separated tree, raw r‖s signature) verifies through the CLI.
    @Test func appleSchemeProofWithRawSignature() throws {
        let sandbox = try Sandbox()
        let key = P256.Signing.PrivateKey()
        let sibling = Data(SHA256.hash(data: Data("another device".utf8)))
        let leaf = Data(SHA256.hash(data: key.publicKey.x963Representation))
        let root = Data(SHA256.hash(data: sibling + leaf))
        let message = Data("server challenge".utf8)
        let raw = try key.signature(for: message).rawRepresentation
        let proof: [String: Any] = [
            "scheme": "apple-v1", "publicKey": key.publicKey.x963Representation.base64EncodedString(),
            "publicKeyIndex": 1, "inclusionHashes": [sibling.base64EncodedString()],
            "signature": raw.base64EncodedString(), "message": message.base64EncodedString(),
        ]
        let json = try JSONSerialization.data(withJSONObject: proof)
        try sandbox.write("roots", "apple-v1 \(root.hexString)\n")
        let result = try sandbox.cli("none").run(["proof", "verify", "--roots", "roots"], stdin: json)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok \(root.hexString)\n")
        // The same root stored as cohort-v1 does not accept it: no scheme is tried in place of another.
        try sandbox.write("roots", "cohort-v1 \(root.hexString)\n")
        expectRefusal(try sandbox.cli("none").run(["proof", "verify", "--roots", "roots"], stdin: json), "E_UNKNOWN_ROOT")
    }
}
