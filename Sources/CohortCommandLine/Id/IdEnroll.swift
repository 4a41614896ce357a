import ArgumentParser

struct IdEnroll: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll",
        abstract: "On a new device: create its key and a request to join your card.",
        discussion: """
        Take the request to a device you already have and run `cohort id add-device REQUEST` there; \
        bring the card it prints back and run `cohort id import-card CARD` here. \
        Running enroll again while the enrolment is pending prints the same request.
        """
    )

    @Option(help: ArgumentHelp("Your handle, exactly as on your card.", valueName: "HANDLE"))
    var handle: String

    @Option(help: ArgumentHelp("This device's name on your card (default: the host name).", valueName: "NAME"))
    var device: String?

    @OptionGroup var output: OutputOptions

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let request = try home.home.enroll(handle: handle, deviceName: device ?? defaultDeviceName())
        try output.emit(request.jsonData())
        Terminal.note("enrolment request for \(request.handle), device '\(request.device.name)' \(request.device.publicKey.fingerprint)")
        Terminal.note("next: on a device you already have, run `cohort id add-device REQUEST --output card.json`")
    }
}
