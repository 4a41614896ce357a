import CohortNotices
import CohortSinks
import CohortVerification
import CohortWorkspace

/// The sinks of a workspace (`$COHORT_HOME/config.toml`, then `.git/cohort/config.toml`), for
/// `cohort notices deliver`, `cohort sync` and `cohort watch`.
enum WorkspaceSinks {
    /// Delivers the notices that arrived since the last delivery; nil when no sink is configured.
    static func deliver(_ workspace: Workspace) async throws -> [NoticeOutbox.Report]? {
        let specs = try SinkConfiguration.load(workspace.configurationFiles)
        guard !specs.isEmpty else { return nil }
        let sinks = try specs.map { try SinkFactory.make($0, stateDirectory: workspace.sinkStateDirectory) }
        do {
            return try await workspace.deliverNotices(to: sinks)
        } catch let violation as Violation {
            throw violation.asError
        }
    }
}
