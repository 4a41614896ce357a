import CohortBase
import CohortNotices
import Foundation
import Synchronization

/// A webhook sink's memory, in its state folder: which notices wait for a retry and until when,
/// since when the endpoint fails, whether it is disabled (`state.json`, written atomically), and every
/// attempt (`attempts.jsonl`, appended).
final class WebhookState: Sendable {
    struct Pending: Codable {
        var attempts: Int
        var next: Date
    }

    struct Stored: Codable {
        var pending: [String: Pending] = [:]
        var failingSince: Date?
        var disabled: String?
    }

    let directory: URL
    private let stored: Mutex<Stored>

    init(directory: URL) throws {
        self.directory = directory
        try AtomicFile.createDirectory(directory, mode: 0o700)
        stored = Mutex(try Self.read(directory))
    }

    /// Reads `state.json` again: what the last process holding the sink's lock left.
    func reload() throws {
        let fresh = try Self.read(directory)
        stored.withLock { $0 = fresh }
    }

    /// The stored state; a fresh one when there is none yet. One that cannot be read is an error: going
    /// on without it would forget a disabled endpoint and every wait.
    private static func read(_ directory: URL) throws -> Stored {
        let url = directory.appendingPathComponent("state.json")
        guard FileManager.default.fileExists(atPath: url.path) else { return Stored() }
        let data = try AtomicFile.read(url, maxBytes: 16 << 20, what: "webhook state")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Stored.self, from: data)
        } catch {
            throw CohortError(.malformed, "the webhook state \(url.path) cannot be read: \(error.localizedDescription)",
                              hint: "remove it to start the sink afresh (its waits and a disabled endpoint are forgotten)")
        }
    }

    var disabledReason: String? { stored.withLock { $0.disabled } }

    func attempts(_ notice: String) -> Int { stored.withLock { $0.pending[notice]?.attempts ?? 0 } }

    /// Seconds until `notice` may be tried again, or nil when it may be tried now.
    func waiting(_ notice: String, now: Date) -> Double? {
        stored.withLock { state in
            guard let next = state.pending[notice]?.next, next > now else { return nil }
            return next.timeIntervalSince(now)
        }
    }

    func succeeded(_ notice: String) throws {
        // The common case changes nothing: no write on the delivery path then.
        guard stored.withLock({ $0.pending[notice] != nil || $0.failingSince != nil }) else { return }
        try update { $0.pending[notice] = nil; $0.failingSince = nil }
    }

    /// Notes a failure; returns since when the endpoint fails.
    func failed(now: Date) throws -> Date? {
        try update { $0.failingSince = $0.failingSince ?? now }
        return stored.withLock { $0.failingSince }
    }

    func wait(_ notice: String, attempts: Int, until next: Date) throws {
        try update { $0.pending[notice] = Pending(attempts: attempts, next: next) }
    }

    func forget(_ notice: String) throws {
        try update { $0.pending[notice] = nil }
    }

    func disable(_ reason: String) throws {
        try update { $0.disabled = reason }
    }

    /// Re-enables the endpoint and forgets every wait (what `cohort sinks replay` does first).
    func reset() throws {
        try update { $0 = Stored() }
    }

    private func update(_ change: (inout Stored) -> Void) throws {
        let data: Data = try stored.withLock { state in
            change(&state)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            return try encoder.encode(state)
        }
        try AtomicFile.write(data, to: directory.appendingPathComponent("state.json"), mode: 0o600, replacing: true)
    }

    /// Appends one attempt to `attempts.jsonl`: when, which message and notice, the URL, the status or
    /// the error, and how long it took. Secrets and signatures are never written.
    func record(id: String, notice: String, attempt: Int, url: String, status: UInt?, error: String?, elapsed: Duration, at time: Date) {
        var record: [String: Any] = [
            "time": ISO8601DateFormatter().string(from: time), "webhookId": id, "notice": notice, "attempt": attempt,
            "url": Self.redacted(url), "milliseconds": Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000),
        ]
        if let status { record["status"] = status }
        if let error { record["error"] = String(error.prefix(500)) }
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        try? AtomicFile.append(line, to: directory.appendingPathComponent("attempts.jsonl"))
    }

    /// The URL without user information or query, which may carry credentials.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(unparseable URL)" }
        if components.user != nil || components.password != nil { components.user = "redacted"; components.password = nil }
        if components.query != nil { components.query = "redacted" }
        return components.string ?? "(unparseable URL)"
    }
}
