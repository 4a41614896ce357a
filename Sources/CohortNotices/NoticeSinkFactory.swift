import Foundation

/// Teaches Cohort one `type` of sink: the keys its `[[sinks]]` tables take, how they are checked, and
/// how the sink is built. The shipped sinks and yours are registered alike, by passing their factories
/// to `CohortCommandLine.main(sinks:)` (or a `SinkRegistry` of them to the library calls that load
/// configuration).
public protocol NoticeSinkFactory: Sendable {
    /// What `type = "…"` names: lowercase letters, digits and `-`.
    var type: String { get }
    /// The keys a table of this type takes besides `type`, `name` and `history` (which every sink
    /// takes); any other key is refused with its file and line.
    var keys: Set<String> { get }
    /// Reads and checks one table of this type, throwing `table.invalid(…)` or `table.missing(…)`
    /// for what is wrong. It must not touch anything outside (`cohort sinks list` and `cohort status`
    /// call it too): the returned `ConfiguredSink` builds the sink when it is needed.
    func configure(_ table: SinkTable) throws -> ConfiguredSink
}

/// A sink read from its table and checked, not yet built.
public struct ConfiguredSink: Sendable {
    /// The name when the table gives none, derived from what it points at (`file:/srv/notices.jsonl`).
    public var defaultName: String
    /// Builds the sink.
    public var make: @Sendable (SinkContext) throws -> any NoticeSink

    public init(defaultName: String, make: @escaping @Sendable (SinkContext) throws -> any NoticeSink) {
        self.defaultName = defaultName
        self.make = make
    }
}

/// What a sink is built with.
public struct SinkContext: Sendable {
    /// The sink's name, as configured or by default.
    public let name: String
    /// A folder for what the sink remembers between runs, its own (the sink creates it, 0700, when it
    /// needs it). Under `.git/cohort/sinks/` in a workspace, `<git dir>/cohort/sinks/` on a hooked
    /// repository, `DATA/server/sinks/` for a server's own sinks.
    public let stateDirectory: URL

    public init(name: String, stateDirectory: URL) {
        self.name = name
        self.stateDirectory = stateDirectory
    }
}

/// The sink types a process knows, by `type`.
public struct SinkRegistry: Sendable {
    private let factories: [String: any NoticeSinkFactory]

    /// A registry of `factories`; a type named twice keeps the last (so a program may replace a
    /// shipped type with its own).
    public init(_ factories: [any NoticeSinkFactory]) {
        var byType: [String: any NoticeSinkFactory] = [:]
        for factory in factories { byType[factory.type] = factory }
        self.factories = byType
    }

    public func factory(for type: String) -> (any NoticeSinkFactory)? {
        factories[type]
    }

    /// The known types, sorted.
    public var types: [String] { factories.keys.sorted() }
}
