import Foundation
import Synchronization

/// Identity requests per client address and minute, counted in a store every instance shares,
/// without a round trip for every request: an instance reserves several requests of an address's
/// minute at once and admits from its reservation until it is used up. The shared count is of
/// reservations, never fewer than the requests admitted, so every instance together admits at most
/// the limit in a minute (give or take one reservation per instance when the instances' clocks
/// disagree at the turn of a minute). A reservation is never larger than what this instance has
/// admitted from the address this minute, nor than a sixteenth of the limit: an address that makes
/// a request or two (a challenge, a token) reserves one at a time, and the requests instances
/// reserve and never use cost an address at most a sixteenth of its limit per instance.
final class SharedRequestCounts: Sendable {
    /// Adds `count` to `address`'s count for the current minute of the shared store and returns the
    /// new total.
    typealias Reserve = @Sendable (_ address: String, _ count: Int) async throws -> Int

    private struct Reservation {
        var minute: Int64
        /// Requests admitted here this minute.
        var admitted: Int
        /// Reserved in the shared count and not admitted yet.
        var left: Int
    }

    /// Addresses remembered at once; beyond this, those of past minutes are forgotten, then all.
    static let maxTrackedClients = 100_000

    let perMinute: Int
    let largestReservation: Int
    private let reserve: Reserve
    private let reservations = Mutex<[String: Reservation]>([:])

    init(perMinute: Int, reserve: @escaping Reserve) {
        self.perMinute = perMinute
        largestReservation = max(1, min(perMinute / 16, 64))
        self.reserve = reserve
    }

    /// Counts one identity request from `address`: from this instance's reservation when one is
    /// left, otherwise by reserving more in the shared count. `E_BUSY` over the limit.
    func admit(_ address: String, now: Date = Date()) async throws {
        let minute = Int64(now.timeIntervalSince1970) / 60
        let wanted = reservations.withLock { table -> Int in
            var entry = table[address].flatMap { $0.minute == minute ? $0 : nil } ?? Reservation(minute: minute, admitted: 0, left: 0)
            defer { table[address] = entry }
            if entry.left > 0 {
                entry.left -= 1
                entry.admitted += 1
                return 0
            }
            if table.count >= Self.maxTrackedClients {
                table = table.filter { $0.value.minute == minute }
                if table.count >= Self.maxTrackedClients { table = [:] }
            }
            return max(1, min(entry.admitted, largestReservation))
        }
        guard wanted > 0 else { return }
        let total = try await reserve(address, wanted)
        // What the shared count held before this reservation decides how much of it is under the limit.
        let granted = min(wanted, max(0, perMinute - (total - wanted)))
        guard granted > 0 else { throw RequestLimiter.overIdentityLimit(perMinute) }
        reservations.withLock { table in
            var entry = table[address].flatMap { $0.minute == minute ? $0 : nil } ?? Reservation(minute: minute, admitted: 0, left: 0)
            entry.admitted += 1
            entry.left += granted - 1
            table[address] = entry
        }
    }
}
