import CohortBase
import CohortCollaboration
import CohortGit
import Foundation

/// The notices of one commit, read by one thread as the walk of its changes finds them (a repository
/// handle is only ever used by one thread at a time) and opened meanwhile on others: the walk of the
/// trees and the signatures overlap instead of following each other. The opening threads start once
/// `CommitPreparation.noticesPerThread` notices are found; the reader stops to wait while
/// `CommitPreparation.noticeChunk` notices are read and not yet taken, so that the blobs held stay
/// bounded whatever the commit adds.
final class NoticeStream: @unchecked Sendable {
    private let condition = NSCondition()
    private let threads: Int
    private let group = DispatchGroup()
    private var started = false
    private var finished = false
    /// Guarded by `condition`: what was found, in order; each file is let go once taken.
    private var found: [(blob: ObjectID, path: String)] = []
    private var files: [Result<Data, CohortError>?] = []
    private var results: [Result<Opened<Notice>, CohortError>?] = []
    private var taken = 0

    init(threads: Int) {
        self.threads = threads
    }

    /// One more notice, read (or not) by the caller.
    func add(_ notice: (blob: ObjectID, path: String), file: Result<Data, CohortError>) {
        condition.lock()
        while started, found.count - taken >= CommitPreparation.noticeChunk { condition.wait() }
        found.append(notice)
        files.append(file)
        results.append(nil)
        let start = !started && found.count >= CommitPreparation.noticesPerThread
        if start { started = true }
        condition.broadcast()
        condition.unlock()
        guard start else { return }
        for _ in 0..<threads {
            group.enter()
            DispatchQueue.global().async { [self] in
                openAll()
                group.leave()
            }
        }
    }

    /// Called once after the last `add`, by the thread that added: opens what is left with the others,
    /// waits for them, and returns every notice found, by blob (the first path of a blob added twice).
    func finish() -> [ObjectID: Result<Opened<Notice>, CohortError>] {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
        openAll()
        group.wait()
        condition.lock()
        defer { condition.unlock() }
        var notices: [ObjectID: Result<Opened<Notice>, CohortError>] = [:]
        for (index, notice) in found.enumerated() where notices[notice.blob] == nil {
            notices[notice.blob] = results[index]
        }
        return notices
    }

    private func openAll() {
        while let (index, file, path) = next() {
            let opened = Result { try Envelope.open(file.get(), as: Notice.self, path: path) }.mapCohortError()
            condition.lock()
            results[index] = opened
            condition.unlock()
        }
    }

    /// The next notice to open, waiting while the reader may still find one; nil when none is left.
    private func next() -> (Int, Result<Data, CohortError>, String)? {
        condition.lock()
        defer { condition.unlock() }
        while taken >= found.count, !finished { condition.wait() }
        guard taken < found.count, let file = files[taken] else { return nil }
        files[taken] = nil
        taken += 1
        condition.broadcast()
        return (taken - 1, file, found[taken - 1].path)
    }
}
