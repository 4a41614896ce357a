import CohortIdentity
import CohortRemote
import Foundation

/// The client address an exchange names in `X-Forwarded-For` (with `--addresses`).
enum ExchangeClient {
    @TaskLocal static var address: String?
}

/// Challenge + token exchanges per second: `concurrency` clients in a loop for `seconds`, each exchange
/// a fresh challenge signed and answered (no token cache). With `addresses`, each exchange names a
/// client address of its own in `X-Forwarded-For` (the server trusts the benchmark as a proxy), as
/// many clients making one exchange each would. Prints the rate; any failure stops it.
func exchangeBenchmark(link text: String, seconds: Double, concurrency: Int, addresses: Bool) async throws {
    let link = try CollaborationLink(text)
    let client = ServerClient { ExchangeClient.address.map { [("X-Forwarded-For", $0)] } ?? [] }
    let exchange = TokenExchange(home: .fromEnvironment(), client: client)
    _ = try await exchange.exchange(link, operation: .pull)  // warm: connections, keys
    let start = ContinuousClock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    let done = try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<concurrency {
            group.addTask {
                var count = 0
                while ContinuousClock.now < deadline {
                    let address = addresses ? "10.\(task & 255).\((count >> 8) & 255).\(count & 255)" : nil
                    _ = try await ExchangeClient.$address.withValue(address) { try await exchange.exchange(link, operation: .pull) }
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
