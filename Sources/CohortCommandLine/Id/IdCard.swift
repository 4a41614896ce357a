import ArgumentParser
import CohortBase

struct IdCard: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: "Print your identity card (JSON) to give to collaboration owners.",
        discussion: "A card must carry a signature by every device it lists; an incomplete card is refused unless --partial, which is for carrying it to the device that still has to sign it."
    )

    @OptionGroup var output: OutputOptions

    @Flag(help: "Print the card even if some of its devices have not signed it yet.")
    var partial = false

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let card = try home.home.requireCard()
        try card.verifyPresentSignatures()
        if !partial, !card.unsignedDevices.isEmpty {
            let names = card.unsignedDevices.map { "'\($0.name)'" }.joined(separator: ", ")
            throw CohortError(.cardIncomplete, "card version \(card.version) is not yet signed by \(names)",
                              hint: "if \(names) already imported it, bring the complete card here: `cohort id card --output FILE` there, `cohort id import-card FILE` here; if not, `cohort id card --partial --output FILE` here and `cohort id import-card FILE` there first")
        }
        try output.emit(card.jsonData())
    }
}
