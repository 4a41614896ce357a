import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// The commands refuse what the verifier would refuse, before anything is written.
@Suite struct CommandRefusalTests {
    @Test func onlyTheOwnerChangesMembership() throws {
        let scenario = try Scenario()
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let before = try bo.head().commit
        expectCode(.notPermitted) { try bo.addParticipants([eve.card()], settings: ParticipantSettings()) }
        expectCode(.notPermitted) { try bo.removeParticipants(["cy@example.com"]) }
        expectCode(.notPermitted) { try scenario.owner.removeParticipants(["ann@example.com"]) }
        expectCode(.malformed) { try scenario.owner.removeParticipants(["nobody@example.com"]) }
        expectCode(.malformed) { try scenario.owner.addParticipants([scenario.bo.card()], settings: ParticipantSettings()) }
        #expect(try bo.head().commit == before)
    }

    @Test func cardsThatDoNotVerifyAreRefused() throws {
        let scenario = try Scenario(addEveryone: false)
        let eve = try TestPerson.make("eve", in: scenario.temp)
        var object = try #require(try JSONSerialization.jsonObject(with: eve.card().jsonData()) as? [String: Any])
        object["name"] = "Not Eve"
        let tampered = try IdentityCard(json: JSONSerialization.data(withJSONObject: object))
        expectCode(.badSignature) { try scenario.owner.addParticipants([tampered], settings: ParticipantSettings()) }
        #expect(try scenario.owner.state().membership.version == 1)
    }

    @Test func readOnlyParticipantCannotCommitOrComment() throws {
        let scenario = try Scenario(options: .defaults(readOnly: true))
        let state = try scenario.owner.state()
        #expect(state.membership.participant(handle: "bo@example.com")?.permission == .readOnly, "the collaboration default applies")
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        try scenario.write("edit\n", to: "shortbread.md", in: bo)
        expectCode(.notPermitted) { try bo.commitChanges(message: "edit") }
        expectCode(.notPermitted) { try bo.comment(on: "shortbread.md", text: "hello") }
        // The edit is still in the file: nothing a user wrote is lost by a refusal.
        #expect(try String(decoding: Data(contentsOf: bo.directory.appendingPathComponent("shortbread.md")), as: UTF8.self) == "edit\n")
    }

    @Test func removedParticipantIsRefusedByTheirOwnCommands() throws {
        let scenario = try Scenario()
        try scenario.owner.removeParticipants(["bo@example.com"])
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        try scenario.write("edit\n", to: "shortbread.md", in: bo)
        expectCode(.revoked) { try bo.commitChanges(message: "edit") }
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let eveClone = try scenario.clone("eve", for: eve.home)
        expectCode(.unknownRoot) { try eveClone.comment(on: "shortbread.md", text: "hi") }
    }

    @Test func commentsNeedACommittedPathAndText() throws {
        let scenario = try Scenario()
        expectCode(.malformed) { try scenario.owner.comment(on: "missing.md", text: "hi") }
        expectCode(.malformed) { try scenario.owner.comment(on: CohortLayout.members, text: "hi") }
        expectCode(.malformed) { try scenario.owner.comment(on: "shortbread.md", text: "   ") }
        expectCode(.malformed) { try scenario.owner.comment(on: "shortbread.md", text: String(repeating: "x", count: 5000)) }
        // Mentions of people who are not participants are plain text.
        let summary = try scenario.owner.comment(on: "shortbread.md", text: "thanks @eve@example.com and @cy@example.com.")
        #expect(summary.notices.filter { $0.type == .mention }.compactMap { $0.data["handle"] } == ["cy@example.com"])
    }

    @Test func participantSwitchesAreEnforced() throws {
        let scenario = try Scenario(addEveryone: false)
        try scenario.owner.addParticipants([scenario.bo.card()], settings: ParticipantSettings(mentions: false, comments: true))
        try scenario.owner.addParticipants([scenario.cy.card()], settings: ParticipantSettings(comments: false))
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        _ = try bo.comment(on: "shortbread.md", text: "fine without mentions")
        expectCode(.notPermitted) { try bo.comment(on: "shortbread.md", text: "hey @ann@example.com") }
        let cy = try scenario.clone("cy", for: scenario.cy.home)
        expectCode(.notPermitted) { try cy.comment(on: "shortbread.md", text: "hi") }
    }
}

@Suite struct RotationTests {
    /// Cy adds a third device: her root changes; she rotates it herself, signed under her old root,
    /// and then commits with the new one.
    @Test func participantRotatesAfterAddingADevice() throws {
        let scenario = try Scenario()
        let cy = try scenario.clone("cy", for: scenario.cy.home)
        let oldRoot = try signer(scenario.cy.home, in: cy).root

        let tablet = IdentityHome(directory: scenario.temp.path("homes/cy-2"))
        let v3 = try scenario.cy.home.addDevice(tablet.enroll(handle: scenario.cy.handle, deviceName: "cy-2"))
        let partial = try tablet.importCard(v3).card
        let complete = try scenario.cy.homes[1].importCard(partial).card
        _ = try scenario.cy.home.importCard(complete)
        let newRoot = try CollaborationSigner(home: scenario.cy.home, context: cy.state().context).root
        #expect(newRoot != oldRoot)
        // Until she rotates, her devices keep signing under the old root (its card is kept), and the
        // new device is not in it.
        #expect(try cy.signer(for: cy.state()).root == oldRoot)
        _ = try cy.comment(on: "shortbread.md", text: "still with my old root")
        let onTablet = try scenario.clone("cy-tablet", for: tablet, from: cy)
        expectCode(.unknownRoot) { try onTablet.comment(on: "shortbread.md", text: "from the tablet") }

        #expect(try cy.rotate() == newRoot)
        let state = try cy.state()
        #expect(state.participant(newRoot)?.handle == "cy@example.com")
        #expect(state.participant(oldRoot) == nil)
        _ = try cy.comment(on: "shortbread.md", text: "with my new root")
        #expect(try cy.signer(for: cy.state()).root == newRoot)
        #expect(try cy.repository.verifyHistory(to: cy.head().commit).commits == 5)
        expectCode(.malformed) { try cy.rotate() }
        // The owner's root never changes: after adding a device, the owner keeps the old root here.
        let annPhone = IdentityHome(directory: scenario.temp.path("homes/ann-1"))
        let annCard = try scenario.ann.home.addDevice(annPhone.enroll(handle: scenario.ann.handle, deviceName: "ann-1"))
        _ = try scenario.ann.home.importCard(annPhone.importCard(annCard).card)
        expectCode(.notPermitted) { try scenario.owner.rotate() }
        try scenario.pull(into: scenario.owner, from: cy)
        _ = try scenario.owner.comment(on: "shortbread.md", text: "the owner still signs")
    }
}

@Suite struct GitInteroperabilityTests {
    /// `git verify-commit` with the exported allowed-signers file accepts Cohort's commits and
    /// refuses a commit whose signature does not match it.
    @Test func stockGitVerifiesCohortCommits() throws {
        let scenario = try Scenario()
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        try scenario.write("bo\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo's recipe"))
        let signers = try bo.repository.allowedSigners(for: bo.head().commit)
        #expect(signers.split(separator: "\n").count == 2)
        #expect(signers.contains("ann@example.com namespaces=\"git\" ecdsa-sha2-nistp256 "))
        #expect(signers.contains("bo@example.com namespaces=\"git\" ecdsa-sha2-nistp256 "))
        let file = scenario.temp.path("allowed_signers")
        try Data(signers.utf8).write(to: file)
        let configured = ["-c", "gpg.ssh.allowedSignersFile=\(file.path)"]
        for id in try bo.repository.commits(from: bo.head().commit) {
            let result = try run("git", configured + ["verify-commit", id.hex], in: bo.directory)
            #expect(result.status == 0, "\(id.hex): \(result.stderr)")
        }
        let log = try run("git", configured + ["log", "--show-signature", "-1"], in: bo.directory)
        #expect(log.stdout.contains("Good \"git\" signature for bo@example.com"))

        // Signed over other bytes: stock git refuses it too.
        let repository = bo.repository
        let (branch, head) = try bo.head()
        let boSigner = try signer(scenario.bo.home, in: bo)
        let forged = try repository.createCommit(
            tree: repository.tree(ofCommit: head), parents: [head],
            message: CommitTrailer.append(to: "tampered", scheme: .cohortV1, proof: boSigner.proof),
            author: Person(name: "Bo", email: "bo@example.com"),
            sign: { try SSHSignature.sign($0 + Data("x".utf8), with: boSigner.key) })
        try repository.updateReference(branch, to: forged, expected: head, message: "forged")
        #expect(try run("git", configured + ["verify-commit", forged.hex], in: bo.directory).status != 0)
    }
}
