import ArgumentParser
import CohortIdentity

@main
struct Cohort: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "File-backed collaboration on git, with participants known only by root hashes.",
        discussion: """
        Identities live under $COHORT_HOME (default ~/.config/cohort).
        Exit status: 0 success, 1 a refusal or failure (one line: error: CODE: reason), 64 a usage error.
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
}
