import ArgumentParser
import CohortBase
import CohortNotices
import CohortSinks
import Foundation
import Synchronization

/// The `cohort` command line as a library: a program that calls `main(sinks:)` is `cohort`, with the
/// sink types it passes. Cohort's own executable passes the shipped ones; yours may add its own:
///
/// ```swift
/// import CohortCommandLine
/// await CohortCommandLine.main(sinks: CohortCommandLine.shippedSinks + [DigestSinkFactory()])
/// ```
public enum CohortCommandLine {
    /// The sink types Cohort ships: `stdout`, `file`, `webhook`, `exec`.
    public static var shippedSinks: [any NoticeSinkFactory] { ShippedSinks.factories }

    private static let registered = Mutex(SinkRegistry([]))

    /// The sink types this program was started with.
    static var sinks: SinkRegistry { registered.withLock { $0 } }

    /// Runs `cohort` with the arguments of this process, knowing the sink types `sinks` (later
    /// entries replace earlier ones of the same `type`); never returns.
    public static func main(sinks: [any NoticeSinkFactory]) async -> Never {
        registered.withLock { $0 = SinkRegistry(sinks) }
        await Cohort.main()
        exit(0)
    }
}

struct Cohort: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "File-backed collaboration on git, with participants known only by root hashes.",
        discussion: """
        Identities live under $COHORT_HOME (default ~/.config/cohort). \
        Exit status: 0 success, 1 a refusal or failure (one line: error: CODE: reason), 64 a usage error, \
        75 when `cohort sync` could not reach the remote (its work is committed here).
        """,
        version: CohortVersion.text,
        subcommands: [
            IdCommand.self, StartCommand.self, ParticipantsCommand.self, CommitCommand.self, CommentCommand.self,
            VerifyCommand.self, ExportCommand.self, NoticesCommand.self, SinksCommand.self, HookCommand.self,
            ProofCommand.self, ServeCommand.self, PublishCommand.self, CloneCommand.self, SyncCommand.self, StatusCommand.self, WatchCommand.self,
            HistoryCommand.self, RestoreCommand.self, DiscardCommand.self,
            VersionCommand.self,
        ]
    )

    /// ArgumentParser's parsing and help, with Cohort's error contract: a usage error is one line,
    /// `error: E_USAGE: what was wrong (see 'cohort … --help')`, exit 64; `cohort` alone prints the
    /// overview and exits 64 too, as git does.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard !arguments.isEmpty else {
            Terminal.note(helpMessage())
            Foundation.exit(64)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if error is ExitCode || code == .success {
                exit(withError: error)
            } else if code.rawValue == 64 {
                Terminal.error(usageLine(for: error))
                Foundation.exit(64)
            } else {
                // Nothing should arrive here (commands report CohortErrors themselves); if something
                // does, it still gets the one-line shape.
                Terminal.error(CohortError(.io, String(describing: error)).description)
                Foundation.exit(1)
            }
        }
    }

    /// `E_USAGE: Unknown option '--x' (see 'cohort sync --help')`: ArgumentParser's first line and the
    /// help it points to.
    static func usageLine(for error: Error) -> String {
        let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "bad arguments"
        let full = fullMessage(for: error)
        var hint = "see 'cohort --help'"
        if let start = full.range(of: "See '"), let end = full[start.upperBound...].range(of: "'") {
            hint = "see '\(full[start.upperBound..<end.lowerBound])'"
        }
        return CohortError(.usage, message, hint: hint).description
    }
}
