import CohortBase
import Foundation

/// The result of importing a card on this device.
public struct CardImport: Sendable {
    /// The card as stored now (with this device's signature added if it was missing).
    public let card: IdentityCard
    /// Whether this device signed the card during the import.
    public let signedHere: Bool
}

extension IdentityHome {
    /// Creates the person and this device: a master key and a version 1 card signed by it.
    public func initialise(handle: String, name: String, deviceName: String) throws -> IdentityCard {
        // Validate before a key exists, so bad input leaves nothing behind.
        try TextField.checkHandle(handle)
        try TextField.checkAuthorText(handle, field: "handle")
        try TextField.check(name, field: "name", maxBytes: IdentityCard.maxNameBytes)
        try TextField.checkAuthorText(name, field: "name")
        try TextField.check(deviceName, field: "device name", maxBytes: IdentityCard.maxDeviceNameBytes)
        let device = try createDevice(handle: handle, deviceName: deviceName)
        do {
            var card = try IdentityCard(version: 1, handle: handle, name: name,
                                        devices: [IdentityCard.Device(name: deviceName, publicKey: device.key.publicKey)])
            try card.sign(with: device.key)
            try saveCard(card)
            return card
        } catch {
            removeDevice()
            throw error
        }
    }

    /// Creates this device's key for a person who already has a card elsewhere, and returns the
    /// enrolment request to take to one of their existing devices. Run again, it returns the same
    /// request while the enrolment is pending.
    public func enroll(handle: String, deviceName: String) throws -> EnrollmentRequest {
        try TextField.checkHandle(handle)
        try TextField.checkAuthorText(handle, field: "handle")
        if hasDevice {
            let device = try loadDevice()
            guard try loadCard() == nil, device.handle == handle, device.name == deviceName else {
                throw CohortError(.identityExists, "this device already has an identity in \(directory.path)",
                                  hint: "set COHORT_HOME to another directory to enrol a new device")
            }
            return try EnrollmentRequest(handle: handle, deviceName: deviceName, key: device.key)
        }
        let device = try createDevice(handle: handle, deviceName: deviceName)
        return try EnrollmentRequest(handle: handle, deviceName: deviceName, key: device.key)
    }

    /// Adds the requesting device to this person's card: the next version, signed here, stored here.
    /// The new device completes it by importing it (`importCard`).
    public func addDevice(_ request: EnrollmentRequest) throws -> IdentityCard {
        let device = try loadDevice()
        let current = try requireCard()
        try current.verifyPresentSignatures()
        var card = try current.adding(request)
        try card.sign(with: device.key)
        try saveCard(card)
        return card
    }

    /// Imports a card of this person that lists this device: verifies every signature on it, signs it
    /// with this device if needed, and stores it. Older versions and different cards of the same
    /// version are refused, so a stored card is never replaced by a stale one.
    public func importCard(_ incoming: IdentityCard) throws -> CardImport {
        let device = try loadDevice()
        guard incoming.handle == device.handle else {
            throw CohortError(.malformed, "the card is for '\(incoming.handle)', this device belongs to '\(device.handle)'",
                              hint: "import a card of your own")
        }
        guard incoming.masterKeys.contains(device.key.publicKey) else {
            throw CohortError(.malformed, "the card does not list this device (\(device.key.publicKey.fingerprint))",
                              hint: "run `cohort id add-device` with this device's request first")
        }
        try incoming.verifyPresentSignatures()
        let stored = try loadCard()
        // Sign only what this person's own devices already vouch for: this device (it made the card
        // with add-device), or a device of the stored card; a new device needs one other device.
        let vouchers = Set(stored?.masterKeys ?? incoming.masterKeys).subtracting(stored == nil ? [device.key.publicKey] : [])
        guard incoming.signatures.contains(where: { vouchers.contains($0.publicKey) }) else {
            throw CohortError(.badSignature, "the card is not signed by any device this identity already trusts",
                              hint: "import only cards made by `cohort id add-device` on one of your devices")
        }
        var card = incoming
        if let stored {
            guard incoming.version >= stored.version else {
                throw CohortError(.malformed, "the card is version \(incoming.version), older than the stored version \(stored.version)",
                                  hint: "import the newest card")
            }
            if incoming.version == stored.version {
                guard Set(incoming.devices) == Set(stored.devices), incoming.name == stored.name else {
                    throw CohortError(.malformed, "the card is version \(incoming.version) but differs from the stored card of the same version",
                                      hint: "two devices were added at once; add one, import it everywhere, then add the next")
                }
                // The same version seen from another device may carry signatures this copy lacks.
                for entry in stored.signatures where !card.signatures.contains(where: { $0.publicKey == entry.publicKey }) {
                    try card.attach(entry)
                }
            }
        }
        let signedHere = !card.signatures.contains { $0.publicKey == device.key.publicKey }
        if signedHere { try card.sign(with: device.key) }
        try saveCard(card)
        return CardImport(card: card, signedHere: signedHere)
    }

    /// A signed identity proof over `message`, from this device, for `context`.
    public func proof(signing message: Data, in context: CollaborationContext) throws -> SignedIdentityProof {
        let device = try loadDevice()
        let card = try requireCard()
        let tree = try IdentityTree(masterKeys: card.masterKeys, context: context)
        return try SignedIdentityProof(signing: message, with: device.key.diversified(for: context), in: tree)
    }
}
