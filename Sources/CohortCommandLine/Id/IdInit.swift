import ArgumentParser

struct IdInit: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create your identity and this device's master key.",
        discussion: "The private key is written with mode 0600 and never leaves this device. Refused if this device already has an identity."
    )

    @Option(help: ArgumentHelp("Your handle, e.g. you@example.com.", valueName: "HANDLE"))
    var handle: String

    @Option(help: ArgumentHelp("Your display name.", valueName: "NAME"))
    var name: String

    @Option(help: ArgumentHelp("This device's name on your card (default: the host name).", valueName: "NAME"))
    var device: String?

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let home = home.home
        let card = try home.initialise(handle: handle, name: name, deviceName: device ?? defaultDeviceName())
        Terminal.print("created identity \(card.handle) (\(card.name)) with device '\(card.devices[0].name)' \(card.devices[0].publicKey.fingerprint)")
        Terminal.print("key: \(home.directory.path)/device.key (mode 0600)")
        Terminal.print("share your card: cohort id card --output card.json")
    }
}
