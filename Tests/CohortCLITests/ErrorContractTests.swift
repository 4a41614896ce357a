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
