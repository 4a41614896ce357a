import CohortNotices
import Foundation

/// Keeps a Markdown digest of a collaboration: one bullet per notice, appended to a file as it
/// arrives (`- 2026-11-24T10:17:05Z content.edited bread.md by ann@example.com`), optionally only
/// for some types of notice.
public struct DigestNoticeSink: NoticeSink {
    public let name: String
    public let path: URL
    /// The notice types kept; nil keeps every one.
    public let types: Set<NoticeType>?

    public init(name: String, path: URL, types: Set<NoticeType>? = nil) {
        self.name = name
        self.path = path
        self.types = types
    }

    public func deliver(_ delivery: NoticeDelivery) async throws {
        // A notice this digest does not keep counts as delivered: there is nothing to retry.
        if let types, !types.contains(delivery.notice.type) { return }
        do {
            if !FileManager.default.fileExists(atPath: path.path) {
                try Data("# Digest\n\n".utf8).write(to: path, options: .atomic)
            }
            let file = try FileHandle(forWritingTo: path)
            defer { try? file.close() }
            try file.seekToEnd()
            try file.write(contentsOf: Data("- \(delivery.summary)\n".utf8))
            // Returning says "delivered": the line must be on disk first.
            try file.synchronize()
        } catch {
            // The outbox keeps the notice and tries again at the next delivery.
            throw SinkFailure.retryLater("cannot write \(path.path): \(error.localizedDescription)")
        }
    }
}

/// `type = "digest"`: `path` (the Markdown file, relative to the configuration file's folder) and
/// `types` (optional: the notice types to keep, e.g. `["content.edited", "mention"]`).
public struct DigestSinkFactory: NoticeSinkFactory {
    public let type = "digest"
    public let keys: Set<String> = ["path", "types"]

    public init() {}

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        guard let path = try table.path("path") else { throw table.missing("path = \"digest.md\"") }
        var types: Set<NoticeType>?
        if let names = try table.strings("types") {
            types = Set(try names.map { name in
                guard let type = NoticeType(rawValue: name) else {
                    throw table.invalid("types", "'\(name)' is not a notice type",
                                        hint: "use \(NoticeType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return type
            })
        }
        let kept = types
        return ConfiguredSink(defaultName: "digest:\(path.path)") { context in
            DigestNoticeSink(name: context.name, path: path, types: kept)
        }
    }
}
