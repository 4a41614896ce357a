import CohortBase
import CohortIdentity
import Crypto
import Foundation

/// `.cohort/members.json`: the whole membership state, signed by the owner, each version chained to
/// the previous one by the SHA-256 of its payload, so an old version cannot be replayed.
public struct Membership: SignedPayload, Hashable {
    public static let payloadType = "application/vnd.cohort.members+json"
    public static let maxEnvelopeBytes = 4 << 20
    /// Most participants (current and removed) in one collaboration.
    public static let maxParticipants = 10_000

    public var collaboration: String
    public var version: Int
    /// Lowercase hex SHA-256 of the previous version's payload; nil for version 1.
    public var previous: String?
    public var participants: [Participant]
    public var removed: [RemovedParticipant]
    public var signer: Signer

    public init(collaboration: String, version: Int, previous: String?, participants: [Participant], removed: [RemovedParticipant], signer: Signer) {
        self.collaboration = collaboration
        self.version = version
        self.previous = previous
        self.participants = participants
        self.removed = removed
        self.signer = signer
    }

    /// The digest the next version must name as `previous`.
    public static func digest(ofPayload payload: Data) -> String {
        Data(SHA256.hash(data: payload)).hexString
    }

    /// Checks shapes: version, counts, unique roots, valid hex.
    public func validate() throws {
        guard version >= 1, (version == 1) == (previous == nil) else {
            throw CohortError(.malformed, "membership version \(version) has \(previous == nil ? "no" : "a") previous digest")
        }
        guard participants.count + removed.count <= Self.maxParticipants else {
            throw CohortError(.malformed, "membership lists more than \(Self.maxParticipants) participants")
        }
        var roots = Set<RootHash>()
        for participant in participants {
            guard roots.insert(try participant.rootHash()).inserted else {
                throw CohortError(.malformed, "membership lists root \(participant.root) twice")
            }
        }
        for entry in removed {
            _ = try RootHash(scheme: entry.scheme, hex: entry.root)
        }
    }

    /// The participant with `root`, if active.
    public func participant(_ root: RootHash) -> Participant? {
        participants.first { $0.root == root.hex && $0.scheme == root.scheme }
    }

    /// Roots as a verifier looks them up: active participants and removed ones.
    public var directory: KnownRoots {
        var roots = KnownRoots()
        for entry in removed {
            if let root = try? RootHash(scheme: entry.scheme, hex: entry.root) { roots.insert(root, status: .revoked) }
        }
        for participant in participants {
            if let root = try? participant.rootHash() { roots.insert(root, status: .active) }
        }
        return roots
    }

    /// Each active participant's handle (where known), by root (lowercase hex).
    public var handles: [String: String] {
        Dictionary(participants.compactMap { participant in participant.handle.map { (participant.root, $0) } },
                   uniquingKeysWith: { first, _ in first })
    }

    /// Every handle this version knows, removed participants' too (root → handle): who did what
    /// in older notices.
    public var everyHandle: [String: String] {
        var known = handles
        for gone in removed { if let handle = gone.handle, known[gone.root] == nil { known[gone.root] = handle } }
        return known
    }

    /// The active participant whose handle is `handle`.
    public func participant(handle: String) -> Participant? {
        participants.first { $0.handle == handle }
    }
}
