import Foundation

/// A proof of inclusion plus a signature, by the included key, over a message (a server challenge,
/// or any bytes a script chose).
public struct SignedIdentityProof: Hashable, Sendable {
    /// Largest JSON form accepted, in bytes.
    public static let maxJSONBytes = 64 << 10
    /// Largest message, in bytes.
    public static let maxMessageBytes = 16 << 10

    public let scheme: RootScheme
    public let proof: InclusionProof
    /// ECDSA P-256 / SHA-256 over `message`: DER, or for apple-v1 also raw r‖s.
    public let signature: Data
    public let message: Data

    public init(scheme: RootScheme, proof: InclusionProof, signature: Data, message: Data) {
        self.scheme = scheme
        self.proof = proof
        self.signature = signature
        self.message = message
    }

    /// Signs `message` with `key`, a device key diversified for the collaboration of `tree`.
    public init(signing message: Data, with key: DeviceKey, in tree: IdentityTree) throws {
        try Self.checkMessage(message)
        guard let proof = tree.proof(for: key.publicKey) else {
            throw CohortError(.unknownRoot, "this device's key is not in the tree", hint: "import a card that lists this device")
        }
        self.init(scheme: .cohortV1, proof: proof, signature: try key.signature(for: message), message: message)
    }

    /// Verifies, in order: sizes, the key, the signature, the proof's shape, the fold, and that the
    /// root is an active participant under this proof's scheme. Returns the proven root.
    public func verify(against roots: some RootDirectory) throws -> RootHash {
        try Self.checkMessage(message)
        let key = try P256Key(x963: proof.publicKey)
        try key.verifySignature(signature, for: message, encoding: scheme.signatureEncoding)
        let root = try proof.root(under: scheme)
        switch roots.status(of: root) {
        case .active:
            return root
        case .revoked:
            throw CohortError(.revoked, "root \(root.hex) was removed from this collaboration",
                              hint: "ask the owner to add you again")
        case nil:
            throw CohortError(.unknownRoot, "root \(root.hex) (\(scheme.rawValue)) is not a participant",
                              hint: "ask the owner to add your identity card")
        }
    }

    static func checkMessage(_ message: Data) throws {
        guard !message.isEmpty else {
            throw CohortError(.malformed, "the signed message is empty", hint: "sign a server challenge or another non-empty message")
        }
        guard message.count <= maxMessageBytes else {
            throw CohortError(.malformed, "the signed message is larger than \(maxMessageBytes) bytes")
        }
    }
}
