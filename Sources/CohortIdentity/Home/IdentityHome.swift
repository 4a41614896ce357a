import CohortBase
import Foundation

/// This device's identity on disk, under `$COHORT_HOME` (default `~/.config/cohort`, mode 0700):
/// `device.key` (the master private key, PEM, mode 0600), `device.json` (handle, device name, public
/// key) and `card.json` (the person's current card, once there is one).
public struct IdentityHome: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// `$COHORT_HOME`, or `$HOME/.config/cohort`.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> IdentityHome {
        if let path = environment["COHORT_HOME"], !path.isEmpty {
            return IdentityHome(directory: URL(fileURLWithPath: path, isDirectory: true))
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return IdentityHome(directory: home.appendingPathComponent(".config/cohort", isDirectory: true))
    }

    var keyURL: URL { directory.appendingPathComponent("device.key") }
    var deviceURL: URL { directory.appendingPathComponent("device.json") }
    var cardURL: URL { directory.appendingPathComponent("card.json") }

    /// Whether a device key exists here.
    public var hasDevice: Bool { FileManager.default.fileExists(atPath: keyURL.path) }

    /// Creates this device's master key and description. Refuses if a key exists; leaves nothing
    /// behind if any step fails.
    public func createDevice(handle: String, deviceName: String) throws -> LocalDevice {
        try TextField.checkHandle(handle)
        try TextField.check(deviceName, field: "device name", maxBytes: 64)
        guard !hasDevice else { throw existsError() }
        try AtomicFile.createDirectory(directory, mode: 0o700)
        let device = LocalDevice(handle: handle, name: deviceName, key: DeviceKey())
        do {
            try AtomicFile.write(Data(device.key.pem.utf8), to: keyURL, mode: 0o600, replacing: false)
        } catch {
            // Another process may have created the key since the check above.
            if FileManager.default.fileExists(atPath: keyURL.path) { throw existsError() }
            throw error
        }
        do {
            try AtomicFile.write(device.descriptionJSON(), to: deviceURL, mode: 0o600, replacing: true)
        } catch {
            try? FileManager.default.removeItem(at: keyURL)
            throw error
        }
        return device
    }

    /// Removes this device's files after a failed initialisation.
    func removeDevice() {
        for url in [cardURL, deviceURL, keyURL] { try? FileManager.default.removeItem(at: url) }
    }

    private func existsError() -> CohortError {
        CohortError(.identityExists, "this device already has an identity in \(directory.path)",
                    hint: "use it (`cohort id show`), or set COHORT_HOME to another directory for another identity")
    }

    /// Loads this device: the key, its handle and name, checked against each other.
    public func loadDevice() throws -> LocalDevice {
        guard hasDevice else {
            throw CohortError(.noIdentity, "no device key in \(directory.path)",
                              hint: "run `cohort id init --handle … --name …`, or `cohort id enroll` for another device of yours")
        }
        let mode = (try? FileManager.default.attributesOfItem(atPath: keyURL.path)[.posixPermissions] as? Int) ?? 0
        guard mode & 0o077 == 0 else {
            throw CohortError(.io, String(format: "%@ is readable by other users (mode %o)", keyURL.path, mode),
                              hint: "run `chmod 600 \(keyURL.path)`; a private key must be private")
        }
        let pem = try AtomicFile.read(keyURL, maxBytes: 16 << 10, what: "device key")
        let key = try DeviceKey(pem: String(decoding: pem, as: UTF8.self))
        let description = try AtomicFile.read(deviceURL, maxBytes: 16 << 10, what: "device description")
        return try LocalDevice(descriptionJSON: description, key: key)
    }

    /// The stored card, or nil if this device has none yet (an enrolment is pending).
    public func loadCard() throws -> IdentityCard? {
        guard FileManager.default.fileExists(atPath: cardURL.path) else { return nil }
        return try IdentityCard(json: AtomicFile.read(cardURL, maxBytes: IdentityCard.maxJSONBytes, what: "stored card"))
    }

    /// The stored card, or `E_NO_IDENTITY` with what to do.
    public func requireCard() throws -> IdentityCard {
        guard let card = try loadCard() else {
            throw CohortError(.noIdentity, "this device is not on a card yet",
                              hint: "finish enrolment: `cohort id add-device REQUEST` on a device you already have, then `cohort id import-card CARD` here")
        }
        return card
    }

    var historyURL: URL { directory.appendingPathComponent("cards", isDirectory: true) }

    /// Stores `card` as the current card; a replaced older version is kept under `cards/`, because a
    /// participant rotating to a new root signs with the card of their old one.
    func saveCard(_ card: IdentityCard) throws {
        if let previous = try loadCard(), previous.version < card.version {
            try AtomicFile.createDirectory(historyURL, mode: 0o700)
            try AtomicFile.write(previous.jsonData(), to: historyURL.appendingPathComponent("v\(previous.version).json"), mode: 0o644, replacing: true)
        }
        try AtomicFile.write(card.jsonData(), to: cardURL, mode: 0o644, replacing: true)
    }

    /// The current card, then the earlier versions this device held, newest first.
    public func cardHistory() throws -> [IdentityCard] {
        var cards = [try requireCard()]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: historyURL.path)) ?? []
        for name in names where name.hasPrefix("v") && name.hasSuffix(".json") {
            let url = historyURL.appendingPathComponent(name)
            if let card = try? IdentityCard(json: AtomicFile.read(url, maxBytes: IdentityCard.maxJSONBytes, what: "earlier card")) {
                cards.append(card)
            }
        }
        return cards.sorted { $0.version > $1.version }
    }
}
