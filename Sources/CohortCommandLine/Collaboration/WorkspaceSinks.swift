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
    static func replayCommand(_ name: String) -> String {
        let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_.:/@+=,".unicodeScalars.contains($0) }
        return "cohort sinks replay " + (plain ? name : "'" + name.replacingOccurrences(of: "'", with: "'\\''") + "'")
    }
}

extension NoticeOutbox.Report {
    /// What every summary says after "N delivered": the notices given up on, with the command that
    /// tries them again, and those waiting, with why the sink stopped.
    var trouble: String {
        (gaveUp > 0 ? ", \(gaveUp) given up (see .git/cohort/outbox/failures.jsonl; `\(WorkspaceSinks.replayCommand(sink))` tries again)" : "")
            + (stoppedBecause.map { ", \(pending) waiting: \($0)" } ?? "")
    }
}
