import ArgumentParser
import CohortBase
import Foundation

/// A command whose failures print as one line, `error: CODE: reason (what to do)`, and exit 1.
protocol CohortCommand: ParsableCommand {
    func execute() throws
}

extension CohortCommand {
    func run() throws {
        do {
            try execute()
        } catch let error as CohortErrorConvertible {
            Terminal.error(error.cohortError.description)
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
        } catch let error as CohortErrorConvertible {
            Terminal.error(error.cohortError.description)
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

    /// `object` as one line of JSON with sorted keys.
    static func printJSON(_ object: [String: Any]) {
        var data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        data.append(0x0A)
        write(data)
    }

    /// "1 commit", "3 commits".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// Rows of cells as aligned columns, two spaces apart, without trailing space.
    static func columns(_ rows: [[String]]) -> [String] {
        let widths = rows.reduce(into: [Int]()) { widths, row in
            for (index, cell) in row.enumerated() {
                if index == widths.count { widths.append(0) }
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }
}
