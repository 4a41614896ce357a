import Synchronization

/// A bounded, thread-safe memo of pure computations on public inputs: a participant's few keys and
/// proofs repeat across thousands of commits and notices, so each is parsed and folded once.
/// Only successes are kept; when full it starts again empty, so memory stays bounded whatever
/// arrives. Results are exactly what the computation returns, so the memo changes no verdict.
final class RecentResults<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let storage: Mutex<[Key: Value]>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        // Room for every entry from the start: a table that grows rehashes what it holds, and a memo
        // that fills and starts again would do so over and over (a proof folded for the first time
        // cost three times a bare fold; Docs/Benchmarks.md).
        storage = Mutex([Key: Value](minimumCapacity: capacity))
    }

    func value(for key: Key, _ compute: () throws -> Value) rethrows -> Value {
        if let known = storage.withLock({ $0[key] }) { return known }
        let value = try compute()
        storage.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[key] = value
        }
        return value
    }
}
