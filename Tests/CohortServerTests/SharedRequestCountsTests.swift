import CohortIdentity
@testable import CohortServer
import Foundation
import Testing

/// Identity requests counted by reservation in a shared count: never more admitted than the limit,
/// however many instances ask at once, and few round trips for an address that asks a lot.
@Suite struct SharedRequestCountsTests {
    /// The shared count as PostgreSQL keeps it: one total per address, added to atomically.
    actor SharedCount {
        var totals: [String: Int] = [:]
        var calls = 0

        func add(_ address: String, _ count: Int) -> Int {
            calls += 1
            totals[address, default: 0] += count
            return totals[address]!
        }

        func newMinute() {
            totals = [:]
        }
    }

    static func instances(_ count: Int, perMinute: Int, sharing shared: SharedCount) -> [SharedRequestCounts] {
        (0..<count).map { _ in SharedRequestCounts(perMinute: perMinute) { address, count in await shared.add(address, count) } }
    }

    @Test func threeInstancesAskedAtOnceAdmitNoMoreThanTheLimit() async throws {
        let shared = SharedCount()
        let instances = Self.instances(3, perMinute: 100, sharing: shared)
        let now = Date(timeIntervalSince1970: 6_000)
        let admitted = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<900 {
                group.addTask { (try? await instances[index % 3].admit("203.0.113.9", now: now)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        // At most the limit; at least the limit less what each instance reserved and did not use.
        #expect(admitted <= 100)
        #expect(admitted >= 100 - 3 * instances[0].largestReservation, "\(admitted)")
        // Another address is counted on its own.
        try await instances[1].admit("198.51.100.7", now: now)
    }

    @Test func anAddressThatAsksALotCostsFewRoundTrips() async throws {
        let shared = SharedCount()
        let one = Self.instances(1, perMinute: 1000, sharing: shared)[0]
        let now = Date(timeIntervalSince1970: 6_000)
        for _ in 0..<1000 { try await one.admit("203.0.113.9", now: now) }
        // Exactly the limit on one instance: the 1001st is refused.
        await #expect(throws: CohortError.self) { try await one.admit("203.0.113.9", now: now) }
        let calls = await shared.calls
        #expect(calls < 1000 / 10, "\(calls) round trips for 1000 requests")
    }

    @Test func whatWasReservedInOneMinuteIsNotSpentInTheNext() async throws {
        let shared = SharedCount()
        let one = Self.instances(1, perMinute: 1000, sharing: shared)[0]
        let now = Date(timeIntervalSince1970: 6_000)
        for _ in 0..<100 { try await one.admit("203.0.113.9", now: now) }
        let before = await shared.calls
        await shared.newMinute()
        try await one.admit("203.0.113.9", now: now.addingTimeInterval(60))
        #expect(await shared.calls == before + 1, "the next minute's first request is counted in the shared store")
        #expect(await shared.totals["203.0.113.9"] == 1, "one request at a time again")
    }

    @Test func aSmallLimitIsCountedOneRequestAtATime() async throws {
        let shared = SharedCount()
        let instances = Self.instances(2, perMinute: 6, sharing: shared)
        let now = Date(timeIntervalSince1970: 6_000)
        #expect(instances[0].largestReservation == 1)
        for index in 0..<6 { try await instances[index % 2].admit("203.0.113.9", now: now) }
        for instance in instances {
            let refusal = await #expect(throws: CohortError.self) { try await instance.admit("203.0.113.9", now: now) }
            #expect(refusal?.code == .busy)
        }
        #expect(await shared.totals["203.0.113.9"] == 8, "every request is in the shared count, refused ones too")
    }
}
