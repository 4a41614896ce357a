import CohortBase
import CohortIdentity
import Foundation
import Testing

/// The independent cohort-v1 vector, end to end: a card built from the vector's master keys, given to
/// `cohort id root`, prints the vector's root.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["COHORT_TEST_VECTORS"].map { !$0.isEmpty } ?? false,
                "COHORT_TEST_VECTORS is unset: conformance vectors skipped (CI sets it to ../shared/vectors)"))
struct VectorThroughCLITests {
    @Test func rootFromACardOfTheVectorsKeys() throws {
        let directory = try #require(ProcessInfo.processInfo.environment["COHORT_TEST_VECTORS"])
        let data = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent("identity-cohort-v1.json"))
        let vector = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keys = try #require(vector["devices"] as? [[String: Any]]).map { device in
            let scalar = try #require(device["master_private_hex"] as? String)
            return try DeviceKey(rawScalar: try #require(Data(hex: scalar)))
        }
        var card = try IdentityCard(version: 1, handle: "vector@example.com", name: "Vector",
                                    devices: keys.enumerated().map { try .init(name: "d\($0.offset)", publicKey: $0.element.publicKey) })
        for key in keys { try card.sign(with: key) }

        let sandbox = try Sandbox()
        try card.jsonData().write(to: sandbox.path("card.json"))
        let result = try sandbox.cli("none").run([
            "id", "root", "--card", "card.json",
            "--collaboration", try #require(vector["collaboration_id"] as? String),
            "--salt", try #require(vector["salt_hex"] as? String),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(vector["rootHash_hex"] as? String)
        #expect(result.stdout == "\(root)\n")
    }
}
