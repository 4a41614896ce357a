import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Every way to break the rules, each refused by `cohort verify` with its code at the offending commit.
@Suite struct TamperingTests {
    let scenario: Scenario
    let owner: Workspace
    let state: CollaborationState

    init() throws {
        scenario = try Scenario()
        owner = scenario.owner
        state = try owner.state()
        // What came before verifies, and is remembered: only the forged commit is checked after.
        _ = try owner.repository.verifyHistory(to: owner.head().commit)
    }

    func signerOf(_ person: TestPerson, device: Int = 0) throws -> CollaborationSigner {
        try signer(person.homes[device], in: owner)
    }

    @Test func unsignedCommit() throws {
        try scenario.write("plain\n", to: "plain.md", in: owner)
        #expect(try run("git", ["add", "plain.md"], in: owner.directory).status == 0)
        let environment = ["GIT_AUTHOR_NAME": "X", "GIT_AUTHOR_EMAIL": "x@example.com", "GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@example.com"]
        #expect(try run("git", ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "plain"], in: owner.directory, environment: environment).status == 0)
        expectViolation(.badSignature, in: owner, at: try owner.head().commit)
    }

    @Test func commitByAnUnknownKey() throws {
        let stranger = try TestPerson.make("eve", in: scenario.temp)
        let id = try forge(owner, signer: signer(stranger.home, in: owner), files: ["eve.md": Data("hi".utf8)])
        expectViolation(.unknownRoot, in: owner, at: id)
    }

    @Test func signatureAndTrailerDisagree() throws {
        // Signed by Bo, but the trailer proves Ann's key.
        let id = try forge(owner, signer: signerOf(scenario.bo), files: ["x.md": Data("x".utf8)], trailer: signerOf(scenario.ann))
        expectViolation(.badSignature, in: owner, at: id)
    }

    @Test func commitByRemovedParticipant() throws {
        try owner.removeParticipants(["bo@example.com"])
        let id = try forge(owner, signer: signerOf(scenario.bo), files: ["bo.md": Data("still here".utf8)])
        expectViolation(.revoked, in: owner, at: id)
    }

    @Test func commitByReadOnlyParticipant() throws {
        let reader = try TestPerson.make("rita", in: scenario.temp)
        try owner.addParticipants([reader.card()], settings: ParticipantSettings(permission: .readOnly))
        let id = try forge(owner, signer: signer(reader.home, in: owner), files: ["rita.md": Data("edit".utf8)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func forgedMembershipSignedByAParticipant() throws {
        let bo = try signerOf(scenario.bo)
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        next.participants = next.participants.map { var p = $0; p.permission = .readWrite; return p }
        next.participants.append(Participant(root: try RootHash(scheme: .cohortV1, bytes: Data(repeating: 7, count: 32)), handle: "mallory@example.com",
                                             name: "Mallory", permission: .readWrite, mentions: true, comments: true, addedBy: bo.root.hex, addedAt: Date()))
        let id = try forge(owner, signer: bo, files: [CohortLayout.members: sealed(next, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func membershipEditedAfterSigning() throws {
        let file = try Data(contentsOf: owner.directory.appendingPathComponent(CohortLayout.members))
        var envelope = try JSONDecoder().decode(Envelope.self, from: file)
        let payload = try #require(Data(base64Encoded: envelope.payload))
        envelope.payload = Data(String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "read-write", with: "read-only").utf8).base64EncodedString()
        let id = try forge(owner, signer: signerOf(scenario.ann), files: [CohortLayout.members: envelope.fileData()])
        expectViolation(.badSignature, in: owner, at: id)
    }

    @Test func oldMembershipReplayed() throws {
        // Version 2 lists Bo; the owner removes him (version 3); Bo puts version 2 back.
        let version2 = try Data(contentsOf: owner.directory.appendingPathComponent(CohortLayout.members))
        try owner.removeParticipants(["bo@example.com"])
        let id = try forge(owner, signer: signerOf(scenario.cy), files: [CohortLayout.members: version2])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func membershipThatDoesNotChain() throws {
        let ann = try signerOf(scenario.ann)
        var next = state.membership
        next.version += 1
        next.previous = String(repeating: "0", count: 64)
        let id = try forge(owner, signer: ann, files: [CohortLayout.members: sealed(next, by: ann)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func collaborationFileChanged() throws {
        let ann = try signerOf(scenario.ann)
        var renamed = state.collaboration
        renamed.title = "Owner may retitle"
        renamed.revision = 1
        try forge(owner, signer: ann, files: [CohortLayout.collaboration: sealed(renamed, by: ann)])
        #expect(try owner.repository.verifyHistory(to: owner.head().commit).checkedNow == 1, "the owner may change the title")

        var moved = renamed
        moved.identifier = UUID().uuidString.lowercased()
        moved.revision = 2
        let id = try forge(owner, signer: ann, files: [CohortLayout.collaboration: sealed(moved, by: ann)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func collaborationFileByAParticipant() throws {
        let bo = try signerOf(scenario.bo)
        var retitled = state.collaboration
        retitled.title = "Bo's now"
        let id = try forge(owner, signer: bo, files: [CohortLayout.collaboration: sealed(retitled, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func noticeSignedBySomeoneElse() throws {
        let bo = try signerOf(scenario.bo)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: bo.root, data: ["path": "x.md"], signer: bo.signer)
        // Committed by Cy.
        let id = try forge(owner, signer: signerOf(scenario.cy), files: [notice.path: sealed(notice, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func mentionOfANonParticipant() throws {
        let bo = try signerOf(scenario.bo)
        let notice = Notice(type: .mention, collaboration: scenario.identifier, actor: bo.root,
                            data: ["path": "shortbread.md", "mentioned": String(repeating: "ab", count: 32)], signer: bo.signer)
        let id = try forge(owner, signer: bo, files: [notice.path: sealed(notice, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func mentionAndCommentWhenOff() throws {
        let quiet = try Scenario(options: .defaults(mentions: false, comments: false))
        let workspace = quiet.owner
        let ann = try signer(quiet.ann.home, in: workspace)
        let identifier = try workspace.state().collaboration.identifier
        let bo = try #require(try workspace.state().membership.participant(handle: "bo@example.com"))
        // The commands refuse first.
        expectCode(.notPermitted) { try workspace.comment(on: "shortbread.md", text: "nice") }
        // Forged anyway, the verifier refuses.
        let mention = Notice(type: .mention, collaboration: identifier, actor: ann.root, data: ["path": "shortbread.md", "mentioned": bo.root], signer: ann.signer)
        let first = try forge(workspace, signer: ann, files: [mention.path: sealed(mention, by: ann)])
        expectViolation(.notPermitted, in: workspace, at: first)
        try workspace.repository.updateReference(workspace.head().branch, to: workspace.repository.commit(first).parents[0], expected: first, message: "undo")
        let comment = Notice(type: .contentCommented, collaboration: identifier, actor: ann.root, data: ["path": "shortbread.md", "text": "hi"], signer: ann.signer)
        let second = try forge(workspace, signer: ann, files: [comment.path: sealed(comment, by: ann)])
        expectViolation(.notPermitted, in: workspace, at: second)
    }

    @Test func unexpectedFileUnderCohort() throws {
        let id = try forge(owner, signer: signerOf(scenario.bo), files: [".cohort/extra.json": Data("{}".utf8)])
        expectViolation(.notPermitted, in: owner, at: id)
    }

    @Test func noticesAreAppendOnly() throws {
        let notices = try FileManager.default.subpathsOfDirectory(atPath: owner.directory.appendingPathComponent(CohortLayout.notices).path)
            .filter { $0.hasSuffix(".json") }
        let path = CohortLayout.notices + "/" + (try #require(notices.first))
        let deleted = try forge(owner, signer: signerOf(scenario.ann), removing: [path])
        expectViolation(.notPermitted, in: owner, at: deleted)
    }

    @Test func oversizedEnvelope() throws {
        let bo = try signerOf(scenario.bo)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: bo.root,
                            data: ["path": String(repeating: "a", count: 8000), "text": String(repeating: "b", count: 8000)], signer: bo.signer)
        let id = try forge(owner, signer: bo, files: [notice.path: sealed(notice, by: bo)])
        expectViolation(.tooLarge, in: owner, at: id)
    }

    @Test func signatureOverOtherBytes() throws {
        let repository = owner.repository
        let (branch, head) = try owner.head()
        let bo = try signerOf(scenario.bo)
        let tree = try repository.tree(from: repository.tree(ofCommit: head), putting: ["y.md": repository.writeBlob(Data("y".utf8))])
        let id = try repository.createCommit(
            tree: tree, parents: [head], message: CommitTrailer.append(to: "sneaky", scheme: .cohortV1, proof: bo.proof),
            author: Person(name: "Bo", email: "bo@example.com"),
            sign: { _ in try SSHSignature.sign(Data("some other commit".utf8), with: bo.key) })
        try repository.updateReference(branch, to: id, expected: head, message: "forged")
        expectViolation(.badSignature, in: owner, at: id)
    }

    @Test func rotationMayChangeOnlyTheRoot() throws {
        let bo = try signerOf(scenario.bo)
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        next.participants = next.participants.map { entry in
            guard entry.root == bo.root.hex else { return entry }
            var promoted = entry
            promoted.root = String(repeating: "cd", count: 32)
            promoted.mentions = !entry.mentions
            return promoted
        }
        let id = try forge(owner, signer: bo, files: [CohortLayout.members: sealed(next, by: bo)])
        expectViolation(.notPermitted, in: owner, at: id)
    }
}
