import CohortBase
import Foundation

/// Reading what the user points at, and writing what they asked for, bounded and without clobbering.
enum Files {
    /// The bytes of `path` (or standard input for `-`), at most `maxBytes`.
    static func read(_ path: String, maxBytes: Int, what: String) throws -> Data {
        if path == "-" { return try AtomicFile.readStandardInput(maxBytes: maxBytes, what: what) }
        return try AtomicFile.read(URL(fileURLWithPath: path), maxBytes: maxBytes, what: what)
    }

    /// Writes `data` to `path`, or to standard output when `path` is nil. An existing file is
    /// replaced only with `force`.
    static func emit(_ data: Data, to path: String?, force: Bool) throws {
        var text = data
        if text.last != UInt8(ascii: "\n") { text.append(UInt8(ascii: "\n")) }
        guard let path else {
            Terminal.write(text)
            return
        }
        do {
            try AtomicFile.write(text, to: URL(fileURLWithPath: path), mode: 0o644, replacing: force)
        } catch let error as CohortError where !force && FileManager.default.fileExists(atPath: path) {
            throw CohortError(error.code, "\(path) already exists", hint: "pass --force to replace it, or choose another --output")
        }
    }
}
