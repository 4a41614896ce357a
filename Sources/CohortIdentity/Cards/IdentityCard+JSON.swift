import CohortBase
import Foundation

extension IdentityCard {
    private struct Wire: Codable {
        typealias Device = DeviceJSON

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
            if let misplaced = JSONCoding.misplaced(data, expected: .card) { throw misplaced }
            throw CohortError(.malformed, "card is not valid JSON with the expected fields: \(JSONCoding.describe(error))",
                              hint: "expected version, handle, name, devices, signatures")
        }
        guard wire.devices.count <= Self.maxDevices, wire.signatures.count <= Self.maxDevices else {
            throw CohortError(.malformed, "a card lists at most \(Self.maxDevices) devices and signatures")
        }
        let devices = try wire.devices.enumerated().map { try $0.element.device(field: "devices[\($0.offset)].publicKey") }
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
            devices: devices.map(DeviceJSON.init),
            signatures: signatures.map { Wire.Signature(publicKey: $0.publicKey.base64, signature: $0.signature.base64EncodedString()) }
        ))
    }
}

/// A device as cards and enrolment requests write it: `{"name", "publicKey"}`.
struct DeviceJSON: Codable {
    var name: String
    var publicKey: String

    init(name: String, publicKey: String) {
        self.name = name
        self.publicKey = publicKey
    }

    init(_ device: IdentityCard.Device) {
        self.init(name: device.name, publicKey: device.publicKey.base64)
    }

    func device(field: String) throws -> IdentityCard.Device {
        try IdentityCard.Device(name: name, publicKey: P256Key(base64: publicKey, field: field))
    }
}
