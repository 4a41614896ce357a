import CohortBase
import Foundation

/// A person's root hash in one collaboration, with the scheme it was computed under.
public struct RootHash: Hashable, Sendable, CustomStringConvertible {
    public let scheme: RootScheme
    /// The 32-byte root.
    public let bytes: Data

    public init(scheme: RootScheme, bytes: Data) throws {
        guard bytes.count == 32 else {
            throw CohortError(.malformed, "a root hash is 32 bytes, got \(bytes.count)")
        }
        self.scheme = scheme
        self.bytes = bytes
    }

    /// A root from the command line's `SCHEME` and lowercase or uppercase hex.
    public init(scheme: RootScheme, hex: String) throws {
        guard let bytes = Data(hex: hex) else {
            throw CohortError(.malformed, "root hash is not hexadecimal", hint: "a root hash is 64 hex digits")
        }
        try self.init(scheme: scheme, bytes: bytes)
    }

    /// Lowercase hex, as the command line prints roots.
    public var hex: String { bytes.hexString }

    /// `scheme hex`.
    public var description: String { "\(scheme.rawValue) \(hex)" }
}
