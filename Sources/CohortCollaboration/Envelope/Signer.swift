import CohortBase
import CohortIdentity
import Foundation

/// Who signed a payload: the signing key and its proof of inclusion, so that the signature, the key
/// and the root are bound together inside the signed bytes.
public struct Signer: Codable, Hashable, Sendable {
    public var scheme: RootScheme
    /// The diversified public key, base64 X9.63.
    public var publicKey: String
    public var publicKeyIndex: Int
    /// Base64, leaf to root.
    public var inclusionHashes: [String]

    public init(scheme: RootScheme, proof: InclusionProof) {
        self.scheme = scheme
        publicKey = proof.publicKey.base64EncodedString()
        publicKeyIndex = proof.publicKeyIndex
        inclusionHashes = proof.inclusionHashes.map { $0.base64EncodedString() }
    }

    /// The proof, decoded with the usual bounds.
    public func proof() throws -> InclusionProof {
        guard inclusionHashes.count <= 64 else {
            throw CohortError(.malformed, "signer carries \(inclusionHashes.count) inclusion hashes")
        }
        return InclusionProof(
            publicKey: try Base64Field.decode(publicKey, field: "signer.publicKey", maxBytes: 256),
            publicKeyIndex: publicKeyIndex,
            inclusionHashes: try inclusionHashes.map { try Base64Field.decode($0, field: "signer.inclusionHashes", maxBytes: 64) }
        )
    }
}

/// A device's key for one collaboration with its proof of inclusion: what signs envelopes and commits.
public struct CollaborationSigner: Sendable {
    /// The diversified private key.
    public let key: DeviceKey
    public let proof: InclusionProof
    public let root: RootHash

    /// This device's signer for `context`, from its stored card (see `IdentityHome.proof`).
    public init(home: IdentityHome, context: CollaborationContext) throws {
        try self.init(device: home.loadDevice(), card: home.requireCard(), context: context)
    }

    public init(device: LocalDevice, card: IdentityCard, context: CollaborationContext) throws {
        let tree = try IdentityTree(masterKeys: card.masterKeys, context: context)
        key = try device.key.diversified(for: context)
        guard let proof = tree.proof(for: key.publicKey) else {
            throw CohortError(.unknownRoot, "this device is not on its own card", hint: "import your current card")
        }
        self.proof = proof
        root = tree.root
    }

    public var signer: Signer { Signer(scheme: root.scheme, proof: proof) }
}
