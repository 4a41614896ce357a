import ArgumentParser
import CohortIdentity
import Foundation

struct IdShow: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show this device's identity and card."
    )

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var home: HomeOptions

    private struct Summary: Encodable {
        struct Device: Encodable {
            var name: String
            var publicKey: String
            var fingerprint: String
            var signed: Bool
            var thisDevice: Bool
        }

        var handle: String
        var name: String?
        var device: String
        var cardVersion: UInt32?
        var cardComplete: Bool
        var devices: [Device]
        var home: String
    }

    func execute() throws {
        let home = home.home
        let device = try home.loadDevice()
        let card = try home.loadCard()
        let unsigned = Set(card?.unsignedDevices.map(\.publicKey) ?? [])
        let summary = Summary(
            handle: device.handle,
            name: card?.name,
            device: device.name,
            cardVersion: card?.version,
            cardComplete: card.map { $0.unsignedDevices.isEmpty } ?? false,
            devices: (card?.devices ?? []).map {
                .init(name: $0.name, publicKey: $0.publicKey.base64, fingerprint: $0.publicKey.fingerprint,
                      signed: !unsigned.contains($0.publicKey), thisDevice: $0.publicKey == device.key.publicKey)
            },
            home: home.directory.path
        )
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            Terminal.write(try encoder.encode(summary) + Data("\n".utf8))
            return
        }
        Terminal.print("handle:  \(summary.handle)")
        Terminal.print("name:    \(summary.name ?? "(not on a card yet)")")
        Terminal.print("device:  \(summary.device) \(device.key.publicKey.fingerprint)")
        guard let card else {
            Terminal.print("card:    none: enrolment pending; import the card from your other device (`cohort id import-card`)")
            return
        }
        let state = summary.cardComplete ? "complete" : "waiting for signatures from: " + card.unsignedDevices.map(\.name).joined(separator: ", ")
        Terminal.print("card:    version \(card.version), \(state)")
        for entry in summary.devices {
            let marks = [entry.thisDevice ? "this device" : nil, entry.signed ? nil : "unsigned"].compactMap { $0 }
            Terminal.print("  - \(entry.name) \(entry.fingerprint)" + (marks.isEmpty ? "" : " (\(marks.joined(separator: ", ")))"))
        }
        Terminal.print("home:    \(summary.home)")
    }
}
