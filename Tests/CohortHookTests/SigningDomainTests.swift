import CohortBase
import CohortCollaboration
import CohortGit
@testable import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// One diversified key signs identity proofs, DSSE envelopes and commits: no signature made by one
/// path may be valid for another, and no path signs what another one signs.
@Suite struct SigningDomainTests {
    let scenario: Scenario
    let ann: CollaborationSigner
    /// The attack of issue 12: an owner-signed membership that adds an outsider (Eve).
    let pae: Data
    let payload: Data
    let eveMembership: Membership

    init() throws {
        scenario = try Scenario()
        ann = try signer(scenario.ann.home, in: scenario.owner)
        let state = try scenario.owner.state()
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let eveRoot = try IdentityTree(masterKeys: eve.card().masterKeys, context: state.context).root
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        var entry = try #require(next.participants.first { $0.handle == "bo@example.com" })
        entry.root = eveRoot.hex
        entry.handle = "eve@example.com"
        next.participants.append(entry)
        next.signer = ann.signer
        eveMembership = next
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        payload = try encoder.encode(next)
        pae = Envelope.pae(type: Membership.payloadType, payload: payload)
    }

    @Test(arguments: RootScheme.allCases)
    func proofsRefuseToSignWhatEnvelopesAndCommitsSign(scheme: RootScheme) throws {
        let sshsig = Data("SSHSIG".utf8) + Data(count: 40)
        for message in [pae, sshsig] {
            expectCode(.notPermitted) { try SignedIdentityProof(signing: message, with: ann.key, scheme: scheme, proof: ann.proof) }
        }
    }

    @Test func theOwnersCLIRefusesToBeTheOracle() throws {
        let state = try scenario.owner.state()
        let result = try run(cohortBinary.path, ["proof", "create", "--collaboration", state.collaboration.identifier,
                                                  "--salt", state.context.salt.map { String(format: "%02x", $0) }.joined(), "--message", pae.base64EncodedString()],
                             in: scenario.temp.url, environment: ["COHORT_HOME": scenario.ann.home.directory.path])
        #expect(result.status != 0)
        #expect(result.stderr.hasPrefix("error: E_NOT_PERMITTED: "), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aProofsSignatureIsNoEnvelopeOrCommitSignature() throws {
        // The best an attacker can get: a proof over bytes of their choice that are not refused.
        let message = Data(pae.dropFirst(7))
        let proof = try SignedIdentityProof(signing: message, with: ann.key, scheme: .cohortV1, proof: ann.proof)
        #expect(throws: CohortError.self) { try ann.key.publicKey.verifySignature(proof.signature, for: message) }
        // Put into an envelope over the PAE, it does not verify.
        var envelope = try Envelope.seal(eveMembership, by: ann)
        envelope.signatures[0].sig = proof.signature.base64EncodedString()
        #expect(envelope.payload == payload.base64EncodedString())
        let forged = envelope.fileData()
        #expect(throws: CohortError.self) { try Envelope.open(forged, as: Membership.self, path: CohortLayout.members) }
    }

    @Test(arguments: RootScheme.allCases)
    func anEnvelopesOrCommitsSignatureIsNoProof(scheme: RootScheme) throws {
        // A genuine envelope signature over the PAE, and a genuine commit signature over its SSHSIG
        // bytes, offered as identity proofs over those bytes: refused before any key is looked at.
        let sealed = try Envelope.seal(eveMembership, by: ann)
        let envelopeSignature = try #require(Data(base64Encoded: sealed.signatures[0].sig))
        let asProof = SignedIdentityProof(scheme: scheme, proof: ann.proof, signature: envelopeSignature, message: pae)
        expectCode(.notPermitted) { try asProof.verify(against: KnownRoots(active: [ann.root])) }

        let commit = Data("tree 0000\n\nmessage\n".utf8)
        let armored = try SSHSignature.sign(commit, with: ann.key)
        #expect(try SSHSignature.verify(armored, message: commit) == ann.key.publicKey)
        let commitBytes = Data("SSHSIG".utf8) + commit
        let asCommitProof = SignedIdentityProof(scheme: scheme, proof: ann.proof, signature: envelopeSignature, message: commitBytes)
        expectCode(.notPermitted) { try asCommitProof.verify(against: KnownRoots(active: [ann.root])) }
        // And a proof's signature is never a commit signature: the SSHSIG bytes differ.
        let proof = try SignedIdentityProof(signing: commit, with: ann.key, scheme: scheme, proof: ann.proof)
        let root = try ann.proof.root(under: scheme)
        #expect(try proof.verify(against: KnownRoots(active: [root])) == root)
        let sshsigBytes = try SSHSignature.signedData(commit, namespace: "git", hash: "sha512")
        #expect(throws: CohortError.self) { try ann.key.publicKey.verifySignature(proof.signature, for: sshsigBytes) }
        if scheme == .cohortV1 {
            #expect(throws: CohortError.self) { try ann.key.publicKey.verifySignature(proof.signature, for: commit) }
        }
    }
}
