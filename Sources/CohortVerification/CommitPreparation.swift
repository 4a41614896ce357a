import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// Who signed a commit: the root its trailer's proof folds to, and the key that made its signature.
public struct CommitSigner: Sendable {
    public let root: RootHash
    public let key: P256Key
}

/// What can be checked of a commit without knowing the collaboration's state: its signature and
/// trailer, the top level of its tree, what it changes under `.cohort/` from its first parent, and the
/// signatures of the notices it adds. Failures are kept, to be raised where the rules reach them.
struct PreparedCommit: Sendable {
    let commit: Commit
    let signer: Result<CommitSigner, CohortError>
    let cohortTree: Result<ObjectID, CohortError>
    let cohortChanges: Result<[Change], CohortError>
    /// Whether every path the commit adds or changes (against its first parent) is one git checks out.
    let paths: Result<Void, CohortError>
    /// The notices the commit adds, by blob and path.
    let added: [(blob: ObjectID, path: String)]
    /// Those notices opened ahead (on a pipeline's thread), or empty: the rules then open them
    /// once the signer is known to be a participant (`HistoryVerifier.openAdded`).
    let notices: [ObjectID: Result<Opened<Notice>, CohortError>]
}

/// The state-independent half of verification, done ahead for many commits on several threads, each
/// with its own repository handle (`PreparationPipeline`), while the rules run in order on one thread.
enum CommitPreparation {
    /// Below this many commits, preparing ahead costs more than it saves.
    static let minimumBatch = 64
    /// Commits one thread prepares in a row.
    static let run = 128

    /// Notices one thread opens before a commit's notices are spread over several.
    static let noticesPerThread = 8
    /// Notice blobs read (and held) at a time when a commit adds many.
    static let noticeChunk = 512

    /// When `prepare` opens the notices a commit adds.
    enum NoticeOpening {
        /// Not at all: the rules open them once the signer may commit (`HistoryVerifier.openAdded`).
        case later
        /// After the changes are known, on this thread (a pipeline's worker: the other cores have
        /// commits of their own).
        case here
        /// As the walk of the changes finds them, on `threads` other threads, when the commit's signer
        /// passes `when` (a participant of the state the commit starts from): the rules' thread
        /// reads the trees and the blobs meanwhile.
        case alongside(threads: Int, when: (Commit, CommitSigner) -> Bool)
    }

    /// Prepares commit `id`, opening the notices it adds as `opening` says. A commit whose own
    /// signature fails is prepared no further: the rules refuse it for that first, and reading its
    /// trees and envelopes would only hand whoever pushes it a cheap way to load the server.
    static func prepare(_ id: ObjectID, in repository: Repository, memo: TreeMemo? = nil, opening: NoticeOpening) throws -> PreparedCommit {
        let commit = try repository.commit(id)
        memo?.note(commit: id, tree: commit.tree)
        let signer = Result { try Self.signer(of: commit) }.mapCohortError()
        if case .failure(let refusal) = signer {
            return PreparedCommit(commit: commit, signer: signer, cohortTree: .failure(refusal), cohortChanges: .failure(refusal),
                                  paths: .failure(refusal), added: [], notices: [:])
        }
        var stream: NoticeStream?
        if case .alongside(let threads, let when) = opening, threads > 0, let known = try? signer.get(), when(commit, known) {
            stream = NoticeStream(threads: threads)
        }
        // Each root tree is read once: for the `.cohort` folders and for the paths.
        let root = Result { try repository.entries(ofTree: commit.tree, memo: memo) }.mapCohortError()
        let parentRoot = Result { try commit.parents.first.map { parent in
            try repository.entries(ofTree: memo?.tree(ofCommit: parent, in: repository) ?? repository.tree(ofCommit: parent), memo: memo)
        } }.mapCohortError()
        let cohortTree = Result { try topLevelCohort(root.get()) }.mapCohortError()
        let changes = Result { () throws -> [Change] in
            let mine = try cohortTree.get()
            let parent = try parentRoot.get().map { entries -> ObjectID in
                guard let entry = entries.first(where: { $0.name == CohortLayout.folder }), entry.isTree else {
                    throw CohortError(.malformed, "\(CohortLayout.folder)/ is missing from \(commit.parents[0].hex)")
                }
                return entry.id
            }
            return try repository.treeChanges(from: parent, to: mine, maxDepth: 3, maxChanges: HistoryVerifier.maxCohortChanges, memo: memo,
                                              found: stream.map { stream in { change in
                                                  guard let notice = addedNotice(change) else { return }
                                                  stream.add(notice, file: Result { try repository.blob(notice.blob, maxBytes: Notice.maxEnvelopeBytes) }.mapCohortError())
                                              } })
        }.mapCohortError()
        let added = ((try? changes.get()) ?? []).compactMap(addedNotice)
        let notices: [ObjectID: Result<Opened<Notice>, CohortError>]
        if let stream {
            // Joined whatever happened; what was opened for changes that could not all be listed is dropped.
            let opened = stream.finish()
            notices = (try? changes.get()) == nil ? [:] : opened
        } else if case .here = opening {
            notices = openNotices(added, in: repository, threads: 1)
        } else {
            notices = [:]
        }
        let paths = Result { try checkPaths(root.get(), parent: parentRoot.get(), in: repository, memo: memo) }.mapCohortError()
        return PreparedCommit(commit: commit, signer: signer, cohortTree: cohortTree, cohortChanges: changes, paths: paths,
                              added: added, notices: notices)
    }

    /// The commit's signature verified over its bytes, and its trailer's proof for the same key folded.
    static func signer(of commit: Commit) throws -> CommitSigner {
        guard let signature = commit.signature else {
            throw CohortError(.badSignature, "commit is not signed", hint: "commit with `cohort commit`, which signs with your device key")
        }
        let key = try SSHSignature.verify(signature.armored, message: signature.signedData)
        let (scheme, proof) = try CommitTrailer.parse(commit.message)
        // apple-v1 keys sign raw messages for Apple's stack: such a key never signs for Cohort.
        guard scheme == .cohortV1 else {
            throw CohortError(.badProof, "commit is signed under \(scheme.rawValue); commits are signed with cohort-v1 keys")
        }
        guard proof.publicKey == key.x963 else {
            throw CohortError(.badSignature, "commit is signed by key \(key.fingerprint) but its Cohort-Proof names another key")
        }
        return CommitSigner(root: try proof.root(under: scheme), key: key)
    }

    /// The root a commit's trailer folds to, without checking its signature: for commits verified
    /// before (remembered, or behind a ref the verifier accepted), whose signature was checked then.
    static func claimedRoot(of commit: Commit) throws -> RootHash {
        let (scheme, proof) = try CommitTrailer.parse(commit.message)
        return try proof.root(under: scheme)
    }

    /// Every path a commit adds or changes against its first parent (all of them for a root commit)
    /// is one git would check out on every platform (`GitPath`), from the root entries of the commit's
    /// tree and its parent's. Paths already in the first parent were checked when they came in; those
    /// under `.cohort/` are pinned to a few exact shapes by the state rules, which refuse anything else.
    static func checkPaths(_ root: [TreeEntry], parent: [TreeEntry]?, in repository: Repository, memo: TreeMemo? = nil) throws {
        let before = Dictionary((parent ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entry in root {
            let old = before[entry.name]
            if old == entry { continue }
            try GitPath.check(component: entry.name, mode: entry.mode, path: entry.name)
            if entry.isTree, entry.name != CohortLayout.folder {
                try repository.checkNewPaths(from: old?.isTree == true ? old?.id : nil, to: entry.id, prefix: entry.name + "/", memo: memo)
            }
        }
    }

    /// The top level of a commit's tree (its root entries): a `.cohort` folder, and no name that would
    /// land on it on another file system or appear twice. Returns the `.cohort` tree.
    static func topLevelCohort(_ entries: [TreeEntry]) throws -> ObjectID {
        var seen = Set<String>()
        var cohort: TreeEntry?
        for entry in entries {
            guard seen.insert(entry.name).inserted else {
                throw CohortError(.malformed, "the commit's tree lists '\(entry.name)' twice")
            }
            if entry.name == CohortLayout.folder {
                cohort = entry
            } else if CohortLayout.isLookAlike(entry.name) {
                throw CohortError(.notPermitted, "'\(entry.name)' would stand in for \(CohortLayout.folder)/ on some systems", hint: "rename it")
            }
        }
        guard let cohort, cohort.isTree else {
            throw CohortError(.malformed, "\(CohortLayout.folder)/ is missing from the commit")
        }
        return cohort.id
    }

    /// The notice `change` adds, if it adds one: its blob and its path from the top of the tree.
    static func addedNotice(_ change: Change) -> (blob: ObjectID, path: String)? {
        guard change.kind == .added, let blob = change.newID else { return nil }
        let path = CohortLayout.folder + "/" + (change.newPath ?? "")
        return CohortLayout.isNoticePath(path) ? (blob, path) : nil
    }

    static func openNotice(_ blob: ObjectID, path: String, in repository: Repository) throws -> Opened<Notice> {
        try Envelope.open(repository.blob(blob, maxBytes: Notice.maxEnvelopeBytes), as: Notice.self, path: path)
    }

    /// The notices `added`, each opened (its JSON read, its signature checked), a chunk at a time.
    /// With enough of them, one thread reads the blobs in order (a repository handle is only ever
    /// used by one thread at a time) while up to `threads` open those already read; the reader joins
    /// them once it is done. Otherwise they are read and opened here.
    static func openNotices(_ added: [(blob: ObjectID, path: String)], in repository: Repository,
                            threads: Int) -> [ObjectID: Result<Opened<Notice>, CohortError>] {
        var notices: [ObjectID: Result<Opened<Notice>, CohortError>] = [:]
        for start in stride(from: 0, to: added.count, by: noticeChunk) {
            let chunk = Array(added[start..<min(start + noticeChunk, added.count)])
            let read: (Int) -> Result<Data, CohortError> = { index in
                Result { try repository.blob(chunk[index].blob, maxBytes: Notice.maxEnvelopeBytes) }.mapCohortError()
            }
            let open: @Sendable (Int, Result<Data, CohortError>) -> Result<Opened<Notice>, CohortError> = { index, file in
                Result { try Envelope.open(file.get(), as: Notice.self, path: chunk[index].path) }.mapCohortError()
            }
            let used = min(threads, chunk.count / noticesPerThread)
            let opened: [Result<Opened<Notice>, CohortError>]
            if used > 1 {
                let files = Slots<Result<Data, CohortError>>(count: chunk.count)
                let slots = Slots<Result<Opened<Notice>, CohortError>>(count: chunk.count)
                let queue = ReadQueue(count: chunk.count)
                // Whichever part runs first reads, so the reader always runs, whatever the width.
                nonisolated(unsafe) let reader = read
                DispatchQueue.concurrentPerform(iterations: used + 1) { _ in
                    if queue.claimReader() {
                        for index in chunk.indices {
                            files.set(index, reader(index))
                            queue.published(index + 1)
                        }
                    }
                    while let index = queue.next() { slots.set(index, open(index, files.value(index))) }
                }
                opened = slots.values
            } else {
                opened = chunk.indices.map { open($0, read($0)) }
            }
            for (index, item) in chunk.enumerated() where notices[item.blob] == nil {
                notices[item.blob] = opened[index]
            }
        }
        return notices
    }
}

/// Hands out, in order, the items one thread has read so far; waits while the next is still to come.
private final class ReadQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var read = 0
    private var taken = 0
    private var readerClaimed = false

    init(count: Int) {
        self.count = count
    }

    /// True for the first caller only: it reads every item, then opens as the others do.
    func claimReader() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !readerClaimed else { return false }
        readerClaimed = true
        return true
    }

    /// The first `read` items are ready.
    func published(_ read: Int) {
        condition.lock()
        self.read = read
        condition.broadcast()
        condition.unlock()
    }

    /// The next item to open, or nil when every one is taken.
    func next() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while taken >= read, read < count { condition.wait() }
        guard taken < count else { return nil }
        taken += 1
        return taken - 1
    }
}

extension Repository {
    static func reopen(_ origin: Origin) throws -> Repository {
        switch origin {
        case .path(let url): try Repository(at: url)
        case .environment: try Repository.openFromEnvironment()
        }
    }
}

extension Result where Failure == any Error {
    /// Keeps `CohortError`s as they are and wraps anything else as `E_GIT`.
    func mapCohortError() -> Result<Success, CohortError> {
        mapError { CohortError($0, otherwise: .git) }
    }
}

/// Results written by several threads, each into slots no other thread writes, read once all are done.
/// Raw memory, so that no Swift access to a shared array is in progress on two threads at once.
private final class Slots<Value: Sendable>: @unchecked Sendable {
    private let count: Int
    private let storage: UnsafeMutablePointer<Value?>

    init(count: Int) {
        self.count = count
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil, count: count)
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    func set(_ index: Int, _ value: Value) {
        precondition(index >= 0 && index < count)
        storage[index] = value
    }

    func value(_ index: Int) -> Value {
        precondition(index >= 0 && index < count)
        return storage[index]!
    }

    var values: [Value] {
        (0..<count).map { storage[$0]! }
    }
}
