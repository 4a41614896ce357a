import CohortBase
import Crypto
import Foundation

/// A P-256 public key in X9.63 uncompressed form (65 bytes, first byte 0x04), checked to be on the
/// curve. Compressed points, the point at infinity and anything else are refused with `E_BAD_KEY`.
public struct P256Key: Hashable, Sendable, CustomStringConvertible {
    /// The 65 bytes `0x04 ‖ x ‖ y`.
    public let x963: Data
    let signingKey: P256.Signing.PublicKey
    /// Valid signatures checked with this key in this process, and its table once it has earned one.
    let use: P256KeyUse

    /// Valid signatures a key checks before it gets its large table of multiples (`P256KeyTable`).
    public static var signaturesBeforeLargeTable: Int { P256KeyUse.largeAfter }

    public init(x963 data: Data) throws {
        self = try Self.parsed.value(for: data) { try Self(parsing: data) }
    }

    /// Keys parsed lately (their curve check is a point decompression's worth of work).
    private static let parsed = RecentResults<Data, P256Key>(capacity: 4096)

    private init(parsing data: Data) throws {
        guard data.count == 65 else {
            throw CohortError(.badKey, "public key is \(data.count) bytes, expected 65 (uncompressed X9.63 P-256)",
                              hint: "export the key uncompressed: 0x04 ‖ x ‖ y")
        }
        guard data[data.startIndex] == 0x04 else {
            throw CohortError(.badKey, String(format: "public key starts with 0x%02x, expected 0x04 (uncompressed)", data[data.startIndex]),
                              hint: "compressed and hybrid points are not accepted")
        }
        do {
            signingKey = try P256.Signing.PublicKey(x963Representation: data)
        } catch {
            throw CohortError(.badKey, "public key is not a point on P-256", hint: "check that the key was copied whole")
        }
        x963 = data
        use = P256KeyUse(x963: data)
    }

    /// The key, through the same memo as parsed keys: every copy shares one count of valid signatures.
    init(_ key: P256.Signing.PublicKey) {
        let data = key.x963Representation
        self = Self.parsed.value(for: data) { P256Key(key: key, x963: data) }
    }

    private init(key: P256.Signing.PublicKey, x963 data: Data) {
        signingKey = key
        x963 = data
        use = P256KeyUse(x963: data)
    }

    /// Decodes a base64 field that holds a key.
    init(base64 text: String, field: String) throws {
        try self.init(x963: Base64Field.decode(text, field: field, maxBytes: 256))
    }

    /// The key as standard base64.
    public var base64: String { x963.base64EncodedString() }

    /// A short, stable label for people: `sha256:` and the first 8 bytes of SHA-256 of the key, in hex.
    public var fingerprint: String {
        "sha256:" + Data(SHA256.hash(data: x963).prefix(8)).hexString
    }

    public var description: String { fingerprint }

    public static func == (lhs: P256Key, rhs: P256Key) -> Bool { lhs.x963 == rhs.x963 }
    public func hash(into hasher: inout Hasher) { hasher.combine(x963) }
}
