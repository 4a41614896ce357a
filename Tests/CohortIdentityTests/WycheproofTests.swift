import CohortBase
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

/// Project Wycheproof, in full: ECDSA P-256 / SHA-256 with DER and with P1363 signatures (empty
/// messages included), and the encodings of public points.
@Suite(.enabled(if: Vectors.available, Vectors.unsetReason))
struct WycheproofTests {
    func run(file: String, encoding: SignatureEncoding) throws -> (tests: Int, empty: Int) {
        let document = try Vectors.json("wycheproof/\(file)")
        var tests = 0
        var emptyMessages = 0
        for group in try #require(document["testGroups"] as? [[String: Any]]) {
            let keyHex = try #require((group["publicKey"] as? [String: Any])?["uncompressed"] as? String)
            let key = try P256Key(x963: try hex(keyHex))
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as? Int ?? -1
                let message = try hex(try #require(test["msg"] as? String))
                let signature = try hex(try #require(test["sig"] as? String))
                let result = try #require(test["result"] as? String)
                let verified = (try? key.verifySignature(signature, for: message, encoding: encoding)) != nil
                switch result {
                case "valid": #expect(verified, "tcId \(id) (\(test["comment"] ?? "")) should verify")
                case "invalid": #expect(!verified, "tcId \(id) (\(test["comment"] ?? "")) should be refused")
                default: break
                }
                tests += 1
                if message.isEmpty { emptyMessages += 1 }
            }
        }
        return (tests, emptyMessages)
    }

    @Test func derSignatures() throws {
        let (tests, empty) = try run(file: "ecdsa_secp256r1_sha256_test.json", encoding: .der)
        #expect(tests == 484)
        #expect(empty > 0, "empty-message cases must be run")
    }

    @Test func p1363Signatures() throws {
        let (tests, empty) = try run(file: "ecdsa_secp256r1_sha256_p1363_test.json", encoding: .raw)
        #expect(tests == 262)
        #expect(empty > 0, "empty-message cases must be run")
    }

    /// apple-v1 accepts DER or raw: both files must give the same answers through that path.
    @Test func appleEncodingAcceptsBoth() throws {
        _ = try run(file: "ecdsa_secp256r1_sha256_test.json", encoding: .derOrRaw)
        _ = try run(file: "ecdsa_secp256r1_sha256_p1363_test.json", encoding: .derOrRaw)
    }

    /// Only uncompressed points on the curve are keys; compressed, invalid and off-curve points are refused.
    @Test func publicPointEncodings() throws {
        let document = try Vectors.json("wycheproof/ecdh_secp256r1_ecpoint_test.json")
        var accepted = 0
        for group in try #require(document["testGroups"] as? [[String: Any]]) {
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let point = try hex(try #require(test["public"] as? String))
                let result = try #require(test["result"] as? String)
                let uncompressed = point.count == 65 && point.first == 0x04
                let shouldAccept = result == "valid" && uncompressed
                do {
                    _ = try P256Key(x963: point)
                    #expect(shouldAccept, "tcId \(test["tcId"] ?? "?") (\(test["comment"] ?? "")) should be refused")
                    accepted += 1
                } catch let error as CohortError {
                    #expect(!shouldAccept, "tcId \(test["tcId"] ?? "?") (\(test["comment"] ?? "")) should be accepted")
                    #expect(error.code == .badKey)
                }
            }
        }
        #expect(accepted > 300)
    }
}
