import CohortIdentity
import Crypto
import Foundation
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
        expectRefusal(try cli.run(verify, stdin: Data(repeating: 0x20, count: 70_000)), "E_MALFORMED")
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

/// Oversized inputs through every file-reading command, and apple-v1 proofs through the CLI.
@Suite struct BoundsAndSchemesTests {
    @Test func oversizedFilesAreRefused() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        #expect(try cli.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann", "--device", "laptop"]).status == 0)
        let big = Data(repeating: UInt8(ascii: " "), count: 70 << 10)
        try big.write(to: sandbox.path("big.json"))
        try Data("cohort-v1 \(String(repeating: "ab", count: 32))\n".utf8).write(to: sandbox.path("roots"))
        expectRefusal(try cli.run(["proof", "verify", "--roots", "roots", "--proof", "big.json"]), "E_MALFORMED")
        expectRefusal(try cli.run(["id", "add-device", "big.json"]), "E_MALFORMED")
        expectRefusal(try cli.run(["id", "import-card", "big.json"]), "E_MALFORMED")
        expectRefusal(try cli.run(["id", "root", "--card", "big.json", "--collaboration", "c", "--salt", String(repeating: "0", count: 32)]), "E_MALFORMED")
        // A roots file over 64 MiB, made sparse so the test stays cheap.
        let handle = try FileHandle(forWritingTo: sandbox.path("roots"))
        try handle.truncate(atOffset: (64 << 20) + 1)
        try handle.close()
        expectRefusal(try cli.run(["proof", "verify", "--roots", "roots"], stdin: Data("{}".utf8)), "E_MALFORMED")
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
