import CohortBase
import Foundation

/// What a challenge authorises.
public enum ChallengeOperation: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case pull = 1
    case push = 2
    case membership = 3

    public var description: String {
        switch self {
        case .pull: "pull"
        case .push: "push"
        case .membership: "membership"
        }
    }

    /// Parses `pull`, `push` or `membership`.
    public init(name: String) throws {
        guard let operation = Self.allCases.first(where: { $0.description == name }) else {
            throw CohortError(.malformed, "unknown operation '\(name.prefix(40))'", hint: "use pull, push or membership")
        }
        self = operation
    }
}

/// A server challenge: random, bound to a server, a collaboration, an operation and a time window,
/// authenticated by the server's HMAC key. The device signs `bytes` as they are.
///
/// Layout (all integers big-endian):
/// `"COHORT-CHALLENGE-V1" ‖ nonce[32] ‖ u64 issuedAt ‖ u16 lifetime ‖ u8 operation ‖
///  u16(len server) ‖ server ‖ u16(len collaboration) ‖ collaboration ‖ tag[32]`,
/// where `tag = HMAC-SHA-256(key, every byte before it)`.
public struct Challenge: Hashable, Sendable {
    static let magic = Data("COHORT-CHALLENGE-V1".utf8)
    /// The longest a challenge may live, in seconds.
    public static let maxLifetime: UInt16 = 300
    /// The largest encoded challenge, in bytes.
    public static let maxBytes = 19 + 32 + 8 + 2 + 1 + 2 + 255 + 2 + 255 + 32

    public let nonce: Data
    /// Seconds since 1970-01-01 UTC.
    public let issuedAt: UInt64
    /// Seconds after `issuedAt` during which the challenge may be answered.
    public let lifetime: UInt16
    public let operation: ChallengeOperation
    /// The issuing server's identity (its public URL or a name).
    public let server: String
    public let collaboration: String
    public let tag: Data

    /// The last second (since 1970) the challenge may be answered in.
    public var expiry: UInt64 {
        let (sum, overflow) = issuedAt.addingReportingOverflow(UInt64(lifetime))
        return overflow ? .max : sum
    }

    /// Everything the tag covers.
    var signedPart: Data {
        var writer = ByteWriter()
        writer.append(Self.magic)
        writer.append(nonce)
        writer.appendU64(issuedAt)
        writer.appendU16(lifetime)
        writer.appendU8(operation.rawValue)
        writer.appendU16Prefixed(utf8: server)
        writer.appendU16Prefixed(utf8: collaboration)
        return writer.bytes
    }

    /// The encoded challenge, what the device signs.
    public var bytes: Data { signedPart + tag }

    init(nonce: Data, issuedAt: UInt64, lifetime: UInt16, operation: ChallengeOperation, server: String, collaboration: String, tag: Data) {
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.lifetime = lifetime
        self.operation = operation
        self.server = server
        self.collaboration = collaboration
        self.tag = tag
    }

    /// Decodes the layout; anything that is not exactly a challenge is `E_CHALLENGE_FORGED`.
    public init(bytes data: Data) throws {
        guard data.count <= Self.maxBytes else {
            throw CohortError(.challengeForged, "challenge is larger than any challenge this server issues")
        }
        var reader = ByteReader(data, what: "challenge")
        do {
            guard try reader.read(Self.magic.count) == Self.magic else {
                throw CohortError(.challengeForged, "message is not a Cohort challenge", hint: "sign the challenge the server issued, unchanged")
            }
            nonce = try reader.read(32)
            issuedAt = try reader.readU64()
            lifetime = try reader.readU16()
            guard let operation = ChallengeOperation(rawValue: try reader.readU8()) else {
                throw CohortError(.challengeForged, "challenge names an unknown operation")
            }
            self.operation = operation
            guard let server = String(data: try reader.readU16Prefixed(), encoding: .utf8),
                  let collaboration = String(data: try reader.readU16Prefixed(), encoding: .utf8)
            else {
                throw CohortError(.challengeForged, "challenge text fields are not UTF-8")
            }
            self.server = server
            self.collaboration = collaboration
            tag = try reader.read(32)
        } catch let error as CohortError where error.code == .malformed {
            throw CohortError(.challengeForged, "challenge is truncated", hint: "sign the challenge the server issued, unchanged")
        }
        guard reader.isAtEnd else {
            throw CohortError(.challengeForged, "challenge has trailing bytes")
        }
    }
}
