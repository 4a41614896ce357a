import Foundation
import Synchronization

/// The set of spent challenge nonces, each kept until its challenge expires. A store shared by every
/// server instance (a file here, a database or cache across machines) makes replay impossible
/// across restarts and instances.
public protocol SpentChallengeStore: Sendable {
    /// Whether `nonce` was spent.
    func contains(_ nonce: Data) throws -> Bool
    /// Records `nonce` as spent until `expiresAt` (seconds since 1970); false if it already was.
    /// `now` lets the store forget what has expired.
    func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) throws -> Bool
}

/// Spent nonces in memory: correct for one process that never restarts (tests, short-lived tools).
public final class MemorySpentChallenges: SpentChallengeStore {
    private let spent = Mutex<[Data: UInt64]>([:])

    public init() {}

    public func contains(_ nonce: Data) -> Bool {
        spent.withLock { $0[nonce] != nil }
    }

    public func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) -> Bool {
        spent.withLock { table in
            if table.count > 4096 { table = table.filter { $0.value >= now } }
            guard table[nonce] == nil else { return false }
            table[nonce] = expiresAt
            return true
        }
    }
}
