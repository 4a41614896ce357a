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
/// (the verifier computes them again, with its paths in the messages). Consulted only in a process
/// where early checks ran: elsewhere, nothing is hashed for it.
enum CheckedAhead {
    /// Signers kept at most.
    static let signerLimit = 1 << 17
    /// Notice files kept at most, in bytes (an opened notice holds about twice its file).
    static let noticeByteLimit = 64 << 20

    private static let active = Atomic<Bool>(false)
    private static let signers = Mutex<[SHA256Digest: CommitSigner]>([:])
    private static let notices = Mutex<(bytes: Int, opened: [SHA256Digest: Opened<Notice>])>((0, [:]))

    /// From now on, the verifier in this process looks here first.
    static func activate() {
        active.store(true, ordering: .releasing)
    }

    /// `compute(commit)`, or what it returned before for a commit of the same signature, signed bytes
    /// and message.
    static func signer(of commit: Commit, _ compute: (Commit) throws -> CommitSigner) throws -> CommitSigner {
        guard active.load(ordering: .acquiring), let key = key(of: commit) else { return try compute(commit) }
        if let known = signers.withLock({ $0[key] }) { return known }
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
        guard active.load(ordering: .acquiring) else { return try compute(file) }
        let key = SHA256.hash(data: file)
        if let known = notices.withLock({ $0.opened[key] }) { return known }
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
/// the fetch finds them instead of computing them. Stopped when the fetch ends: whatever it has not
/// reached by then, the verifier computes itself, as it always did.
public final class EarlyChecks: Sendable {
    private let tee: PackTee
    private let done = DispatchSemaphore(value: 0)
    /// Commits and notices kept (for tests and benchmarks).
    private let kept = Atomic<Int>(0)

    /// Starts reading `tee` on a thread of its own.
    public init(reading tee: PackTee) {
        self.tee = tee
        CheckedAhead.activate()
        let thread = Thread { [self] in
            read()
            done.signal()
        }
        thread.name = "cohort early checks"
        thread.start()
    }

    /// Stops the reader and waits for it; returns how many results it kept.
    @discardableResult
    public func finish() -> Int {
        tee.stop()
        done.wait()
        return kept.load(ordering: .relaxed)
    }

    private func read() {
        var more = true
        while more, let next = tee.next({ kind, bytes -> Bool in
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
            if result == true { kept.add(1, ordering: .relaxed) }
            return result != nil
        }) {
            more = next
        }
    }
}
