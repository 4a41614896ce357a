import ArgumentParser
import CohortIdentity

struct IdAddDevice: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-device",
        abstract: "Add a new device to your card from its enrolment request.",
        discussion: "Prints the next version of your card, signed by this device. Import it on the new device (`cohort id import-card`), which signs it too."
    )

    @Argument(help: ArgumentHelp("The request file from `cohort id enroll` (- for standard input).", valueName: "REQUEST"))
    var request: String

    @OptionGroup var output: OutputOptions

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let request = try EnrollmentRequest(json: Files.read(request, maxBytes: EnrollmentRequest.maxJSONBytes, what: "enrolment request"))
        let card = try home.home.addDevice(request)
        try output.emit(card.jsonData())
        Terminal.note("card version \(card.version) now lists \(card.devices.count) devices; '\(request.device.name)' \(request.device.publicKey.fingerprint) added")
        Terminal.note("next: on '\(request.device.name)', run `cohort id import-card CARD`")
    }
}
