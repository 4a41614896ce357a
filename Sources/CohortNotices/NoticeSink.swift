import CohortCollaboration
import Foundation

/// A destination for notices: a terminal, a file, a webhook, a program, or your own. It takes one
/// `Notice` value at a time, so fields can be added to notices without breaking sinks.
public protocol NoticeSink: Sendable {
    /// A stable name, unique among the configured sinks: the outbox keeps each sink's place under it.
    var name: String { get }
    /// Delivers one notice. Throw `SinkFailure.retryLater` when the destination may take it later,
    /// `SinkFailure.giveUp` when it never will; any other error counts as `retryLater`.
    func deliver(_ notice: Notice) async throws
    /// Delivers one notice whose actor the collaboration names `actorHandle` (nil when it does not):
    /// sinks that show people implement it; by default the notice alone is delivered.
    func deliver(_ notice: Notice, actorHandle: String?) async throws
    /// Flushes what the sink buffers and releases what it holds.
    func shutdown() async
}

extension NoticeSink {
    public func deliver(_ notice: Notice, actorHandle: String?) async throws {
        try await deliver(notice)
    }

    public func shutdown() async {}
}

/// How a delivery failed.
public struct SinkFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Try this notice again later, no sooner than `after` when given.
        case retryLater(after: Duration?)
        /// This notice will never be taken; move on (the reason is recorded).
        case giveUp
    }

    public let kind: Kind
    public let reason: String

    public static func retryLater(_ reason: String, after: Duration? = nil) -> SinkFailure {
        SinkFailure(kind: .retryLater(after: after), reason: reason)
    }

    public static func giveUp(_ reason: String) -> SinkFailure {
        SinkFailure(kind: .giveUp, reason: reason)
    }

    public var description: String { reason }
}

extension Notice {
    /// The form sinks write: `{"actor", "collaboration", "data", "id", "time", "type"}`, compact JSON with
    /// sorted keys and an ISO 8601 time; the signer's proof stays in the repository.
    public func sinkJSON() -> Data {
        struct Wire: Encodable {
            var id: String
            var type: String
            var time: Date
            var collaboration: String
            var actor: String
            var data: [String: String]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let wire = Wire(id: id, type: type.rawValue, time: time, collaboration: collaboration, actor: actor, data: data)
        return (try? encoder.encode(wire)) ?? Data()
    }

    /// One readable line: `2026-11-21T10:17:05Z content.edited bread.md by 98abb421…`.
    public var summary: String { summary(handles: [:]) }

    /// The readable line with the actor's handle where `handles` (root → handle) knows it:
    /// `… content.edited bread.md by ann@example.com`.
    public func summary(handles: [String: String]) -> String {
        let formatter = ISO8601DateFormatter()
        var parts = [formatter.string(from: time), type.rawValue]
        if let old = data["oldPath"], let path = data["path"] {
            parts.append("\(old) -> \(path)")
        } else if let path = data["path"] {
            parts.append(path)
        }
        if let handle = data["handle"], !handle.isEmpty { parts.append("(\(handle))") }
        if let text = data["text"] { parts.append("\"\(text.replacingOccurrences(of: "\n", with: " "))\"") }
        parts.append("by \(handles[actor] ?? String(actor.prefix(12)))")
        return parts.joined(separator: " ")
    }
}
