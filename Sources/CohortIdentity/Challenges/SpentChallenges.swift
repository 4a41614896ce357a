import Foundation
import Synchronization

/// The set of spent challenge nonces, each kept until its challenge expires.
public protocol SpentChallengeStore: Sendable {
    /// Whether spent nonces survive a restart of the process. When they do not, the authority binds
    /// its challenges to this process (see `ChallengeAuthority`), so none outlives it.
    var isDurable: Bool { get }
    /// Whether `nonce` was spent.
    func contains(_ nonce: Data) async throws -> Bool
    /// Records `nonce` as spent until `expiresAt` (seconds since 1970); false if it already was.
    /// `now` lets the store forget what has expired. Deciding who spends must be atomic: of two
    /// concurrent spends of one nonce (in any process sharing the store), exactly one returns true.
    func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) async throws -> Bool
}

/// Spent nonces in memory, for one process. Challenges issued with it die with the process.
public final class MemorySpentChallenges: SpentChallengeStore {
    private struct State {
        var table: [Data: UInt64] = [:]
        var pruneAt = 4096
    }

    private let state = Mutex(State())

    public init() {}

    public var isDurable: Bool { false }

    public func contains(_ nonce: Data) -> Bool {
        state.withLock { $0.table[nonce] != nil }
    }

    public func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) -> Bool {
        state.withLock { state in
            guard state.table[nonce] == nil else { return false }
            state.table[nonce] = expiresAt
            if state.table.count >= state.pruneAt {
                // Amortised: the threshold doubles with what stays live, so a spend costs O(1) on average.
                state.table = state.table.filter { $0.value >= now }
                state.pruneAt = max(4096, 2 * state.table.count)
            }
            return true
        }
    }
}
