import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// The one verification core: checks commits against the rules of the collaboration repository,
/// for `cohort verify`, the pre-receive hook, the server and every client. Commits must be verified
/// parents first (as `Repository.commits(from:)` lists them); a parent not verified in this run is trusted and its
/// state read from its tree (that is how remembered and already-accepted history is reused).
public final class HistoryVerifier {
    /// Most parents of one merge.
    public static let maxParents = 16
    /// Most changes under `.cohort/` in one commit (notices, mostly): a folder of tens of thousands of
    /// files can be started, and a merge can bring in that many notices from another line.
    public static let maxCohortChanges = 100_000

    public let repository: Repository
    /// When set, a genesis commit must carry this identifier (a repository keeps its collaboration).
    public var expectedIdentifier: String?
    /// The collaboration's one genesis commit, once known: no other root commit is ever accepted.
    public var expectedGenesis: ObjectID?
    private var states: [ObjectID: CollaborationState] = [:]
    /// The `.cohort` tree of each commit verified in this run, so a child need not look its parent's up.
    private var cohortTrees: [ObjectID: ObjectID] = [:]
    private var genesisOf: [ObjectID: ObjectID] = [:]
    private var signers: [ObjectID: CommitSigner] = [:]
    /// Commits being prepared ahead, on other threads.
    private var pipelines: [PreparationPipeline] = []
    private var openedNotices: [ObjectID: Result<Opened<Notice>, CohortError>] = [:]
    /// Threads that prepare commits ahead and open a commit's notices (`prepare` sets it).
    private var threads = HistoryVerifier.cores
    /// The cores this process may use, read once: Foundation reads the cgroup's files on every ask
    /// (eight system calls, twice a push in a resident verifier).
    public static let cores = ProcessInfo.processInfo.activeProcessorCount
    /// The trees read on this thread, for commits prepared here rather than ahead (released in
    /// `deinit`, before the repository they came from).
    private var memo: TreeMemo? = TreeMemo()
    /// Commits accepted only as a read-only participant replacing their own root.
    private var rotationsOnly = Set<ObjectID>()

    public init(repository: Repository, expectedIdentifier: String? = nil) {
        self.repository = repository
        self.expectedIdentifier = expectedIdentifier
    }

    deinit {
        finishPreparing()
        memo = nil
    }

    /// The state as of `commit`: from this run's verification, or read from the commit's tree.
    public func state(at commit: ObjectID) throws -> CollaborationState {
        if let known = states[commit] { return known }
        let state = try CollaborationState(repository: repository, tree: repository.tree(ofCommit: commit))
        states[commit] = state
        return state
    }

    /// The root commit `commit` descends from along first parents.
    public func genesis(of commit: ObjectID) throws -> ObjectID {
        if let known = genesisOf[commit] { return known }
        let root = try repository.firstParentRoot(of: commit)
        genesisOf[commit] = root
        return root
    }

    /// Takes `genesis` as the root `commit` descends from without walking its first-parent line: for
    /// a branch tip accepted before, in a repository whose genesis is pinned (`PushVerifier.genesisKey`).
    public func assume(genesis: ObjectID, of commit: ObjectID) {
        genesisOf[commit] = genesis
    }

    /// Whether `commit`, verified in this run, was accepted only as its read-only signer replacing
    /// their own root (the one change a participant without write permission may make).
    public func isOnlySelfRotation(_ commit: ObjectID) -> Bool {
        rotationsOnly.contains(commit)
    }

    /// The root and key that signed `commit`, if this run verified it.
    public func verifiedSigner(of commit: ObjectID) -> CommitSigner? {
        signers[commit]
    }

    /// Starts checking ahead, on `threads` threads, what does not depend on the collaboration's state
    /// (each commit's signature, what it changes under `.cohort/`, its notices' signatures) for `ids`,
    /// in their order, so that `verify` (called in the same order) mostly applies the rules while the
    /// next commits are prepared. Worth it for long histories; results are the same.
    public func prepare(_ ids: [ObjectID], threads: Int = HistoryVerifier.cores) {
        self.threads = threads
        guard threads > 1, ids.count >= CommitPreparation.minimumBatch else { return }
        // Without trees kept between handles: a history this long reads trees mostly of its own,
        // which keeping (each hashed, copied and stored under one lock) cost more than it saved
        // (Docs/Benchmarks.md); a resident verifier keeps what the pushes of a few commits read.
        pipelines.append(PreparationPipeline(ids, origin: repository.origin, threads: threads))
    }

    /// Stops the preparations under way (their threads end after the commit each has in hand):
    /// once the commits they were started for are verified, or one was refused.
    public func finishPreparing() {
        for pipeline in pipelines { pipeline.cancel() }
        pipelines.removeAll()
    }

    /// The notice in `blob`, its signature checked (ahead of time when prepared).
    func openNotice(_ blob: ObjectID, path: String) throws -> Opened<Notice> {
        if let known = openedNotices.removeValue(forKey: blob) { return try known.get() }
        return try CommitPreparation.openNotice(blob, path: path, in: repository)
    }

    /// Verifies one commit whose parents are verified or trusted; returns its state.
    @discardableResult
    public func verify(_ id: ObjectID) throws -> CollaborationState {
        // Opened for this commit only: what its rules did not take (a merge walked against another
        // parent than the first) is not kept for the rest of the run.
        defer { openedNotices.removeAll() }
        do {
            // Prepared ahead on other threads, or here: its notices then opened on the other cores
            // while this thread walks its trees, when its signer is a participant of its first
            // parent's state; otherwise by the rules, once the signer may commit (`openAdded`).
            let opening: CommitPreparation.NoticeOpening = threads > 1 ? .alongside(threads: threads, when: isParticipantAlready) : .later
            let prepared = try pipelines.first { $0.contains(id) }?.take(id)
                ?? CommitPreparation.prepare(id, in: repository, memo: memo, opening: opening)
            openedNotices = prepared.notices
            let (state, cohortTree) = try check(prepared.commit, prepared: prepared)
            states[id] = state
            cohortTrees[id] = cohortTree
            return state
        } catch let error as CohortError {
            throw Violation(commit: id, error: error)
        }
    }

    /// Whether `commit` has one parent, in whose state (which the rules read next in any case) `signer`
    /// is a participant: its notices are then worth opening before the rules reach them. The rules
    /// still decide; this only saves time. A stranger's commit still costs no envelope, nor does a
    /// merge (whose state may come from another parent, where the signer may have been removed).
    private func isParticipantAlready(_ commit: Commit, _ signer: CommitSigner) -> Bool {
        guard commit.parents.count == 1, let state = try? state(at: commit.parents[0]) else { return false }
        return state.participant(signer.root) != nil
    }

    /// Opens the notices `prepared` adds that were not opened ahead, on `threads` threads: called once
    /// the commit's signer may commit here, so that a stranger's commit costs no envelope at all.
    private func openAdded(_ prepared: PreparedCommit) {
        guard prepared.notices.isEmpty, !prepared.added.isEmpty else { return }
        openedNotices = CommitPreparation.openNotices(prepared.added, in: repository, threads: threads)
    }

    private func check(_ commit: Commit, prepared: PreparedCommit) throws -> (CollaborationState, ObjectID) {
        let commitSigner = try prepared.signer.get()
        signers[commit.id] = commitSigner
        let signer = commitSigner.root
        let cohortTree = try prepared.cohortTree.get()
        try prepared.paths.get()
        guard !commit.parents.isEmpty else {
            return (try checkGenesis(prepared, signer: signer), cohortTree)
        }
        guard commit.parents.count <= Self.maxParents else {
            throw CohortError(.malformed, "a merge of \(commit.parents.count) parents; at most \(Self.maxParents) are accepted")
        }
        let genesis = try checkGenesisOfParents(commit)
        genesisOf[commit.id] = genesis

        // The state a commit starts from is the newest among its parents (`MergeBase`): a merge can
        // never bring an older membership or collaboration file back, whichever parent holds it.
        let parentStates = try commit.parents.map { try state(at: $0) }
        let base = try MergeBase(commit: commit, states: parentStates)
        let before = base.state
        let current = try before.requireParticipant(signer)
        openAdded(prepared)

        let baseCohort = try cohortFolder(of: commit.parents[base.membershipParent])
        var transition = StateTransition(verifier: self, commit: commit, signer: signer, participant: current, before: before)
        if baseCohort != cohortTree || commit.parents.count > 1 {
            // Prepared changes are against the first parent: usable when that is the base.
            let ahead = base.membershipParent == 0 ? try prepared.cohortChanges.get() : nil
            try transition.apply(ahead ?? repository.treeChanges(from: baseCohort, to: cohortTree, maxDepth: 3, maxChanges: Self.maxCohortChanges))
        }
        for (index, other) in commit.parents.enumerated() where index != base.membershipParent {
            try checkNoticesKept(from: other, in: cohortTree)
        }
        if current.permission == .readOnly {
            guard try transition.isOnlySelfRotation(parentTree: repository.tree(ofCommit: commit.parents[base.membershipParent])) else {
                throw CohortError(.notPermitted, "\(current.label) is a read-only participant and cannot change the collaboration",
                                  hint: "ask the owner for write permission")
            }
            rotationsOnly.insert(commit.id)
        }
        if commit.parents.count > 1 {
            try checkSideCommits(of: commit, base: base.membershipParent, against: transition.after)
        }
        return (transition.after, cohortTree)
    }

    /// Every commit a merge brings in only through its other parents (not on the line of the parent
    /// its membership comes from) must be signed by a participant with write permission in the
    /// merge's own membership: what someone signed before their removal cannot come in sideways.
    private func checkSideCommits(of commit: Commit, base: Int, against state: CollaborationState) throws {
        let others = commit.parents.enumerated().filter { $0.offset != base }.map(\.element)
        for id in try repository.commits(fromAll: others, hiding: [commit.parents[base]]) {
            let root = try signers[id]?.root ?? CommitPreparation.claimedRoot(of: repository.commit(id))
            guard let participant = state.participant(root), participant.permission == .readWrite else {
                let removed = state.directory.status(of: root) == .revoked
                throw CohortError(removed ? .revoked : .notPermitted,
                                  "the merge brings in \(id.hex), signed by root \(root.hex), who \(removed ? "was removed" : "is not a participant with write permission") in membership version \(state.membership.version)",
                                  hint: "only work of current participants with write permission can be merged")
            }
        }
    }

    /// Every parent descends from the collaboration's one genesis; returns it.
    private func checkGenesisOfParents(_ commit: Commit) throws -> ObjectID {
        let genesis = try self.genesis(of: commit.parents[0])
        if let expectedGenesis {
            guard genesis == expectedGenesis else {
                throw CohortError(.notPermitted, "the commit descends from genesis \(genesis.hex), not from this collaboration's \(expectedGenesis.hex)")
            }
        } else {
            expectedGenesis = genesis
        }
        for other in commit.parents.dropFirst() where try self.genesis(of: other) != genesis {
            throw CohortError(.notPermitted, "the merge joins \(other.hex), which does not descend from this collaboration's genesis")
        }
        return genesis
    }

    /// A merge keeps every notice of every parent, unchanged.
    private func checkNoticesKept(from parent: ObjectID, in cohortTree: ObjectID) throws {
        let theirs = try cohortFolder(of: parent)
        for change in try repository.treeChanges(from: theirs, to: cohortTree, maxDepth: 3, maxChanges: Self.maxCohortChanges)
        where change.kind != .added && CohortLayout.isNoticePath(CohortLayout.folder + "/" + (change.oldPath ?? "")) {
            throw CohortError(.notPermitted, "the merge drops or changes notice \(change.oldPath ?? "") of \(parent.hex)")
        }
    }

    private func cohortFolder(of commit: ObjectID) throws -> ObjectID {
        if let known = cohortTrees[commit] { return known }
        guard let entry = try repository.entry(at: CohortLayout.folder, inTree: repository.tree(ofCommit: commit)), entry.isTree else {
            throw CohortError(.malformed, "\(CohortLayout.folder)/ is missing from \(commit.hex)")
        }
        cohortTrees[commit] = entry.id
        return entry.id
    }

    private func checkGenesis(_ prepared: PreparedCommit, signer: RootHash) throws -> CollaborationState {
        let commit = prepared.commit
        let changes = try prepared.cohortChanges.get()
        if let expectedGenesis, expectedGenesis != commit.id {
            throw CohortError(.notPermitted, "a collaboration has one genesis commit, \(expectedGenesis.hex); this is another",
                              hint: "base your work on the collaboration's history")
        }
        let (collaboration, collaborationBlob, membership, membersBlob) = try repository.openCohortFiles(tree: commit.tree)
        let owner = try collaboration.value.ownerRoot()
        guard collaboration.signer == owner, membership.signer == owner else {
            throw CohortError(.notPermitted, "the genesis files are not signed by the owner the collaboration file names")
        }
        guard signer == owner else {
            throw CohortError(.notPermitted, "the genesis commit is signed by root \(signer.hex), not by the owner")
        }
        openAdded(prepared)
        if let expectedIdentifier, collaboration.value.identifier != expectedIdentifier {
            throw CohortError(.notPermitted, "this history is collaboration \(collaboration.value.identifier), the repository holds \(expectedIdentifier)")
        }
        let members = membership.value
        guard members.version == 1, members.removed.isEmpty, members.participants.count == 1,
              let first = members.participants.first, (try first.rootHash()) == owner, first.permission == .readWrite
        else {
            throw CohortError(.malformed, "membership version 1 must list exactly the owner, with write permission")
        }
        let state = try CollaborationState(collaboration: collaboration, collaborationBlob: collaborationBlob,
                                           membership: membership, membersBlob: membersBlob)
        var transition = StateTransition(verifier: self, commit: commit, signer: signer, participant: first, before: state)
        try transition.apply(changes.filter {
            let path = CohortLayout.folder + "/" + ($0.newPath ?? "")
            return path != CohortLayout.collaboration && path != CohortLayout.members
        })
        expectedGenesis = commit.id
        expectedIdentifier = expectedIdentifier ?? collaboration.value.identifier
        genesisOf[commit.id] = commit.id
        return transition.after
    }
}
