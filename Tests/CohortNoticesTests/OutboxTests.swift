import CohortCollaboration
import CohortIdentity
import CohortNotices
import CohortNoticesTesting
import CohortTestSupport
import FileSink
import Foundation
import StdoutSink
import Synchronization
import Testing

/// Notices for the tests, each sealed in its envelope by a throwaway identity, as the outbox takes
/// them in from a repository.
func sampleNotices(_ count: Int, type: NoticeType = .contentEdited) throws -> [NoticeDelivery] {
    let temp = try TemporaryDirectory()
    let ann = try TestPerson.make("ann", in: temp)
    let context = try CollaborationContext(identifier: "collab", salt: Data(repeating: 7, count: 16))
    let signer = try CollaborationSigner(home: ann.home, context: context)
    return try (0..<count).map {
        let notice = Notice(type: type, collaboration: "collab", actor: signer.root, data: ["path": "file-\($0).md"], signer: signer.signer)
        return NoticeDelivery(notice: notice, envelope: try Envelope.seal(notice, by: signer), salt: context.salt)
    }
}

/// A sink that fails on demand: retry later, or give up, on chosen paths.
final class FlakySink: NoticeSink {
    let name: String
    private let state: Mutex<(retry: Set<String>, giveUp: Set<String>, delivered: [String])>

    init(name: String, retry: Set<String> = [], giveUp: Set<String> = []) {
        self.name = name
        state = Mutex((retry, giveUp, []))
    }

    func heal() { state.withLock { $0.retry = [] } }
    func healAll() { state.withLock { $0.retry = []; $0.giveUp = [] } }
    var delivered: [String] { state.withLock { $0.delivered } }

    func deliver(_ delivery: NoticeDelivery) async throws {
        let path = delivery.notice.data["path"] ?? ""
        try state.withLock { state in
            if state.retry.contains(path) { throw SinkFailure.retryLater("\(path) not now") }
            if state.giveUp.contains(path) { throw SinkFailure.giveUp("\(path) never") }
            state.delivered.append(path)
        }
    }
}

@Suite struct OutboxTests {
    @Test func acceptedNoticesSurviveARestartAndAreDeliveredOnce() async throws {
        let temp = try TemporaryDirectory()
        let notices = try sampleNotices(5)
        let outbox = try NoticeOutbox(directory: temp.path("outbox"))
        #expect(try await outbox.accept(notices) == 5)
        #expect(try await outbox.accept(notices) == 0, "a notice is accepted once")

        // "Crash" before any delivery: a new outbox over the same directory still has them.
        let restarted = try NoticeOutbox(directory: temp.path("outbox"))
        let memory = MemoryNoticeSink()
        let reports = await restarted.deliver(to: [memory])
        #expect(memory.notices.map(\.id) == notices.map(\.notice.id))
        #expect(reports.first?.delivered == 5)
        // Delivered ones are not delivered again.
        _ = await restarted.deliver(to: [memory])
        #expect(memory.notices.count == 5)
        // New ones arrive after the old.
        let more = try sampleNotices(2)
        try await restarted.accept(more)
        _ = await restarted.deliver(to: [memory])
        #expect(memory.notices.map(\.id) == (notices + more).map(\.notice.id))
    }

    @Test func aFailingSinkNeverHoldsBackTheOthers() async throws {
        let temp = try TemporaryDirectory()
        let outbox = try NoticeOutbox(directory: temp.path("outbox"))
        try await outbox.accept(sampleNotices(4))
        let flaky = FlakySink(name: "flaky", retry: ["file-1.md"], giveUp: ["file-2.md"])
        let memory = MemoryNoticeSink()
        let reports = await outbox.deliver(to: [flaky, memory])
        #expect(memory.notices.count == 4)
        let flakyReport = try #require(reports.first { $0.sink == "flaky" })
        #expect(flakyReport.delivered == 1 && flakyReport.pending == 3)
        #expect(flaky.delivered == ["file-0.md"])

        // Later the destination is back: it resumes where it stopped, and gives up on file-2 for good.
        flaky.heal()
        let again = await outbox.deliver(to: [flaky, memory])
        #expect(flaky.delivered == ["file-0.md", "file-1.md", "file-3.md"])
        #expect(again.first { $0.sink == "flaky" }?.gaveUp == 1)
        #expect(memory.notices.count == 4)
        let failures = try String(decoding: Data(contentsOf: temp.path("outbox/failures.jsonl")), as: UTF8.self)
        #expect(failures.contains("file-2.md never"))

        // Replayed once the destination takes it: delivered, and struck from the record.
        flaky.healAll()
        let replayed = try await outbox.replay(flaky)
        #expect(replayed.delivered == 1)
        #expect(flaky.delivered.last == "file-2.md")
        let after = try String(decoding: Data(contentsOf: temp.path("outbox/failures.jsonl")), as: UTF8.self)
        #expect(!after.contains("file-2.md"))
    }

    @Test func twoOutboxesOverOneFolderNumberEveryNoticeOnceAndDeliverItOnce() async throws {
        let temp = try TemporaryDirectory()
        // Two writers as two processes would be: each its own view of the log, its own locks.
        let first = try NoticeOutbox(directory: temp.path("outbox"))
        let second = try NoticeOutbox(directory: temp.path("outbox"))
        let batches = try (0..<20).map { _ in try sampleNotices(3) }
        await withTaskGroup(of: Void.self) { group in
            for (index, batch) in batches.enumerated() {
                group.addTask { _ = try? await (index % 2 == 0 ? first : second).accept(batch) }
                // The same batch offered through the other writer too: accepted once.
                group.addTask { _ = try? await (index % 2 == 0 ? second : first).accept(batch) }
            }
        }
        let sequence = jsonLines(try String(decoding: Data(contentsOf: temp.path("outbox/log.jsonl")), as: UTF8.self)).compactMap { $0["seq"] as? Int }
        #expect(sequence == Array(1...60), "one line per notice, numbered in order")
        let memory = MemoryNoticeSink()
        async let one = first.deliver(to: [memory])
        async let two = second.deliver(to: [memory])
        _ = await (one, two)
        #expect(memory.notices.count == 60 && Set(memory.notices.map(\.id)).count == 60)
    }

    /// A sink that holds its first notice until let go.
    final class HeldSink: NoticeSink {
        let name: String
        private let state = Mutex((held: true, delivered: [String]()))

        init(name: String) { self.name = name }

        func letGo() { state.withLock { $0.held = false } }
        var delivered: [String] { state.withLock { $0.delivered } }

        func deliver(_ delivery: NoticeDelivery) async throws {
            while state.withLock({ $0.held && $0.delivered.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
            state.withLock { $0.delivered.append(delivery.notice.data["path"] ?? "") }
        }
    }

    @Test func aProcessThatStopsWaitingLeavesItsNoticesToTheOneDelivering() async throws {
        let temp = try TemporaryDirectory()
        let first = try NoticeOutbox(directory: temp.path("outbox"))
        let second = try NoticeOutbox(directory: temp.path("outbox"), deliveryWait: 0.2)
        let notices = try sampleNotices(2)
        try await first.accept([notices[0]])
        let holding = HeldSink(name: "hook")
        let running = Task { await first.deliver(to: [holding]) }
        try await Task.sleep(for: .milliseconds(100))
        // Another process takes a notice in while the first holds the sink, waits, and gives up.
        try await second.accept([notices[1]])
        let other = HeldSink(name: "hook")
        other.letGo()
        let report = try #require(await second.deliver(to: [other]).first)
        #expect(report.stoppedBecause?.contains("another process is still delivering to this sink") == true, "\(report)")
        #expect(report.pending == 2 && other.delivered.isEmpty)
        // The first lets go of the sink, sees the log moved, and delivers that notice too.
        holding.letGo()
        let reports = await running.value
        #expect(holding.delivered == ["file-0.md", "file-1.md"])
        #expect(reports.first?.delivered == 2 && reports.first?.stoppedBecause == nil)
    }

    @Test func aTornLastLineIsCutOff() async throws {
        let temp = try TemporaryDirectory()
        let outbox = try NoticeOutbox(directory: temp.path("outbox"))
        try await outbox.accept(sampleNotices(2))
        let handle = try FileHandle(forWritingTo: temp.path("outbox/log.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"seq\":3,\"notice\":{\"id\"".utf8))
        try handle.close()
        let reopened = try NoticeOutbox(directory: temp.path("outbox"))
        try await reopened.accept(sampleNotices(1))
        let memory = MemoryNoticeSink()
        _ = await reopened.deliver(to: [memory])
        #expect(memory.notices.count == 3)
    }
}

@Suite struct ShippedSinkTests {
    @Test func fileSinkWritesWholeLinesAndFollowsRotation() async throws {
        let temp = try TemporaryDirectory()
        let path = temp.path("notices.jsonl")
        let sink = FileNoticeSink(path: path)
        let notices = try sampleNotices(3)
        try await sink.deliver(notices[0])
        try await sink.deliver(notices[1])
        // logrotate moves the file away: the next notice starts a new one.
        try FileManager.default.moveItem(at: path, to: temp.path("notices.jsonl.1"))
        try await sink.deliver(notices[2])
        await sink.shutdown()
        let rotated = try String(decoding: Data(contentsOf: temp.path("notices.jsonl.1")), as: UTF8.self)
        let current = try String(decoding: Data(contentsOf: path), as: UTF8.self)
        #expect(rotated.split(separator: "\n").count == 2 && rotated.hasSuffix("\n"))
        #expect(current.split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(current.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["id", "type", "time", "collaboration", "actor", "data", "signed"])
        #expect(object["id"] as? String == notices[2].notice.id)
        let signed = try #require(object["signed"] as? [String: Any])
        #expect(Set(signed.keys) == ["envelope", "root", "salt", "scheme"] && signed["root"] as? String == notices[2].notice.actor)
    }

    @Test func stdoutSinkSurvivesAClosedPipe() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = StdoutNoticeSink(format: .json, descriptor: fds[1])
        let notice = try #require(try sampleNotices(1).first)
        try await sink.deliver(notice)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fds[0], &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("{\"actor\""))
        close(fds[0])
        await #expect(throws: SinkFailure.self) { try await sink.deliver(notice) }
        close(fds[1])
        let null = open("/dev/null", O_WRONLY)
        defer { close(null) }
        let text = StdoutNoticeSink(format: .text, descriptor: null)
        try await text.deliver(notice)
        #expect(notice.summary.contains("content.edited file-0.md by "))
    }
}
