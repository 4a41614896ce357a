import Foundation

extension IdentityCard {
    private struct Wire: Codable {
        struct Device: Codable {
            var name: String
            var publicKey: String
        }

        struct Signature: Codable {
            var publicKey: String
            var signature: String
        }

        var version: UInt32
        var handle: String
        var name: String
        var devices: [Device]
        var signatures: [Signature]
    }

    /// Parses a card's JSON form. Structure only: call `verify()` before trusting it.
    public init(json data: Data) throws {
        guard data.count <= Self.maxJSONBytes else {
            throw CohortError(.malformed, "card is larger than \(Self.maxJSONBytes >> 10) KiB")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: data)
        } catch {
            throw CohortError(.malformed, "card is not valid JSON with the expected fields: \(JSONCoding.describe(error))",
                              hint: "expected version, handle, name, devices, signatures")
        }
        guard wire.devices.count <= Self.maxDevices, wire.signatures.count <= Self.maxDevices else {
            throw CohortError(.malformed, "a card lists at most \(Self.maxDevices) devices and signatures")
        }
        let devices = try wire.devices.enumerated().map {
            try Device(name: $0.element.name, publicKey: P256Key(base64: $0.element.publicKey, field: "devices[\($0.offset)].publicKey"))
        }
        try self.init(version: wire.version, handle: wire.handle, name: wire.name, devices: devices)
        for (index, entry) in wire.signatures.enumerated() {
            try attach(Signature(
                publicKey: P256Key(base64: entry.publicKey, field: "signatures[\(index)].publicKey"),
                signature: Base64Field.decode(entry.signature, field: "signatures[\(index)].signature", maxBytes: 256)
            ))
        }
    }

    /// The JSON form: `{"version", "handle", "name", "devices": [{"name", "publicKey"}], "signatures": [{"publicKey", "signature"}]}`.
    public func jsonData() -> Data {
        JSONCoding.encode(Wire(
            version: version,
            handle: handle,
            name: name,
            devices: devices.map { Wire.Device(name: $0.name, publicKey: $0.publicKey.base64) },
            signatures: signatures.map { Wire.Signature(publicKey: $0.publicKey.base64, signature: $0.signature.base64EncodedString()) }
        ))
    }
}
