import ArgumentParser
import CohortIdentity
import Foundation

struct IdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "id",
        abstract: "Manage this device's identity: keys, the identity card, other devices, roots.",
        subcommands: [IdInit.self, IdShow.self, IdCard.self, IdEnroll.self, IdAddDevice.self, IdImportCard.self, IdRoot.self]
    )
}

/// Options every identity command takes.
struct HomeOptions: ParsableArguments {
    @Option(name: .customLong("home"), help: ArgumentHelp("Identity directory (default: $COHORT_HOME, else ~/.config/cohort).", valueName: "DIR"))
    var path: String?

    var home: IdentityHome {
        path.map { IdentityHome(directory: URL(fileURLWithPath: $0, isDirectory: true)) } ?? .fromEnvironment()
    }
}

/// `--output FILE` and `--force`, for commands that write a file.
struct OutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "FILE"))
    var output: String?

    @Flag(help: "Replace FILE if it exists.")
    var force = false

    func emit(_ data: Data) throws {
        try Files.emit(data, to: output, force: force)
    }
}

/// The default device name: this machine's host name, shortened to fit.
func defaultDeviceName() -> String {
    let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
    let cleaned = String(host.unicodeScalars.filter { !$0.properties.isWhitespace && $0.properties.generalCategory != .control }.prefix(64))
    return cleaned.isEmpty ? "device" : cleaned
}
