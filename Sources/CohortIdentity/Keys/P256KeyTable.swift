internal import CP256
import Crypto
import Foundation
import Synchronization

/// A public key's table of multiples (`CP256`), computed once, after which each signature by the key
/// is checked with one point addition per signed digit of its two scalars and no doublings, instead
/// of the roughly 300 point operations of a verification from scratch. Two sizes: a small one that
/// pays for itself within a few signatures (a push of one commit and its notices, all by one key),
/// and a large one for a key that signs thousands (a history).
///
/// The table only ever says "valid" on its own: any other answer is swift-crypto's (`P256Key.isValid`).
final class P256KeyTable: @unchecked Sendable {
    private let pointer: OpaquePointer
    private let budget: Budget
    /// The size this table is.
    let size: Size

    /// The two sizes, by the bits of each signed digit.
    enum Size: Int32, Sendable, CaseIterable {
        /// 52 windows of 16 points (52 KiB), made in about the time of six verifications from scratch
        /// (4.1 M instructions against 0.7 M); a signature through it costs about a third of one.
        case small = 5
        /// 33 windows of 128 points (264 KiB), made in about the time of thirty; about a quarter.
        case large = 8

        /// Tables of this size alive at once in the whole process, so that memory stays bounded
        /// whatever keys arrive (about 6.5 MiB of small tables, 8.3 MiB of large ones).
        static let budgets = (small: Budget(limit: 128), large: Budget(limit: 32))
    }

    /// Tables alive at once, so that memory stays bounded whatever keys arrive.
    final class Budget: Sendable {
        let limit: Int
        private let alive = Atomic<Int>(0)

        init(limit: Int) {
            self.limit = limit
        }

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

    private init(pointer: OpaquePointer, size: Size, budget: Budget) {
        self.pointer = pointer
        self.size = size
        self.budget = budget
    }

    deinit {
        cohort_p256_table_free(pointer)
        budget.give()
    }

    /// The table of `x963` (`0x04 ‖ x ‖ y`) of `size`, or nil when the budget is spent or the point is
    /// not on the curve.
    static func make(x963: Data, size: Size, budget: Budget? = nil) -> P256KeyTable? {
        let budget = budget ?? (size == .small ? Size.budgets.small : Size.budgets.large)
        guard x963.count == 65, x963.first == 0x04, budget.take() else { return nil }
        let pointer = x963.withUnsafeBytes { raw -> OpaquePointer? in
            let bytes = raw.bindMemory(to: UInt8.self).baseAddress!
            return cohort_p256_table_new(bytes + 1, bytes + 33, size.rawValue)
        }
        guard let pointer else {
            budget.give()
            return nil
        }
        return P256KeyTable(pointer: pointer, size: size, budget: budget)
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

/// How many signatures a key has found valid in this process, and the table it has earned: a small
/// one after `smallAfter` valid signatures, a large one in its place after `largeAfter`. Shared by
/// every copy of the key (`P256Key`'s memo of parsed keys hands out the same one). Only valid
/// signatures count, so that nobody earns a table (and spends the process's budget) with signatures
/// that fail.
final class P256KeyUse: Sendable {
    private struct State {
        var uses = 0
        var table: P256KeyTable?
        var building = false
        /// The size the key is to get next, and after how many valid signatures (nil: none).
        var next: (size: P256KeyTable.Size, due: Int)?
    }

    /// Valid signatures before the small table: it costs about six verifications to make (twelve for
    /// a process's first, which makes the generator's too) and saves two thirds of each later one.
    /// A key is given it once it has spent about what its own table costs: a push of a commit and a
    /// few notices never pays for one, a push of a hundred notices by one key does.
    static let smallAfter = 8
    /// Valid signatures before the large table, which costs about five small ones to make and saves
    /// a quarter of each signature the small one checks.
    static let largeAfter = 256

    private let state: Mutex<State>
    /// The key, `0x04 ‖ x ‖ y`.
    private let x963: Data
    private let smallAfter: Int
    private let largeAfter: Int
    private let budgets: (small: P256KeyTable.Budget, large: P256KeyTable.Budget)

    init(x963: Data, smallAfter: Int = smallAfter, largeAfter: Int = largeAfter,
         budgets: (small: P256KeyTable.Budget, large: P256KeyTable.Budget) = P256KeyTable.Size.budgets) {
        self.x963 = x963
        self.smallAfter = smallAfter
        self.largeAfter = largeAfter
        self.budgets = budgets
        state = Mutex(State(next: (.small, smallAfter)))
    }

    /// The key's table, once built.
    var table: P256KeyTable? { state.withLock { $0.table } }

    /// Counts a signature the key found valid (the usual way or through its table); the one that
    /// makes a table due builds it on this thread (others meanwhile go on with what they have).
    func countValid() {
        let build = state.withLock { state -> P256KeyTable.Size? in
            state.uses += 1
            guard !state.building, let next = state.next, state.uses >= next.due else { return nil }
            state.building = true
            return next.size
        }
        guard let build else { return }
        let made = P256KeyTable.make(x963: x963, size: build, budget: build == .small ? budgets.small : budgets.large)
        state.withLock { state in
            state.building = false
            if let made {
                state.table = made
                state.next = build == .small ? (.large, largeAfter) : nil
            } else {
                // The budget of that size is spent: asked again after as many valid signatures more,
                // for the large size when a small one was refused (a key that signs thousands still
                // earns its large table while other keys hold every small one).
                state.next = (.large, max(state.uses + (build == .small ? smallAfter : largeAfter), largeAfter))
            }
        }
    }
}
