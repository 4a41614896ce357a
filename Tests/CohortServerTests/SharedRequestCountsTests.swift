import CohortBase
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
        #expect(await shared.totals["203.0.113.9"] == 2, "a challenge and its token request, reserved again from nothing")
    }

    @Test func requestsAtOnceAtOneInstanceStrandAtMostOneReservation() async throws {
        let shared = SharedCount()
        let instances = Self.instances(2, perMinute: 160, sharing: shared)
        let now = Date(timeIntervalSince1970: 6_000)
        for _ in 0..<10 { try await instances[0].admit("203.0.113.9", now: now) }
        // Forty at once at the first instance: one reservation of ten, the others one each.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { _ = try? await instances[0].admit("203.0.113.9", now: now) } }
        }
        let reserved = await shared.totals["203.0.113.9"]!
        #expect(reserved <= 50 + instances[0].largestReservation - 1, "\(reserved) reserved for 50 admitted")
        // The other instance still gets the rest of the limit.
        var admitted = 0
        while (try? await instances[1].admit("203.0.113.9", now: now)) != nil { admitted += 1 }
        #expect(admitted >= 160 - reserved, "\(admitted)")
    }

    @Test func aReservationThatReturnsAfterTheMinuteTurnedIsNotKept() async throws {
        let slow = SharedCount()
        let gate = AsyncStream<Void>.makeStream()
        let counts = SharedRequestCounts(perMinute: 1000) { address, count in
            if count > 2 { for await _ in gate.stream { break } }
            return await slow.add(address, count)
        }
        let now = Date(timeIntervalSince1970: 6_000)
        for _ in 0..<4 { try await counts.admit("203.0.113.9", now: now) }
        // The fifth request reserves four and waits; meanwhile the next minute begins.
        let late = Task { try await counts.admit("203.0.113.9", now: now) }
        try await Task.sleep(for: .milliseconds(50))
        await slow.newMinute()
        try await counts.admit("203.0.113.9", now: now.addingTimeInterval(60))
        gate.continuation.yield()
        try await late.value
        // The next minute's second request uses the next minute's reservation, not the late one.
        let calls = await slow.calls
        try await counts.admit("203.0.113.9", now: now.addingTimeInterval(60))
        #expect(await slow.calls == calls, "the next minute's own reservation was kept")
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
        #expect(await shared.totals["203.0.113.9"] == 8, "every request is in the shared count, the first refusal at each instance too")
        // Refused again without asking the shared count.
        let calls = await shared.calls
        await #expect(throws: CohortError.self) { try await instances[0].admit("203.0.113.9", now: now) }
        #expect(await shared.calls == calls)
    }
}
