import CohortCollaboration
import CohortGit
import CohortHooks
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Real `git push` into a bare repository with the hook, over the local and file:// transports.
@Suite struct PreReceiveTests {
    // Accepted pushes.

    @Test(arguments: Transport.allCases)
    func ownerGenesisAndParticipantCommits(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        #expect(try server.tip() == server.scenario.owner.head().commit.hex, "the owner's genesis and membership were accepted")
        let bo = try server.clone("bo", for: server.scenario.bo)
        try server.scenario.write("bo\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo's recipe"))
        try server.expectAccepted(bo)
        // The owner changes membership and pushes it.
        try server.scenario.pull(into: server.scenario.owner, from: bo)
        try server.scenario.owner.removeParticipants(["cy@example.com"])
        try server.expectAccepted(server.scenario.owner)
    }

    @Test(arguments: Transport.allCases)
    func selfRotation(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let cy = try server.clone("cy", for: scenario.cy)
        let tablet = IdentityHome(directory: scenario.temp.path("homes/cy-2"))
        let card = try scenario.cy.home.addDevice(tablet.enroll(handle: scenario.cy.handle, deviceName: "cy-2"))
        let complete = try scenario.cy.homes[1].importCard(tablet.importCard(card).card).card
        _ = try scenario.cy.home.importCard(complete)
        try cy.rotate()
        try server.expectAccepted(cy)
    }

    @Test(arguments: Transport.allCases)
    func mergeByParticipant(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let cy = try server.clone("cy", for: scenario.cy)
        try scenario.write("bo\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo"))
        try server.expectAccepted(bo)
        try scenario.write("cy\n", to: "cy.md", in: cy)
        let cyCommit = try #require(try cy.commitChanges(message: "Cy"))
        // Not a fast-forward: git itself refuses, before the hook.
        let behind = try server.push(cy)
        #expect(behind.status != 0)
        #expect(try server.tip() == bo.head().commit.hex)
        // Cy merges the server's main into hers, signed, and pushes the merge.
        #expect(try run("git", ["fetch", "-q", server.remote, "main"], in: cy.directory).status == 0)
        let theirs = try ObjectID(hex: run("git", ["rev-parse", "FETCH_HEAD"], in: cy.directory).stdout.trimmingCharacters(in: .newlines))
        let repository = cy.repository
        let boTree = try repository.tree(ofCommit: theirs)
        var files: [String: ObjectID] = [:]
        for change in try repository.treeChanges(from: repository.tree(ofCommit: repository.commit(cyCommit.commit).parents[0]), to: repository.tree(ofCommit: cyCommit.commit)) {
            if let path = change.newPath, let id = change.newID { files[path] = id }
        }
        let mergedTree = try repository.tree(from: boTree, putting: files)
        let cySigner = try signer(scenario.cy.home, in: cy)
        let merge = try repository.createCommit(
            tree: mergedTree, parents: [cyCommit.commit, theirs],
            message: CommitTrailer.append(to: "Merge", scheme: .cohortV1, proof: cySigner.proof),
            author: Person(name: "Cy", email: "cy@example.com"), sign: { try SSHSignature.sign($0, with: cySigner.key) })
        try repository.updateReference("refs/heads/main", to: merge, expected: cyCommit.commit, message: "merge")
        try server.expectAccepted(cy)
    }

    // Refused pushes: each names its code, and the server's ref does not move.

    @Test(arguments: Transport.allCases)
    func unsignedCommit(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let owner = server.scenario.owner
        try server.scenario.write("plain\n", to: "plain.md", in: owner)
        #expect(try run("git", ["add", "plain.md"], in: owner.directory).status == 0)
        let environment = ["GIT_AUTHOR_NAME": "X", "GIT_AUTHOR_EMAIL": "x@example.com", "GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@example.com"]
        #expect(try run("git", ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "plain"], in: owner.directory, environment: environment).status == 0)
        try server.expectRefused(owner, "E_BAD_SIGNATURE", at: owner.head().commit)
    }

    @Test(arguments: Transport.allCases)
    func unknownRemovedAndReadOnlySigners(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let bo = try server.clone("bo", for: scenario.bo)
        let unknown = try forge(bo, signer: signer(eve.home, in: bo), files: ["eve.md": Data("eve".utf8)])
        try server.expectRefused(bo, "E_UNKNOWN_ROOT", at: unknown)

        let rita = try TestPerson.make("rita", in: scenario.temp)
        try scenario.owner.addParticipants([rita.card()], settings: ParticipantSettings(permission: .readOnly))
        try scenario.owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(scenario.owner)

        let removed = try server.clone("bo-again", for: scenario.bo)
        let byRemoved = try forge(removed, signer: signer(scenario.bo.home, in: removed), files: ["bo.md": Data("still".utf8)])
        try server.expectRefused(removed, "E_REVOKED", at: byRemoved)

        let reader = try server.clone("rita", for: rita)
        let byReader = try forge(reader, signer: signer(rita.home, in: reader), files: ["rita.md": Data("edit".utf8)])
        try server.expectRefused(reader, "E_NOT_PERMITTED", at: byReader)
    }

    @Test(arguments: Transport.allCases)
    func forgedAndReplayedMembership(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let state = try bo.state()
        let boSigner = try signer(scenario.bo.home, in: bo)
        var forgedMembers = state.membership
        forgedMembers.version += 1
        forgedMembers.previous = state.membershipDigest
        forgedMembers.participants = forgedMembers.participants.filter { $0.handle != "cy@example.com" }
        let forged = try forge(bo, signer: boSigner, files: [CohortLayout.members: sealed(forgedMembers, by: boSigner)])
        try server.expectRefused(bo, "E_NOT_PERMITTED", at: forged)

        // Version 2 (with Bo) is replayed after the owner removed him in version 3.
        let version2 = try Data(contentsOf: scenario.owner.directory.appendingPathComponent(CohortLayout.members))
        try scenario.owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(scenario.owner)
        let cy = try server.clone("cy", for: scenario.cy)
        let replayed = try forge(cy, signer: signer(scenario.cy.home, in: cy), files: [CohortLayout.members: version2])
        try server.expectRefused(cy, "E_NOT_PERMITTED", at: replayed)
    }

    @Test(arguments: Transport.allCases)
    func noticeSignedBySomeoneElseAndExtraCohortFile(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let cy = try server.clone("cy", for: scenario.cy)
        let boSigner = try signer(scenario.bo.home, in: cy)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: boSigner.root, data: ["path": "x.md"], signer: boSigner.signer)
        let byCy = try forge(cy, signer: signer(scenario.cy.home, in: cy), files: [notice.path: sealed(notice, by: boSigner)])
        try server.expectRefused(cy, "E_NOT_PERMITTED", at: byCy)

        let other = try server.clone("cy-2", for: scenario.cy)
        let extra = try forge(other, signer: signer(scenario.cy.home, in: other), files: [".cohort/extra.json": Data("{}".utf8)])
        try server.expectRefused(other, "E_NOT_PERMITTED", at: extra)
    }

    @Test(arguments: Transport.allCases)
    func mentionWhenMentionsAreOff(transport: Transport) throws {
        let server = try HookServer(transport: transport, scenario: Scenario(options: .defaults(mentions: false)))
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let boSigner = try signer(scenario.bo.home, in: bo)
        let cy = try #require(try bo.state().membership.participant(handle: "cy@example.com"))
        let mention = Notice(type: .mention, collaboration: scenario.identifier, actor: boSigner.root,
                             data: ["path": "shortbread.md", "mentioned": cy.root], signer: boSigner.signer)
        let id = try forge(bo, signer: boSigner, files: [mention.path: sealed(mention, by: boSigner)])
        try server.expectRefused(bo, "E_NOT_PERMITTED", at: id)
    }

    @Test(arguments: Transport.allCases)
    func forcePushAndDeletionOfTheDefaultBranch(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let owner = server.scenario.owner
        try server.scenario.write("more\n", to: "shortbread.md", in: owner)
        _ = try #require(try owner.commitChanges(message: "More"))
        try server.expectAccepted(owner)
        // Rewind locally and force: refused by the hook.
        let previous = try owner.repository.commit(owner.head().commit).parents[0]
        try owner.repository.updateReference("refs/heads/main", to: previous, expected: owner.head().commit, message: "rewind")
        try server.expectRefused(owner, "E_NOT_PERMITTED", at: previous, force: true)
        try server.expectRefused(owner, "E_NOT_PERMITTED", refspec: ":main")
        #expect(try server.tip() != nil)
    }

    @Test(arguments: Transport.allCases)
    func anotherCollaborationAndANewRoot(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        // A different collaboration (another identifier) into the same repository, on another branch.
        let other = try Scenario(addEveryone: false)
        let pushed = try run("git", ["push", server.remote, "main:refs/heads/other"], in: other.owner.directory)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("E_NOT_PERMITTED"), "\(pushed.stderr)")
        #expect(try server.tip("refs/heads/other") == nil)
        // Only branches and tags.
        let note = try run("git", ["push", server.remote, "main:refs/notes/x"], in: server.scenario.owner.directory)
        #expect(note.status != 0 && note.stderr.contains("only branches"), "\(note.stderr)")
        // Tags of verified history are fine.
        #expect(try run("git", ["tag", "v1"], in: server.scenario.owner.directory).status == 0)
        #expect(try run("git", ["push", server.remote, "v1"], in: server.scenario.owner.directory).status == 0)
    }

    /// After a push onto accepted history the repository's genesis is pinned (`cohort.genesis`), and
    /// the hook stops walking to it; a merge joining another collaboration's history is still refused,
    /// by the hook and by `cohort verify` alike, at the same commit.
    @Test(arguments: Transport.allCases)
    func pinnedGenesisStillRefusesAnotherRoot(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        try scenario.write("bo\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo's recipe"))
        try server.expectAccepted(bo)
        let pinned = try run("git", ["--git-dir", server.bare.path, "config", "cohort.genesis"], in: scenario.temp.url)
        #expect(pinned.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == (try bo.repository.firstParentRoot(of: bo.head().commit).hex))

        let other = try Scenario(addEveryone: false)
        #expect(try run("git", ["fetch", "-q", other.owner.directory.path, "main:refs/heads/foreign"], in: bo.directory).status == 0)
        let foreign = try #require(try bo.repository.referenceTips()["refs/heads/foreign"])
        let head = try bo.head().commit
        let merge = try commitTree(bo, tree: bo.repository.tree(ofCommit: head), parents: [head, foreign], signer: signer(scenario.bo.home, in: bo))
        // The other collaboration's genesis, the first of its commits in history order, is where both stop.
        let otherGenesis = try bo.repository.firstParentRoot(of: foreign)
        #expect(try bo.repository.commits(from: merge).contains(otherGenesis))
        try server.expectRefused(bo, "E_NOT_PERMITTED", at: otherGenesis)
        expectViolation(.notPermitted, in: bo, at: otherGenesis)
    }

    /// A participant signs, with their real key, a notice whose JSON names `type` twice: refused by the
    /// hook and by `cohort verify` with the same code at the same commit.
    @Test(arguments: Transport.allCases)
    func noticeNamingAFieldTwice(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let boSigner = try signer(scenario.bo.home, in: bo)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: boSigner.root, data: ["path": "x.md"], signer: boSigner.signer)
        let file = try Attacks.envelope(payload: Attacks.noticePayloadNamingTypeTwice(notice, second: .membershipAdded, by: boSigner), by: boSigner)
        let id = try forge(bo, signer: boSigner, files: [notice.path: file, "x.md": Data("x\n".utf8)])
        try server.expectRefused(bo, "E_MALFORMED", at: id)
        expectViolation(.malformed, in: bo, at: id)
    }

    /// The owner signs, with her real key, a members file whose JSON names `participants` twice (the
    /// second list empty): one reader would see everyone, another no one. Refused by the hook and by
    /// `cohort verify` with the same code at the same commit, as a notice naming a field twice is.
    @Test(arguments: Transport.allCases)
    func membersFileNamingAFieldTwice(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let scenario = server.scenario
        let ann = try server.clone("ann-clone", for: scenario.ann)
        let annSigner = try signer(scenario.ann.home, in: ann)
        let membership = try ann.state().membership
        let file = try Attacks.envelope(payload: Attacks.payload(membership, by: annSigner, namingAgain: "participants", as: "[]"),
                                        type: Membership.payloadType, by: annSigner)
        let id = try forge(ann, signer: annSigner, files: [CohortLayout.members: file])
        try server.expectRefused(ann, "E_MALFORMED", at: id)
        expectViolation(.malformed, in: ann, at: id)
    }

    /// A push long enough to be prepared on several threads (70 commits), with a notice signed by
    /// someone else deep inside: the hook and `cohort verify` stop at the same commit.
    @Test func aLongPushWithOneForgedNoticeInside() throws {
        let server = try HookServer(transport: .file)
        let scenario = server.scenario
        let cy = try server.clone("cy", for: scenario.cy)
        let cySigner = try signer(scenario.cy.home, in: cy)
        let boSigner = try signer(scenario.bo.home, in: cy)
        var bad: ObjectID?
        for index in 0..<70 {
            if index == 40 {
                let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: boSigner.root, data: ["path": "x.md"], signer: boSigner.signer)
                bad = try forge(cy, signer: cySigner, files: [notice.path: sealed(notice, by: boSigner)])
            } else {
                try forge(cy, signer: cySigner, files: ["long-\(index).md": Data("\(index)\n".utf8)])
            }
        }
        let forged = try #require(bad)
        try server.expectRefused(cy, "E_NOT_PERMITTED", at: forged)
        expectViolation(.notPermitted, in: cy, at: forged)
    }

    /// A push long enough for the pipeline's threads (70 commits) with a notice nested as deep as the
    /// reader allows (an unknown key 500 levels down, signed with Cy's real key): read on a worker's
    /// stack as on the main thread, accepted by the hook and by `cohort verify` alike.
    @Test func aDeeplyNestedNoticeInALongPush() throws {
        let server = try HookServer(transport: .file)
        let scenario = server.scenario
        let cy = try server.clone("cy", for: scenario.cy)
        let cySigner = try signer(scenario.cy.home, in: cy)
        for index in 0..<70 {
            if index == 5 {
                let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: cySigner.root, data: ["path": "deep.md"],
                                    signer: cySigner.signer)
                let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
                let file = try Attacks.envelope(payload: Attacks.payload(notice, by: cySigner, namingAgain: "extra", as: deep), by: cySigner)
                try forge(cy, signer: cySigner, files: [notice.path: file, "deep.md": Data("deep\n".utf8)])
            } else {
                try forge(cy, signer: cySigner, files: ["long-\(index).md": Data("\(index)\n".utf8)])
            }
        }
        try server.expectAccepted(cy)
        _ = try cy.repository.verifyHistory(to: cy.head().commit)
    }

    @Test func limitsFromGitConfig() throws {
        let server = try HookServer(transport: .local)
        #expect(try run("git", ["--git-dir", server.bare.path, "config", "cohort.maxCommits", "1"], in: server.scenario.temp.url).status == 0)
        let owner = server.scenario.owner
        for name in ["a", "b"] {
            try server.scenario.write(name, to: "\(name).md", in: owner)
            _ = try #require(try owner.commitChanges(message: name))
        }
        try server.expectRefused(owner, "E_TOO_LARGE", at: owner.head().commit)
    }

    /// A limit set to something that is not a number refuses pushes naming the setting and its fix,
    /// not as a malformed history (libgit2 words both "failed to parse").
    @Test func aLimitThatIsNotANumberIsNamed() throws {
        let server = try HookServer(transport: .local)
        #expect(try run("git", ["--git-dir", server.bare.path, "config", "cohort.maxCommits", "lots"], in: server.scenario.temp.url).status == 0)
        let owner = server.scenario.owner
        try server.scenario.write("a", to: "a.md", in: owner)
        _ = try #require(try owner.commitChanges(message: "a"))
        let before = try server.tip()
        let pushed = try server.push(owner)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("E_MALFORMED: git config cohort.maxCommits is not a whole number") &&
                pushed.stderr.contains("git config cohort.maxCommits 5000"), "\(pushed.stderr)")
        #expect(!pushed.stderr.contains("not well formed"), "\(pushed.stderr)")
        #expect(try server.tip() == before)
    }
}
