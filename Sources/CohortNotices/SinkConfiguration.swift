import CohortIdentity
import Foundation
import TOMLKit

/// One configured sink, as read from a `config.toml`, before it is built.
public struct SinkSpec: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case stdout, file, webhook, exec
    }

    public let kind: Kind
    /// Unique among the sinks in effect; the outbox keeps the sink's place under it.
    public var name: String
    /// stdout: `text` or `json`.
    public var format: String?
    /// file: where notices are appended (relative paths are relative to the config file's folder).
    public var path: URL?
    /// exec: the program and its arguments.
    public var command: [String]?
    /// exec and webhook: seconds a delivery (a request) may take.
    public var timeout: Int?
    /// webhook: the endpoint (http or https).
    public var url: String?
    /// webhook: the signing secrets (`whsec_…`), several while rotating.
    public var secrets: [String]?
    /// webhook: seconds before each retry.
    public var retrySchedule: [Int]?
    /// webhook: seconds of failing before the endpoint is disabled.
    public var disableAfter: Int?
    /// webhook: the longest `Retry-After` honoured, in seconds.
    public var maxRetryAfter: Int?
    /// exec: where the program runs (default: the config file's folder).
    public var directory: URL?
    /// `file:line` of the sink's `[[sinks]]` header, for messages.
    public let location: String
}

/// Reads the `[[sinks]]` of a `config.toml`. The schema is the same at every level (workspace
/// `.git/cohort/config.toml`, user `$COHORT_HOME/config.toml`, server `<data>/config.toml`); unknown keys
/// and bad values are refused with the file, line and key named.
public enum SinkConfiguration {
    static let maxBytes = 1 << 20
    static let keys: [SinkSpec.Kind: Set<String>] = [
        .stdout: ["type", "name", "format"],
        .file: ["type", "name", "path"],
        .exec: ["type", "name", "command", "timeout", "directory"],
        .webhook: ["type", "name", "url", "secret", "timeout", "retry_schedule", "disable_after", "max_retry_after"],
    ]

    /// The sinks of the file at `url`; none when there is no such file.
    public static func load(_ url: URL) throws -> [SinkSpec] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let data = try AtomicFile.read(url, maxBytes: maxBytes, what: "configuration")
        guard let text = String(data: data, encoding: .utf8) else {
            throw CohortError(.malformed, "\(url.path) is not UTF-8 text")
        }
        return try parse(text, file: url)
    }

    /// The sinks of several files together (user, then workspace, say); names must stay unique.
    public static func load(_ urls: [URL]) throws -> [SinkSpec] {
        var specs: [SinkSpec] = []
        for url in urls {
            for spec in try load(url) {
                if let other = specs.first(where: { $0.name == spec.name }) {
                    throw CohortError(.malformed, "\(spec.location): a sink named '\(spec.name)' is already configured at \(other.location)",
                                      hint: "give one of them another name = \"…\"")
                }
                specs.append(spec)
            }
        }
        return specs
    }

    public static func parse(_ text: String, file: URL) throws -> [SinkSpec] {
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
            specs.append(try spec(entry, index: index, file: file, lines: lines, location: here))
        }
        return specs
    }

    private static func spec(_ entry: TOMLTable, index: Int, file: URL, lines: KeyLines, location: String) throws -> SinkSpec {
        func at(_ key: String) -> String { "\(file.path):\(lines.key(key, in: index))" }
        func seconds(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let value = entry[key] else { return nil }
            guard let number = value.int, range.contains(number) else {
                throw CohortError(.malformed, "\(at(key)): \(key) must be a whole number of seconds from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        func string(_ key: String) throws -> String? {
            guard let value = entry[key] else { return nil }
            guard let text = value.string, !text.isEmpty else {
                throw CohortError(.malformed, "\(at(key)): '\(key)' must be a non-empty string")
            }
            return text
        }
        guard let typeName = try string("type") else {
            throw CohortError(.malformed, "\(location): a sink needs type = \"stdout\", \"file\", \"webhook\" or \"exec\"")
        }
        guard let kind = SinkSpec.Kind(rawValue: typeName) else {
            throw CohortError(.malformed, "\(at("type")): unknown sink type '\(typeName)'", hint: "use stdout, file, webhook or exec")
        }
        let allowed = keys[kind] ?? []
        for key in entry.keys where !allowed.contains(key) {
            throw CohortError(.malformed, "\(at(key)): unknown key '\(key)' in a \(kind.rawValue) sink",
                              hint: "\(kind.rawValue) sinks take: \(allowed.sorted().joined(separator: ", "))")
        }
        let folder = file.deletingLastPathComponent()
        var spec = SinkSpec(kind: kind, name: try string("name") ?? "", location: location)
        switch kind {
        case .stdout:
            spec.format = try string("format") ?? "text"
            guard spec.format == "text" || spec.format == "json" else {
                throw CohortError(.malformed, "\(at("format")): format must be \"text\" or \"json\"")
            }
        case .file:
            guard let path = try string("path") else {
                throw CohortError(.malformed, "\(location): a file sink needs path = \"…\"")
            }
            spec.path = URL(fileURLWithPath: path, relativeTo: folder).standardizedFileURL
        case .exec:
            guard let value = entry["command"], let array = value.array, array.count > 0,
                  let command = Optional(array.compactMap(\.string)), command.count == array.count, command.allSatisfy({ !$0.isEmpty })
            else {
                throw CohortError(.malformed, "\(entry["command"] == nil ? location : at("command")): an exec sink needs command = [\"program\", \"argument\", …]")
            }
            spec.command = command
            if let value = entry["timeout"] {
                guard let seconds = value.int, (1...3600).contains(seconds) else {
                    throw CohortError(.malformed, "\(at("timeout")): timeout must be a whole number of seconds from 1 to 3600")
                }
                spec.timeout = seconds
            }
            spec.directory = try string("directory").map { URL(fileURLWithPath: $0, relativeTo: folder).standardizedFileURL } ?? folder
        case .webhook:
            guard let url = try string("url") else {
                throw CohortError(.malformed, "\(location): a webhook sink needs url = \"https://…\"")
            }
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                throw CohortError(.malformed, "\(at("url")): url must be an http or https URL")
            }
            spec.url = url
            let secrets: [String]
            if let single = entry["secret"]?.string {
                secrets = [single]
            } else if let array = entry["secret"]?.array, array.count > 0, array.allSatisfy({ $0.string != nil }) {
                secrets = array.compactMap(\.string)
            } else {
                throw CohortError(.malformed, "\(entry["secret"] == nil ? location : at("secret")): a webhook sink needs secret = \"whsec_…\" (or a list while rotating)")
            }
            for secret in secrets {
                guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))), (24...64).contains(bytes.count) else {
                    throw CohortError(.malformed, "\(at("secret")): a secret is whsec_ followed by base64 of 24 to 64 bytes")
                }
            }
            spec.secrets = secrets
            spec.timeout = try seconds("timeout", in: 1...300)
            if let value = entry["retry_schedule"] {
                guard let array = value.array, array.count <= 32, let schedule = Optional(array.compactMap(\.int)),
                      schedule.count == array.count, schedule.allSatisfy({ (0...86400).contains($0) })
                else {
                    throw CohortError(.malformed, "\(at("retry_schedule")): retry_schedule must be a list of at most 32 waits, in seconds from 0 to 86400")
                }
                spec.retrySchedule = schedule
            }
            spec.disableAfter = try seconds("disable_after", in: 60...(90 * 86400))
            spec.maxRetryAfter = try seconds("max_retry_after", in: 1...86400)
        }
        let name = spec.name.isEmpty ? defaultName(spec) : spec.name
        var named = spec
        named.name = name
        return named
    }

    private static func defaultName(_ spec: SinkSpec) -> String {
        switch spec.kind {
        case .stdout: "stdout"
        case .file: "file:\(spec.path?.path ?? "")"
        case .exec: "exec:\((spec.command ?? []).joined(separator: " "))"
        case .webhook: "webhook:\(spec.url ?? "")"
        }
    }
}

/// Where keys are in the text, for messages: TOML parsers report values, not their lines.
private struct KeyLines {
    private var headers: [Int] = []
    private var keys: [[String: Int]] = []
    private var top: [String: Int] = [:]

    init(_ text: String) {
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[[") && line.replacingOccurrences(of: " ", with: "").hasPrefix("[[sinks]]") {
                headers.append(offset + 1)
                keys.append([:])
            } else if let equals = line.firstIndex(of: "="), !line.hasPrefix("#"), !line.hasPrefix("[") {
                let key = line[..<equals].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
                if keys.isEmpty {
                    top[key] = top[key] ?? offset + 1
                } else {
                    keys[keys.count - 1][key] = keys[keys.count - 1][key] ?? offset + 1
                }
            } else if line.hasPrefix("["), keys.isEmpty || !line.hasPrefix("[[sinks") {
                let name = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                top[name] = top[name] ?? offset + 1
            }
        }
    }

    func header(_ index: Int) -> Int { index < headers.count ? headers[index] : 1 }
    func key(_ key: String, in index: Int) -> Int { (index < keys.count ? keys[index][key] : nil) ?? header(index) }
    func topLevel(_ key: String) -> Int { top[key] ?? 1 }
}
