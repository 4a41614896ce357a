import CohortCollaboration
import CohortIdentity
import CohortRemote
import Foundation

/// Challenge + token exchanges per second: `concurrency` clients in a loop for `seconds`, each exchange
/// a fresh challenge signed and answered (no token cache). Prints the rate; any failure stops it.
func exchangeBenchmark(link text: String, seconds: Double, concurrency: Int) async throws {
    let link = try CollaborationLink(text)
    let client = ServerClient()
    let exchange = TokenExchange(home: .fromEnvironment(), client: client)
    _ = try await exchange.exchange(link, operation: .pull)  // warm: connections, keys
    let start = ContinuousClock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    let done = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var count = 0
                while ContinuousClock.now < deadline {
                    _ = try await exchange.exchange(link, operation: .pull)
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    print(String(format: "%.1f", Double(done) / cohort_bench.seconds(start.duration(to: .now))))
    await client.shutdown()
}
