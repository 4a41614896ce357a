import CohortBase
import CohortCollaboration
import CohortGit
import Foundation
import Synchronization

/// Results of the two costliest pure computations of verification, a commit's signer and a notice's
/// opening, computed ahead from a pack while it is still indexed (`EarlyChecks`): a clone's, or a push's
/// in a resident verifier (`IncomingPacks`, where git's index of the pack, written by `index-pack` from
/// names it computed over the same bytes, is the one the verifier reads), and found again by the
/// verifier. Each is keyed by the name of the object it was computed from: the indexer's
/// `git_odb_hash` (SHA-1 with collision detection) of exactly the bytes the computation read, the
/// name the pack's index gives the entry those bytes came from. Every later read of that name
/// resolves the same entry with the same inflation and delta code (and libgit2's indexer names every
/// entry the same: the `pack` fuzz target), so a result found here is exactly the one the verifier
/// would compute: the memo moves work and changes no verdict. Each result is handed out once. Failures are never kept (the verifier
/// computes them again, with its paths in the messages). Consulted only while early checks are alive
/// in the process (`EarlyChecks`), and emptied when the last goes; a result taken gives its weight back.
enum CheckedAhead {
    /// Signers kept at most.
    static let signerLimit = 1 << 17
    /// Notice files kept at most, in bytes (an opened notice holds about twice its file).
    static let noticeByteLimit = 64 << 20

    /// Early checks alive.
    private static let users = Atomic<Int>(0)
    /// Results the verifier found here rather than computed (for tests).
    static let hits = Atomic<Int>(0)
    private static let signers = Kept<CommitSigner>(limit: signerLimit)
    private static let notices = Kept<Opened<Notice>>(limit: noticeByteLimit)

    /// One more user: until it ends, the verifier in this process looks here first.
    static func begin() {
        users.add(1, ordering: .sequentiallyConsistent)
    }

    /// One user fewer; the last empties the memo.
    static func end() {
        guard users.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
        signers.removeAll()
        notices.removeAll()
    }

    private static var active: Bool { users.load(ordering: .sequentiallyConsistent) > 0 }

    /// `compute(commit)`, or what it returned before for the commit of the same name.
    static func signer(of commit: Commit, _ compute: (Commit) throws -> CommitSigner) throws -> CommitSigner {
        guard active, let known = signers.take(commit.id) else { return try compute(commit) }
        hits.add(1, ordering: .relaxed)
        return known
    }

    /// Computes the signer of `commit`, whose bytes the indexer named `commit.id`, and keeps it: true
    /// when kept, false when there is nothing to keep (known already, or a failure), nil once full.
    static func keepSigner(of commit: Commit, _ compute: (Commit) throws -> CommitSigner) -> Bool? {
        signers.keep(commit.id, weight: 1) { try compute(commit) }
    }

    /// The notice in blob `blob` as it was opened ahead, if it was; the caller opens it otherwise.
    static func notice(_ blob: ObjectID) -> Opened<Notice>? {
        guard active, let known = notices.take(blob) else { return nil }
        hits.add(1, ordering: .relaxed)
        return known
    }

    /// Opens `file`, the blob the indexer named `blob`, as a notice and keeps it, answering as
    /// `keepSigner` does.
    static func keepNotice(_ blob: ObjectID, file: Data, _ compute: (Data) throws -> Opened<Notice>) -> Bool? {
        notices.keep(blob, weight: file.count) { try compute(file) }
    }

    /// Results kept by the name of the object they were computed from, up to a total weight; once
    /// full, nothing more is kept until some are taken.
    private final class Kept<Value: Sendable>: Sendable {
        private let storage = Mutex<(weight: Int, values: [ObjectID: (value: Value, weight: Int)])>((0, [:]))
        private let limit: Int

        init(limit: Int) {
            self.limit = limit
        }

        /// The value kept for `key`, let go here: a verification asks once for each, and its thread
        /// frees what it took, where the last early checks would free it all on one thread. Asked
        /// again, the value is computed again. Its weight is given back: a resident verifier's early
        /// checks follow one another for as long as pushes do, and what is kept at once stays bounded.
        func take(_ key: ObjectID) -> Value? {
            storage.withLock { storage in
                guard let kept = storage.values.removeValue(forKey: key) else { return nil }
                storage.weight -= kept.weight
                return kept.value
            }
        }

        /// Computes the value for `key` and keeps it: true when kept, false when there is nothing to
        /// keep (known already, or `compute` failed), nil once full.
        func keep(_ key: ObjectID, weight: Int, _ compute: () throws -> Value) -> Bool? {
            let (known, full) = storage.withLock { ($0.values[key] != nil, $0.weight + weight > limit) }
            if full { return nil }
            guard !known, let value = try? compute() else { return false }
            return storage.withLock {
                guard $0.values[key] == nil else { return false }
                guard $0.weight + weight <= limit else { return nil }
                $0.weight += weight
                $0.values[key] = (value, weight)
                return true
            }
        }

        func removeAll() {
            storage.withLock { $0 = (0, [:]) }
        }
    }
}

/// Checks made on a clone's pack while it is indexed: a thread takes each commit and each blob that
/// may be a notice as the indexer names them (`PackTee`) and computes the commit's signer and the
/// notice's opening, keeping what succeeds under the object's name (`CheckedAhead`). The verification
/// that follows the fetch finds them instead of computing them. Stopped where the verification's own
/// threads start (`finish`): whatever it has not reached by then, the verifier computes itself, as it
/// always did. What it kept is let go when this value goes, so keep it until the verification is done.
public final class EarlyChecks: Sendable {
    /// What the reading thread holds (not the `EarlyChecks`: dropped unfinished, it still goes).
    private final class Reading: Sendable {
        let tee: PackTee
        let done = DispatchSemaphore(value: 0)
        /// Commits and notices kept.
        let kept = Atomic<Int>(0)

        init(_ tee: PackTee) {
            self.tee = tee
        }
    }

    private let reading: Reading
    private let finished = Atomic<Bool>(false)

    /// Starts reading `tee` on a thread of its own; `idle`, a thread that runs only on cores nothing
    /// else wants (Linux's `SCHED_IDLE`), so that reading ahead never slows what it reads ahead of.
    public init(reading tee: PackTee, idle: Bool = false) {
        reading = Reading(tee)
        CheckedAhead.begin()
        let thread = Thread { [reading] in
            if idle { runOnlyWhenIdle() }
            Self.read(reading)
            reading.done.signal()
        }
        thread.name = "cohort early checks"
        thread.start()
    }

    deinit {
        reading.tee.stop()
        CheckedAhead.end()
    }

    /// Results kept so far.
    public var kept: Int { reading.kept.load(ordering: .relaxed) }

    /// Stops the reader (or, `readingAll`, lets it read to the pack's end first), waits for it and
    /// lets go of the pack's copy; returns how many results it kept. Later calls only return that.
    @discardableResult
    public func finish(readingAll: Bool = false) -> Int {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return reading.kept.load(ordering: .relaxed) }
        if readingAll { reading.tee.end() } else { reading.tee.stop() }
        reading.done.wait()
        reading.tee.forget()
        return reading.kept.load(ordering: .relaxed)
    }

    private static func read(_ reading: Reading) {
        var more = true
        while more, let next = reading.tee.next({ kind, id, bytes -> Bool in
            let result: Bool?
            switch kind {
            case .commit:
                guard bytes.count <= Repository.maxCommitBytes, let commit = try? Commit(raw: Data(bytes), id: id) else { return true }
                result = CheckedAhead.keepSigner(of: commit, CommitPreparation.checkedSigner)
            case .blob:
                // A notice is a JSON object: a blob that does not start like one is not opened.
                guard bytes.count <= Notice.maxEnvelopeBytes, bytes.first == UInt8(ascii: "{") else { return true }
                let file = Data(bytes)
                result = CheckedAhead.keepNotice(id, file: file) { try Envelope.open($0, as: Notice.self, path: "notice") }
            }
            if result == true { reading.kept.add(1, ordering: .relaxed) }
            return result != nil
        }) {
            more = next
        }
    }
}

/// Lets the calling thread run only on cores no other thread wants (Linux's `SCHED_IDLE`; where that is
/// refused, the lowest priority, nice 19; elsewhere nothing changes).
public func runOnlyWhenIdle() {
    #if os(Linux)
    var parameters = sched_param()
    // SCHED_IDLE (5), which Glibc's module leaves out with the rest of _GNU_SOURCE. On Linux both calls
    // change the calling thread only.
    if sched_setscheduler(0, 5, &parameters) != 0 {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
    }
    #endif
}
