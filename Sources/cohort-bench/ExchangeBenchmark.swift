import CohortCollaboration
import CohortIdentity
import CohortRemote
import Foundation
import Synchronization

/// Challenge + token exchanges per second: `concurrency` clients in a loop for `seconds`, each exchange
/// a fresh challenge signed and answered (no token cache). Prints the rate; any failure stops it.
func exchangeBenchmark(link text: String, seconds: Double, concurrency: Int) async throws {
    let link = try CollaborationLink(text)
    let client = ServerClient()
    let exchange = TokenExchange(home: .fromEnvironment(), client: client)
    _ = try await exchange.exchange(link, operation: .pull)  // warm: connections, keys
    let done = Counter()
    let start = ContinuousClock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                while ContinuousClock.now < deadline {
                    _ = try await exchange.exchange(link, operation: .pull)
                    done.add()
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "%.1f", Double(done.value) / total))
    await client.shutdown()
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
