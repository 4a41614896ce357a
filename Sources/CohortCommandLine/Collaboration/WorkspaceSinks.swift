import CohortNotices
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
}
