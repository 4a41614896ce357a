import CohortBase
import CohortCollaboration
import CohortGit
import Foundation

/// The notices of one commit, read by one thread as the walk of its changes finds them (a repository
/// handle is only ever used by one thread at a time) and opened meanwhile on `threads` others (none:
/// all on the reader's): the walk of the trees and the signatures overlap instead of following each
/// other. The other threads start once `CommitPreparation.noticesPerThread` notices are found. While
/// `CommitPreparation.noticeChunk` notices are read and not yet taken, the reader opens the next one
/// itself before reading more: the blobs held stay bounded whatever the commit adds, and the reader
/// never waits for threads the system may be slow to give. A blob found again at another path is
/// neither read nor opened again: its first path's answer stands.
final class NoticeStream: @unchecked Sendable {
    private let condition = NSCondition()
    private let threads: Int
    private let group = DispatchGroup()
    private var started = false
    private var finished = false
    /// Guarded by `condition`: what was found, in order; each file is let go once taken.
    private var found: [(blob: ObjectID, path: String)] = []
    private var seen = Set<ObjectID>()
    private var files: [Result<Data, CohortError>?] = []
    private var results: [Result<Opened<Notice>, CohortError>?] = []
    /// Notices opened ahead (`CheckedAhead`): neither read nor opened here.
    private var openedAhead: [ObjectID: Result<Opened<Notice>, CohortError>] = [:]
    private var taken = 0
    /// The most notices read and not yet taken at once (for tests).
    private(set) var mostWaiting = 0
    /// Guarded by `condition`: how many envelopes were opened (for tests).
    private(set) var opened = 0

    init(threads: Int) {
        self.threads = threads
    }

    /// One more notice; `read` gives its file, on the caller's thread, unless its blob came before or
    /// was opened ahead.
    func add(_ notice: (blob: ObjectID, path: String), read: () -> Result<Data, CohortError>) {
        guard seen.insert(notice.blob).inserted else { return }
        if let known = CheckedAhead.notice(notice.blob) {
            openedAhead[notice.blob] = .success(known)
            return
        }
        while let item = takeIfFull() { open(item) }
        let file = read()
        condition.lock()
        found.append(notice)
        files.append(file)
        results.append(nil)
        mostWaiting = max(mostWaiting, found.count - taken)
        let start = !started && found.count >= CommitPreparation.noticesPerThread
        if start { started = true }
        condition.signal()
        condition.unlock()
        guard start else { return }
        for _ in 0..<threads {
            group.enter()
            DispatchQueue.global().async { [self] in
                while let item = next() { open(item) }
                group.leave()
            }
        }
    }

    /// Called once after the last `add`, by the thread that added. Keeping, it opens what is left with
    /// the others and returns every notice by blob; otherwise (the walk failed) it drops what is not
    /// taken yet and returns nothing. Either way the other threads have ended when it returns.
    func finish(keeping: Bool = true) -> [ObjectID: Result<Opened<Notice>, CohortError>] {
        condition.lock()
        finished = true
        if !keeping {
            for index in taken..<files.count { files[index] = nil }
            taken = files.count
        }
        condition.broadcast()
        condition.unlock()
        while let item = next() { open(item) }
        group.wait()
        guard keeping else { return [:] }
        condition.lock()
        defer { condition.unlock() }
        var notices = openedAhead
        for (index, notice) in found.enumerated() {
            notices[notice.blob] = results[index]
        }
        return notices
    }

    private typealias Item = (index: Int, file: Result<Data, CohortError>, path: String)

    private func open(_ item: Item) {
        let opened = Result { try CommitPreparation.openNotice(item.file.get(), path: item.path) }.mapCohortError()
        condition.lock()
        results[item.index] = opened
        self.opened += 1
        condition.unlock()
    }

    /// The next notice to open, waiting while the reader may still find one; nil when none is left.
    private func next() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while taken >= found.count, !finished { condition.wait() }
        return takeLocked()
    }

    /// The next notice when the reader holds as many as it may, else nil.
    private func takeIfFull() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        return found.count - taken >= CommitPreparation.noticeChunk ? takeLocked() : nil
    }

    private func takeLocked() -> Item? {
        guard taken < found.count, let file = files[taken] else { return nil }
        files[taken] = nil
        taken += 1
        return (taken - 1, file, found[taken - 1].path)
    }
}
