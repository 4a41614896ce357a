import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// The one verification core: checks commits against the rules of the collaboration repository,
/// for `cohort verify`, the pre-receive hook, the server and every client. Commits must be verified
/// parents first (as `verifyHistory` walks them); a parent not verified in this run is trusted and its
/// state read from its tree (that is how remembered and already-accepted history is reused).
public final class HistoryVerifier {
    /// Most parents of one merge.
    public static let maxParents = 16
    /// Most changes under `.cohort/` in one commit (notices, mostly).
    public static let maxCohortChanges = 10_000

    public let repository: Repository
    /// When set, a genesis commit must carry this identifier (a repository keeps its collaboration).
    public var expectedIdentifier: String?
    /// The collaboration's one genesis commit, once known: no other root commit is ever accepted.
    public var expectedGenesis: ObjectID?
    private var states: [ObjectID: CollaborationState] = [:]
    /// The `.cohort` tree of each commit verified in this run, so a child need not look its parent's up.
    private var cohortTrees: [ObjectID: ObjectID] = [:]
    private var genesisOf: [ObjectID: ObjectID] = [:]
    private var signers: [ObjectID: (root: RootHash, key: P256Key)] = [:]

    public init(repository: Repository, expectedIdentifier: String? = nil) {
        self.repository = repository
        self.expectedIdentifier = expectedIdentifier
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

    /// The root and key that signed `commit`, if this run verified it.
    public func verifiedSigner(of commit: ObjectID) -> (root: RootHash, key: P256Key)? {
        signers[commit]
    }

    /// Verifies every commit reachable from `tip` that is not in `known` (nor behind one), parents
    /// first. Returns every commit of the history and those verified now; throws the first `Violation`.
    @discardableResult
    public func verifyHistory(to tip: ObjectID, known: Set<ObjectID> = []) throws -> (all: Int, verified: [ObjectID]) {
        let all = try repository.commits(from: tip)
        let fresh = all.filter { !known.contains($0) }
        for id in fresh { try verify(id) }
        return (all.count, fresh)
    }

    /// Verifies one commit whose parents are verified or trusted; returns its state.
    @discardableResult
    public func verify(_ id: ObjectID) throws -> CollaborationState {
        do {
            let commit = try repository.commit(id)
            let (state, cohortTree) = try check(commit)
            states[id] = state
            cohortTrees[id] = cohortTree
            return state
        } catch let error as CohortError {
            throw Violation(commit: id, error: error)
        }
    }

    /// The signer of a commit: its sshsig signature verified over the commit's bytes, and the
    /// trailer's proof for the same key folded to a root.
    public func signer(of commit: Commit) throws -> (root: RootHash, key: P256Key) {
        guard let signature = commit.signature else {
            throw CohortError(.badSignature, "commit is not signed", hint: "commit with `cohort commit`, which signs with your device key")
        }
        let key = try SSHSignature.verify(signature.armored, message: signature.signedData)
        let (scheme, proof) = try CommitTrailer.parse(commit.message)
        guard proof.publicKey == key.x963 else {
            throw CohortError(.badSignature, "commit is signed by key \(key.fingerprint) but its Cohort-Proof names another key")
        }
        return (try proof.root(under: scheme), key)
    }

    private func check(_ commit: Commit) throws -> (CollaborationState, ObjectID) {
        let (signer, key) = try signer(of: commit)
        signers[commit.id] = (signer, key)
        let cohortTree = try checkTopLevel(commit.tree)
        guard let parent = commit.parents.first else {
            return (try checkGenesis(commit, signer: signer, cohortTree: cohortTree), cohortTree)
        }
        guard commit.parents.count <= Self.maxParents else {
            throw CohortError(.malformed, "a merge of \(commit.parents.count) parents; at most \(Self.maxParents) are accepted")
        }
        let genesis = try checkGenesisOfParents(commit)
        genesisOf[commit.id] = genesis

        // A merge's membership is the newest of its parents' (or the next version after it), and
        // every parent's membership must lie on that one's chain: no branch can bring back an old one.
        let parentStates = try commit.parents.map { try state(at: $0) }
        var newest = 0
        for (index, candidate) in parentStates.enumerated() where candidate.membership.version > parentStates[newest].membership.version {
            newest = index
        }
        let before = parentStates[newest]
        for (index, other) in parentStates.enumerated() where index != newest {
            guard try isOnMembershipLine(other, of: commit.parents[newest], state: before) else {
                throw CohortError(.notPermitted, "the merge joins membership version \(other.membership.version) of \(commit.parents[index].hex), which is not in the history of version \(before.membership.version)",
                                  hint: "merge onto the branch with the newest membership")
            }
        }
        let participant = try parentStates[0].requireParticipant(signer)
        let current = newest == 0 ? participant : try before.requireParticipant(signer)

        let parentCohort = try cohortFolder(of: parent)
        var transition = StateTransition(verifier: self, commit: commit, signer: signer, participant: current, before: before)
        if parentCohort != cohortTree || newest != 0 {
            try transition.apply(try repository.treeChanges(from: parentCohort, to: cohortTree, maxDepth: 3, maxChanges: Self.maxCohortChanges))
        }
        for other in commit.parents.dropFirst() {
            try checkNoticesKept(from: other, in: cohortTree)
        }
        if participant.permission == .readOnly || current.permission == .readOnly {
            guard try transition.isOnlySelfRotation(parentTree: repository.tree(ofCommit: parent)) else {
                throw CohortError(.notPermitted, "\(participant.label) is a read-only participant and cannot change the collaboration",
                                  hint: "ask the owner for write permission")
            }
        }
        return (transition.after, cohortTree)
    }

    /// The top level of a commit's tree: a `.cohort` folder, and no name that would land on it on
    /// another file system or appear twice. Returns the `.cohort` tree.
    private func checkTopLevel(_ tree: ObjectID) throws -> ObjectID {
        var seen = Set<String>()
        var cohort: TreeEntry?
        for entry in try repository.entries(ofTree: tree) {
            guard seen.insert(entry.name).inserted else {
                throw CohortError(.malformed, "the commit's tree lists '\(entry.name)' twice")
            }
            if entry.name == CohortLayout.folder {
                cohort = entry
            } else if CohortLayout.isLookAlike(entry.name) {
                throw CohortError(.notPermitted, "'\(entry.name)' would stand in for \(CohortLayout.folder)/ on some systems",
                                  hint: "rename it")
            }
        }
        guard let cohort, cohort.isTree else {
            throw CohortError(.malformed, "\(CohortLayout.folder)/ is missing from the commit")
        }
        return cohort.id
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

    /// Whether `other`'s membership is `state`'s or one of the versions before it on the first-parent
    /// line of `commit`.
    private func isOnMembershipLine(_ other: CollaborationState, of commit: ObjectID, state: CollaborationState) throws -> Bool {
        if other.membersBlob == state.membersBlob { return true }
        guard other.membership.version < state.membership.version else { return false }
        for ancestor in try repository.firstParentLine(from: commit) {
            if try repository.entry(at: CohortLayout.members, inTree: repository.tree(ofCommit: ancestor))?.id == other.membersBlob {
                return true
            }
        }
        return false
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

    private func checkGenesis(_ commit: Commit, signer: RootHash, cohortTree: ObjectID) throws -> CollaborationState {
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
        let changes = try repository.treeChanges(from: nil, to: cohortTree, maxDepth: 3, maxChanges: Self.maxCohortChanges).filter {
            let path = CohortLayout.folder + "/" + ($0.newPath ?? "")
            return path != CohortLayout.collaboration && path != CohortLayout.members
        }
        try transition.apply(changes)
        expectedGenesis = commit.id
        expectedIdentifier = expectedIdentifier ?? collaboration.value.identifier
        genesisOf[commit.id] = commit.id
        return transition.after
    }
}
