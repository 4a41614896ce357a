import Foundation
import Synchronization

/// Identity requests per client address and minute, counted in a store every instance shares,
/// without a round trip for every request: an instance reserves several requests of an address's
/// minute at once and admits from its reservation until it is used up. The shared count is of
/// reservations, never fewer than the requests admitted, so all instances together admit at most the
/// limit in one of the store's minutes. (As with any per-minute window, twice the limit can fall in
/// 60 seconds that straddle the turn of a minute; an instance whose clock is ahead of the store's
/// moves that turn by as much.)
///
/// The first reservation of an address's minute is of two requests (a challenge is answered by a
/// token request), later ones as many as the instance admitted from the address this minute, never
/// more than a sixteenth of the limit (and 64), with one reservation at a time of more than one
/// request: what an instance reserved and did not use costs an address at most a sixteenth of its
/// limit. Under 32 a minute every request is counted on its own.
final class SharedRequestCounts: Sendable {
    /// Adds `count` to `address`'s count for the current minute of the shared store and returns the
    /// new total.
    typealias Reserve = @Sendable (_ address: String, _ count: Int) async throws -> Int

    private struct Reservation {
        var minute: Int64
        /// Requests admitted here this minute.
        var admitted = 0
        /// Reserved in the shared count and not admitted yet.
        var left = 0
        /// Being reserved now by a request of more than one.
        var reserving = 0
        /// The shared count said the limit is reached: refused here without asking again.
        var exhausted = false

        init(minute: Int64) {
            self.minute = minute
        }
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
        let wanted = try reservations.withLock { table -> Int in
            var entry = table[address].flatMap { $0.minute == minute ? $0 : nil } ?? Reservation(minute: minute)
            defer { table[address] = entry }
            guard !entry.exhausted else { throw RequestLimiter.overIdentityLimit(perMinute) }
            if entry.left > 0 {
                entry.left -= 1
                entry.admitted += 1
                return 0
            }
            if table.count >= Self.maxTrackedClients {
                table = table.filter { $0.value.minute == minute }
                if table.count >= Self.maxTrackedClients { table = [:] }
            }
            guard entry.reserving == 0 else { return 1 }
            let wanted = max(1, min(max(entry.admitted, 2), largestReservation))
            if wanted > 1 { entry.reserving = wanted }
            return wanted
        }
        guard wanted > 0 else { return }
        let total: Int
        do {
            total = try await reserve(address, wanted)
        } catch {
            settle(address, minute: minute, wanted: wanted, granted: nil)
            throw error
        }
        // What the shared count held before this reservation decides how much of it is under the limit.
        let granted = min(wanted, max(0, perMinute - (total - wanted)))
        settle(address, minute: minute, wanted: wanted, granted: granted)
        guard granted > 0 else { throw RequestLimiter.overIdentityLimit(perMinute) }
    }

    /// Records what a reservation of `wanted` brought: `granted` requests, one of them admitted now
    /// (nil: the shared count could not be reached). A reservation that returns after the minute
    /// turned is not kept for the next.
    private func settle(_ address: String, minute: Int64, wanted: Int, granted: Int?) {
        reservations.withLock { table in
            var entry = table[address] ?? Reservation(minute: minute)
            guard entry.minute == minute else { return }
            if wanted > 1 { entry.reserving = 0 }
            if let granted {
                if granted == 0 { entry.exhausted = true }
                if granted > 0 {
                    entry.admitted += 1
                    entry.left += granted - 1
                }
            }
            table[address] = entry
        }
    }
}
