import CohortBase
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
        guard let proof = tree.proof(for: key.publicKey) else {
            throw CohortError(.unknownRoot, "this device's key is not in the tree", hint: "import a card that lists this device")
        }
        try self.init(signing: message, with: key, scheme: .cohortV1, proof: proof)
    }

    /// Signs `message` under `scheme` with `key` (the diversified key `proof` includes). Refuses a
    /// message that is what a signed file or a commit signature signs (`checkMessage`).
    public init(signing message: Data, with key: DeviceKey, scheme: RootScheme, proof: InclusionProof) throws {
        try Self.checkMessage(message)
        self.init(scheme: scheme, proof: proof, signature: try key.signature(for: Self.signedBytes(of: message, scheme: scheme)),
                  message: message)
    }

    /// The tag a cohort-v1 identity proof's signed bytes begin with. The same diversified key signs DSSE
    /// envelopes (over `DSSEv1 …`) and commits (over `SSHSIG…`): with its own prefix, a signature made
    /// for an identity proof can never be one of those, whatever message a script asks to sign.
    public static let domainTag = Data("COHORT-V1-IDENTITY-PROOF\n".utf8)

    /// The bytes an identity proof's signature covers: for cohort-v1, `domainTag ‖ message`; for
    /// apple-v1, the message itself, exactly as Apple's `SWPerson.IdentityProof` signs it.
    public static func signedBytes(of message: Data, scheme: RootScheme) -> Data {
        switch scheme {
        case .cohortV1: domainTag + message
        case .appleV1: message
        }
    }

    /// Verifies, in order: sizes, the key, the signature, the proof's shape, the fold, and that the
    /// root is an active participant under this proof's scheme. Returns the proven root.
    public func verify(against roots: some RootDirectory) throws -> RootHash {
        try Self.checkMessage(message)
        let key = try P256Key(x963: proof.publicKey)
        try key.verifySignature(signature, for: Self.signedBytes(of: message, scheme: scheme), encoding: scheme.signatureEncoding)
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

    /// The prefixes of what the same key signs elsewhere: a DSSE pre-authentication encoding and an
    /// SSHSIG signed-data blob.
    static let foreignPrefixes = [Data("DSSEv1 ".utf8), Data("SSHSIG".utf8)]

    static func checkMessage(_ message: Data) throws {
        for prefix in foreignPrefixes where message.starts(with: prefix) {
            throw CohortError(.notPermitted, "the message is what a signed file or a commit signature signs ('\(String(decoding: prefix, as: UTF8.self).trimmingCharacters(in: .whitespaces))…'); an identity proof never signs that",
                              hint: "sign a server challenge; someone asking you to sign this may be trying to forge your signature")
        }
        guard !message.isEmpty else {
            throw CohortError(.malformed, "the signed message is empty", hint: "sign a server challenge or another non-empty message")
        }
        guard message.count <= maxMessageBytes else {
            throw CohortError(.malformed, "the signed message is larger than \(maxMessageBytes) bytes")
        }
    }
}
