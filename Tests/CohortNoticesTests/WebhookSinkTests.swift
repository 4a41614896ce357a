import CohortNotices
import CohortTestSupport
import Foundation
import Testing
import WebhookSink

@Suite(.serialized) struct WebhookSinkTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test func standardWebhooksKnownAnswer() throws {
        let signature = try WebhookSecret(Self.secret).signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                                                   body: Data("{\"test\": 2432232314}".utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        for bad in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_short", "whsec_" + Data(count: 65).base64EncodedString(), "whsec_%%%"] {
            #expect(throws: (any Error).self) { try WebhookSecret(bad) }
        }
    }

    func sink(_ temp: TemporaryDirectory, url: String, schedule: [Int] = [0, 0, 0], timeout: Int = 5, secrets: [String] = [secret]) throws -> WebhookNoticeSink {
        var settings = WebhookNoticeSink.Settings(url: url, secrets: try secrets.map(WebhookSecret.init))
        settings.retrySchedule = schedule
        settings.timeout = timeout
        return try WebhookNoticeSink(name: "hook", settings: settings, stateDirectory: temp.path("state"))
    }

    func expectRetry(_ sink: WebhookNoticeSink, _ notice: NoticeDelivery, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await sink.deliver(notice)
            Issue.record("expected a retry", sourceLocation: sourceLocation)
        } catch let failure as SinkFailure {
            if case .retryLater = failure.kind {} else { Issue.record("expected a retry, got \(failure)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func deliversVerifiableRequests() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret)
        let rotated = "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        let sink = try sink(temp, url: receiver.url, secrets: [rotated, Self.secret])
        let notice = try #require(try sampleNotices(1).first)
        try await sink.deliver(notice)
        await sink.shutdown()
        let record = try #require(receiver.received.first)
        #expect(record["verified"] as? Bool == true, "the reference package accepts the signature (one of two during rotation)")
        #expect(record["id"] as? String == "msg_\(notice.notice.id)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data((record["body"] as? String ?? "").utf8)) as? [String: Any])
        #expect(Set(body.keys) == ["type", "timestamp", "data"])
        #expect(body["type"] as? String == "content.edited")
        #expect((body["data"] as? [String: Any])?["id"] as? String == notice.notice.id)
        let attempts = try String(decoding: Data(contentsOf: temp.path("state/attempts.jsonl")), as: UTF8.self)
        #expect(attempts.contains("\"status\":200") && !attempts.contains("whsec_"))
    }

    /// Down, then up: the notice arrives, under the same webhook-id; 500 then 200 likewise.
    @Test func receiverDownThenUpAndServerErrors() async throws {
        let temp = try TemporaryDirectory()
        let probe = try Receiver(temp: temp, secret: Self.secret, name: "probe")
        let port = probe.port
        probe.stop()
        let sink = try sink(temp, url: "http://127.0.0.1:\(port)/hooks")
        let notices = try sampleNotices(2)
        await expectRetry(sink, notices[0])
        let receiver = try Receiver(temp: temp, secret: Self.secret, port: port, script: "[{\"status\": 500}]")
        await expectRetry(sink, notices[1])  // the 500
        try await sink.deliver(notices[0])
        try await sink.deliver(notices[1])
        await sink.shutdown()
        let ids = receiver.received.compactMap { $0["id"] as? String }
        #expect(ids == ["msg_\(notices[1].notice.id)", "msg_\(notices[0].notice.id)", "msg_\(notices[1].notice.id)"])
        #expect(receiver.received.allSatisfy { $0["verified"] as? Bool == true })
    }

    @Test func goneDisablesTheEndpoint() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret, script: "[{\"status\": 410}]")
        let sink = try sink(temp, url: receiver.url)
        let notices = try sampleNotices(2)
        await #expect(throws: SinkFailure.self) { try await sink.deliver(notices[0]) }
        do {
            try await sink.deliver(notices[1])
            Issue.record("a disabled endpoint took a notice")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .giveUp && failure.reason.contains("disabled"))
        }
        await sink.shutdown()
        #expect(receiver.received.count == 1)
    }

    @Test func tooManyRequestsHonoursRetryAfter() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret, script: "[{\"status\": 429, \"retry_after\": \"120\"}]")
        let sink = try sink(temp, url: receiver.url)
        let notice = try #require(try sampleNotices(1).first)
        do {
            try await sink.deliver(notice)
            Issue.record("429 was taken as delivered")
        } catch let failure as SinkFailure {
            guard case .retryLater(let after) = failure.kind, let after else { Issue.record("no wait: \(failure)"); return }
            #expect(after >= .seconds(100) && after <= .seconds(120))
        }
        // Asked again at once, the sink waits instead of sending.
        await expectRetry(sink, notice)
        await sink.shutdown()
        #expect(receiver.received.count == 1)
    }

    @Test func hangingReceiverAndRedirectsAreFailures() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret,
                                    script: "[{\"sleep\": 5}, {\"status\": 302, \"location\": \"http://127.0.0.1:1/elsewhere\"}]")
        let sink = try sink(temp, url: receiver.url, timeout: 1)
        let notice = try #require(try sampleNotices(1).first)
        await expectRetry(sink, notice)  // timed out
        await expectRetry(sink, notice)  // 302, not followed
        try await sink.deliver(notice)
        await sink.shutdown()
        #expect(receiver.received.count == 3)
    }

    /// An endpoint that keeps failing past the window is disabled; replaying re-enables it.
    @Test func failingEndpointIsDisabledAfterTheWindow() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret, script: "[{\"status\": 503}, {\"status\": 503}]")
        var settings = WebhookNoticeSink.Settings(url: receiver.url, secrets: [try WebhookSecret(Self.secret)])
        settings.retrySchedule = [0, 0, 0]
        settings.disableAfter = 0
        let sink = try WebhookNoticeSink(name: "hook", settings: settings, stateDirectory: temp.path("state"))
        let notices = try sampleNotices(2)
        await expectRetry(sink, notices[0])  // the first failure starts the window
        usleep(20_000)
        do {
            try await sink.deliver(notices[0])
            Issue.record("a failing endpoint took the notice")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .giveUp && failure.reason.contains("disabled"))
        }
        await #expect(throws: SinkFailure.self) { try await sink.deliver(notices[1]) }
        #expect(receiver.received.count == 2, "a disabled endpoint is not called")
        try sink.reenable()
        try await sink.deliver(notices[1])
        await sink.shutdown()
        #expect(receiver.received.count == 3)
    }

    @Test func runsOutOfRetries() async throws {
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret, script: "[{\"status\": 500}, {\"status\": 500}, {\"status\": 500}]")
        let sink = try sink(temp, url: receiver.url, schedule: [0, 0])
        let notice = try #require(try sampleNotices(1).first)
        await expectRetry(sink, notice)
        await expectRetry(sink, notice)
        do {
            try await sink.deliver(notice)
            Issue.record("a third 500 was taken as delivered")
        } catch let failure as SinkFailure {
            #expect(failure.kind == .giveUp)
        }
        await sink.shutdown()
    }
}
