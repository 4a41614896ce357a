import CohortBase
import CohortCollaboration
import CohortGit
import Crypto
import Foundation
import Synchronization

/// Results of the two costliest pure computations of verification, a commit's signer and a notice's
/// opening, computed ahead from a clone's pack while libgit2 still indexes it (`EarlyChecks`), and
/// found again by the verifier. Each is keyed by the SHA-256 of every input the computation reads, and
/// holds only what that computation returned for them: a result found here is exactly the one the
/// verifier would compute, so the memo moves work and changes no verdict. Failures are never kept
/// (the verifier computes them again, with its paths in the messages). Consulted only while early
/// checks are alive in the process (`EarlyChecks`), and emptied when the last goes: elsewhere,
/// nothing is hashed for it.
enum CheckedAhead {
    /// Signers kept at most.
    static let signerLimit = 1 << 17
    /// Notice files kept at most, in bytes (an opened notice holds about twice its file).
    static let noticeByteLimit = 64 << 20

    /// Early checks alive.
    private static let users = Atomic<Int>(0)
    /// Results the verifier found here rather than computed (for tests).
    static let hits = Atomic<Int>(0)
    private static let signers = Mutex<[SHA256Digest: CommitSigner]>([:])
    private static let notices = Mutex<(bytes: Int, opened: [SHA256Digest: Opened<Notice>])>((0, [:]))

    /// One more user: until it ends, the verifier in this process looks here first.
    static func begin() {
        users.add(1, ordering: .sequentiallyConsistent)
    }

    /// One user fewer; the last empties the memo.
    static func end() {
        guard users.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
        signers.withLock { $0.removeAll() }
        notices.withLock { $0 = (0, [:]) }
    }

    private static var active: Bool { users.load(ordering: .sequentiallyConsistent) > 0 }

    /// `compute(commit)`, or what it returned before for a commit of the same signature, signed bytes
    /// and message.
    static func signer(of commit: Commit, _ compute: (Commit) throws -> CommitSigner) throws -> CommitSigner {
        guard active, let key = key(of: commit) else { return try compute(commit) }
        if let known = signers.withLock({ $0[key] }) {
            hits.add(1, ordering: .relaxed)
            return known
        }
        return try compute(commit)
    }

    /// Computes the signer of `commit` and keeps it: true when kept, false when there is nothing to
    /// keep (known already, or a failure), nil once the memo is full.
    static func keepSigner(of commit: Commit, _ compute: (Commit) throws -> CommitSigner) -> Bool? {
        guard let key = key(of: commit) else { return false }
        let (known, full) = signers.withLock { ($0[key] != nil, $0.count >= signerLimit) }
        if full { return nil }
        guard !known, let signer = try? compute(commit) else { return false }
        return signers.withLock {
            guard $0.count < signerLimit else { return nil }
            $0[key] = signer
            return true
        }
    }

    /// `compute(file)`, or what it returned before for the same file.
    static func notice(_ file: Data, _ compute: (Data) throws -> Opened<Notice>) throws -> Opened<Notice> {
        guard active else { return try compute(file) }
        let key = SHA256.hash(data: file)
        if let known = notices.withLock({ $0.opened[key] }) {
            hits.add(1, ordering: .relaxed)
            return known
        }
        return try compute(file)
    }

    /// Opens `file` as a notice and keeps it, answering as `keepSigner` does.
    static func keepNotice(_ file: Data, _ compute: (Data) throws -> Opened<Notice>) -> Bool? {
        let key = SHA256.hash(data: file)
        let (known, full) = notices.withLock { ($0.opened[key] != nil, $0.bytes + file.count > noticeByteLimit) }
        if full { return nil }
        guard !known, let opened = try? compute(file) else { return false }
        return notices.withLock {
            guard $0.bytes + file.count <= noticeByteLimit else { return nil }
            $0.bytes += file.count
            $0.opened[key] = opened
            return true
        }
    }

    /// Every input `CommitPreparation.signer` reads: the armored signature, the bytes it signs and the
    /// message, each with its length. nil for an unsigned commit (its refusal is not kept).
    private static func key(of commit: Commit) -> SHA256Digest? {
        guard let signature = commit.signature else { return nil }
        var hash = SHA256()
        for part in [Data(signature.armored.utf8), signature.signedData, Data(commit.message.utf8)] {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hash.update(bufferPointer: $0) }
            hash.update(data: part)
        }
        return hash.finalize()
    }
}

/// Checks made on a clone's pack while libgit2 indexes it: a thread reads the copy of the pack
/// (`PackTee`) in pack order and computes, for each commit, its signer and, for each blob that may
/// be a notice, its opening, keeping what succeeds (`CheckedAhead`). The verification that follows
/// the fetch finds them instead of computing them. Stopped when the fetch ends (`finish`): whatever
/// it has not reached by then, the verifier computes itself, as it always did. What it kept is let
/// go when this value goes, so keep it until the verification is done.
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

    /// Starts reading `tee` on a thread of its own.
    public init(reading tee: PackTee) {
        reading = Reading(tee)
        CheckedAhead.begin()
        let thread = Thread { [reading] in
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
        while more, let next = reading.tee.next({ kind, bytes -> Bool in
            let result: Bool?
            switch kind {
            case .commit:
                guard bytes.count <= Repository.maxCommitBytes, let commit = try? Commit(raw: Data(bytes), id: .zero) else { return true }
                result = CheckedAhead.keepSigner(of: commit, CommitPreparation.checkedSigner)
            case .blob:
                // A notice is a JSON object: a blob that does not start like one is not opened.
                guard bytes.count <= Notice.maxEnvelopeBytes, bytes.first == UInt8(ascii: "{") else { return true }
                result = CheckedAhead.keepNotice(Data(bytes)) { try Envelope.open($0, as: Notice.self, path: "notice") }
            }
            if result == true { reading.kept.add(1, ordering: .relaxed) }
            return result != nil
        }) {
            more = next
        }
    }
}
