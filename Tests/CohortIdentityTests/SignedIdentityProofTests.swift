import CohortBase
import Crypto
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

/// Adversarial input to the proof parser and verifier: each case gets its code, never a crash.
@Suite struct SignedIdentityProofTests {
    let key: DeviceKey
    let tree: IdentityTree
    let proof: SignedIdentityProof
    let roots: KnownRoots

    init() throws {
        let master = DeviceKey()
        tree = try IdentityTree(masterKeys: [master.publicKey, DeviceKey().publicKey], context: testContext)
        key = try master.diversified(for: testContext)
        proof = try SignedIdentityProof(signing: Data("a challenge".utf8), with: key, in: tree)
        roots = KnownRoots(active: [tree.root])
    }

    func object() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: proof.jsonData()) as? [String: Any])
    }

    func verifyEdited(_ change: (inout [String: Any]) -> Void) throws -> RootHash {
        var object = try object()
        change(&object)
        return try SignedIdentityProof(json: JSONSerialization.data(withJSONObject: object)).verify(against: roots)
    }

    @Test func genuineProofVerifies() throws {
        #expect(try verifyEdited { _ in } == tree.root)
    }

    @Test func malformedInput() throws {
        expectCode(.malformed) { try SignedIdentityProof(json: Data()) }
        expectCode(.malformed) { try SignedIdentityProof(json: Data("[1,2]".utf8)) }
        expectCode(.malformed) { try SignedIdentityProof(json: Data("{\"scheme\":\"cohort-v1\"}".utf8)) }
        expectCode(.malformed) { try SignedIdentityProof(json: Data(repeating: UInt8(ascii: " "), count: SignedIdentityProof.maxJSONBytes + 1)) }
        expectCode(.malformed) { try verifyEdited { $0["scheme"] = "cohort-v2" } }
        expectCode(.malformed) { try verifyEdited { $0["publicKeyIndex"] = "2" } }
        expectCode(.malformed) { try verifyEdited { $0["publicKeyIndex"] = 2.5 } }
        expectCode(.malformed) { try verifyEdited { $0["publicKeyIndex"] = 1e30 } }
        expectCode(.malformed) { try verifyEdited { $0["message"] = "" } }
        expectCode(.malformed) { try verifyEdited { $0["message"] = "aGVsbG8" } }  // unpadded
        expectCode(.malformed) { try verifyEdited { $0["message"] = "aGVs bG8=" } }
        expectCode(.malformed) { try verifyEdited { $0["message"] = Data(count: SignedIdentityProof.maxMessageBytes + 1).base64EncodedString() } }
        expectCode(.malformed) { try verifyEdited { $0["signature"] = "%%%%" } }
        expectCode(.malformed) { try verifyEdited { $0["inclusionHashes"] = Array(repeating: Data(count: 32).base64EncodedString(), count: 65) } }
        expectCode(.malformed) { try verifyEdited { $0["inclusionHashes"] = [Data(count: 65).base64EncodedString()] } }
        expectCode(.malformed) { try verifyEdited { $0["publicKey"] = Data(count: 300).base64EncodedString() } }
    }

    @Test func badKeys() throws {
        let good = key.publicKey.x963
        var offCurve = good
        offCurve[64] ^= 1
        let compressed = Data([0x02 | (good[64] & 1)]) + good[1...32]
        var hybrid = good
        hybrid[0] = 0x06 | (good[64] & 1)
        for bad in [offCurve, compressed, hybrid, good.prefix(64), Data([0x00]), Data(count: 65)] {
            expectCode(.badKey) { try verifyEdited { $0["publicKey"] = bad.base64EncodedString() } }
        }
    }

    @Test func badSignatures() throws {
        let der = proof.signature
        // BER: the same integers with a long-form length.
        var ber = Data([0x30, 0x81, UInt8(der.count - 2)])
        ber.append(der.dropFirst(2))
        var flipped = der
        flipped[flipped.count - 1] ^= 1
        let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
        for bad in [ber, flipped, der + Data([0]), Data(count: 73), Data(), raw] {
            expectCode(.badSignature) { try verifyEdited { $0["signature"] = bad.base64EncodedString() } }
        }
        // A signature over other bytes.
        expectCode(.badSignature) { try verifyEdited { $0["message"] = Data("another challenge".utf8).base64EncodedString() } }
    }

    @Test func badProofShapes() throws {
        let hash = Data(count: 32).base64EncodedString()
        expectCode(.badProof) { try verifyEdited { $0["inclusionHashes"] = [hash, hash, hash] } }
        expectCode(.badProof) { try verifyEdited { $0["inclusionHashes"] = [hash, hash, hash, hash, hash] } }
        expectCode(.badProof) { try verifyEdited { $0["inclusionHashes"] = [hash, hash, hash, Data(count: 31).base64EncodedString()] } }
        expectCode(.badProof) { try verifyEdited { $0["publicKeyIndex"] = 16 } }
        expectCode(.badProof) { try verifyEdited { $0["publicKeyIndex"] = -1 } }
    }

    @Test func rootsThatAreNotActive() throws {
        // A valid proof moved to another index folds to another root.
        expectCode(.unknownRoot) { try verifyEdited { $0["publicKeyIndex"] = proof.proof.publicKeyIndex ^ 1 } }
        expectCode(.unknownRoot) { try proof.verify(against: KnownRoots()) }
        var revoked = KnownRoots()
        revoked.insert(tree.root, status: .revoked)
        expectCode(.revoked) { try proof.verify(against: revoked) }
        // The same bytes under another scheme are another root: no downgrade.
        var appleOnly = KnownRoots()
        appleOnly.insert(try RootHash(scheme: .appleV1, bytes: tree.root.bytes))
        expectCode(.unknownRoot) { try proof.verify(against: appleOnly) }
    }

    @Test func checksRunInTheDocumentedOrder() throws {
        // A bad key with a bad signature and a bad shape reports the key.
        expectCode(.badKey) { try verifyEdited { object in
            object["publicKey"] = Data(count: 65).base64EncodedString()
            object["signature"] = Data(count: 8).base64EncodedString()
            object["publicKeyIndex"] = 99
        } }
        // A bad signature with a bad shape reports the signature.
        expectCode(.badSignature) { try verifyEdited { object in
            object["signature"] = Data(count: 8).base64EncodedString()
            object["publicKeyIndex"] = 99
        } }
    }

    @Test func rootsFile() throws {
        let root = tree.root.hex
        let text = """
        # participants
        cohort-v1 \(root)

        apple-v1 \(String(repeating: "ab", count: 32)) revoked
        """
        let known = try KnownRoots(rootsFile: Data(text.utf8))
        let revokedFirst = try KnownRoots(rootsFile: Data("cohort-v1 \(root) revoked\ncohort-v1 \(root)\n".utf8))
        #expect(revokedFirst.status(of: tree.root) == .revoked, "a later line cannot re-admit a revoked root")
        #expect(known.count == 2)
        #expect(known.status(of: tree.root) == .active)
        #expect(known.status(of: try RootHash(scheme: .appleV1, hex: String(repeating: "ab", count: 32))) == .revoked)
        for bad in ["cohort-v1", "cohort-v9 \(root)", "cohort-v1 \(root.dropLast(2))", "cohort-v1 \(root) gone", "cohort-v1 zz\(root.dropFirst(2))"] {
            do {
                _ = try KnownRoots(rootsFile: Data("# ok\n\(bad)\n".utf8))
                Issue.record("accepted \(bad)")
            } catch let error as CohortError {
                #expect(error.code == .malformed)
                #expect(error.reason.contains("line 2"), "\(error)")
            }
        }
    }
}

@Suite struct ErrorCodeDocumentationTests {
    /// Every stable code is documented in Docs/Protocol.md.
    @Test func everyCodeIsDocumented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let protocolText = try String(decoding: Data(contentsOf: root.appendingPathComponent("Docs/Protocol.md")), as: UTF8.self)
        for code in CohortError.Code.all {
            #expect(protocolText.contains("| `\(code)` |"), "\(code) is missing from Docs/Protocol.md")
        }
    }
}
