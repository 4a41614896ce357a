import CohortBase
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
    public func leaf(_ publicKey: Data) -> Data {
        hash(prefix: 0x00, publicKey, Data())
    }

    /// The value of an interior node from its children.
    public func node(_ left: Data, _ right: Data) -> Data {
        hash(prefix: 0x01, left, right)
    }

    /// SHA-256 of `prefix ‖ a ‖ b` (cohort-v1) or `a ‖ b` (apple-v1), hashed from one stack buffer:
    /// this runs five times per proof verification.
    private func hash(prefix: UInt8, _ a: Data, _ b: Data) -> Data {
        let prefixed = self == .cohortV1
        let count = (prefixed ? 1 : 0) + a.count + b.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            var offset = 0
            if prefixed {
                buffer[0] = prefix
                offset = 1
            }
            offset += a.copyBytes(to: UnsafeMutableBufferPointer(rebasing: buffer[offset...]))
            _ = b.copyBytes(to: UnsafeMutableBufferPointer(rebasing: buffer[offset...]))
            var hasher = SHA256()
            hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
            return hasher.finalize().bytes
        }
    }

    /// Parses a scheme name, refusing unknown ones with `E_MALFORMED`.
    public init(name: String) throws {
        guard let scheme = RootScheme(rawValue: name) else {
            throw CohortError(.malformed, "unknown scheme '\(name.prefix(40))'", hint: "use cohort-v1 or apple-v1")
        }
        self = scheme
    }
}
