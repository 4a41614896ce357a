import CohortCollaboration

/// Delivers each notice to several sinks at once. A failure of one does not stop the others; the
/// failures are reported together, as one `SinkFailure` (retry later if any sink may take it later).
public struct MultiplexNoticeSink: NoticeSink {
    public let sinks: [any NoticeSink]
    public let name: String

    public init(_ sinks: [any NoticeSink], name: String = "multiplex") {
        self.sinks = sinks
        self.name = name
    }

    public func deliver(_ notice: Notice) async throws {
        try await deliver(notice, actorHandle: nil)
    }

    /// Every sink gets the handle too (a stdout sink inside names people as it does alone).
    public func deliver(_ notice: Notice, actorHandle: String?) async throws {
        let failures = await withTaskGroup(of: (String, Error?).self) { group in
            for sink in sinks {
                group.addTask {
                    do {
                        try await sink.deliver(notice, actorHandle: actorHandle)
                        return (sink.name, nil)
                    } catch {
                        return (sink.name, error)
                    }
                }
            }
            var failures: [(String, Error)] = []
            for await (name, error) in group {
                if let error { failures.append((name, error)) }
            }
            return failures
        }
        guard !failures.isEmpty else { return }
        let reason = failures.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
        let retry = failures.contains { ($0.1 as? SinkFailure)?.kind != .giveUp }
        throw retry ? SinkFailure.retryLater(reason) : SinkFailure.giveUp(reason)
    }

    public func shutdown() async {
        for sink in sinks { await sink.shutdown() }
    }
}
