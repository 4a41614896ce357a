import CohortBase
import Foundation

/// A person's public identity card: handle, display name, device master keys (1 to 16) and a
/// signature by every listed device over the card's canonical payload (proof of possession).
public struct IdentityCard: Hashable, Sendable {
    /// Most devices on one card.
    public static let maxDevices = IdentityTree.leafCount
    /// Largest JSON form accepted, in bytes.
    public static let maxJSONBytes = 64 << 10
    static let payloadDomain = Data("COHORT-CARD-V1".utf8)
    static let maxNameBytes = 128
    static let maxDeviceNameBytes = 64

    /// One device of the person.
    public struct Device: Hashable, Sendable {
        public let name: String
        public let publicKey: P256Key

        public init(name: String, publicKey: P256Key) throws {
            try TextField.check(name, field: "device name", maxBytes: IdentityCard.maxDeviceNameBytes)
            self.name = name
            self.publicKey = publicKey
        }
    }

    /// A device's signature over `canonicalPayload`.
    public struct Signature: Hashable, Sendable {
        public let publicKey: P256Key
        /// ECDSA P-256 / SHA-256, DER.
        public let signature: Data
    }

    /// Increases by one with every change to the device list.
    public let version: UInt32
    public let handle: String
    public let name: String
    public let devices: [Device]
    public private(set) var signatures: [Signature]

    /// An unsigned card; every device must then `sign` it.
    public init(version: UInt32, handle: String, name: String, devices: [Device]) throws {
        guard version >= 1 else {
            throw CohortError(.malformed, "card version must be at least 1")
        }
        try TextField.checkHandle(handle)
        try TextField.check(name, field: "name", maxBytes: Self.maxNameBytes)
        guard (1...Self.maxDevices).contains(devices.count) else {
            throw CohortError(.malformed, "a card lists 1 to \(Self.maxDevices) devices, this one \(devices.count)")
        }
        guard Set(devices.map(\.publicKey)).count == devices.count else {
            throw CohortError(.malformed, "a device key is listed twice on the card")
        }
        guard Set(devices.map(\.name)).count == devices.count else {
            throw CohortError(.malformed, "two devices on the card share a name", hint: "give each device its own name")
        }
        self.version = version
        self.handle = handle
        self.name = name
        self.devices = devices
        signatures = []
    }

    /// The master keys, in card order.
    public var masterKeys: [P256Key] { devices.map(\.publicKey) }

    /// What every device signs: `"COHORT-CARD-V1" ‖ u32(version) ‖ u16(len handle) ‖ handle ‖
    /// u16(len name) ‖ name ‖ u8(count) ‖ count × (u16(len device name) ‖ device name ‖ key)`, devices
    /// sorted by key bytes so the order in the JSON does not matter.
    public var canonicalPayload: Data {
        var writer = ByteWriter()
        writer.append(Self.payloadDomain)
        writer.appendU32(version)
        writer.appendU16Prefixed(utf8: handle)
        writer.appendU16Prefixed(utf8: name)
        writer.appendU8(UInt8(devices.count))
        for device in devices.sorted(by: { $0.publicKey.x963.lexicographicallyPrecedes($1.publicKey.x963) }) {
            writer.appendU16Prefixed(utf8: device.name)
            writer.append(device.publicKey.x963)
        }
        return writer.bytes
    }

    /// Adds (or replaces) the signature of `key`, which must be one of the card's devices.
    public mutating func sign(with key: DeviceKey) throws {
        let publicKey = key.publicKey
        guard masterKeys.contains(publicKey) else {
            throw CohortError(.badKey, "device \(publicKey.fingerprint) is not on this card, so it cannot sign it")
        }
        let signature = try key.signature(for: canonicalPayload)
        signatures.removeAll { $0.publicKey == publicKey }
        signatures.append(Signature(publicKey: publicKey, signature: signature))
    }

    /// Adds a signature read from outside; verified by `verify` or `verifyPresentSignatures`.
    mutating func attach(_ signature: Signature) throws {
        guard !signatures.contains(where: { $0.publicKey == signature.publicKey }) else {
            throw CohortError(.malformed, "two signatures by device \(signature.publicKey.fingerprint)")
        }
        signatures.append(signature)
    }

    /// The devices whose signature is not on the card yet.
    public var unsignedDevices: [Device] {
        let signers = Set(signatures.map(\.publicKey))
        return devices.filter { !signers.contains($0.publicKey) }
    }

    /// Checks that every signature present is by a listed device and verifies; missing ones are allowed.
    public func verifyPresentSignatures() throws {
        let payload = canonicalPayload
        for entry in signatures {
            guard let device = devices.first(where: { $0.publicKey == entry.publicKey }) else {
                throw CohortError(.badSignature, "card carries a signature by \(entry.publicKey.fingerprint), which is not one of its devices")
            }
            do {
                try entry.publicKey.verifySignature(entry.signature, for: payload)
            } catch let error as CohortError {
                throw CohortError(.badSignature, "card signature of device '\(device.name)' is invalid: \(error.reason)",
                                  hint: "the card was changed after it was signed; ask its owner for a fresh copy")
            }
        }
    }

    /// Checks the card completely: every listed device has signed, and every signature verifies.
    public func verify() throws {
        try verifyPresentSignatures()
        if let missing = unsignedDevices.first {
            throw CohortError(.badSignature, "card lists device '\(missing.name)' (\(missing.publicKey.fingerprint)) without its signature",
                              hint: "a card must be signed by every device it lists: the complete card comes from `cohort id card` on '\(missing.name)' once it has imported this version")
        }
    }

    /// The person's root for `context` under cohort-v1.
    public func root(in context: CollaborationContext) throws -> RootHash {
        try IdentityTree(masterKeys: masterKeys, context: context).root
    }
}
