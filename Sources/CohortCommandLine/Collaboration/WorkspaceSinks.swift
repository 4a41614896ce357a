import CohortNotices
import CohortVerification
import CohortWorkspace

/// The sinks of a workspace (`$COHORT_HOME/config.toml`, then `.git/cohort/config.toml`), for
/// `cohort notices deliver`, `cohort sync` and `cohort watch`.
enum WorkspaceSinks {
    /// The sinks configured for `workspace`, of the types this program knows.
    static func specs(_ workspace: Workspace) throws -> [SinkSpec] {
        try SinkConfiguration.load(workspace.configurationFiles, registry: CohortCommandLine.sinks)
    }

    /// Delivers the notices that arrived since the last delivery; nil when no sink is configured
    /// (the notices so far then count as seen: a sink added later starts after them).
    static func deliver(_ workspace: Workspace) async throws -> [NoticeOutbox.Report]? {
        let specs = try specs(workspace)
        guard !specs.isEmpty else {
            try workspace.markNoticesTakenIn(upTo: workspace.head().commit)
            return nil
        }
        do {
            return try await workspace.deliverNotices(to: specs)
        } catch let violation as Violation {
            throw violation.asError
        }
    }
}
