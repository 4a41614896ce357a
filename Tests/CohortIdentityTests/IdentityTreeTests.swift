import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

@Suite struct IdentityTreeTests {
    @Test(arguments: [1, 2, 3, 8, 16])
    func everyDeviceFoldsToTheRoot(devices: Int) throws {
        let keys = (0..<devices).map { _ in DeviceKey() }
        let tree = try IdentityTree(masterKeys: keys.map(\.publicKey), context: testContext)
        #expect(tree.leaves.count == 16)
        #expect(Set(tree.leaves).count == 16)
        for key in keys {
            let diversified = try key.diversified(for: testContext)
            let proof = try #require(tree.proof(for: diversified.publicKey))
            #expect(proof.inclusionHashes.count == 4)
            #expect(try proof.root(under: .cohortV1) == tree.root)
        }
        // A master key is not a leaf: only diversified keys are.
        #expect(tree.proof(for: keys[0].publicKey) == nil)
    }

    @Test func rootsDifferPerCollaboration() throws {
        let keys = [DeviceKey().publicKey]
        let other = try CollaborationContext(identifier: "another", salt: testContext.salt)
        #expect(try IdentityTree(masterKeys: keys, context: testContext).root != IdentityTree(masterKeys: keys, context: other).root)
    }

    @Test func refusesDuplicateAndTooManyKeys() throws {
        let key = DeviceKey().publicKey
        expectCode(.malformed) { try IdentityTree(masterKeys: [key, key], context: testContext) }
        expectCode(.malformed) { try IdentityTree(masterKeys: [], context: testContext) }
        expectCode(.malformed) { try IdentityTree(masterKeys: (0..<17).map { _ in DeviceKey().publicKey }, context: testContext) }
    }

    @Test func foldRefusesTamperedProofs() throws {
        let key = DeviceKey()
        let tree = try IdentityTree(masterKeys: [key.publicKey], context: testContext)
        let proof = try #require(tree.proof(for: key.diversified(for: testContext).publicKey))
        var hashes = proof.inclusionHashes
        hashes[2][0] ^= 1
        let flipped = InclusionProof(publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: hashes)
        #expect(try flipped.root(under: .cohortV1) != tree.root)
        let moved = InclusionProof(publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex ^ 1, inclusionHashes: proof.inclusionHashes)
        #expect(try moved.root(under: .cohortV1) != tree.root)
        let short = InclusionProof(publicKey: proof.publicKey, publicKeyIndex: 0, inclusionHashes: [Data(count: 32), Data(count: 31), Data(count: 32), Data(count: 32)])
        expectCode(.badProof) { try short.root(under: .cohortV1) }
        for index in [-1, 16, Int.max] {
            let outside = InclusionProof(publicKey: proof.publicKey, publicKeyIndex: index, inclusionHashes: proof.inclusionHashes)
            expectCode(.badProof) { try outside.root(under: .cohortV1) }
        }
    }
}
