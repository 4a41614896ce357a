import CohortBase
import CohortIdentity
import Foundation

/// `.cohort/collaboration.json`: the collaboration's metadata (`SWCollaborationMetadata`), signed by
/// the owner. Its identifier, salt and owner never change.
public struct CollaborationFile: SignedPayload, Hashable {
    public static let payloadType = "application/vnd.cohort.collaboration+json"
    public static let maxEnvelopeBytes = 64 << 10

    public struct Initiator: Codable, Hashable, Sendable {
        public var handle: String
        public var name: String

        public init(handle: String, name: String) {
            self.handle = handle
            self.name = name
        }
    }

    public struct Owner: Codable, Hashable, Sendable {
        public var root: String
        public var scheme: RootScheme

        public init(root: String, scheme: RootScheme) {
            self.root = root
            self.scheme = scheme
        }
    }

    /// The device-independent identifier (a UUID, lowercase).
    public var identifier: String
    /// The initiator's own name for it (`localIdentifier`).
    public var localIdentifier: String
    public var title: String
    public var initiator: Initiator
    /// The 16-byte salt, base64.
    public var salt: String
    public var owner: Owner
    public var shareOptions: ShareOptions
    public var createdAt: Date
    /// Counts the owner's changes to this file: absent (0) at genesis, then exactly one more at each
    /// change, so that of two versions the newer is plain and an older one can never come back.
    public var revision: Int?
    public var signer: Signer

    public init(identifier: String, localIdentifier: String, title: String, initiator: Initiator, salt: Data,
                owner: RootHash, shareOptions: ShareOptions, createdAt: Date, signer: Signer) {
        self.identifier = identifier
        self.localIdentifier = localIdentifier
        self.title = title
        self.initiator = initiator
        self.salt = salt.base64EncodedString()
        self.owner = Owner(root: owner.hex, scheme: owner.scheme)
        self.shareOptions = shareOptions
        self.createdAt = createdAt
        self.signer = signer
    }

    /// Checks the fields' shapes: identifier, salt size, title, owner root, share options.
    public func validate() throws {
        try CollaborationContext.validate(identifier: identifier)
        guard !title.isEmpty, title.utf8.count <= 256, localIdentifier.utf8.count <= 256 else {
            throw CohortError(.malformed, "collaboration title must be 1 to 256 bytes")
        }
        _ = try context()
        _ = try ownerRoot()
        try shareOptions.validate()
        guard (0...Self.maxRevision).contains(revisionNumber) else {
            throw CohortError(.malformed, "collaboration revision \(revisionNumber) is out of range")
        }
    }

    /// Most revisions of the collaboration file.
    public static let maxRevision = 1 << 30

    /// The revision, 0 when absent.
    public var revisionNumber: Int { revision ?? 0 }

    /// What members' keys are diversified for.
    public func context() throws -> CollaborationContext {
        try CollaborationContext(identifier: identifier, salt: Base64Field.decode(salt, field: "salt", maxBytes: 16))
    }

    public func ownerRoot() throws -> RootHash {
        try RootHash(scheme: owner.scheme, hex: owner.root)
    }
}
