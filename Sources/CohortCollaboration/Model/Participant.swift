import CohortIdentity
import Foundation

/// What a participant may do with the content.
public enum Permission: String, Codable, Hashable, Sendable {
    case readWrite = "read-write"
    case readOnly = "read-only"
}

/// A participant of the collaboration, known by their root hash.
public struct Participant: Codable, Hashable, Sendable {
    /// The root, lowercase hex.
    public var root: String
    public var scheme: RootScheme
    public var handle: String?
    public var name: String?
    public var permission: Permission
    /// Whether this participant may mention others (on top of the collaboration's switch).
    public var mentions: Bool
    /// Whether this participant may comment (on top of the collaboration's switch).
    public var comments: Bool
    /// The root of who added them.
    public var addedBy: String
    public var addedAt: Date

    public init(root: RootHash, handle: String?, name: String?, permission: Permission, mentions: Bool, comments: Bool, addedBy: String, addedAt: Date) {
        self.root = root.hex
        scheme = root.scheme
        self.handle = handle
        self.name = name
        self.permission = permission
        self.mentions = mentions
        self.comments = comments
        self.addedBy = addedBy
        self.addedAt = addedAt
    }

    /// The root as a value.
    public func rootHash() throws -> RootHash {
        try RootHash(scheme: scheme, hex: root)
    }

    /// `handle` if known, else the start of the root.
    public var label: String { handle ?? String(root.prefix(16)) }
}

/// A participant who was removed; their root answers `E_REVOKED` from then on.
public struct RemovedParticipant: Codable, Hashable, Sendable {
    public var root: String
    public var scheme: RootScheme
    public var handle: String?
    public var removedBy: String
    public var removedAt: Date

    public init(_ participant: Participant, removedBy: String, at time: Date) {
        root = participant.root
        scheme = participant.scheme
        handle = participant.handle
        self.removedBy = removedBy
        removedAt = time
    }
}
