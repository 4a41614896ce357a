import Foundation

/// Where Cohort keeps its own state inside a git directory: `.git/cohort/` in a workspace,
/// `<repository>.git/cohort/` in a bare repository (a hooked one, or one a server hosts). Every path
/// below it is named here and nowhere else; none of it is ever committed.
package struct CohortDirectory: Sendable {
    /// `<git dir>/cohort`.
    package let url: URL

    package init(gitDirectory: URL) {
        url = gitDirectory.appendingPathComponent(Self.name, isDirectory: true)
    }

    /// The folder's name inside the git directory.
    package static let name = "cohort"
    /// The repository's own notice sinks, relative to the git directory (for a hook's shell test).
    package static let sinksFileInGitDirectory = name + "/config.toml"

    /// The repository's own notice sinks (`config.toml`).
    package var sinksFile: URL { url.appendingPathComponent("config.toml") }
    /// Commits verified before, so a verification skips them (`verified`).
    package var verifiedCommits: URL { url.appendingPathComponent("verified") }
    /// Notices waiting for their sinks, each sink's cursor, failures and last run (`outbox/`).
    package var outbox: URL { url.appendingPathComponent("outbox", isDirectory: true) }
    /// What a sink keeps between runs, a folder per sink (`sinks/`).
    package var sinkState: URL { url.appendingPathComponent("sinks", isDirectory: true) }
    /// The last commit whose notices a workspace has taken in (`notices-seen`).
    package var noticesSeen: URL { url.appendingPathComponent("notices-seen") }
    /// The lock a sync holds while it runs (`sync.lock`).
    package var syncLock: URL { url.appendingPathComponent("sync.lock") }
    /// The sync's journal: a move under way, the last sync and its summary (`sync/journal.json`).
    package var syncJournal: URL { url.appendingPathComponent("sync/journal.json") }
    /// Paths a checkout could not write (`sync/unwritten.json`).
    package var unwrittenPaths: URL { url.appendingPathComponent("sync/unwritten.json") }
    /// Local versions set aside by `cohort restore` and read-only workspaces (`aside/<UTC time>/`).
    package var aside: URL { url.appendingPathComponent("aside", isDirectory: true) }
    /// What an existing repository was before `cohort start --adopt`, and its index (`adoption.json`,
    /// `adoption-index`).
    package var adoptionJournal: URL { url.appendingPathComponent("adoption.json") }
    package var adoptionIndex: URL { url.appendingPathComponent("adoption-index") }
    /// A hosted collaboration's registration on a server (`registration.json`).
    package var registration: URL { url.appendingPathComponent("registration.json") }
}
