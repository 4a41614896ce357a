import CohortBase
import CohortIdentity
import Foundation

/// What happened, with dotted types as in Shared with You's highlight events.
public enum NoticeType: String, Codable, Hashable, Sendable, CaseIterable {
    case contentCreated = "content.created"
    case contentEdited = "content.edited"
    case contentRenamed = "content.renamed"
    case contentMoved = "content.moved"
    case contentDeleted = "content.deleted"
    case contentCommented = "content.commented"
    case membershipAdded = "membership.added"
    case membershipRemoved = "membership.removed"
    case mention = "mention"
}

/// A notice: `{id, type, time, collaboration, actor, data}`, stored signed by its actor under
/// `.cohort/notices/` and committed with the change it describes.
public struct Notice: SignedPayload, Hashable {
    public static let payloadType = "application/vnd.cohort.notice+json"
    public static let maxEnvelopeBytes = 16 << 10

    /// 32 lowercase hex digits, random.
    public var id: String
    public var type: NoticeType
    public var time: Date
    /// The collaboration identifier.
    public var collaboration: String
    /// The actor's root, lowercase hex.
    public var actor: String
    /// Type-specific fields: `path`, `oldPath`, `text`, `mentioned` (a root), `handle`, `permission`.
    public var data: [String: String]
    public var signer: Signer

    public init(type: NoticeType, collaboration: String, actor: RootHash, data: [String: String], time: Date = Date(), signer: Signer) {
        var random = SystemRandomNumberGenerator()
        id = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        self.type = type
        self.time = time
        self.collaboration = collaboration
        self.actor = actor.hex
        self.data = data
        self.signer = signer
    }

    /// Where the notice lives: `.cohort/notices/<first two hex digits of id>/<id>.json`, so that no
    /// folder grows past a few hundred entries and git compares them quickly.
    public var path: String {
        "\(CohortLayout.notices)/\(id.prefix(2))/\(id).json"
    }

    /// Checks shapes: the id, text sizes.
    public func validate() throws {
        guard id.utf8.count == 32, Data(hex: id) != nil else {
            throw CohortError(.malformed, "notice id '\(id.prefix(40))' is not 32 hex digits")
        }
        guard data.count <= 16, data.allSatisfy({ $0.key.utf8.count <= 32 && $0.value.utf8.count <= 8192 }) else {
            throw CohortError(.malformed, "notice \(id) carries too much data")
        }
    }
}

/// A notice with the envelope it is stored in, for receivers that check who wrote it.
public struct SignedNotice: Sendable {
    public let notice: Notice
    public let envelope: Envelope

    public init(notice: Notice, envelope: Envelope) {
        self.notice = notice
        self.envelope = envelope
    }
}
