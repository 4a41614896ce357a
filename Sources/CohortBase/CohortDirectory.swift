import Foundation

/// Where Cohort keeps its own state inside a git directory: `.git/cohort/` in a workspace,
/// `<repository>.git/cohort/` in a bare repository (a hooked one, or one a server hosts). Every path
/// below it is named here and nowhere else; none of it is ever committed.
public struct CohortDirectory: Sendable {
    /// `<git dir>/cohort`.
    public let url: URL

    public init(gitDirectory: URL) {
        url = gitDirectory.appendingPathComponent(Self.name, isDirectory: true)
    }

    /// The folder's name inside the git directory.
    public static let name = "cohort"
    /// The repository's own notice sinks, relative to the git directory (for a hook's shell test).
    public static let sinksFileInGitDirectory = name + "/config.toml"

    /// The repository's own notice sinks (`config.toml`).
    public var sinksFile: URL { url.deletingLastPathComponent().appendingPathComponent(Self.sinksFileInGitDirectory) }
    /// Commits verified before, so a verification skips them (`verified`).
    public var verifiedCommits: URL { url.appendingPathComponent("verified") }
    /// Notices waiting for their sinks, each sink's cursor, failures and last run (`outbox/`).
    public var outbox: URL { url.appendingPathComponent("outbox", isDirectory: true) }
    /// What a sink keeps between runs, a folder per sink (`sinks/`).
    public var sinkState: URL { url.appendingPathComponent("sinks", isDirectory: true) }
    /// The last commit whose notices a workspace has taken in (`notices-seen`).
    public var noticesSeen: URL { url.appendingPathComponent("notices-seen") }
    /// The lock a sync holds while it runs (`sync.lock`).
    public var syncLock: URL { url.appendingPathComponent("sync.lock") }
    /// The sync's journal: a move under way, the last sync and its summary (`sync/journal.json`).
    public var syncJournal: URL { url.appendingPathComponent("sync/journal.json") }
    /// Paths a checkout could not write (`sync/unwritten.json`).
    public var unwrittenPaths: URL { url.appendingPathComponent("sync/unwritten.json") }
    /// Local versions set aside by `cohort restore` and read-only workspaces (`aside/<UTC time>/`).
    public var aside: URL { url.appendingPathComponent("aside", isDirectory: true) }
    /// What an existing repository was before `cohort start --adopt`, and its index (`adoption.json`,
    /// `adoption-index`).
    public var adoptionJournal: URL { url.appendingPathComponent("adoption.json") }
    public var adoptionIndex: URL { url.appendingPathComponent("adoption-index") }
    /// A hosted collaboration's registration on a server (`registration.json`).
    public var registration: URL { url.appendingPathComponent("registration.json") }
}
