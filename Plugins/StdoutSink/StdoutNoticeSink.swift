import CohortBase
import CohortNotices
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes notices to standard output: one readable line each, or JSON Lines with `format = "json"`.
/// A closed pipe (`cohort notices deliver | head -1`) never kills the process: the notice is given
/// up on with that reason.
public struct StdoutNoticeSink: NoticeSink {
    public enum Format: String, Sendable {
        case text
        case json
    }

    public let name: String
    public let format: Format
    private let descriptor: Int32

    public init(name: String = "stdout", format: Format = .text, descriptor: Int32 = STDOUT_FILENO) {
        self.name = name
        self.format = format
        self.descriptor = descriptor
        // A closed pipe must be an error to handle, not a signal that ends the process.
        signal(SIGPIPE, SIG_IGN)
    }

    /// The text line names the actor by handle when it is known (`… by ann@example.com`).
    public func deliver(_ delivery: NoticeDelivery) async throws {
        var line = format == .json ? delivery.json() : Data(delivery.summary.utf8)
        line.append(UInt8(ascii: "\n"))
        try LineWriter.write(line, to: descriptor, what: "standard output")
    }
}

/// Writes one whole line with as few `write` calls as the kernel allows, retrying on EINTR.
enum LineWriter {
    static func write(_ line: Data, to descriptor: Int32, what: String) throws {
        let failed = AtomicFile.writeAll(line, to: descriptor)
        if failed == EPIPE || failed == EBADF { throw SinkFailure.giveUp("\(what) is closed") }
        guard failed == 0 else { throw SinkFailure.retryLater("cannot write to \(what): \(String(cString: strerror(failed)))") }
    }
}

/// `type = "stdout"`: `format = "text"` (the default) or `"json"`.
public struct StdoutSinkFactory: NoticeSinkFactory {
    public let type = "stdout"
    public let keys: Set<String> = ["format"]

    public init() {}

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        let format = try table.choice("format", of: ["text", "json"]).flatMap(StdoutNoticeSink.Format.init(rawValue:)) ?? .text
        return ConfiguredSink(defaultName: "stdout") { StdoutNoticeSink(name: $0.name, format: format) }
    }
}
