import CohortBase
import Foundation

/// A new device's request to join a person's card, signed by the new device's key (so nobody can
/// enrol a key they do not hold).
public struct EnrollmentRequest: Hashable, Sendable {
    static let payloadDomain = Data("COHORT-ENROLL-V1".utf8)
    static let type = "cohort-enrollment-request"
    /// Largest JSON form accepted, in bytes.
    public static let maxJSONBytes = 16 << 10

    public let handle: String
    public let device: IdentityCard.Device
    /// ECDSA P-256 / SHA-256 by the new device over `canonicalPayload`, DER.
    public let signature: Data

    /// A request for the device holding `key`, signed by it.
    public init(handle: String, deviceName: String, key: DeviceKey) throws {
        try TextField.checkHandle(handle)
        self.handle = handle
        device = try IdentityCard.Device(name: deviceName, publicKey: key.publicKey)
        signature = try key.signature(for: Self.payload(handle: handle, device: device))
    }

    /// `"COHORT-ENROLL-V1" ‖ u16(len handle) ‖ handle ‖ u16(len device name) ‖ device name ‖ key`.
    public var canonicalPayload: Data {
        Self.payload(handle: handle, device: device)
    }

    private static func payload(handle: String, device: IdentityCard.Device) -> Data {
        var writer = ByteWriter()
        writer.append(payloadDomain)
        writer.appendU16Prefixed(utf8: handle)
        writer.appendU16Prefixed(utf8: device.name)
        writer.append(device.publicKey.x963)
        return writer.bytes
    }

    /// Checks the new device's signature.
    public func verify() throws {
        do {
            try device.publicKey.verifySignature(signature, for: canonicalPayload)
        } catch let error as CohortError {
            throw CohortError(.badSignature, "enrolment request is not signed by the device it names: \(error.reason)",
                              hint: "make a new request with `cohort id enroll` on the new device")
        }
    }

    private struct Wire: Codable {
        var type: String
        var version: Int
        var handle: String
        var device: DeviceJSON
        var signature: String
    }

    /// Parses the JSON form; call `verify()` before using it.
    public init(json data: Data) throws {
        guard data.count <= Self.maxJSONBytes else {
            throw CohortError(.malformed, "enrolment request is larger than \(Self.maxJSONBytes >> 10) KiB")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: data)
        } catch {
            if let misplaced = JSONCoding.misplaced(data, expected: .enrolmentRequest) { throw misplaced }
            throw CohortError(.malformed, "enrolment request is not valid JSON: \(JSONCoding.describe(error))")
        }
        guard wire.type == Self.type, wire.version == 1 else {
            throw CohortError(.malformed, "not a version 1 enrolment request (type '\(wire.type.prefix(40))')",
                              hint: "pass the file that `cohort id enroll` wrote")
        }
        try TextField.checkHandle(wire.handle)
        handle = wire.handle
        device = try wire.device.device(field: "device.publicKey")
        signature = try Base64Field.decode(wire.signature, field: "signature", maxBytes: 256)
    }

    /// The JSON form.
    public func jsonData() -> Data {
        JSONCoding.encode(Wire(
            type: Self.type, version: 1, handle: handle,
            device: DeviceJSON(device),
            signature: signature.base64EncodedString()
        ))
    }
}

extension IdentityCard {
    /// The next version of this card with the requesting device added, unsigned. The request must be
    /// for this card's handle, verified, and for a key and name not already on the card.
    public func adding(_ request: EnrollmentRequest) throws -> IdentityCard {
        try request.verify()
        guard request.handle == handle else {
            throw CohortError(.malformed, "the request is for '\(request.handle)', this card is '\(handle)'",
                              hint: "run `cohort id enroll --handle \(handle)` on the new device")
        }
        guard !masterKeys.contains(request.device.publicKey) else {
            throw CohortError(.malformed, "device \(request.device.publicKey.fingerprint) is already on the card")
        }
        guard !devices.contains(where: { $0.name == request.device.name }) else {
            throw CohortError(.malformed, "a device named '\(request.device.name)' is already on the card",
                              hint: "enrol the new device with another --device name")
        }
        guard devices.count < Self.maxDevices else {
            throw CohortError(.malformed, "the card already lists \(Self.maxDevices) devices, the most allowed")
        }
        guard version < UInt32.max else {
            throw CohortError(.malformed, "the card version cannot grow further")
        }
        return try IdentityCard(version: version + 1, handle: handle, name: name, devices: devices + [request.device])
    }
}
