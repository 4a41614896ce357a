import CohortBase
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

/// Known answers from shared/vectors/identity-cohort-v1.json, every intermediate value.
@Suite(.enabled(if: Vectors.available, Vectors.unsetReason))
struct IdentityVectorTests {
    struct Device {
        let master: DeviceKey
        let vector: [String: Any]
        func hexField(_ name: String) throws -> Data { try hex(try #require(vector[name] as? String)) }
    }

    let vector: [String: Any]
    let context: CollaborationContext
    let devices: [Device]

    init() throws {
        vector = try Vectors.json("identity-cohort-v1.json")
        #expect(vector["scheme"] as? String == "cohort-v1")
        context = try CollaborationContext(
            identifier: try #require(vector["collaboration_id"] as? String),
            saltHex: try #require(vector["salt_hex"] as? String)
        )
        devices = try #require(vector["devices"] as? [[String: Any]]).map { entry in
            Device(master: try DeviceKey(rawScalar: try hex(try #require(entry["master_private_hex"] as? String))), vector: entry)
        }
        #expect(devices.count == 3)
    }

    @Test func masterPublicKeys() throws {
        for device in devices {
            #expect(device.master.publicKey.x963 == (try device.hexField("master_public_x963_hex")))
        }
    }

    @Test func blindScalars() throws {
        for device in devices {
            let t = try Diversification.blindScalar(for: device.master.publicKey, in: context)
            #expect(t == (try device.hexField("blind_scalar_hex")))
        }
    }

    @Test func diversifiedKeys() throws {
        for device in devices {
            let publicKey = try Diversification.publicKey(for: device.master.publicKey, in: context)
            #expect(publicKey.x963 == (try device.hexField("diversified_public_x963_hex")))
            let privateKey = try device.master.diversified(for: context)
            #expect(privateKey.privateKey.rawRepresentation == (try device.hexField("diversified_private_hex")))
            #expect(privateKey.publicKey == publicKey)
        }
    }

    @Test func leavesDigestAndRoot() throws {
        let tree = try IdentityTree(masterKeys: devices.map(\.master.publicKey), context: context)
        for (device, key) in zip(devices, tree.diversifiedKeys) {
            #expect(RootScheme.cohortV1.leaf(key.x963) == (try device.hexField("leaf_hex")))
        }
        #expect(IdentityTree.cardDigest(devices.map(\.master.publicKey)).hexString == vector["card_digest_hex"] as? String)
        #expect(tree.leaves.map(\.hexString) == vector["leaves_in_order_hex"] as? [String])
        #expect(tree.root.hex == vector["rootHash_hex"] as? String)
    }

    @Test func rootDoesNotDependOnDeviceOrder() throws {
        let keys = devices.map(\.master.publicKey)
        let root = try IdentityTree(masterKeys: keys, context: context).root
        #expect(try IdentityTree(masterKeys: keys.reversed(), context: context).root == root)
    }

    @Test func proofsOfInclusion() throws {
        let tree = try IdentityTree(masterKeys: devices.map(\.master.publicKey), context: context)
        for (device, key) in zip(devices, tree.diversifiedKeys) {
            let proof = try #require(tree.proof(for: key))
            #expect(proof.publicKeyIndex == device.vector["publicKeyIndex"] as? Int)
            #expect(proof.inclusionHashes.map(\.hexString) == device.vector["inclusionHashes_hex"] as? [String])
            #expect(try proof.root(under: .cohortV1) == tree.root)
        }
    }

    @Test func signedProofFromEachDeviceVerifies() throws {
        let tree = try IdentityTree(masterKeys: devices.map(\.master.publicKey), context: context)
        let roots = KnownRoots(active: [tree.root])
        for device in devices {
            let proof = try SignedIdentityProof(signing: Data("challenge".utf8), with: device.master.diversified(for: context), in: tree)
            #expect(try proof.verify(against: roots) == tree.root)
            // The same key under apple-v1 must not verify: a scheme is never "tried". The cohort-v1
            // signature covers the domain-tagged bytes, so relabelled it does not even verify…
            let downgraded = SignedIdentityProof(scheme: .appleV1, proof: proof.proof, signature: proof.signature, message: proof.message)
            expectCode(.badSignature) { try downgraded.verify(against: roots) }
            // …and a genuine apple-v1 signature by the same key folds to no root known under cohort-v1.
            let key = try device.master.diversified(for: context)
            let apple = try SignedIdentityProof(signing: proof.message, with: key, scheme: .appleV1, proof: proof.proof)
            expectCode(.unknownRoot) { try apple.verify(against: roots) }
        }
    }
}
