import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// The one verification core: checks commits against the rules of the collaboration repository,
/// for `cohort verify`, the pre-receive hook, the server and every client. Commits must be verified
/// parents first (as `verifyHistory` walks them); a parent not verified in this run is trusted and its
/// state read from its tree (that is how remembered and already-accepted history is reused).
public final class HistoryVerifier {
    public let repository: Repository
    /// When set, a genesis commit must carry this identifier (a repository keeps its collaboration).
    public var expectedIdentifier: String?
    private var states: [ObjectID: CollaborationState] = [:]
    /// The `.cohort` tree of each commit verified in this run, so a child need not look its parent's up.
    private var cohortTrees: [ObjectID: ObjectID] = [:]

    public init(repository: Repository, expectedIdentifier: String? = nil) {
        self.repository = repository
        self.expectedIdentifier = expectedIdentifier
    }

    /// The state as of `commit`: from this run's verification, or read from the commit's tree.
    public func state(at commit: ObjectID) throws -> CollaborationState {
        if let known = states[commit] { return known }
        let (collaboration, collaborationBlob, membership, membersBlob) = try repository.openCohortFiles(tree: repository.tree(ofCommit: commit))
        let state = try CollaborationState(collaboration: collaboration, collaborationBlob: collaborationBlob,
                                           membership: membership, membersBlob: membersBlob)
        states[commit] = state
        return state
    }

    /// Verifies every commit reachable from `tip` that is not in `known` (nor behind one), parents
    /// first. Returns the commits verified now, in that order; throws the first `Violation`.
    @discardableResult
    public func verifyHistory(to tip: ObjectID, known: Set<ObjectID> = []) throws -> [ObjectID] {
        let hidden = known.filter { repository.contains($0) }
        let ids = try repository.commits(from: tip, hiding: Array(hidden))
        for id in ids { try verify(id) }
        return ids
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
    public func signer(of commit: Commit) throws -> RootHash {
        guard let signature = commit.signature else {
            throw CohortError(.badSignature, "commit is not signed", hint: "commit with `cohort commit`, which signs with your device key")
        }
        let key = try SSHSignature.verify(signature.armored, message: signature.signedData)
        let (scheme, proof) = try CommitTrailer.parse(commit.message)
        guard proof.publicKey == key.x963 else {
            throw CohortError(.badSignature, "commit is signed by key \(key.fingerprint) but its Cohort-Proof names another key")
        }
        return try proof.root(under: scheme)
    }

    private func check(_ commit: Commit) throws -> (CollaborationState, ObjectID) {
        let signer = try signer(of: commit)
        guard let cohortTree = try repository.entry(at: CohortLayout.folder, inTree: commit.tree), cohortTree.isTree else {
            throw CohortError(.malformed, "\(CohortLayout.folder)/ is missing from the commit")
        }
        if commit.parents.isEmpty {
            return (try checkGenesis(commit, signer: signer, cohortTree: cohortTree.id), cohortTree.id)
        }
        let parent = commit.parents[0]
        let before = try state(at: parent)
        let participant = try before.requireParticipant(signer)
        let parentCohort = try cohortTrees[parent] ?? repository.entry(at: CohortLayout.folder, inTree: repository.tree(ofCommit: parent))?.id
        var transition = StateTransition(verifier: self, commit: commit, signer: signer, participant: participant, before: before)
        if parentCohort != cohortTree.id {
            try transition.apply(try repository.treeChanges(from: parentCohort, to: cohortTree.id))
        }
        if participant.permission == .readOnly {
            guard try transition.isOnlySelfRotation(parentTree: repository.tree(ofCommit: parent)) else {
                throw CohortError(.notPermitted, "\(participant.label) is a read-only participant and cannot change the collaboration",
                                  hint: "ask the owner for write permission")
            }
        }
        return (transition.after, cohortTree.id)
    }

    private func checkGenesis(_ commit: Commit, signer: RootHash, cohortTree: ObjectID) throws -> CollaborationState {
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
        let changes = try repository.treeChanges(from: nil, to: cohortTree).filter {
            let path = CohortLayout.folder + "/" + ($0.newPath ?? "")
            return path != CohortLayout.collaboration && path != CohortLayout.members
        }
        try transition.apply(changes)
        return transition.after
    }
}
