import CohortNotices
import ExecSink
import FileSink
import StdoutSink
import WebhookSink

/// The sink types Cohort ships, registered as any other program's are.
public enum ShippedSinks {
    /// `stdout`, `file`, `webhook` and `exec`.
    public static let factories: [any NoticeSinkFactory] = [
        StdoutSinkFactory(), FileSinkFactory(), WebhookSinkFactory(), ExecSinkFactory(),
    ]

    /// A registry of the shipped types alone.
    public static var registry: SinkRegistry { SinkRegistry(factories) }
}
