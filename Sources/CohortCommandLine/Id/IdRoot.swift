import ArgumentParser
import CohortIdentity

struct IdRoot: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "root",
        abstract: "Print a person's cohort-v1 root hash for a collaboration, from their card.",
        discussion: "A card given with --card is verified first: every device must have signed it. Your own stored card may still wait for a new device's signature; that device proved its key when it asked to join. Prints 64 lowercase hex digits."
    )

    @Option(help: ArgumentHelp("The person's card (- for standard input; default: your own stored card).", valueName: "CARD"))
    var card: String?

    @Option(help: ArgumentHelp("The collaboration identifier.", valueName: "ID"))
    var collaboration: String

    @Option(help: ArgumentHelp("The collaboration's salt, 32 hex digits.", valueName: "HEX"))
    var salt: String

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let context = try CollaborationContext(identifier: collaboration, saltHex: salt)
        let identity: IdentityCard
        if let card {
            identity = try IdentityCard(json: Files.read(card, maxBytes: IdentityCard.maxJSONBytes, what: "card"))
            try identity.verify()
        } else {
            // Your own card may still wait for a device's signature; its keys are yours either way.
            identity = try home.home.requireCard()
            try identity.verifyPresentSignatures()
        }
        Terminal.print(try identity.root(in: context).hex)
    }
}
