import CohortTestSupport
import Foundation
import Testing

/// Several `cohort notices deliver` at once in one workspace: every notice reaches every sink, once.
@Suite struct DeliveryRaceTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    /// Starts `count` deliveries at once and waits for them all.
    static func race(_ count: Int, in inside: CLI) throws -> [Int32] {
        let processes = try (0..<count).map { _ in try inside.start(["notices", "deliver"]) }
        for process in processes { process.waitUntilExit() }
        return processes.map(\.terminationStatus)
    }

    @Test func racingDeliveriesSendEveryNoticeOncePerSink() throws {
        let sandbox = try Sandbox()
        let inside = try sandbox.recipes(Dictionary(uniqueKeysWithValues: (0..<39).map { ("r\($0).md", "recipe \($0)\n") }))
        let temp = try TemporaryDirectory()
        let receiver = try Receiver(temp: temp, secret: Self.secret)
        defer { receiver.stop() }
        try sandbox.write("recipes/.git/cohort/config.toml", """
        [[sinks]]
        type = "file"
        path = "../../../notices.jsonl"
        history = "all"

        [[sinks]]
        type = "webhook"
        url = "\(receiver.url)"
        secret = "\(Self.secret)"
        history = "all"
        """)
        // Three at once over the first 39 notices, then twice more over notices committed between.
        #expect(try Self.race(3, in: inside).allSatisfy { $0 == 0 })
        for round in 0..<2 {
            for index in 0..<5 { try sandbox.write("recipes/new-\(round)-\(index).md", "new \(index)\n") }
            #expect(try inside.run(["commit", "-m", "round \(round)"]).status == 0)
            #expect(try Self.race(3, in: inside).allSatisfy { $0 == 0 })
        }
        let expected = jsonLines(try inside.run(["notices", "--json"]).stdout).compactMap { $0["id"] as? String }
        #expect(expected.count == 49)
        let filed = jsonLines(try sandbox.read("notices.jsonl")).compactMap { $0["id"] as? String }
        let filedOnce = filed.sorted() == expected.sorted()
        #expect(filedOnce, "file sink: \(filed.count) lines for \(expected.count) notices")
        let posted = receiver.received.compactMap { $0["id"] as? String }
        let postedOnce = posted.sorted() == expected.map { "msg_\($0)" }.sorted()
        #expect(postedOnce, "webhook: \(posted.count) requests for \(expected.count) notices")
        #expect(receiver.received.allSatisfy { $0["verified"] as? Bool == true })
    }
}
