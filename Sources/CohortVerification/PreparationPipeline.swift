import CohortGit
import Foundation
import Synchronization

/// Commits prepared ahead (`CommitPreparation`) on background threads, one per core, while the rules
/// run in order on the caller's thread: a pipeline, so that both cores are busy from the first commit
/// and the rules never wait for the whole history. Workers take the next run of commits in history
/// order, so the commit the rules need next is always among those being prepared.
final class PreparationPipeline: @unchecked Sendable {
    private let ids: [ObjectID]
    private let positions: [ObjectID: Int]
    private let nextRun = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)
    /// Finished preparations by position (nil: preparing it failed; the rules then do it themselves).
    private var done: [Int: PreparedCommit?] = [:]
    /// The position the rules wait for, if they wait (guarded by `condition`).
    private var awaited: Int?
    /// Commits ready, the awaited one first, before a worker wakes the rules (or the end of its run):
    /// the rules then go through them without waiting, one wake-up for many commits.
    static let wakeAfter = 16
    /// Positions already handed out (guarded by `condition`): asked again, they are not waited for.
    private var taken = Set<Int>()
    private let condition = NSCondition()

    init(_ ids: [ObjectID], origin: Repository.Origin, threads: Int) {
        self.ids = ids
        positions = Dictionary(ids.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        for _ in 0..<threads {
            let thread = Thread { [self] in work(origin: origin) }
            // Enough for the JSON reader's deepest nesting, in a debug build too
            // (PreReceiveTests.aDeeplyNestedNoticeInALongPush).
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    func contains(_ id: ObjectID) -> Bool {
        positions[id] != nil
    }

    /// The preparation of `id`, waiting for it if a worker has it in hand; nil when `id` is not in
    /// this pipeline or could not be prepared. Each preparation is handed out once.
    func take(_ id: ObjectID) -> PreparedCommit? {
        guard let position = positions[id] else { return nil }
        condition.lock()
        defer { condition.unlock() }
        // A commit asked for twice (a second ref update reaching a commit refused for the first)
        // is checked again by the rules themselves.
        guard taken.insert(position).inserted else { return nil }
        while done[position] == nil, !cancelled.load(ordering: .relaxed) {
            awaited = position
            condition.wait()
        }
        awaited = nil
        return done.removeValue(forKey: position) ?? nil
    }

    /// Stops the workers after the commit each has in hand (the rules refused a commit, or are done).
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    private func work(origin: Repository.Origin) {
        // A pack reader of its own: workers sharing libgit2's state of a pack wait on each other's reads.
        let handle = try? Repository.reopen(origin, ownPacks: true)
        // Contiguous runs, so that a commit's parent was usually just prepared on the same thread and
        // the trees both read are still in its memo.
        let memo = TreeMemo()
        while !cancelled.load(ordering: .relaxed) {
            let start = nextRun.add(CommitPreparation.run, ordering: .relaxed).oldValue
            guard start < ids.count else { return }
            let end = min(start + CommitPreparation.run, ids.count)
            for position in start..<end {
                guard !cancelled.load(ordering: .relaxed) else { return }
                let prepared = handle.flatMap { try? CommitPreparation.prepare(ids[position], in: $0, memo: memo, opening: .here) }
                    .flatMap { $0.readFailed ? nil : $0 }
                condition.lock()
                done[position] = .some(prepared)
                if let awaited, (start...position).contains(awaited), position - awaited + 1 >= Self.wakeAfter || position == end - 1 {
                    condition.broadcast()
                }
                condition.unlock()
            }
        }
    }
}
