import CohortBase
import Foundation
import Synchronization

/// Bounds identity requests per client address (a fixed one-minute window per address) and the git
/// transfers running at once. Over a limit is `E_BUSY` (HTTP 429 with `Retry-After`).
public final class RequestLimiter: Sendable {
    /// Client addresses remembered at once; beyond this the oldest window is dropped.
    static let maxTrackedClients = 100_000

    private struct Window {
        var start: Int64
        var count: Int
    }

    private let perMinute: Int
    private let maxTransfers: Int
    private let windows = Mutex<[String: Window]>([:])
    private let transfers = Mutex<Int>(0)

    public init(identityRequestsPerMinute: Int, maxConcurrentTransfers: Int) {
        perMinute = identityRequestsPerMinute
        maxTransfers = maxConcurrentTransfers
    }

    /// Counts one identity request from `client`; `E_BUSY` when it is over the limit.
    public func admitIdentityRequest(from client: String, now: Date = Date()) throws {
        let minute = Int64(now.timeIntervalSince1970) / 60
        let admitted = windows.withLock { windows -> Bool in
            if windows.count >= Self.maxTrackedClients {
                windows = windows.filter { $0.value.start == minute }
            }
            var window = windows[client] ?? Window(start: minute, count: 0)
            if window.start != minute { window = Window(start: minute, count: 0) }
            window.count += 1
            windows[client] = window
            return window.count <= perMinute
        }
        guard admitted else { throw Self.overIdentityLimit(perMinute) }
    }

    /// The refusal of an identity request over `perMinute`, here or in a shared count.
    static func overIdentityLimit(_ perMinute: Int) -> CohortError {
        CohortError(.busy, "more than \(perMinute) identity requests this minute from this address", hint: "wait a minute and try again")
    }

    /// Reserves a transfer slot, released when the returned value goes (or `release()` is called):
    /// a response whose body never runs (the client left first) still gives its slot back.
    public func transferSlot() throws -> TransferSlot {
        try beginTransfer()
        return TransferSlot(limiter: self)
    }

    /// Reserves a transfer slot; `E_BUSY` when every slot is taken.
    private func beginTransfer() throws {
        let admitted = transfers.withLock { count -> Bool in
            guard count < maxTransfers else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw CohortError(.busy, "the server is running \(maxTransfers) transfers already", hint: "try again in a moment")
        }
    }

    fileprivate func endTransfer() {
        transfers.withLock { $0 -= 1 }
    }
}

/// One reserved transfer; released once, by `release()` or at the latest when it is dropped.
public final class TransferSlot: Sendable {
    private let limiter: RequestLimiter
    private let released = Mutex(false)

    init(limiter: RequestLimiter) {
        self.limiter = limiter
    }

    public func release() {
        let first = released.withLock { released -> Bool in
            defer { released = true }
            return !released
        }
        if first { limiter.endTransfer() }
    }

    deinit { release() }
}
