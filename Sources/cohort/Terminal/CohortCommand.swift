import ArgumentParser
import CohortIdentity
import Foundation

/// A command whose failures print as one line, `error: CODE: reason (what to do)`, and exit 1.
protocol CohortCommand: ParsableCommand {
    func execute() throws
}

extension CohortCommand {
    func run() throws {
        do {
            try execute()
        } catch let error as CohortError {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
    }
}

/// An async command with the same one-line error contract.
protocol AsyncCohortCommand: AsyncParsableCommand {
    func execute() async throws
}

extension AsyncCohortCommand {
    func run() async throws {
        do {
            try await execute()
        } catch let error as CohortError {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
    }
}

/// The only place that writes to the terminal.
enum Terminal {
    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func write(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// A note for people, on standard error so that standard output stays machine-readable.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        note("error: " + text)
    }
}
