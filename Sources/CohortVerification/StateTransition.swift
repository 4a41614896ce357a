import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// The rules for what one commit changes under `.cohort/`, relative to its first parent.
struct StateTransition {
    let verifier: HistoryVerifier
    let commit: Commit
    let signer: RootHash
    let participant: Participant
    let before: CollaborationState
    private(set) var after: CollaborationState
    private var membershipChanged = false
    private var rotation = false

    init(verifier: HistoryVerifier, commit: Commit, signer: RootHash, participant: Participant, before: CollaborationState) {
        self.verifier = verifier
        self.commit = commit
        self.signer = signer
        self.participant = participant
        self.before = before
        after = before
    }

    private var repository: Repository { verifier.repository }

    /// Applies the changes (paths relative to `.cohort/`): the collaboration and membership files
    /// first, then the notices, which are checked against the new state.
    mutating func apply(_ changes: [Change]) throws {
        var filesChanged = false
        var notices: [(String, ObjectID)] = []
        for change in changes {
            let path = CohortLayout.folder + "/" + (change.newPath ?? change.oldPath ?? "")
            if change.kind != .deleted, change.newMode != 0o100644 {
                throw CohortError(.notPermitted, "\(path) must be a plain file (mode 100644), not mode \(String(change.newMode, radix: 8))")
            }
            if path == CohortLayout.collaboration || path == CohortLayout.members {
                guard change.kind == .modified else {
                    throw CohortError(.notPermitted, "\(path) cannot be deleted")
                }
                filesChanged = true
            } else if CohortLayout.isNoticePath(path) {
                guard change.kind == .added, let blob = change.newID else {
                    throw CohortError(.notPermitted, "notice \(path) was changed or deleted; notices are append-only")
                }
                notices.append((path, blob))
            } else {
                throw CohortError(.notPermitted, "\(path) is not allowed under \(CohortLayout.folder)/",
                                  hint: "only the collaboration file, the membership file and notices live there")
            }
        }
        // A merge's files are compared with the newest among its parents, which need not be the
        // parent the changes were listed against.
        if filesChanged || commit.parents.count > 1 { try applyFileChanges() }
        for (path, blob) in notices { try checkNotice(at: path, blob: blob) }
    }

    /// A parent whose tree holds exactly `blob` at `path`: history already verified.
    private func inherited(_ path: String, _ blob: ObjectID) throws -> ObjectID? {
        guard commit.parents.count > 1 else { return nil }
        for parent in commit.parents {
            if try repository.entry(at: path, inTree: repository.tree(ofCommit: parent))?.id == blob { return parent }
        }
        return nil
    }

    private mutating func applyFileChanges() throws {
        let collaborationEntry = try repository.entry(at: CohortLayout.collaboration, inTree: commit.tree)
        let membersEntry = try repository.entry(at: CohortLayout.members, inTree: commit.tree)
        if collaborationEntry?.id == before.collaborationBlob, membersEntry?.id == before.membersBlob,
           collaborationEntry?.isPlainFile == true, membersEntry?.isPlainFile == true {
            return
        }
        let (collaboration, collaborationBlob, membership, membersBlob) = try repository.openCohortFiles(tree: commit.tree)
        let old = before.collaboration
        guard collaboration.value.identifier == old.identifier, collaboration.value.salt == old.salt, collaboration.value.owner == old.owner else {
            throw CohortError(.notPermitted, "the collaboration's identifier, salt and owner never change")
        }
        // `before` holds the newest files among the parents: anything else is the next step after
        // them, made by whoever may make it, or an old version coming back.
        if collaborationBlob != before.collaborationBlob {
            let revision = collaboration.value.revisionNumber
            guard revision == old.revisionNumber + 1 else {
                throw CohortError(.notPermitted, "collaboration file revision \(revision) does not follow revision \(old.revisionNumber)",
                                  hint: "an old collaboration file cannot come back; the newest among the parents must be kept")
            }
            guard collaboration.signer == before.owner, signer == before.owner else {
                throw CohortError(.notPermitted, "\(CohortLayout.collaboration) may only be changed by the owner")
            }
        }
        if membersBlob != before.membersBlob {
            try checkMembershipChange(membership)
        }
        after = try CollaborationState(collaboration: collaboration, collaborationBlob: collaborationBlob,
                                       membership: membership, membersBlob: membersBlob)
    }

    private mutating func checkMembershipChange(_ opened: Opened<Membership>) throws {
        let old = before.membership
        let new = opened.value
        guard new.version == old.version + 1 else {
            throw CohortError(.notPermitted, "membership version \(new.version) does not follow version \(old.version)",
                              hint: "an old membership file cannot be replayed")
        }
        guard new.previous == before.membershipDigest else {
            throw CohortError(.notPermitted, "membership version \(new.version) does not chain to version \(old.version)")
        }
        membershipChanged = true
        if opened.signer == before.owner {
            guard signer == before.owner else {
                throw CohortError(.notPermitted, "membership version \(new.version) is the owner's, but root \(signer.hex) committed it",
                                  hint: "the owner commits their own membership changes")
            }
            guard new.participant(before.owner)?.permission == .readWrite else {
                throw CohortError(.notPermitted, "the owner must stay a participant with write permission")
            }
            return
        }
        guard let rotating = old.participant(opened.signer) else {
            throw CohortError(.notPermitted, "membership version \(new.version) is signed by root \(opened.signer.hex), not by the owner")
        }
        guard opened.signer == signer else {
            throw CohortError(.notPermitted, "a participant's rotation must be committed by that participant")
        }
        let oldSet = Set(old.participants)
        let newSet = Set(new.participants)
        let added = new.participants.filter { !oldSet.contains($0) }
        let dropped = old.participants.filter { !newSet.contains($0) }
        guard new.removed == old.removed, new.participants.count == old.participants.count, dropped == [rotating],
              added.count == 1, let replacement = added.first
        else {
            throw CohortError(.notPermitted, "a participant may only replace their own root, and nothing else")
        }
        let replacementRoot = try replacement.rootHash()
        guard before.directory.status(of: replacementRoot) == nil else {
            throw CohortError(.notPermitted, "a participant may only rotate to a root that was never in this collaboration")
        }
        var expected = replacement
        expected.root = rotating.root
        expected.scheme = rotating.scheme
        guard expected == rotating else {
            throw CohortError(.notPermitted, "a rotation may change only the root, not permissions, switches or names")
        }
        rotation = true
    }

    private func checkNotice(at path: String, blob: ObjectID) throws {
        let opened = try verifier.openNotice(blob, path: path)
        let notice = opened.value
        try notice.validate()
        guard notice.path == path else {
            throw CohortError(.malformed, "notice \(notice.id) is stored at \(path), not at \(notice.path)")
        }
        // A notice a merge takes from another parent was signed and committed on that line, whose
        // commits are checked against the merge's membership; its options are checked here against
        // the merge's own state, so that none can come in sideways where they are off now.
        let sideways = try inherited(path, blob) != nil
        let actor: Participant
        if sideways {
            actor = try after.requireParticipant(opened.signer)
        } else {
            guard opened.signer == signer else {
                throw CohortError(.notPermitted, "notice \(notice.id) is signed by root \(opened.signer.hex), the commit by \(signer.hex)",
                                  hint: "notices must be signed by the participant who commits them")
            }
            actor = participant
        }
        guard notice.actor == opened.signer.hex, notice.collaboration == after.collaboration.identifier else {
            throw CohortError(.malformed, "notice \(notice.id) names another actor or collaboration")
        }
        let options = after.collaboration.shareOptions
        switch notice.type {
        case .mention:
            guard options.mentionsAllowed, actor.mentions else {
                throw CohortError(.notPermitted, "mentions are off for \(actor.label) in this collaboration")
            }
            guard let mentioned = notice.data["mentioned"], let person = after.membership.participants.first(where: { $0.root == mentioned }) else {
                throw CohortError(.notPermitted, "notice \(notice.id) mentions someone who is not a participant")
            }
            guard (notice.data["handle"] ?? "") == (person.handle ?? "") else {
                throw CohortError(.notPermitted, "notice \(notice.id) names handle '\(notice.data["handle"]?.prefix(64) ?? "")' for a participant whose handle is '\(person.handle ?? "")'",
                                  hint: "a mention names the participant as the membership knows them")
            }
        case .contentCommented:
            guard options.commentsAllowed, actor.comments else {
                throw CohortError(.notPermitted, "comments are off for \(actor.label) in this collaboration")
            }
        case .membershipAdded, .membershipRemoved:
            // On another line, the owner's membership change was checked there; here only the owner's.
            guard sideways ? opened.signer == before.owner : (membershipChanged && signer == before.owner) else {
                throw CohortError(.notPermitted, "membership notices come only with the owner's membership change")
            }
        case .contentCreated, .contentEdited, .contentRenamed, .contentMoved, .contentDeleted:
            // Anyone with write permission may describe their own change (the commit's checks).
            break
        }
    }

    /// Whether the whole commit is one participant replacing their own root (allowed to read-only participants).
    func isOnlySelfRotation(parentTree: ObjectID) throws -> Bool {
        guard rotation else { return false }
        let changes = try repository.treeChanges(from: parentTree, to: commit.tree)
        return changes.allSatisfy { $0.newPath == CohortLayout.members && $0.kind == .modified }
    }
}
