import CohortTestSupport
import Foundation
import Testing

/// Every sink's delivery carries the notice's signed envelope: the verifier of Docs/Plugins.md
/// (`Plugins/Examples/verify_notice.py`, written apart from the Swift code) checks who wrote each
/// one, from real deliveries to a file, a program and a webhook, and refuses any that was altered.
@Suite struct NoticeVerifierTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let verifier = ExamplePackageTests.root.appendingPathComponent("Plugins/Examples/verify_notice.py")

    static func verify(_ delivery: Data, in collaboration: String, trusting roots: [String], in sandbox: Sandbox) throws -> ProcessResult {
        try run("python3", [verifier.path, "--collaboration", collaboration] + roots, in: sandbox.url, stdin: delivery)
    }

    static func line(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    @Test func realDeliveriesVerifyAndAlteredOnesDoNot() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret)
        defer { receiver.stop() }
        try sandbox.write("recipes/.git/cohort/config.toml", """
            [[sinks]]
            type = "file"
            path = "\(sandbox.path("filed.jsonl").path)"
            history = "all"

            [[sinks]]
            type = "exec"
            command = ["sh", "-c", "cat >> '\(sandbox.path("exec.jsonl").path)'"]
            history = "all"

            [[sinks]]
            type = "webhook"
            url = "\(receiver.url)"
            secret = "\(Self.secret)"
            history = "all"

            """)
        #expect(try ann.run(["comment", "bread.md", "--text", "more salt"]).status == 0)
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0, "\(delivered.stderr)")

        let filed = try sandbox.read("filed.jsonl").split(separator: "\n").map { Data($0.utf8) }
        let executed = try sandbox.read("exec.jsonl").split(separator: "\n").map { Data($0.utf8) }
        let posted = try receiver.received.map { record in
            let body = try #require(try JSONSerialization.jsonObject(with: Data(((record["body"] as? String) ?? "").utf8)) as? [String: Any])
            return try Self.line(try #require(body["data"] as? [String: Any]))
        }
        let expected = jsonLines(try ann.run(["notices", "--json"]).stdout).count
        try #require(expected >= 2 && filed.count == expected && executed.count == expected && posted.count == expected,
                     "\(expected) notices: \(filed.count) filed, \(executed.count) run, \(posted.count) posted")

        // The receiver knows the collaboration and Ann's root beforehand, never from a delivery: here
        // from the signed collaboration file and her card, with the collaboration's own salt.
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: sandbox.path("recipes/.cohort/collaboration.json"))) as? [String: Any])
        let payload = try #require(Data(base64Encoded: file["payload"] as? String ?? ""))
        let collaborationFile = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let identifier = try #require(collaborationFile["identifier"] as? String)
        let salt = try #require(Data(base64Encoded: collaborationFile["salt"] as? String ?? "")).map { String(format: "%02x", $0) }.joined()
        let root = try ann.run(["id", "root", "--collaboration", identifier, "--salt", salt]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let participants = try ann.run(["participants", "list", "--json"]).stdout
        #expect(root.count == 64 && participants.contains(root))
        for delivery in filed + executed + posted {
            let checked = try Self.verify(delivery, in: identifier, trusting: [root], in: sandbox)
            #expect(checked.status == 0 && checked.stdout.hasPrefix("ok "), "\(checked.stdout) \(checked.stderr)")
        }

        // Ann's own test notice is signed by her too, for another collaboration: refused here.
        let test = try ann.run(["sinks", "test", "file:\(sandbox.path("filed.jsonl").path)"])
        #expect(test.status == 0, "\(test.stderr)")
        let tested = try #require(try sandbox.read("filed.jsonl").split(separator: "\n").last.map { Data($0.utf8) })
        let foreign = try Self.verify(tested, in: identifier, trusting: [root], in: sandbox)
        #expect(foreign.status == 1 && foreign.stdout.contains("signed for collaboration 'cohort-sinks-test'"), "\(foreign.stdout)")

        // Altered on the way, each is refused, whatever the transport's own signature said.
        func refused(_ change: (inout [String: Any]) -> Void, trusting roots: [String] = [root]) throws -> String {
            var object = try #require(try JSONSerialization.jsonObject(with: filed[filed.count - 1]) as? [String: Any])
            change(&object)
            let result = try Self.verify(try Self.line(object), in: identifier, trusting: roots, in: sandbox)
            #expect(result.status == 1, "\(result.stdout)")
            return result.stdout
        }
        let other = try #require(try JSONSerialization.jsonObject(with: filed[0]) as? [String: Any])
        #expect(try refused { $0["data"] = ["path": "bread.md", "text": "no salt"] }.contains("'data' is not what was signed"))
        #expect(try refused { $0["signed"] = other["signed"] }.contains("'id' is not what was signed"))
        #expect(try refused({ _ in }, trusting: [String(repeating: "ab", count: 32)]).contains("whom you do not trust"))
        #expect(try refused {
            var signed = $0["signed"] as? [String: Any] ?? [:]
            signed["root"] = String(repeating: "ab", count: 32)
            $0["signed"] = signed
        }.contains("does not fold"))
        #expect(try refused {
            var signed = $0["signed"] as? [String: Any] ?? [:]
            var envelope = signed["envelope"] as? [String: Any] ?? [:]
            var signatures = envelope["signatures"] as? [[String: Any]] ?? []
            let sig = Data(base64Encoded: signatures[0]["sig"] as? String ?? "") ?? Data()
            signatures[0]["sig"] = Data(sig.prefix(sig.count - 4) + Data([0, 0, 0, 0])).base64EncodedString()
            envelope["signatures"] = signatures
            signed["envelope"] = envelope
            $0["signed"] = signed
        }.contains("the signature does not verify"))
        #expect(try refused { $0["signed"] = nil }.contains("no signed notice"))
        // A second "data" in front of the signed one, for a reader that keeps the first it sees.
        let text = String(decoding: filed[filed.count - 1], as: UTF8.self)
        let doubled = "{\"data\":{\"path\":\"evil.md\"}," + text.dropFirst()
        let twice = try Self.verify(Data(doubled.utf8), in: identifier, trusting: [root], in: sandbox)
        #expect(twice.status == 1 && twice.stdout.contains("a key is named twice"), "\(twice.stdout)")
    }
}
