import Crypto
import Foundation

/// How a root hash is computed from a person's keys. Every stored root carries its scheme, and a proof
/// is verified under that scheme only.
public enum RootScheme: String, Sendable, Hashable, CaseIterable, Codable {
    /// Cohort's own: RFC 6962 domain separation, a padded tree of exactly 16 leaves (depth 4).
    case cohortV1 = "cohort-v1"
    /// Genuine Shared with You proofs: undomain-separated SHA-256, depth 1 to 16.
    case appleV1 = "apple-v1"

    /// The number of inclusion hashes a proof may carry.
    public var allowedDepths: ClosedRange<Int> {
        switch self {
        case .cohortV1: 4...4
        case .appleV1: 1...16
        }
    }

    /// The signature encodings a proof under this scheme may use.
    var signatureEncoding: SignatureEncoding {
        switch self {
        case .cohortV1: .der
        case .appleV1: .derOrRaw
        }
    }

    /// The leaf value of a public key.
    public func leaf(_ publicKey: some DataProtocol) -> Data {
        var hasher = SHA256()
        if self == .cohortV1 { hasher.update(data: [0x00]) }
        hasher.update(data: publicKey)
        return Data(hasher.finalize())
    }

    /// The value of an interior node from its children.
    public func node(_ left: Data, _ right: Data) -> Data {
        var hasher = SHA256()
        if self == .cohortV1 { hasher.update(data: [0x01]) }
        hasher.update(data: left)
        hasher.update(data: right)
        return Data(hasher.finalize())
    }

    /// Parses a scheme name, refusing unknown ones with `E_MALFORMED`.
    public init(name: String) throws {
        guard let scheme = RootScheme(rawValue: name) else {
            throw CohortError(.malformed, "unknown scheme '\(name.prefix(40))'", hint: "use cohort-v1 or apple-v1")
        }
        self = scheme
    }
}
