import CohortCollaboration
import Synchronization

/// Keeps every notice it is given, in order: a sink for tests.
public final class MemoryNoticeSink: NoticeSink {
    public let name: String
    private let received = Mutex<[Notice]>([])

    public init(name: String = "memory") {
        self.name = name
    }

    public func deliver(_ notice: Notice) async throws {
        received.withLock { $0.append(notice) }
    }

    /// What was delivered so far.
    public var notices: [Notice] {
        received.withLock { $0 }
    }
}
