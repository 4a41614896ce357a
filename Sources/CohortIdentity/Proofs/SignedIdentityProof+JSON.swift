import CohortBase
import Foundation

extension SignedIdentityProof {
    /// The JSON fields, all binary values base64.
    private struct Wire: Codable {
        var scheme: String
        var publicKey: String
        var publicKeyIndex: Int
        var inclusionHashes: [String]
        var signature: String
        var message: String
    }

    /// Parses the JSON form; every size is bounded and every malformed field is `E_MALFORMED`.
    public init(json data: Data) throws {
        guard data.count <= Self.maxJSONBytes else {
            throw CohortError(.malformed, "proof JSON is larger than \(Self.maxJSONBytes) bytes")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: data)
        } catch {
            throw CohortError(.malformed, "proof is not valid JSON with the expected fields: \(JSONCoding.describe(error))",
                              hint: "expected scheme, publicKey, publicKeyIndex, inclusionHashes, signature, message")
        }
        try self.init(wire: wire)
    }

    private init(wire: Wire) throws {
        guard wire.inclusionHashes.count <= 64 else {
            throw CohortError(.malformed, "proof has \(wire.inclusionHashes.count) inclusion hashes; more than 64 are never read")
        }
        let hashes = try wire.inclusionHashes.enumerated().map {
            try Base64Field.decode($0.element, field: "inclusionHashes[\($0.offset)]", maxBytes: 64)
        }
        self.init(
            scheme: try RootScheme(name: wire.scheme),
            proof: InclusionProof(
                publicKey: try Base64Field.decode(wire.publicKey, field: "publicKey", maxBytes: 256),
                publicKeyIndex: wire.publicKeyIndex,
                inclusionHashes: hashes
            ),
            signature: try Base64Field.decode(wire.signature, field: "signature", maxBytes: 1024),
            message: try Base64Field.decode(wire.message, field: "message", maxBytes: Self.maxMessageBytes)
        )
        try Self.checkMessage(message)
    }

    private var wire: Wire {
        Wire(
            scheme: scheme.rawValue,
            publicKey: proof.publicKey.base64EncodedString(),
            publicKeyIndex: proof.publicKeyIndex,
            inclusionHashes: proof.inclusionHashes.map { $0.base64EncodedString() },
            signature: signature.base64EncodedString(),
            message: message.base64EncodedString()
        )
    }

    /// The JSON form, keys sorted, binary values base64.
    public func jsonData() -> Data {
        JSONCoding.encode(wire)
    }
}

/// The same JSON form inside larger documents (the server's API bodies). A malformed proof throws its
/// `CohortError` unchanged.
extension SignedIdentityProof: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(wire: Wire(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try wire.encode(to: encoder)
    }
}
