import CohortBase
import Foundation
import TOMLKit

/// One `[[sinks]]` table of a configuration file, as its sink type's factory reads it: typed values,
/// and errors that name the file, the line and the key (`…/config.toml:7: timeout must be …`).
public struct SinkTable {
    let entry: TOMLTable
    let lines: KeyLines
    let index: Int
    /// The configuration file.
    public let file: URL
    /// `file:line` of the table's `[[sinks]]` header.
    public let location: String
    /// The sink's `type`.
    public let type: String

    /// The folder of the configuration file: relative paths are read from there.
    public var folder: URL { file.deletingLastPathComponent() }

    /// `file:line` of `key` (of the header when the key is absent).
    public func location(of key: String) -> String {
        "\(file.path):\(lines.key(key, in: index))"
    }

    /// An error about the value of `key`, at its line: `E_MALFORMED: <file>:<line>: <message>`.
    public func invalid(_ key: String, _ message: String, hint: String? = nil) -> CohortError {
        CohortError(.malformed, "\(location(of: key)): \(message)", hint: hint)
    }

    /// An error for a key the type needs, at the table's header: `a file sink needs path = "…"`.
    public func missing(_ example: String) -> CohortError {
        let article = "aeiou".contains(type.first ?? "x") ? "an" : "a"
        return CohortError(.malformed, "\(location): \(article) \(type) sink needs \(example)")
    }

    /// A non-empty string, or nil when the key is absent.
    public func string(_ key: String) throws -> String? {
        guard let value = entry[key] else { return nil }
        guard let text = value.string, !text.isEmpty else { throw invalid(key, "'\(key)' must be a non-empty string") }
        return text
    }

    /// One of `choices`, or nil when the key is absent.
    public func choice(_ key: String, of choices: [String]) throws -> String? {
        guard let text = try string(key) else { return nil }
        guard choices.contains(text) else {
            throw invalid(key, "\(key) must be " + choices.map { "\"\($0)\"" }.joined(separator: " or "))
        }
        return text
    }

    /// A whole number within `range`, or nil when the key is absent; `unit` names it in the message
    /// (`seconds`).
    public func integer(_ key: String, in range: ClosedRange<Int>, unit: String? = nil) throws -> Int? {
        guard let value = entry[key] else { return nil }
        guard let number = value.int, range.contains(number) else {
            throw invalid(key, "\(key) must be a whole number\(unit.map { " of \($0)" } ?? "") from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A list of non-empty strings (at least one), or nil when the key is absent; with `single`, one
    /// string alone is read as a list of one.
    public func strings(_ key: String, single: Bool = false, maxCount: Int = 256) throws -> [String]? {
        guard let value = entry[key] else { return nil }
        if single, let text = value.string, !text.isEmpty { return [text] }
        guard let array = value.array, (1...maxCount).contains(array.count) else {
            throw invalid(key, "'\(key)' must be a list of 1 to \(maxCount) non-empty strings")
        }
        let texts = array.compactMap(\.string)
        guard texts.count == array.count, texts.allSatisfy({ !$0.isEmpty }) else {
            throw invalid(key, "'\(key)' must be a list of 1 to \(maxCount) non-empty strings")
        }
        return texts
    }

    /// A list of whole numbers within `range` (at most `maxCount`), or nil when the key is absent.
    public func integers(_ key: String, in range: ClosedRange<Int>, maxCount: Int, unit: String? = nil) throws -> [Int]? {
        guard let value = entry[key] else { return nil }
        let numbers = value.array?.compactMap(\.int) ?? []
        guard let array = value.array, array.count <= maxCount, numbers.count == array.count, numbers.allSatisfy(range.contains) else {
            throw invalid(key, "\(key) must be a list of at most \(maxCount) whole numbers\(unit.map { " of \($0)" } ?? "") from \(range.lowerBound) to \(range.upperBound)")
        }
        return numbers
    }

    /// A path, relative to the configuration file's folder unless absolute, or nil when the key is absent.
    public func path(_ key: String) throws -> URL? {
        try string(key).map { URL(fileURLWithPath: $0, relativeTo: folder).standardizedFileURL }
    }
}

/// Where keys are in the text, for messages: TOML parsers report values, not their lines.
struct KeyLines: Sendable {
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
