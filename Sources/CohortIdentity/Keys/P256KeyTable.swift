internal import CP256
import Crypto
import Foundation
import Synchronization

/// A public key's table of multiples (`CP256`): 32 × 255 points computed once, after which each
/// signature by the key is checked with about 64 point additions and no doublings, instead of the
/// roughly 300 point operations of a verification from scratch. A participant's few keys sign
/// thousands of commits and notices, so a long history pays for the table many times over.
///
/// The table only ever says "valid" on its own: any other answer is swift-crypto's (`P256Key.isValid`).
final class P256KeyTable: @unchecked Sendable {
    private let pointer: OpaquePointer
    private let budget: Budget

    /// Tables alive at once, so that memory stays bounded whatever keys arrive (each is about 510 KiB).
    final class Budget: Sendable {
        let limit: Int
        private let alive = Atomic<Int>(0)

        init(limit: Int) {
            self.limit = limit
        }

        /// One table in the whole process per key worth it, at most 32 (about 16 MiB).
        static let shared = Budget(limit: 32)

        var count: Int { alive.load(ordering: .relaxed) }

        fileprivate func take() -> Bool {
            guard alive.add(1, ordering: .relaxed).newValue <= limit else {
                alive.subtract(1, ordering: .relaxed)
                return false
            }
            return true
        }

        fileprivate func give() {
            alive.subtract(1, ordering: .relaxed)
        }
    }

    private init(pointer: OpaquePointer, budget: Budget) {
        self.pointer = pointer
        self.budget = budget
    }

    deinit {
        cohort_p256_table_free(pointer)
        budget.give()
    }

    /// The table of `x963` (`0x04 ‖ x ‖ y`), or nil when the budget is spent or the point is not on the curve.
    static func make(x963: Data, budget: Budget = .shared) -> P256KeyTable? {
        guard x963.count == 65, x963.first == 0x04, budget.take() else { return nil }
        let pointer = x963.withUnsafeBytes { raw -> OpaquePointer? in
            let bytes = raw.bindMemory(to: UInt8.self).baseAddress!
            return cohort_p256_table_new(bytes + 1, bytes + 33)
        }
        guard let pointer else {
            budget.give()
            return nil
        }
        return P256KeyTable(pointer: pointer, budget: budget)
    }

    /// The table's verdict on `signature` over the message whose SHA-256 is `digest`: 1 valid,
    /// 0 invalid, -1 undecided (a sum its formulas leave to the usual path).
    func verdict(_ signature: P256.Signing.ECDSASignature, digest: some Digest) -> Int32 {
        let raw = signature.rawRepresentation
        guard raw.count == 64 else { return -1 }
        return raw.withUnsafeBytes { rs in
            digest.withUnsafeBytes { hash in
                guard hash.count == 32 else { return -1 }
                let pair = rs.bindMemory(to: UInt8.self).baseAddress!
                return cohort_p256_verify(pointer, hash.bindMemory(to: UInt8.self).baseAddress!, pair, pair + 32)
            }
        }
    }
}

/// How many signatures a key has found valid in this process, and its table once it has earned one.
/// Shared by every copy of the key (`P256Key`'s memo of parsed keys hands out the same one). Only
/// valid signatures count, so that nobody earns a table (and spends the process's budget) with
/// signatures that fail.
final class P256KeyUse: Sendable {
    private struct State {
        var uses = 0
        var table: P256KeyTable?
        var building = false
    }

    /// Signatures a key checks the usual way before it gets a table: a table costs about as much as
    /// 50 verifications and saves about three quarters of each later one, so one-off keys and short
    /// pushes never build one.
    static let defaultThreshold = 256

    private let state = Mutex(State())
    /// The key, `0x04 ‖ x ‖ y`.
    private let x963: Data
    private let threshold: Int
    private let budget: P256KeyTable.Budget

    init(x963: Data, threshold: Int = defaultThreshold, budget: P256KeyTable.Budget = .shared) {
        self.x963 = x963
        self.threshold = threshold
        self.budget = budget
    }

    /// The key's table, once built.
    var table: P256KeyTable? { state.withLock { $0.table } }

    /// Counts a signature the key found valid the usual way; the one that reaches `threshold` builds
    /// the table on this thread (others meanwhile go on without it). When the budget is spent the
    /// count starts again, and the table is asked for again after as many valid signatures more.
    func countValid() {
        let build = state.withLock { state -> Bool in
            guard state.table == nil, !state.building else { return false }
            state.uses += 1
            guard state.uses >= threshold else { return false }
            state.building = true
            return true
        }
        guard build else { return }
        let made = P256KeyTable.make(x963: x963, budget: budget)
        state.withLock { state in
            state.building = false
            state.table = made
            state.uses = 0
        }
    }
}
