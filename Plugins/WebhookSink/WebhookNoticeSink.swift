import AsyncHTTPClient
import CohortBase
import CohortNotices
import Foundation
import NIOCore
import NIOHTTP1

/// Delivers notices to an HTTP endpoint as Standard Webhooks v1: body `{"type", "timestamp", "data"}`,
/// headers `webhook-id` (stable across retries), `webhook-timestamp` (per attempt) and
/// `webhook-signature` (one `v1,` signature per secret, space-separated while secrets rotate).
///
/// Only a 2xx answer delivers; redirects are not followed; 410 disables the endpoint; 429, 502, 503
/// and 504 wait for `Retry-After` (clamped) or the schedule; anything else (other statuses, refused
/// connections, timeouts) waits for the next step of the retry schedule, with jitter. A notice that
/// runs out of retries is given up; an endpoint that has failed for longer than `disableAfter` is
/// disabled. Every attempt is recorded in `attempts.jsonl` in the sink's state folder (without
/// secrets); the retry state lives in `state.json` there.
public final class WebhookNoticeSink: StatefulNoticeSink {
    public struct Settings: Sendable {
        public var url: String
        public var secrets: [WebhookSecret]
        /// Seconds one request may take.
        public var timeout: Int = 10
        /// Seconds to wait before each retry; the notice is given up after the last.
        public var retrySchedule: [Int] = [5, 300, 1800, 7200, 18000, 36000, 36000]
        /// Seconds an endpoint may fail without a success before it is disabled.
        public var disableAfter: Int = 5 * 24 * 3600
        /// The longest `Retry-After` honoured, in seconds.
        public var maxRetryAfter: Int = 3600

        public init(url: String, secrets: [WebhookSecret]) {
            self.url = url
            self.secrets = secrets
        }
    }

    public let name: String
    public let settings: Settings
    private let state: WebhookState
    private let client: HTTPClient

    public init(name: String, settings: Settings, stateDirectory: URL) throws {
        self.name = name
        self.settings = settings
        state = try WebhookState(directory: stateDirectory)
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(Int64(settings.timeout)), read: .seconds(Int64(settings.timeout)))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func deliver(_ delivery: NoticeDelivery) async throws {
        let notice = delivery.notice
        let now = Date()
        if let reason = state.disabledReason {
            throw SinkFailure.giveUp("\(name) is disabled: \(reason)")
        }
        if let wait = state.waiting(notice.id, now: now) {
            throw SinkFailure.retryLater("\(name): next attempt for \(notice.id) in \(Int(wait))s", after: .seconds(wait))
        }
        let id = "msg_\(notice.id)"
        let timestamp = Int(now.timeIntervalSince1970)
        let body = Self.body(for: delivery)
        var request = HTTPClientRequest(url: settings.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "cohort-webhook/1")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: settings.secrets.map { $0.signature(id: id, timestamp: timestamp, body: body) }.joined(separator: " "))
        request.body = .bytes(ByteBuffer(bytes: body))

        let started = ContinuousClock.now
        var status: UInt?
        var retryAfter: String?
        var problem: String?
        do {
            let response = try await client.execute(request, timeout: .seconds(Int64(settings.timeout)))
            status = response.status.code
            retryAfter = response.headers.first(name: "retry-after")
            _ = try? await response.body.collect(upTo: 64 << 10)
        } catch {
            problem = "\(error)"
        }
        let elapsed = started.duration(to: .now)
        let attempt = state.attempts(notice.id) + 1
        state.record(id: id, notice: notice.id, attempt: attempt, url: settings.url, status: status, error: problem, elapsed: elapsed, at: now)

        if let status, (200...299).contains(status) {
            try state.succeeded(notice.id)
            return
        }
        let what = status.map { "HTTP \($0)" } ?? (problem ?? "no answer")
        if status == 410 {
            try state.disable("the endpoint answered 410 Gone at \(ISO8601DateFormatter().string(from: now))")
            throw SinkFailure.giveUp("\(name): 410 Gone; the endpoint is disabled")
        }
        if let since = try state.failed(now: now), now.timeIntervalSince(since) > Double(settings.disableAfter) {
            try state.disable("failing since \(ISO8601DateFormatter().string(from: since)) (\(what))")
            throw SinkFailure.giveUp("\(name): failing for longer than \(settings.disableAfter)s; the endpoint is disabled")
        }
        guard attempt <= settings.retrySchedule.count else {
            try state.forget(notice.id)
            throw SinkFailure.giveUp("\(name): gave up after \(attempt) attempts; last: \(what)")
        }
        var delay = Double(settings.retrySchedule[attempt - 1]) * Double.random(in: 0.8...1.2)
        if let status, [429, 502, 503, 504].contains(status), let wanted = Self.retryAfter(retryAfter, now: now) {
            delay = min(max(wanted, 0), Double(settings.maxRetryAfter))
        }
        try state.wait(notice.id, attempts: attempt, until: now.addingTimeInterval(delay))
        throw SinkFailure.retryLater("\(name): \(what); retry \(attempt) in \(Int(delay))s", after: .seconds(delay))
    }

    public func shutdown() async {
        try? await client.shutdown()
    }

    /// Re-enables a disabled endpoint and forgets every wait (before replaying what was given up).
    public func reenable() throws {
        try state.reset()
    }

    /// Reads the retry state again (the outbox calls it holding the sink's lock).
    public func reload() throws {
        try state.reload()
    }

    /// `{"data": <the notice>, "timestamp": <its time>, "type": <its type>}`, compact with sorted keys;
    /// `data` is the delivery's JSON, its signed envelope included.
    static func body(for delivery: NoticeDelivery) -> Data {
        let notice = delivery.notice
        let object = (try? JSONSerialization.jsonObject(with: delivery.json())) ?? [:]
        let envelope: [String: Any] = ["type": notice.type.rawValue, "timestamp": ISO8601DateFormatter().string(from: notice.time), "data": object]
        return (try? JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// Seconds from `Retry-After`: a number of seconds or an HTTP date.
    static func retryAfter(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return Double(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: value).map { $0.timeIntervalSince(now) }
    }
}

/// `type = "webhook"`: `url`, `secret` (one, or a list while rotating), `timeout`, `retry_schedule`,
/// `disable_after`, `max_retry_after` (all in seconds).
public struct WebhookSinkFactory: NoticeSinkFactory {
    public let type = "webhook"
    public let keys: Set<String> = ["url", "secret", "timeout", "retry_schedule", "disable_after", "max_retry_after"]

    public init() {}

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        guard let url = try table.string("url") else { throw table.missing("url = \"https://…\"") }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
            throw table.invalid("url", "url must be an http or https URL")
        }
        guard let texts = try table.strings("secret", single: true, maxCount: 8) else {
            throw table.missing("secret = \"whsec_…\" (or a list while rotating)")
        }
        let secrets = try texts.map { text in
            do { return try WebhookSecret(text) } catch let error as CohortError {
                throw table.invalid("secret", error.reason, hint: error.hint)
            }
        }
        var settings = WebhookNoticeSink.Settings(url: url, secrets: secrets)
        if let timeout = try table.integer("timeout", in: 1...300, unit: "seconds") { settings.timeout = timeout }
        if let schedule = try table.integers("retry_schedule", in: 0...86400, maxCount: 32, unit: "seconds") { settings.retrySchedule = schedule }
        if let disableAfter = try table.integer("disable_after", in: 60...(90 * 86400), unit: "seconds") { settings.disableAfter = disableAfter }
        if let maxRetryAfter = try table.integer("max_retry_after", in: 1...86400, unit: "seconds") { settings.maxRetryAfter = maxRetryAfter }
        let configured = settings
        return ConfiguredSink(defaultName: "webhook:\(url)") {
            try WebhookNoticeSink(name: $0.name, settings: configured, stateDirectory: $0.stateDirectory)
        }
    }
}
