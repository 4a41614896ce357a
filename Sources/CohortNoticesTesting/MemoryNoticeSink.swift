import CohortNotices
import Foundation
import Synchronization

/// Keeps every notice it is given, in order: a sink for tests (the `CohortNoticesTesting` product).
public final class MemoryNoticeSink: NoticeSink {
    public let name: String
    private let received = Mutex<[NoticeDelivery]>([])

    public init(name: String = "memory") {
        self.name = name
    }

    public func deliver(_ delivery: NoticeDelivery) async throws {
        received.withLock { $0.append(delivery) }
    }

    /// What was delivered so far.
    public var deliveries: [NoticeDelivery] {
        received.withLock { $0 }
    }

    /// The notices delivered so far.
    public var notices: [Notice] {
        deliveries.map(\.notice)
    }
}

/// `type = "memory"`: every table of this type builds the one sink given (its name is the sink's).
public struct MemorySinkFactory: NoticeSinkFactory {
    public let type = "memory"
    public let keys: Set<String> = []
    public let sink: MemoryNoticeSink

    public init(_ sink: MemoryNoticeSink) {
        self.sink = sink
    }

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        let sink = self.sink
        return ConfiguredSink(defaultName: sink.name) { _ in sink }
    }
}

extension MemoryNoticeSink {
    /// The sink as configuration names it, for the calls that take configured sinks
    /// (`Workspace.deliverNotices(to:)`).
    public func spec(history: SinkHistory = .new) throws -> SinkSpec {
        let text = "[[sinks]]\ntype = \"memory\"\nhistory = \"\(history.rawValue)\"\n"
        let file = URL(fileURLWithPath: "/memory-sink.toml")
        return try SinkConfiguration.parse(text, file: file, registry: SinkRegistry([MemorySinkFactory(self)]))[0]
    }
}
