import Crypto
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

@Suite struct AppleSchemeTests {
    /// Apple's documented example: key P3 at index 2 with hashes H4, H7, H11 gives H8 = node(H3, H4),
    /// H10 = node(H7, H8), root = node(H10, H11).
    @Test func applesExampleFold() throws {
        let p3 = DeviceKey().publicKey.x963
        let h4 = Data(SHA256.hash(data: Data("H4".utf8)))
        let h7 = Data(SHA256.hash(data: Data("H7".utf8)))
        let h11 = Data(SHA256.hash(data: Data("H11".utf8)))
        let h3 = Data(SHA256.hash(data: p3))
        let h8 = Data(SHA256.hash(data: h3 + h4))
        let h10 = Data(SHA256.hash(data: h7 + h8))
        let root = Data(SHA256.hash(data: h10 + h11))
        let proof = InclusionProof(publicKey: p3, publicKeyIndex: 2, inclusionHashes: [h4, h7, h11])
        #expect(try proof.root(under: .appleV1).bytes == root)
        // The same proof under cohort-v1 is refused by shape (depth must be 4), never folded.
        expectCode(.badProof) { try proof.root(under: .cohortV1) }
    }

    /// A full apple-v1 tree of 2^depth keys; every key's proof folds to the root, with DER and raw signatures.
    @Test(arguments: [1, 2, 5])
    func appleTreesVerify(depth: Int) throws {
        let keys = (0..<(1 << depth)).map { _ in DeviceKey() }
        var level = keys.map { RootScheme.appleV1.leaf($0.publicKey.x963) }
        var levels = [level]
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: 2).map { RootScheme.appleV1.node(level[$0], level[$0 + 1]) }
            levels.append(level)
        }
        let root = try RootHash(scheme: .appleV1, bytes: level[0])
        let roots = KnownRoots(active: [root])
        for (index, key) in keys.enumerated() {
            var position = index
            var hashes: [Data] = []
            for tier in levels.dropLast() {
                hashes.append(tier[position ^ 1])
                position >>= 1
            }
            let proof = InclusionProof(publicKey: key.publicKey.x963, publicKeyIndex: index, inclusionHashes: hashes)
            let message = Data("challenge \(index)".utf8)
            let signature = try key.privateKey.signature(for: message)
            for encoded in [signature.derRepresentation, signature.rawRepresentation] {
                let signed = SignedIdentityProof(scheme: .appleV1, proof: proof, signature: encoded, message: message)
                #expect(try signed.verify(against: roots) == root)
            }
            // cohort-v1 accepts DER only.
            let raw = SignedIdentityProof(scheme: .cohortV1, proof: proof, signature: signature.rawRepresentation, message: message)
            expectCode(.badSignature) { try raw.verify(against: roots) }
        }
    }

    @Test func depthOutsideOneToSixteenIsABadProof() throws {
        let key = DeviceKey().publicKey.x963
        expectCode(.badProof) { try InclusionProof(publicKey: key, publicKeyIndex: 0, inclusionHashes: []).root(under: .appleV1) }
        let deep = Array(repeating: Data(count: 32), count: 17)
        expectCode(.badProof) { try InclusionProof(publicKey: key, publicKeyIndex: 0, inclusionHashes: deep).root(under: .appleV1) }
        expectCode(.badProof) { try InclusionProof(publicKey: key, publicKeyIndex: 2, inclusionHashes: [Data(count: 32)]).root(under: .appleV1) }
    }
}
