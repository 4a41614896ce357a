import CohortBase
import CohortNotices
import Foundation
import CohortWorkspace

/// The sinks of a workspace (`$COHORT_HOME/config.toml`, then `.git/cohort/config.toml`), for
/// `cohort notices deliver`, `cohort sync` and `cohort watch`.
enum WorkspaceSinks {
    /// The sinks configured for `workspace`, of the types this program knows.
    static func specs(_ workspace: Workspace) throws -> [SinkSpec] {
        try SinkConfiguration.load(workspace.configurationFiles, registry: CohortCommandLine.sinks)
    }

    /// Delivers the notices that arrived since the last delivery; nil when no sink is configured.
    static func deliver(_ workspace: Workspace) async throws -> [NoticeOutbox.Report]? {
        let specs = try specs(workspace)
        let reports = try await workspace.deliverNotices(to: specs)
        return specs.isEmpty ? nil : reports
    }

    /// `cohort sinks replay NAME`, the name quoted for a shell where it needs it (an exec sink's
    /// default name holds its command line).
    static func replayCommand(_ name: String, repository: String? = nil) -> String {
        "cohort sinks replay " + quoted(name) + (repository.map { " --repository " + quoted($0) } ?? "")
    }

    /// `text` as one shell word.
    private static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_.:/@+=,".unicodeScalars.contains($0) }
        return plain ? text : ShellWord.quoted(text)
    }
}

extension NoticeOutbox.Report {
    /// What every summary says after "N delivered": the notices given up on, with the command that
    /// tries them again, and those waiting, with why the sink stopped. `repository`: a hooked
    /// repository's git directory, for the hook's own summary.
    func trouble(repository: String? = nil) -> String {
        let failures = (repository ?? ".git") + "/cohort/outbox/failures.jsonl"
        return (gaveUp > 0 ? ", \(gaveUp) given up (see \(failures); `\(WorkspaceSinks.replayCommand(sink, repository: repository))` tries again)" : "")
            + (stoppedBecause.map { ", \(pending) waiting: \($0)" } ?? "")
    }
}
