import CohortCollaboration
import CohortNotices
import Foundation
import Synchronization

/// An example of a sink written in Swift (see Docs/Plugins.md): it keeps a Markdown digest, one
/// bullet per notice, and writes it out when the sink shuts down.
public final class DigestNoticeSink: NoticeSink {
    public let name: String
    public let path: URL
    private let lines = Mutex<[String]>([])

    public init(name: String = "digest", path: URL) {
        self.name = name
        self.path = path
    }

    public func deliver(_ notice: Notice) async throws {
        let what = notice.data["path"].map { "`\($0)`" } ?? ""
        lines.withLock { $0.append("- \(notice.type.rawValue) \(what)".trimmingCharacters(in: .whitespaces)) }
    }

    public func shutdown() async {
        let text = lines.withLock { lines in
            defer { lines.removeAll() }
            return lines.isEmpty ? nil : "# Digest\n\n" + lines.joined(separator: "\n") + "\n"
        }
        if let text { try? Data(text.utf8).write(to: path, options: .atomic) }
    }
}
