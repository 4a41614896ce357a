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

    /// Takes the notices that arrived into the outbox and delivers them; nil when no sink is
    /// configured (the outbox keeps them for sinks added later).
    static func deliver(_ workspace: Workspace) async throws -> [NoticeOutbox.Report]? {
        let specs = try specs(workspace)
        do {
            let reports = try await workspace.deliverNotices(to: specs)
            return specs.isEmpty ? nil : reports
        } catch let violation as Violation {
            throw violation.asError
        }
    }
}
