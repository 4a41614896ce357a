import CohortBase
import Foundation

/// What a device's keys are diversified for: a collaboration's identifier and its 16-byte salt.
public struct CollaborationContext: Hashable, Sendable {
    /// Largest identifier, in UTF-8 bytes.
    public static let maxIdentifierBytes = 255
    /// The salt's exact size.
    public static let saltBytes = 16

    /// The collaboration identifier (its UTF-8 bytes are what is hashed).
    public let identifier: String
    /// The collaboration's random salt, chosen at start.
    public let salt: Data

    public init(identifier: String, salt: Data) throws {
        try Self.validate(identifier: identifier)
        guard salt.count == Self.saltBytes else {
            throw CohortError(.malformed, "salt is \(salt.count) bytes, expected \(Self.saltBytes)",
                              hint: "pass the collaboration's salt as 32 hex digits")
        }
        self.identifier = identifier
        self.salt = salt
    }

    /// A context from the hex salt that the command line takes.
    public init(identifier: String, saltHex: String) throws {
        guard let salt = Data(hex: saltHex) else {
            throw CohortError(.malformed, "salt is not hexadecimal", hint: "pass the collaboration's salt as 32 hex digits")
        }
        try self.init(identifier: identifier, salt: salt)
    }

    /// Checks a collaboration identifier: 1 to 255 UTF-8 bytes, no control characters or spaces.
    public static func validate(identifier: String) throws {
        let size = identifier.utf8.count
        guard (1...maxIdentifierBytes).contains(size) else {
            throw CohortError(.malformed, "collaboration identifier must be 1 to \(maxIdentifierBytes) bytes, got \(size)")
        }
        guard !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isWhitespace }) else {
            throw CohortError(.malformed, "collaboration identifier contains a space or control character")
        }
    }

    /// `salt ‖ u16(len cid) ‖ cid`: the prefix that binds diversification and padding to this collaboration.
    var binding: Data {
        var writer = ByteWriter()
        writer.append(salt)
        writer.appendU16Prefixed(utf8: identifier)
        return writer.bytes
    }
}
