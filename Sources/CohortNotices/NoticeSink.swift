@_exported import struct CohortCollaboration.Envelope
@_exported import struct CohortCollaboration.Notice
@_exported import enum CohortCollaboration.NoticeType
import CohortBase
import CohortCollaboration
import Foundation

/// A destination for notices: a terminal, a file, a webhook, a program, or your own. It takes one
/// `NoticeDelivery` at a time (the notice, and what a receiver needs to check who wrote it), so fields
/// can be added without breaking sinks.
public protocol NoticeSink: Sendable {
    /// A stable name, unique among the configured sinks: the outbox keeps each sink's place under it.
    var name: String { get }
    /// Delivers one notice. Throw `SinkFailure.retryLater` when the destination may take it later,
    /// `SinkFailure.giveUp` when it never will; any other error counts as `retryLater`.
    func deliver(_ delivery: NoticeDelivery) async throws
    /// Flushes what the sink buffers and releases what it holds.
    func shutdown() async
}

extension NoticeSink {
    public func shutdown() async {}
}

/// A sink that remembers things between runs in its state folder (a webhook's retries, a disabled
/// endpoint). The outbox calls `reload()` holding the sink's lock, before the run's first delivery, so
/// the sink starts from what the last process to hold the lock left; `cohort sinks replay` calls
/// `reenable()` holding it too, before delivering again what was given up.
public protocol StatefulNoticeSink: NoticeSink {
    /// Reads the sink's state from its folder again.
    func reload() throws
    /// Forgets every wait and re-enables a disabled destination.
    func reenable() throws
}

/// One notice on its way to a sink: the notice, the actor's handle where the collaboration names
/// them, and the signed envelope the notice came in with the collaboration's salt, so that a
/// receiver can check who wrote it without trusting the transport.
///
/// Stored (in an outbox's log) as `{"notice", "actorHandle", "envelope", "salt"}`, the salt in base64.
public struct NoticeDelivery: Sendable, Codable {
    public var notice: Notice
    /// The actor's handle as the membership named them when the notice was taken in (nil when it
    /// names no one).
    public var actorHandle: String?
    /// The DSSE envelope the notice is stored in (nil only in outbox lines written before Cohort kept it).
    public var envelope: Envelope?
    /// The collaboration's 16-byte salt.
    public var salt: Data?

    public init(notice: Notice, actorHandle: String? = nil, envelope: Envelope? = nil, salt: Data? = nil) {
        self.notice = notice
        self.actorHandle = actorHandle
        self.envelope = envelope
        self.salt = salt
    }

    /// A notice read from the history as the sinks get it: its envelope, its actor's handle among
    /// `handles` (a membership's `everyHandle`), and the collaboration's salt.
    public init(_ signed: SignedNotice, handles: [String: String], salt: Data?) {
        self.init(notice: signed.notice, actorHandle: handles[signed.notice.actor], envelope: signed.envelope, salt: salt)
    }

    /// The form every shipped sink writes (a file line, an exec's standard input, a webhook's `data`):
    /// compact JSON with sorted keys and ISO 8601 times,
    /// `{"actor", "collaboration", "data", "id", "time", "type", "signed"}`, where `signed` is
    /// `{"envelope", "root", "salt", "scheme"}`: the envelope as stored in the repository, the root
    /// its proof must fold to (the actor), the collaboration's salt (32 hex digits, as
    /// `cohort id root --salt` takes it) and the proof's scheme.
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(Wire(self))) ?? Data()
    }

    /// One readable line naming the actor by handle where it is known:
    /// `2026-11-21T10:17:05Z content.edited bread.md by ann@example.com`.
    public var summary: String {
        notice.summary(handles: actorHandle.map { [notice.actor: $0] } ?? [:])
    }

    private struct Wire: Encodable {
        struct Signed: Encodable {
            var envelope: Envelope
            var root: String
            var salt: String?
            var scheme: String
        }

        var id: String
        var type: String
        var time: Date
        var collaboration: String
        var actor: String
        var data: [String: String]
        var signed: Signed?

        init(_ delivery: NoticeDelivery) {
            let notice = delivery.notice
            id = notice.id
            type = notice.type.rawValue
            time = notice.time
            collaboration = notice.collaboration
            actor = notice.actor
            data = notice.data
            signed = delivery.envelope.map {
                Signed(envelope: $0, root: notice.actor, salt: delivery.salt?.hexString, scheme: notice.signer.scheme.rawValue)
            }
        }
    }
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
