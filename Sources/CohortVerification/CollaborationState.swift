import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// The collaboration as of one commit: its metadata and its membership, both verified.
public struct CollaborationState: Sendable {
    public private(set) var collaboration: CollaborationFile
    public let membership: Membership
    /// SHA-256 of the membership payload: what the next version must chain to.
    public let membershipDigest: String
    public let context: CollaborationContext
    public let owner: RootHash
    /// Active and removed roots.
    public let directory: KnownRoots
    private(set) var collaborationBlob: ObjectID
    let membersBlob: ObjectID

    init(collaboration: Opened<CollaborationFile>, collaborationBlob: ObjectID, membership: Opened<Membership>, membersBlob: ObjectID) throws {
        guard membership.value.collaboration == collaboration.value.identifier else {
            throw CohortError(.malformed, "\(CohortLayout.members) belongs to another collaboration")
        }
        self.collaboration = collaboration.value
        self.membership = membership.value
        membershipDigest = Membership.digest(ofPayload: membership.payload)
        context = try collaboration.value.context()
        owner = try collaboration.value.ownerRoot()
        directory = membership.value.directory
        self.collaborationBlob = collaborationBlob
        self.membersBlob = membersBlob
    }

    /// This state with the collaboration file of `other` (the same collaboration: its identifier,
    /// salt and owner, hence context and owner, are those of this state).
    func withCollaboration(of other: CollaborationState) -> CollaborationState {
        var state = self
        state.collaboration = other.collaboration
        state.collaborationBlob = other.collaborationBlob
        return state
    }

    /// The active participant with `root`.
    public func participant(_ root: RootHash) -> Participant? {
        membership.participant(root)
    }

    /// Looks `root` up: the participant, or `E_UNKNOWN_ROOT` / `E_REVOKED`.
    public func requireParticipant(_ root: RootHash) throws -> Participant {
        switch directory.status(of: root) {
        case .active:
            if let participant = participant(root) { return participant }
        case .revoked:
            throw CohortError(.revoked, "root \(root.hex) was removed from this collaboration")
        case nil:
            break
        }
        throw CohortError(.unknownRoot, "root \(root.hex) is not a participant of this collaboration")
    }
}

extension Repository {
    /// Reads `.cohort/collaboration.json` and `.cohort/members.json` of `tree` (plain files of bounded
    /// size), checks each envelope's signature and shapes, and returns them with their blob ids. Who
    /// signed them, and how versions follow each other, are the verifier's rules.
    func openCohortFiles(tree: ObjectID) throws -> (Opened<CollaborationFile>, ObjectID, Opened<Membership>, ObjectID) {
        guard let collaborationEntry = try entry(at: CohortLayout.collaboration, inTree: tree), collaborationEntry.isPlainFile else {
            throw CohortError(.malformed, "\(CohortLayout.collaboration) is missing", hint: "this is not a Cohort collaboration")
        }
        guard let membersEntry = try entry(at: CohortLayout.members, inTree: tree), membersEntry.isPlainFile else {
            throw CohortError(.malformed, "\(CohortLayout.members) is missing")
        }
        let collaboration = try Envelope.open(
            blob(collaborationEntry.id, maxBytes: CollaborationFile.maxEnvelopeBytes), as: CollaborationFile.self, path: CohortLayout.collaboration)
        try collaboration.value.validate()
        let membership = try Envelope.open(blob(membersEntry.id, maxBytes: Membership.maxEnvelopeBytes), as: Membership.self, path: CohortLayout.members)
        try membership.value.validate()
        return (collaboration, collaborationEntry.id, membership, membersEntry.id)
    }
}

extension CollaborationState {
    /// The state of `tree`, its files read and their signatures checked (`openCohortFiles`).
    public init(repository: Repository, tree: ObjectID) throws {
        let (collaboration, collaborationBlob, membership, membersBlob) = try repository.openCohortFiles(tree: tree)
        try self.init(collaboration: collaboration, collaborationBlob: collaborationBlob, membership: membership, membersBlob: membersBlob)
    }
}
