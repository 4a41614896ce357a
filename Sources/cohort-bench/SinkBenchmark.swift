import CohortCollaboration
import CohortIdentity
import CohortNotices
import FileSink
import Foundation
import WebhookSink

/// Notices per second through the durable outbox to the file sink and to a webhook receiver, each
/// against the same sink driven directly (no outbox) as the baseline.
///   cohort-bench sinks DIR COUNT WEBHOOK_URL SECRET
func sinkBenchmark(directory: URL, count: Int, webhook: String, secret: String) async throws {
    let key = DeviceKey()
    let context = try CollaborationContext(identifier: "bench", salt: Data(count: 16))
    let tree = try IdentityTree(masterKeys: [key.publicKey], context: context)
    guard let proof = tree.proof(for: try key.diversified(for: context).publicKey) else { return }
    let signer = Signer(scheme: .cohortV1, proof: proof)
    func notices(_ n: Int) -> [NoticeDelivery] {
        (0..<n).map {
            NoticeDelivery(notice: Notice(type: .contentEdited, collaboration: "bench", actor: tree.root, data: ["path": "file-\($0).md"], signer: signer))
        }
    }
    let clock = ContinuousClock()
    func rate(_ n: Int, _ body: () async throws -> Void) async rethrows -> Double {
        let start = clock.now
        try await body()
        return Double(n) / seconds(start.duration(to: clock.now))
    }
    try? FileManager.default.removeItem(at: directory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

    // Accepting: one notice at a time, each fsynced before it counts (what a post-receive does per push).
    let outbox = try NoticeOutbox(directory: directory.appendingPathComponent("outbox"))
    let batch = notices(count)
    let accepted = try await rate(count) { for notice in batch { try await outbox.accept([notice]) } }

    let fileDirect = FileNoticeSink(name: "direct", path: directory.appendingPathComponent("direct.jsonl"))
    let direct = try await rate(count) { for notice in batch { try await fileDirect.deliver(notice) } }
    let fileSink = FileNoticeSink(name: "file", path: directory.appendingPathComponent("outbox.jsonl"))
    let throughOutbox = await rate(count) { _ = await outbox.deliver(to: [fileSink]) }

    var settings = WebhookNoticeSink.Settings(url: webhook, secrets: [try WebhookSecret(secret)])
    settings.retrySchedule = [0]
    let webhookCount = min(count, 1000)
    let hookDirect = try WebhookNoticeSink(name: "direct-hook", settings: settings, stateDirectory: directory.appendingPathComponent("hook-direct"))
    let few = notices(webhookCount)
    let hookRate = try await rate(webhookCount) { for notice in few { try await hookDirect.deliver(notice) } }
    await hookDirect.shutdown()
    let hookOutbox = try NoticeOutbox(directory: directory.appendingPathComponent("hook-outbox"))
    try await hookOutbox.accept(notices(webhookCount))
    let hookSink = try WebhookNoticeSink(name: "hook", settings: settings, stateDirectory: directory.appendingPathComponent("hook-state"))
    let hookThrough = await rate(webhookCount) { _ = await hookOutbox.deliver(to: [hookSink]) }
    await hookSink.shutdown()

    print("| path | notices | per second | vs direct |")
    print("|---|---:|---:|---:|")
    print(String(format: "| outbox accept, one notice per fsync | %d | %.0f | — |", count, accepted))
    print(String(format: "| file sink, driven directly (write + fsync per notice) | %d | %.0f | 1.00× |", count, direct))
    print(String(format: "| file sink, through the outbox | %d | %.0f | %.2f× |", count, throughOutbox, throughOutbox / direct))
    print(String(format: "| webhook to a loopback receiver, driven directly | %d | %.0f | 1.00× |", webhookCount, hookRate))
    print(String(format: "| webhook to a loopback receiver, through the outbox | %d | %.0f | %.2f× |", webhookCount, hookThrough, hookThrough / hookRate))
}
