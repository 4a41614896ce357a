import CohortBase
import Foundation

/// This device: its master key and how it is known.
public struct LocalDevice: Sendable {
    /// The person's handle this device belongs to.
    public let handle: String
    /// The device's name on the card.
    public let name: String
    public let key: DeviceKey

    init(handle: String, name: String, key: DeviceKey) {
        self.handle = handle
        self.name = name
        self.key = key
    }

    private struct Wire: Codable {
        var handle: String
        var device: String
        var publicKey: String
    }

    init(descriptionJSON data: Data, key: DeviceKey) throws {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: data) else {
            throw CohortError(.malformed, "device.json is damaged", hint: "restore it from a backup")
        }
        guard wire.publicKey == key.publicKey.base64 else {
            throw CohortError(.badKey, "device.json describes another key than device.key", hint: "restore both files from the same backup")
        }
        handle = wire.handle
        name = wire.device
        self.key = key
    }

    func descriptionJSON() -> Data {
        JSONCoding.encode(Wire(handle: handle, device: name, publicKey: key.publicKey.base64))
    }
}
