import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import Foundation

/// How a participant is added.
public struct ParticipantSettings: Sendable {
    /// nil: the collaboration's default permission.
    public var permission: Permission?
    public var mentions: Bool
    public var comments: Bool

    public init(permission: Permission? = nil, mentions: Bool = true, comments: Bool = true) {
        self.permission = permission
        self.mentions = mentions
        self.comments = comments
    }
}

extension Workspace {
    /// Signer and state for a change only the owner may make.
    private func ownerSigner() throws -> (CollaborationState, CollaborationSigner) {
        let state = try state()
        let signer = try signer(for: state)
        guard signer.root == state.owner else {
            throw CohortError(.notPermitted, "only the owner (\(state.collaboration.initiator.handle)) can change who takes part",
                              hint: "send your request to the owner")
        }
        return (state, signer)
    }

    /// Writes the next membership version (signed by `signer`) and its notices, and commits them.
    @discardableResult
    private func commitMembership(
        _ state: CollaborationState, signer: CollaborationSigner, participants: [Participant], removed: [RemovedParticipant],
        notices: [Notice] = [], message: String
    ) throws -> ObjectID {
        let head = try head()
        let next = Membership(collaboration: state.collaboration.identifier, version: state.membership.version + 1,
                              previous: state.membershipDigest, participants: participants, removed: removed, signer: signer.signer)
        try next.validate()
        let membersFile = try Envelope.seal(next, by: signer).fileData()
        let sealed = try seal(notices, by: signer)
        var blobs = sealed.blobs
        blobs[CohortLayout.members] = try repository.writeBlob(membersFile)
        var files = sealed.files
        files[CohortLayout.members] = membersFile
        let tree = try repository.tree(from: repository.tree(ofCommit: head.commit), putting: blobs)
        return try commit(tree: tree, on: head, message: message, signer: signer, write: files)
    }

    /// Adds the people of `cards` (each verified; their roots computed for this collaboration).
    @discardableResult
    public func addParticipants(_ cards: [IdentityCard], settings: ParticipantSettings, now: Date = Date()) throws -> [Participant] {
        let (state, signer) = try ownerSigner()
        var participants = state.membership.participants
        var removed = state.membership.removed
        var added: [Participant] = []
        for card in cards {
            try card.verify()
            let root = try card.root(in: state.context)
            guard state.membership.participant(root) == nil, !added.contains(where: { $0.root == root.hex }) else {
                throw CohortError(.malformed, "\(card.handle) is already a participant (with this card's root)",
                                  hint: "nothing was changed; `cohort participants list` shows who takes part")
            }
            guard !participants.contains(where: { $0.handle == card.handle }) else {
                throw CohortError(.malformed, "a participant already uses the handle \(card.handle), with another root",
                                  hint: "nothing was changed; if it is the same person with new devices, they run `cohort participants rotate` themselves")
            }
            removed.removeAll { $0.root == root.hex && $0.scheme == root.scheme }
            let participant = Participant(root: root, handle: card.handle, name: card.name,
                                          permission: settings.permission ?? state.collaboration.shareOptions.defaultPermission,
                                          mentions: settings.mentions, comments: settings.comments, addedBy: signer.root.hex, addedAt: now)
            participants.append(participant)
            added.append(participant)
        }
        guard !added.isEmpty else { throw CohortError(.malformed, "no card given") }
        let notices = added.map {
            Notice(type: .membershipAdded, collaboration: state.collaboration.identifier, actor: signer.root,
                   data: ["root": $0.root, "handle": $0.handle ?? "", "name": $0.name ?? "", "permission": $0.permission.rawValue],
                   time: now, signer: signer.signer)
        }
        try commitMembership(state, signer: signer, participants: participants, removed: removed, notices: notices,
                             message: "Add " + added.map(\.label).joined(separator: ", "))
        return added
    }

    /// Removes participants named by handle or root (hex, or a unique prefix of at least 8 digits).
    @discardableResult
    public func removeParticipants(_ selectors: [String], now: Date = Date()) throws -> [Participant] {
        let (state, signer) = try ownerSigner()
        var participants = state.membership.participants
        var removed = state.membership.removed
        var gone: [Participant] = []
        for selector in selectors {
            let matches = participants.filter { $0.handle == selector || (selector.count >= 8 && $0.root.hasPrefix(selector.lowercased())) }
            guard matches.count == 1, let match = matches.first else {
                throw CohortError(.malformed, matches.isEmpty ? "no participant is '\(selector)'" : "'\(selector)' matches several participants",
                                  hint: "see `cohort participants list`")
            }
            guard match.root != state.owner.hex else {
                throw CohortError(.notPermitted, "the owner cannot be removed")
            }
            participants.removeAll { $0 == match }
            removed.append(RemovedParticipant(match, removedBy: signer.root.hex, at: now))
            gone.append(match)
        }
        let notices = gone.map {
            Notice(type: .membershipRemoved, collaboration: state.collaboration.identifier, actor: signer.root,
                   data: ["root": $0.root, "handle": $0.handle ?? ""], time: now, signer: signer.signer)
        }
        try commitMembership(state, signer: signer, participants: participants, removed: removed, notices: notices,
                             message: "Remove " + gone.map(\.label).joined(separator: ", "))
        return gone
    }

    /// Replaces this person's root with the one of their current card, signed by a device of their
    /// old root (found among the cards this device has held). Returns the new root.
    @discardableResult
    public func rotate() throws -> RootHash {
        let state = try state()
        let device = try home.loadDevice()
        let current = try CollaborationSigner(device: device, card: home.requireCard(), context: state.context)
        var old: (CollaborationSigner, Participant)?
        for card in try home.cardHistory() {
            let candidate = try CollaborationSigner(device: device, card: card, context: state.context)
            if let participant = state.participant(candidate.root) {
                old = (candidate, participant)
                break
            }
        }
        guard let (oldSigner, participant) = old else {
            throw CohortError(.unknownRoot, "none of this device's cards is a participant of this collaboration")
        }
        guard oldSigner.root != current.root else {
            throw CohortError(.malformed, "your root is already the one of your current card; nothing to rotate")
        }
        guard oldSigner.root != state.owner else {
            throw CohortError(.notPermitted, "the owner's root is fixed for the collaboration's life",
                              hint: "your devices of that root keep working here; Cohort signs with the card that holds it")
        }
        var replacement = participant
        replacement.root = current.root.hex
        replacement.scheme = current.root.scheme
        try commitMembership(state, signer: oldSigner,
                             participants: state.membership.participants.map { $0 == participant ? replacement : $0 },
                             removed: state.membership.removed, message: "Rotate \(participant.label) to a new root")
        return current.root
    }
}
