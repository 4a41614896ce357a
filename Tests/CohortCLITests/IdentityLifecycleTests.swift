import Foundation
import Testing

/// The done-when, through the real binary: two devices for one person, a root from the card,
/// a proof on either device, verified.
@Suite struct IdentityLifecycleTests {
    static let salt = "00112233445566778899aabbccddeeff"
    static let collaboration = "baking-recipes"

    @Test func twoDevicesOneRootProofsFromBoth() throws {
        let sandbox = try Sandbox()
        let laptop = sandbox.cli("laptop")
        let phone = sandbox.cli("phone")

        let created = try laptop.run(["id", "init", "--handle", "ann@example.com", "--name", "Ann Lee", "--device", "laptop"])
        #expect(created.status == 0, "\(created.stderr)")
        let keyMode = try FileManager.default.attributesOfItem(atPath: sandbox.path("laptop/device.key").path)[.posixPermissions] as? Int
        #expect(keyMode == 0o600)

        #expect(try phone.run(["id", "enroll", "--handle", "ann@example.com", "--device", "phone", "--output", "request.json"]).status == 0)
        let added = try laptop.run(["id", "add-device", "request.json", "--output", "card-v2.json"])
        #expect(added.status == 0, "\(added.stderr)")
        // The laptop's card waits for the phone's signature and says so.
        expectRefusal(try laptop.run(["id", "card"]), "E_CARD_INCOMPLETE")
        let imported = try phone.run(["id", "import-card", "card-v2.json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("card complete"))

        let card = try phone.run(["id", "card", "--output", "card.json"])
        #expect(card.status == 0, "\(card.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: sandbox.path("card.json"))) as? [String: Any])
        #expect(json["version"] as? Int == 2)
        #expect((json["devices"] as? [Any])?.count == 2)
        #expect((json["signatures"] as? [Any])?.count == 2)
        #expect(try laptop.run(["id", "import-card", "card.json"]).status == 0)

        let arguments = ["id", "root", "--collaboration", Self.collaboration, "--salt", Self.salt]
        let fromCard = try laptop.run(arguments + ["--card", "card.json"])
        #expect(fromCard.status == 0, "\(fromCard.stderr)")
        let root = fromCard.stdout.trimmingCharacters(in: .newlines)
        #expect(root.count == 64 && root == root.lowercased())
        #expect(try laptop.run(arguments).stdout == fromCard.stdout)
        #expect(try phone.run(arguments).stdout == fromCard.stdout)

        try sandbox.write("roots", "# Baking Recipes\ncohort-v1 \(root)\n")
        let message = Data("challenge from a script".utf8).base64EncodedString()
        for device in [laptop, phone] {
            let proof = try device.run(["proof", "create", "--collaboration", Self.collaboration, "--salt", Self.salt, "--message", message])
            #expect(proof.status == 0, "\(proof.stderr)")
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(proof.stdout.utf8)) as? [String: Any])
            #expect(Set(fields.keys) == ["scheme", "publicKey", "publicKeyIndex", "inclusionHashes", "signature", "message"])
            #expect(fields["scheme"] as? String == "cohort-v1")
            #expect(fields["message"] as? String == message)
            let verified = try device.run(["proof", "verify", "--roots", "roots"], stdin: Data(proof.stdout.utf8))
            #expect(verified.status == 0, "\(verified.stderr)")
            #expect(verified.stdout == "ok \(root)\n")
        }

        // A proof for another collaboration folds to another root.
        let elsewhere = try phone.run(["proof", "create", "--collaboration", "other", "--salt", Self.salt, "--message", message])
        expectRefusal(try phone.run(["proof", "verify", "--roots", "roots"], stdin: Data(elsewhere.stdout.utf8)), "E_UNKNOWN_ROOT")
        try sandbox.write("revoked", "cohort-v1 \(root) revoked\n")
        let again = try phone.run(["proof", "create", "--collaboration", Self.collaboration, "--salt", Self.salt, "--message", message])
        expectRefusal(try phone.run(["proof", "verify", "--roots", "revoked"], stdin: Data(again.stdout.utf8)), "E_REVOKED")
    }

    @Test func showDescribesTheIdentity() throws {
        let sandbox = try Sandbox()
        let cli = sandbox.cli("home")
        try cli.run(["id", "init", "--handle", "bo@example.com", "--name", "Bo", "--device", "desk"])
        let shown = try cli.run(["id", "show", "--json"])
        #expect(shown.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        #expect(json["handle"] as? String == "bo@example.com")
        #expect(json["cardComplete"] as? Bool == true)
        #expect(try cli.run(["id", "show"]).stdout.contains("version 1, complete"))
    }
}
