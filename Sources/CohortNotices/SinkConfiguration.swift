import CohortBase
import Foundation
import TOMLKit

/// Which notices a sink receives when it is first seen.
public enum SinkHistory: String, Sendable, Equatable {
    /// Those that arrive from then on (the default: adding a sink never floods it).
    case new
    /// Every notice of the collaboration's history too.
    case all
}

/// One configured sink, read from a `config.toml` and checked by its type's factory, not yet built.
public struct SinkSpec: Sendable {
    /// The sink's `type`.
    public let type: String
    /// Unique among the sinks in effect; the outbox keeps the sink's place under it.
    public let name: String
    /// `history = "all"` asks for the notices from before the sink was added too.
    public let history: SinkHistory
    /// `file:line` of the sink's `[[sinks]]` header, for messages.
    public let location: String
    let configured: ConfiguredSink

    /// Builds the sink, its state in a folder of its own under `stateDirectory`.
    public func make(stateDirectory: URL) throws -> any NoticeSink {
        let sink = try configured.make(SinkContext(name: name, stateDirectory: stateDirectory.appendingPathComponent(NoticeOutbox.fileName(for: name), isDirectory: true)))
        guard sink.name == name else {
            throw CohortError(.malformed, "\(location): the \(type) sink was built named '\(sink.name)', not '\(name)'",
                              hint: "a sink's factory must build it with the name in its SinkContext")
        }
        return sink
    }
}

/// Reads the `[[sinks]]` of a `config.toml`. The schema is the same at every level (workspace
/// `.git/cohort/config.toml`, user `$COHORT_HOME/config.toml`, server `DATA/sinks.toml`): every sink
/// has a `type`, an optional `name` and an optional `history`; the other keys belong to its type's
/// factory. Unknown types, unknown keys and bad values are refused with the file, line and key named.
public enum SinkConfiguration {
    static let maxBytes = 1 << 20
    /// The keys every sink takes.
    public static let commonKeys: Set<String> = ["type", "name", "history"]

    /// The sinks of the file at `url`; none when there is no such file.
    public static func load(_ url: URL, registry: SinkRegistry) throws -> [SinkSpec] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let data = try AtomicFile.read(url, maxBytes: maxBytes, what: "configuration")
        guard let text = String(data: data, encoding: .utf8) else {
            throw CohortError(.malformed, "\(url.path) is not UTF-8 text")
        }
        return try parse(text, file: url, registry: registry)
    }

    /// The sinks of several files together (user, then workspace, say); names must stay unique.
    public static func load(_ urls: [URL], registry: SinkRegistry) throws -> [SinkSpec] {
        var specs: [SinkSpec] = []
        for url in urls {
            for spec in try load(url, registry: registry) {
                if let other = specs.first(where: { $0.name == spec.name }) {
                    throw CohortError(.malformed, "\(spec.location): a sink named '\(spec.name)' is already configured at \(other.location)",
                                      hint: "give one of them another name = \"…\"")
                }
                specs.append(spec)
            }
        }
        return specs
    }

    public static func parse(_ text: String, file: URL, registry: SinkRegistry) throws -> [SinkSpec] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw CohortError(.malformed, "\(file.path):\(error.source.begin.line): \(error.description)", hint: "fix the TOML syntax")
        }
        let lines = KeyLines(text)
        for key in table.keys where key != "sinks" {
            throw CohortError(.malformed, "\(file.path):\(lines.topLevel(key)): unknown key '\(key)'", hint: "a configuration holds [[sinks]] tables")
        }
        guard let sinks = table["sinks"] else { return [] }
        guard let array = sinks.array else {
            throw CohortError(.malformed, "\(file.path):\(lines.topLevel("sinks")): 'sinks' must be written [[sinks]]")
        }
        var specs: [SinkSpec] = []
        for index in 0..<array.count {
            let here = "\(file.path):\(lines.header(index))"
            guard let entry = array[index].table else {
                throw CohortError(.malformed, "\(here): each sink is a [[sinks]] table")
            }
            specs.append(try spec(entry, index: index, file: file, lines: lines, location: here, registry: registry))
        }
        return specs
    }

    private static func spec(_ entry: TOMLTable, index: Int, file: URL, lines: KeyLines, location: String, registry: SinkRegistry) throws -> SinkSpec {
        let known = registry.types.map { "\"\($0)\"" }.joined(separator: ", ")
        let untyped = SinkTable(entry: entry, lines: lines, index: index, file: file, location: location, type: "")
        guard let type = try untyped.string("type") else {
            throw CohortError(.malformed, "\(location): a sink needs type = \(known.isEmpty ? "\"…\"" : known)")
        }
        guard let factory = registry.factory(for: type) else {
            throw untyped.invalid("type", "unknown sink type '\(type)'", hint: registry.types.isEmpty ? "this program knows no sink types" : "use one of \(known)")
        }
        let table = SinkTable(entry: entry, lines: lines, index: index, file: file, location: location, type: type)
        let allowed = commonKeys.union(factory.keys)
        for key in entry.keys.sorted() where !allowed.contains(key) {
            throw table.invalid(key, "unknown key '\(key)' in a \(type) sink", hint: "\(type) sinks take: \(allowed.sorted().joined(separator: ", "))")
        }
        let history = try table.choice("history", of: ["new", "all"]).flatMap(SinkHistory.init(rawValue:)) ?? .new
        let configured = try factory.configure(table)
        let name = try table.string("name") ?? configured.defaultName
        return SinkSpec(type: type, name: name, history: history, location: location, configured: configured)
    }
}
