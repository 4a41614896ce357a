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

    /// Whether reading from the repository failed somewhere (`E_GIT`): a worker, whose handle is one
    /// of its own, then leaves the commit to the rules' handle, so that a failure of that handle alone
    /// (no file descriptor left, memory refused) never becomes a verdict.
    var readFailed: Bool {
        func failedReading<T>(_ result: Result<T, CohortError>) -> Bool {
            if case .failure(let error) = result { return error.code == .git }
            return false
        }
        return failedReading(signer) || failedReading(cohortTree) || failedReading(cohortChanges) || failedReading(paths)
            || notices.values.contains(where: failedReading)
    }
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
        /// On this thread once the changes are listed, for a commit of at most one parent adding at
        /// most `noticeChunk` notices (a pipeline's worker: the other cores have commits of their
        /// own). The worker opens them before the rules know whether the signer may commit, so what
        /// it holds stays bounded; a merge's, or more, are opened by the rules once the signer may.
        case here
        /// As the walk of the changes finds them, on `threads - 1` other threads (at least one), when
        /// the commit's signer passes `when` (a participant of the state the commit starts from): the
        /// rules' thread reads the trees and the blobs meanwhile, and joins them once it has. One
        /// thread a core: a third thread on two cores only slowed the walk that feeds them.
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
        if case .alongside(let threads, let when) = opening, let known = try? signer.get(), when(commit, known) {
            stream = NoticeStream(threads: max(1, threads - 1))
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
                                                  stream.add(notice) { read(notice.blob, in: repository) }
                                              } })
        }.mapCohortError()
        let listed = try? changes.get()
        let added = (listed ?? []).compactMap(addedNotice)
        var notices: [ObjectID: Result<Opened<Notice>, CohortError>] = [:]
        if let stream {
            // What was opened for changes that could not all be listed is dropped: the rules refuse
            // the commit for its changes first.
            notices = stream.finish(keeping: listed != nil)
        } else if case .here = opening, commit.parents.count <= 1, added.count <= noticeChunk {
            notices = openNotices(added, in: repository, threads: 1)
        }
        let paths = Result { try checkPaths(root.get(), parent: parentRoot.get(), in: repository, memo: memo) }.mapCohortError()
        return PreparedCommit(commit: commit, signer: signer, cohortTree: cohortTree, cohortChanges: changes, paths: paths,
                              added: added, notices: notices)
    }

    /// The commit's signature verified over its bytes, and its trailer's proof for the same key folded
    /// (as `checkedSigner`, or as it was computed ahead: `CheckedAhead`).
    static func signer(of commit: Commit) throws -> CommitSigner {
        try CheckedAhead.signer(of: commit, checkedSigner)
    }

    static func checkedSigner(of commit: Commit) throws -> CommitSigner {
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

    /// The notice in `blob` opened, or as it was opened ahead (`CheckedAhead`).
    static func openNotice(_ blob: ObjectID, path: String, in repository: Repository) throws -> Opened<Notice> {
        if let known = CheckedAhead.notice(blob) { return known }
        return try openNotice(read(blob, in: repository).get(), path: path)
    }

    /// A notice's file opened: its JSON read, its signature checked.
    static func openNotice(_ file: Data, path: String) throws -> Opened<Notice> {
        try Envelope.open(file, as: Notice.self, path: path)
    }

    /// The notices `added`, each opened (its JSON read, its signature checked): read here, opened on
    /// `threads` threads in all (`NoticeStream`).
    static func openNotices(_ added: [(blob: ObjectID, path: String)], in repository: Repository,
                            threads: Int) -> [ObjectID: Result<Opened<Notice>, CohortError>] {
        let stream = NoticeStream(threads: max(0, threads - 1))
        for notice in added { stream.add(notice) { read(notice.blob, in: repository) } }
        return stream.finish()
    }

    /// A notice's file, refused past the largest notice before it is inflated.
    private static func read(_ blob: ObjectID, in repository: Repository) -> Result<Data, CohortError> {
        Result { try repository.blob(blob, maxBytes: Notice.maxEnvelopeBytes) }.mapCohortError()
    }
}

extension Result where Failure == any Error {
    /// Keeps `CohortError`s as they are and wraps anything else as `E_GIT`.
    func mapCohortError() -> Result<Success, CohortError> {
        mapError { CohortError($0, otherwise: .git) }
    }
}
