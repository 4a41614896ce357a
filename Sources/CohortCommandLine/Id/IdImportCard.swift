import ArgumentParser
import CohortIdentity

struct IdImportCard: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-card",
        abstract: "Import a new version of your card on this device, signing it if this device has not.",
        discussion: "Every signature on the card is verified. An older card, or a different card of the same version, is refused."
    )

    @Argument(help: ArgumentHelp("The card file (- for standard input).", valueName: "CARD"))
    var card: String

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let incoming = try IdentityCard(json: Files.read(card, maxBytes: IdentityCard.maxJSONBytes, what: "card"))
        let result = try home.home.importCard(incoming)
        let card = result.card
        Terminal.print("imported card version \(card.version) of \(card.handle) with \(card.devices.count) devices" + (result.signedHere ? ", signed by this device" : ""))
        if card.unsignedDevices.isEmpty {
            Terminal.print("card complete: share it with `cohort id card --output card.json`")
        } else {
            let names = card.unsignedDevices.map { "'\($0.name)'" }.joined(separator: ", ")
            Terminal.print("still to sign: \(names): `cohort id card --partial --output FILE`, then `cohort id import-card FILE` there")
        }
    }
}
