import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Attacks through merges, odd tree entries and sizes: each refused at the offending commit.
@Suite struct MergeAndShapeAttackTests {
    /// Bo, removed at R, merges a commit from before his removal and keeps its membership.
    @Test func mergeCannotUndoARemoval() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let before = try owner.head().commit
        try owner.removeParticipants(["bo@example.com"])
        let removal = try owner.head().commit
        let bo = try signer(scenario.bo.home, in: owner)
        let merge = try commitTree(owner, tree: owner.repository.tree(ofCommit: before), parents: [before, removal], signer: bo)
        expectViolation(.revoked, in: owner, at: merge)
        // Nor can someone still in: Cy's merge that takes the old membership is refused too.
        try owner.repository.updateReference("refs/heads/main", to: removal, expected: merge, message: "undo")
        let cy = try signer(scenario.cy.home, in: owner)
        let cyMerge = try commitTree(owner, tree: owner.repository.tree(ofCommit: before), parents: [before, removal], signer: cy)
        expectViolation(.notPermitted, in: owner, at: cyMerge)
    }

    /// Bo makes his own genesis with the same identifier and salt, himself as owner, and merges it in.
    @Test func mergeCannotBringASecondGenesis() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let state = try owner.state()
        let bo = try signer(scenario.bo.home, in: owner)
        var fake = state.collaboration
        fake.owner = .init(root: bo.root.hex, scheme: bo.root.scheme)
        let boEntry = try #require(state.membership.participant(bo.root))
        var members = Membership(collaboration: state.collaboration.identifier, version: 1, previous: nil, participants: [boEntry], removed: [], signer: bo.signer)
        members.participants[0].permission = .readWrite
        let repository = owner.repository
        let fakeTree = try repository.tree(from: nil, putting: [
            CohortLayout.collaboration: repository.writeBlob(sealed(fake, by: bo)),
            CohortLayout.members: repository.writeBlob(sealed(members, by: bo)),
        ])
        let fakeGenesis = try repository.createCommit(
            tree: fakeTree, parents: [], message: CommitTrailer.append(to: "fake", scheme: .cohortV1, proof: bo.proof),
            author: Person(name: "Bo", email: "bo@example.com"), sign: { try SSHSignature.sign($0, with: bo.key) })
        let tip = try owner.head().commit
        _ = try commitTree(owner, tree: fakeTree, parents: [tip, fakeGenesis], signer: bo)
        // The walk reaches the second genesis before the merge: it is refused there.
        expectViolation(.notPermitted, in: owner, at: fakeGenesis)
    }

    @Test func mergeMustKeepEveryParentsNotices() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let base = try owner.head().commit
        _ = try owner.comment(on: "shortbread.md", text: "first")
        let commented = try owner.head().commit
        try owner.repository.updateReference("refs/heads/main", to: base, expected: commented, message: "branch")
        try scenario.write("x\n", to: "x.md", in: owner)
        _ = try #require(try owner.commitChanges(message: "x"))
        let other = try owner.head().commit
        // The merge takes only its first parent's tree: the comment's notices are dropped.
        let merge = try commitTree(owner, tree: owner.repository.tree(ofCommit: other), parents: [other, commented],
                                   signer: signer(scenario.ann.home, in: owner))
        expectViolation(.notPermitted, in: owner, at: merge)
    }

    @Test(arguments: [0o120000, 0o100755] as [UInt32])
    func onlyPlainFilesUnderCohort(mode: UInt32) throws {
        let scenario = try Scenario()
        let bo = try signer(scenario.bo.home, in: scenario.owner)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: bo.root, data: ["path": "x.md"], signer: bo.signer)
        let id = try forge(scenario.owner, signer: bo, files: [notice.path: sealed(notice, by: bo)], mode: mode)
        expectViolation(.notPermitted, in: scenario.owner, at: id)
    }

    @Test(arguments: [".COHORT", ".Cohort", ".cohort.", ".cohort ", ".co\u{200C}hort", "COHORT~1"])
    func lookAlikeFoldersAreRefused(name: String) throws {
        let scenario = try Scenario()
        let bo = try signer(scenario.bo.home, in: scenario.owner)
        let id = try forge(scenario.owner, signer: bo, files: ["\(name)/members.json": Data("{}".utf8)])
        expectViolation(.notPermitted, in: scenario.owner, at: id)
    }

    @Test func deepTreesUnderCohortAreRefused() throws {
        let scenario = try Scenario()
        let bo = try signer(scenario.bo.home, in: scenario.owner)
        let path = ".cohort/" + Array(repeating: "a", count: 50).joined(separator: "/") + "/x.json"
        let id = try forge(scenario.owner, signer: bo, files: [path: Data("{}".utf8)])
        expectViolation(.tooLarge, in: scenario.owner, at: id)
    }

    @Test func oversizedMembershipIsRefused() throws {
        let scenario = try Scenario()
        let ann = try signer(scenario.ann.home, in: scenario.owner)
        let id = try forge(scenario.owner, signer: ann, files: [CohortLayout.members: Data(repeating: 0x20, count: Membership.maxEnvelopeBytes + 1)])
        expectViolation(.tooLarge, in: scenario.owner, at: id)
    }

    @Test func collaborationFileCannotBeDeleted() throws {
        let scenario = try Scenario()
        let id = try forge(scenario.owner, signer: signer(scenario.ann.home, in: scenario.owner), removing: [CohortLayout.collaboration])
        expectViolation(.notPermitted, in: scenario.owner, at: id)
    }

    @Test func membershipNoticeFromAParticipant() throws {
        let scenario = try Scenario()
        let bo = try signer(scenario.bo.home, in: scenario.owner)
        let notice = Notice(type: .membershipAdded, collaboration: scenario.identifier, actor: bo.root, data: ["root": bo.root.hex], signer: bo.signer)
        let id = try forge(scenario.owner, signer: bo, files: [notice.path: sealed(notice, by: bo)])
        expectViolation(.notPermitted, in: scenario.owner, at: id)
    }

    @Test func rotationCannotReadmitARemovedRoot() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let cyRoot = try signer(scenario.cy.home, in: owner).root
        try owner.removeParticipants(["cy@example.com"])
        let state = try owner.state()
        let bo = try signer(scenario.bo.home, in: owner)
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        next.participants = next.participants.map { entry in
            guard entry.root == bo.root.hex else { return entry }
            var handedOver = entry
            handedOver.root = cyRoot.hex
            return handedOver
        }
        let id = try forge(owner, signer: bo, files: [CohortLayout.members: sealed(next, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    /// A read-only participant may make exactly one kind of commit: rotating their own root.
    @Test func readOnlyParticipantMayRotate() throws {
        let scenario = try Scenario(options: .defaults(readOnly: true))
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        let laptop = IdentityHome(directory: scenario.temp.path("homes/bo-1"))
        let card = try scenario.bo.home.addDevice(laptop.enroll(handle: scenario.bo.handle, deviceName: "bo-1"))
        _ = try scenario.bo.home.importCard(laptop.importCard(card).card)
        try bo.rotate()
        #expect(try bo.repository.verifyHistory(to: bo.head().commit).commits == 3)
    }
}
