import CohortBase
import CohortCollaboration
import CohortGit
@testable import CohortHooks
@testable import CohortIdentity
import CohortTestSupport
@testable import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Each class of attack, built by the test with participants' real keys (never through `cohort
/// commit`), must get one verdict everywhere: the hook refuses it and the ref stays (run as
/// `cohort-hook`, as `cohort hook pre-receive` and by a resident verifier, with the same lines), an incremental
/// `cohort verify` after remembered runs refuses it, a fresh verify refuses it, and `cohort clone` of
/// the history, from the folder and through file:// (a fetched pack, checked ahead while it is
/// indexed), refuses it and leaves nothing behind.
@Suite struct VerdictMatrixTests {
    /// Asserts the one verdict for `attack` (on `attacker`'s branch, built on `good`, which verified).
    func expectOneVerdict(_ server: HookServer, _ attacker: Workspace, home: IdentityHome, attack: ObjectID, good: ObjectID,
                          code: CohortError.Code, at commit: ObjectID? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let memory = attacker.repository.gitDirectory.appendingPathComponent("cohort/verified")
        try? FileManager.default.removeItem(at: memory)
        // Incremental: the good history is remembered first.
        _ = try attacker.repository.verifyHistory(to: good)
        expectViolation(code, in: attacker, at: commit, sourceLocation: sourceLocation)
        // Fresh.
        try? FileManager.default.removeItem(at: memory)
        expectViolation(code, in: attacker, at: commit, sourceLocation: sourceLocation)
        // The hook, through `cohort-hook` and through `cohort hook pre-receive`: the same lines.
        let refused = try server.expectRefused(attacker, code.rawValue, at: commit, sourceLocation: sourceLocation)
        try server.use(.cohortAlone)
        #expect(try server.expectRefused(attacker, code.rawValue, at: commit, sourceLocation: sourceLocation) == refused, sourceLocation: sourceLocation)
        // And through a resident verifier (`cohort hook serve`), which answers this push itself.
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        #expect(try server.expectRefused(attacker, code.rawValue, at: commit, sourceLocation: sourceLocation) == refused, sourceLocation: sourceLocation)
        // Once more, now that it has served this repository: the attack's pack (kept as a pack) read
        // while git indexed it, its signatures checked ahead (`IncomingPacks`), and the same lines.
        IncomingPacks.claimsWait.store(true, ordering: .relaxed)
        defer { IncomingPacks.claimsWait.store(false, ordering: .relaxed) }
        let unpackLimit = ["--git-dir", server.bare.path, "config", "receive.unpackLimit"]
        let packsKept = try run("git", unpackLimit, in: server.scenario.temp.url).status == 0
        try server.keepPushesAsPacks()
        #expect(try server.expectRefused(attacker, code.rawValue, at: commit, sourceLocation: sourceLocation) == refused, sourceLocation: sourceLocation)
        if !packsKept { _ = try run("git", unpackLimit.dropLast() + ["--unset", "receive.unpackLimit"], in: server.scenario.temp.url) }
        #expect(resident.answered == 2, sourceLocation: sourceLocation)
        try server.use(.cohortHook)
        // `cohort clone` of the history: refused, nothing left. From the folder (objects copied),
        // through file:// (a pack libgit2 makes, deltas by id) and over smart HTTP (the pack
        // `git upload-pack` makes, deltas by offset): both packs indexed by Cohort's indexer, their
        // commits and notices checked ahead.
        let smartHTTP = try SmartHTTPStandIn(serving: attacker.directory.deletingLastPathComponent(), in: server.scenario.temp)
        for source in [attacker.directory.path, "file://" + attacker.directory.path, smartHTTP.url + "/" + attacker.directory.lastPathComponent] {
            let target = server.scenario.temp.path("clone-\(UUID().uuidString.prefix(8))")
            let cloned = try run(cohortBinary.path, ["clone", source, target.path], in: server.scenario.temp.url,
                                 environment: ["COHORT_HOME": home.directory.path])
            #expect(cloned.status != 0, "cohort clone of \(source) accepted the history", sourceLocation: sourceLocation)
            #expect(cloned.stderr.contains(code.rawValue), "\(cloned.stderr)", sourceLocation: sourceLocation)
            #expect(!FileManager.default.fileExists(atPath: target.path), "the refused clone was left behind", sourceLocation: sourceLocation)
        }
    }

    /// The attack forced onto the server's `main` past the hook (as a careless admin or a broken forge
    /// would): the owner's `cohort sync` refuses it with the same code, merges nothing, and every byte
    /// of the owner's unsaved edit stays where it was.
    func expectSyncRefuses(_ server: HookServer, _ attacker: Workspace, attack: ObjectID, code: CohortError.Code,
                           reason: String = "the remote's history failed verification", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let scenario = server.scenario
        let owner = scenario.owner.directory
        _ = try run("git", ["remote", "add", "origin", server.remote], in: owner)
        let edit = Data("ann's unsaved edit \u{1F35E}\n".utf8) + Data((0..<256).map { UInt8($0) })
        let edited = owner.appendingPathComponent("bread/unsaved.md")
        try FileManager.default.createDirectory(at: edited.deletingLastPathComponent(), withIntermediateDirectories: true)
        try edit.write(to: edited)
        let headBefore = try run("git", ["rev-parse", "HEAD"], in: owner).stdout
        #expect(try run("git", ["--git-dir", server.bare.path, "fetch", "-q", attacker.directory.path, "+\(attack.hex):refs/heads/main"],
                        in: scenario.temp.url).status == 0, sourceLocation: sourceLocation)
        let synced = try run(cohortBinary.path, ["sync"], in: owner, environment: ["COHORT_HOME": scenario.ann.home.directory.path])
        #expect(synced.status == 1, "\(synced.stdout)", sourceLocation: sourceLocation)
        #expect(synced.stderr.hasPrefix("error: \(code.rawValue): \(reason)"), "\(synced.stderr)",
                sourceLocation: sourceLocation)
        #expect((try? Data(contentsOf: edited)) == edit, sourceLocation: sourceLocation)
        // Ann's edit was committed here, on top of what she had; nothing of the attack came in.
        #expect(try run("git", ["merge-base", "--is-ancestor", headBefore.trimmingCharacters(in: .whitespacesAndNewlines), "HEAD"], in: owner).status == 0,
                sourceLocation: sourceLocation)
        #expect(try run("git", ["merge-base", "--is-ancestor", attack.hex, "HEAD"], in: owner).status != 0, sourceLocation: sourceLocation)
        let written = try FileManager.default.subpathsOfDirectory(atPath: owner.path).filter { !$0.hasPrefix(".git/") && $0 != ".git" }
        #expect(!written.contains { $0.lowercased().contains(".git") || $0.contains("~1") }, "\(written)", sourceLocation: sourceLocation)
    }

    /// A hooked server, `person`'s clone of it and its head: where attacks on one commit start.
    func cloned(by person: (Scenario) -> TestPerson) throws -> (HookServer, Workspace, good: ObjectID) {
        let server = try HookServer(transport: .local)
        let who = person(server.scenario)
        let workspace = try server.clone(String(who.handle.prefix { $0 != "@" }), for: who)
        return (server, workspace, try workspace.head().commit)
    }

    /// Bo's clone, its head, and a tree with one more file `name`.
    func boAddingFile(_ name: String) throws -> (HookServer, Workspace, good: ObjectID, tree: ObjectID) {
        let (server, bo, good) = try cloned(by: \.bo)
        let tree = try bo.repository.tree(from: bo.repository.tree(ofCommit: good), putting: [name: bo.repository.writeBlob(Data("\(name)\n".utf8))])
        return (server, bo, good, tree)
    }

    // 1. A merge rolls `.cohort/` state back.

    /// Bo removed by the owner and pushed; Cy's clone, the commit before the removal, and the tip.
    func afterBosRemoval() throws -> (HookServer, Workspace, beforeRemoval: ObjectID, tip: ObjectID) {
        let server = try HookServer(transport: .local)
        let owner = server.scenario.owner
        let beforeRemoval = try owner.head().commit
        _ = try owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(owner)
        let cy = try server.clone("cy", for: server.scenario.cy)
        return (server, cy, beforeRemoval, try cy.head().commit)
    }

    @Test func mergeKeepingAnOlderMembershipIsRefused() throws {
        let (server, cy, beforeRemoval, tip) = try afterBosRemoval()
        let scenario = server.scenario
        // Cy (still in, read-write) merges [before the removal, tip] and keeps the old membership.
        let merge = try commitTree(cy, tree: cy.repository.tree(ofCommit: beforeRemoval), parents: [beforeRemoval, tip],
                                   signer: signer(scenario.cy.home, in: cy))
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: merge, good: tip, code: .notPermitted, at: merge)
        // With the tip first, the same.
        try Attacks.point(cy, at: tip)
        let swapped = try commitTree(cy, tree: cy.repository.tree(ofCommit: beforeRemoval), parents: [tip, beforeRemoval],
                                     signer: signer(scenario.cy.home, in: cy))
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: swapped, good: tip, code: .notPermitted, at: swapped)
    }

    @Test func oddMergesKeepingAnOlderMembershipAreRefused() throws {
        let (server, cy, beforeRemoval, tip) = try afterBosRemoval()
        let scenario = server.scenario
        let old = try cy.repository.tree(ofCommit: beforeRemoval)
        // Three parents, the removal's commit in the middle, and one parent named twice: the old
        // membership is refused whichever way the parents are listed.
        var merges: [ObjectID] = []
        for parents in [[beforeRemoval, tip, beforeRemoval], [beforeRemoval, beforeRemoval, tip], [tip, tip, beforeRemoval]] {
            try Attacks.point(cy, at: tip)
            let merge = try commitTree(cy, tree: old, parents: parents, signer: signer(scenario.cy.home, in: cy))
            try expectOneVerdict(server, cy, home: scenario.cy.home, attack: merge, good: tip, code: .notPermitted, at: merge)
            merges.append(merge)
        }
        // A merge naming the tip twice, its tree unchanged, brings nothing in: accepted everywhere.
        try Attacks.point(cy, at: tip)
        let harmless = try commitTree(cy, tree: cy.repository.tree(ofCommit: tip), parents: [tip, tip], signer: signer(scenario.cy.home, in: cy))
        _ = try cy.repository.verifyHistory(to: harmless)
        try server.expectAccepted(cy)
        let fresh = scenario.temp.path("fresh-\(UUID().uuidString.prefix(8))")
        #expect(try run(cohortBinary.path, ["clone", server.bare.path, fresh.path], in: scenario.temp.url,
                        environment: ["COHORT_HOME": scenario.cy.home.directory.path]).status == 0)
        // An odd merge forced onto the server past the hook: the owner's sync refuses it and keeps her edit.
        try expectSyncRefuses(server, cy, attack: merges[2], code: .notPermitted)
    }

    @Test func mergeKeepingAnOlderCollaborationFileIsRefused() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let before = try owner.head().commit
        // The owner turns comments off (revision 1).
        let ann = try signer(scenario.ann.home, in: owner)
        var settings = try owner.state().collaboration
        settings.shareOptions = .defaults(comments: false)
        settings.revision = 1
        try forge(owner, signer: ann, files: [CohortLayout.collaboration: sealed(settings, by: ann)], message: "Comments off")
        try server.expectAccepted(owner)
        let cy = try server.clone("cy", for: scenario.cy)
        let tip = try cy.head().commit
        // Cy merges [tip, before] and keeps the old file: comments on again.
        var entries: [String: ObjectID] = [:]
        entries[CohortLayout.collaboration] = try #require(try cy.repository.entry(at: CohortLayout.collaboration, inTree: cy.repository.tree(ofCommit: before))).id
        let tree = try cy.repository.tree(from: cy.repository.tree(ofCommit: tip), putting: entries)
        let merge = try commitTree(cy, tree: tree, parents: [tip, before], signer: signer(scenario.cy.home, in: cy))
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: merge, good: tip, code: .notPermitted, at: merge)
    }

    @Test func offlineSyncKeepsTheNewerCollaborationFile() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let cy = try server.clone("cy", for: scenario.cy)
        try scenario.write("cy offline\n", to: "cy.md", in: cy)
        _ = try #require(try cy.commitChanges(message: "Cy's, offline"))
        // Meanwhile the owner turns mentions off (the same membership version on both sides).
        let owner = scenario.owner
        let ann = try signer(scenario.ann.home, in: owner)
        var settings = try owner.state().collaboration
        settings.shareOptions = .defaults(mentions: false)
        settings.revision = 1
        try forge(owner, signer: ann, files: [CohortLayout.collaboration: sealed(settings, by: ann)], message: "Mentions off")
        try server.expectAccepted(owner)
        let synced = try run(cohortBinary.path, ["sync"], in: cy.directory, environment: ["COHORT_HOME": scenario.cy.home.directory.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try server.tip() == cy.head().commit.hex)
        #expect(try cy.state().collaboration.revisionNumber == 1)
        #expect(try !cy.state().collaboration.shareOptions.mentionsAllowed)
    }

    // 2. Backdated commits.

    @Test func removedParticipantsBackdatedWorkMergedByAnotherIsRefused() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let beforeRemoval = try owner.head().commit
        _ = try owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(owner)
        let cy = try server.clone("cy", for: scenario.cy)
        let tip = try cy.head().commit
        // Bo, removed, signs a commit on the state before his removal (his key is still his).
        try Attacks.point(cy, at: beforeRemoval)
        let bo = try CollaborationSigner(home: scenario.bo.home, context: cy.state().context)
        let backdated = try forge(cy, signer: bo, files: ["bo.md": Data("sideways\n".utf8)], message: "backdated")
        // Cy merges it into main, keeping the newest membership.
        try Attacks.point(cy, at: tip)
        let tree = try cy.repository.tree(from: cy.repository.tree(ofCommit: tip),
                                          putting: ["bo.md": cy.repository.writeBlob(Data("sideways\n".utf8))])
        let merge = try commitTree(cy, tree: tree, parents: [tip, backdated], signer: signer(scenario.cy.home, in: cy))
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: merge, good: tip, code: .revoked, at: merge)
    }

    @Test(arguments: ["refs/heads/bo", "refs/tags/bo"])
    func removedParticipantsBackdatedBranchOrTagIsRefusedByTheHook(ref: String) throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let beforeRemoval = try owner.head().commit
        _ = try owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(owner)
        let bo = try server.clone("bo", for: scenario.bo)
        try Attacks.point(bo, at: beforeRemoval)
        let backdated = try forge(bo, signer: signer(scenario.bo.home, in: bo), files: ["bo.md": Data("late\n".utf8)], message: "backdated")
        let refspec = "\(backdated.hex):\(ref)"
        try server.expectRefused(bo, "E_REVOKED", at: backdated, refspec: refspec, ref: ref)
        #expect(try server.tip(ref) == nil)
    }

    @Test func offlineSyncAcrossARemovalStillMerges() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        let cy = try server.clone("cy", for: scenario.cy)
        // Bo's work lands before his removal; Cy works offline all along.
        try scenario.write("bo\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo's"))
        try server.expectAccepted(bo)
        try scenario.write("cy offline\n", to: "cy.md", in: cy)
        _ = try #require(try cy.commitChanges(message: "Cy's, offline"))
        let owner = scenario.owner
        #expect(try run("git", ["pull", "-q", "--ff-only", server.remote, "main"], in: owner.directory).status == 0)
        _ = try owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(owner)
        // Cy comes back: her sync merges the removal and Bo's earlier work, and the hook takes it.
        let synced = try run(cohortBinary.path, ["sync"], in: cy.directory, environment: ["COHORT_HOME": scenario.cy.home.directory.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try server.tip() == cy.head().commit.hex)
        _ = try cy.repository.verifyHistory(to: cy.head().commit)
    }

    @Test func syncAcrossTwoMembershipVersionsMergesThroughAnotherMerge() throws {
        // Bo is one membership version behind the server's tip, whose first-parent line skips that
        // version (Cy's sync merged her offline commit first): Bo's sync must still merge.
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let eve = try TestPerson.make("eve", in: scenario.temp)
        let bo = try server.clone("bo", for: scenario.bo)
        let cy = try server.clone("cy", for: scenario.cy)
        _ = try owner.addParticipants([eve.card()], settings: ParticipantSettings())
        try server.expectAccepted(owner)
        #expect(try run("git", ["pull", "-q", "--ff-only", server.remote, "main"], in: bo.directory).status == 0)
        try scenario.write("bo on v4\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo at v4"))
        _ = try owner.removeParticipants(["eve@example.com"])
        try server.expectAccepted(owner)
        try scenario.write("cy offline\n", to: "cy.md", in: cy)
        _ = try #require(try cy.commitChanges(message: "Cy offline"))
        for (workspace, person) in [(cy, scenario.cy), (bo, scenario.bo)] {
            let synced = try run(cohortBinary.path, ["sync"], in: workspace.directory, environment: ["COHORT_HOME": person.home.directory.path])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(try server.tip() == workspace.head().commit.hex)
        }
    }

    @Test func aCommentMadeBeforeCommentsWereTurnedOffCannotComeInSideways() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let cy = try server.clone("cy", for: scenario.cy)
        let before = try cy.head().commit
        _ = try cy.comment(on: "shortbread.md", text: "more butter")
        let commented = try cy.head().commit
        // The owner turns comments off meanwhile.
        let ann = try signer(scenario.ann.home, in: owner)
        var settings = try owner.state().collaboration
        settings.shareOptions = .defaults(comments: false)
        settings.revision = 1
        try forge(owner, signer: ann, files: [CohortLayout.collaboration: sealed(settings, by: ann)], message: "Comments off")
        try server.expectAccepted(owner)
        #expect(try run("git", ["fetch", "-q", server.remote, "main"], in: cy.directory).status == 0)
        let tip = try ObjectID(hex: run("git", ["rev-parse", "FETCH_HEAD"], in: cy.directory).stdout.trimmingCharacters(in: .newlines))
        // Cy's merge keeps the newest collaboration file and brings her comment in.
        let changes = try cy.repository.treeChanges(from: cy.repository.tree(ofCommit: before), to: cy.repository.tree(ofCommit: commented))
        var files: [String: ObjectID] = [:]
        for change in changes { if let path = change.newPath, let id = change.newID { files[path] = id } }
        let tree = try cy.repository.tree(from: cy.repository.tree(ofCommit: tip), putting: files)
        let merge = try commitTree(cy, tree: tree, parents: [commented, tip], signer: signer(scenario.cy.home, in: cy))
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: merge, good: commented, code: .notPermitted, at: merge)
    }

    /// Bo's clone and a commit of his the hook remembers (pushed to a branch while he was in, the
    /// branch then deleted), once the owner has removed him.
    func bosRememberedCommitAfterHisRemoval() throws -> (HookServer, Workspace, work: ObjectID) {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        try scenario.write("tmp\n", to: "tmp.md", in: bo)
        let work = try #require(try bo.commitChanges(message: "on a branch")).commit
        #expect(try server.push(bo, refspec: "\(work.hex):refs/heads/tmp").status == 0)
        #expect(try server.push(bo, refspec: ":refs/heads/tmp").status == 0)
        _ = try scenario.owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(scenario.owner)
        return (server, bo, work)
    }

    @Test func aRememberedCommitStillMeetsTheCurrentMembership() throws {
        let (server, bo, work) = try bosRememberedCommitAfterHisRemoval()
        try server.expectRefused(bo, "E_REVOKED", at: work, refspec: "\(work.hex):refs/heads/again", ref: "refs/heads/again")
    }

    /// The same remembered commit under two branches and an annotated tag in one push: each update
    /// reaches it, the hook lists it once, and it still meets the current membership.
    @Test func aRememberedCommitUnderSeveralRefsAtOnceStillMeetsTheCurrentMembership() throws {
        let (server, bo, work) = try bosRememberedCommitAfterHisRemoval()
        #expect(try run("git", ["tag", "-a", "-m", "again", "again", work.hex], in: bo.directory).status == 0)
        let result = try run("git", ["push", "--porcelain", server.remote, "\(work.hex):refs/heads/a", "\(work.hex):refs/heads/b",
                                     "refs/tags/again:refs/tags/again"], in: bo.directory)
        #expect(result.status != 0, "push was accepted")
        #expect(result.stderr.contains("cohort: rejected \(work.hex)") && result.stderr.contains(": E_REVOKED: "), "\(result.stderr)")
        for ref in ["refs/heads/a", "refs/heads/b", "refs/tags/again"] {
            #expect(try server.tip(ref) == nil, "\(ref) was written")
        }
    }

    /// The remembered commit under the last of six updates, after five branches of Cy's new work: the
    /// hook asks the verified-commits file about each update's commits, scanning for the first four
    /// and reading every id for the rest, and the answer is the same. Refused by both hook programs,
    /// with nothing written.
    @Test func aRememberedCommitAfterManyUpdatesStillMeetsTheCurrentMembership() throws {
        let (server, bo, work) = try bosRememberedCommitAfterHisRemoval()
        let cy = try signer(server.scenario.cy.home, in: bo)
        let base = try bo.repository.commit(work).parents[0]
        let tree = try bo.repository.tree(ofCommit: base)
        var refspecs: [String] = []
        for index in 0..<VerifiedCommits.Questions.scans + 1 {
            let id = try bo.repository.createCommit(
                tree: tree, parents: [base], message: CommitTrailer.append(to: "cy \(index)", scheme: cy.root.scheme, proof: cy.proof),
                author: Person(name: "Cy", email: "cy@example.com"), sign: { try SSHSignature.sign($0, with: cy.key) })
            refspecs.append("\(id.hex):refs/heads/cy-\(index)")
        }
        // Named to come last, in whatever order git hands the updates on.
        refspecs.append("\(work.hex):refs/heads/zz-again")
        for verifier in [HookServer.Verifier.cohortHook, .cohortAlone] {
            try server.use(verifier)
            let result = try run("git", ["push", "--porcelain", server.remote] + refspecs, in: bo.directory)
            #expect(result.status != 0, "push was accepted (\(verifier))")
            #expect(result.stderr.contains("cohort: rejected \(work.hex) (refs/heads/zz-again): E_REVOKED: "), "\(result.stderr)")
            for ref in refspecs.map({ String($0.split(separator: ":")[1]) }) {
                #expect(try server.tip(ref) == nil, "\(ref) was written (\(verifier))")
            }
        }
    }

    /// A branch started from the middle of the default branch, with a tag further down: the line from
    /// the new commit down to the nearest branch or tag runs through a commit the default branch
    /// already holds, Bo's, and Bo has been removed since. Only the new commit is new to the
    /// repository, so only it meets the current membership: accepted by both hook programs, with the
    /// verified-commits file and without it (a hook that took the line for the push's new commits
    /// would refuse Bo's with E_REVOKED).
    @Test func aBranchFromTheMiddleOfTheDefaultBranchBringsOnlyItsOwnCommits() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let bo = try server.clone("bo", for: scenario.bo)
        #expect(try run("git", ["tag", "v1"], in: bo.directory).status == 0)
        #expect(try server.push(bo, refspec: "refs/tags/v1").status == 0)
        try scenario.write("bo's line\n", to: "bo.md", in: bo)
        let bos = try #require(try bo.commitChanges(message: "bo on main")).commit
        try server.expectAccepted(bo)
        try scenario.write("and another\n", to: "bo2.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "bo again"))
        try server.expectAccepted(bo)
        #expect(try run("git", ["pull", "-q", "--ff-only", server.remote, "main"], in: scenario.owner.directory).status == 0)
        _ = try scenario.owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(scenario.owner)
        let cy = try server.clone("cy", for: scenario.cy)
        let cySigner = try signer(scenario.cy.home, in: cy)
        let memory = server.bare.appendingPathComponent("cohort/verified")
        for (index, verifier) in [HookServer.Verifier.cohortHook, .cohortAlone, .cohortHook].enumerated() {
            try server.use(verifier)
            if index == 2 { try FileManager.default.removeItem(at: memory) }
            let id = try cy.repository.createCommit(
                tree: try cy.repository.tree(ofCommit: bos), parents: [bos],
                message: CommitTrailer.append(to: "cy's branch \(index)", scheme: cySigner.root.scheme, proof: cySigner.proof),
                author: Person(name: "Cy", email: "cy@example.com"), sign: { try SSHSignature.sign($0, with: cySigner.key) })
            let result = try server.push(cy, refspec: "\(id.hex):refs/heads/cy-\(index)")
            #expect(result.status == 0, "\(verifier), file kept: \(index < 2): \(result.stderr)")
            #expect(try server.tip("refs/heads/cy-\(index)") == id.hex)
        }
        // A new commit of Bo's on the same place is his own, and refused.
        let boSigner = try signer(scenario.bo.home, in: bo)
        let late = try bo.repository.createCommit(
            tree: try bo.repository.tree(ofCommit: bos), parents: [bos],
            message: CommitTrailer.append(to: "bo, removed", scheme: boSigner.root.scheme, proof: boSigner.proof),
            author: Person(name: "Bo", email: "bo@example.com"), sign: { try SSHSignature.sign($0, with: boSigner.key) })
        try server.expectRefused(bo, "E_REVOKED", at: late, refspec: "\(late.hex):refs/heads/bo-late", ref: "refs/heads/bo-late")
    }

    @Test func anAppleSchemeCommitIsRefused() throws {
        let (server, bo, good, tree) = try boAddingFile("a.md")
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let id = try bo.repository.createCommit(
            tree: tree, parents: [good], message: CommitTrailer.append(to: "apple", scheme: .appleV1, proof: me.proof),
            author: Person(name: "Bo", email: "bo@example.com"), sign: { try SSHSignature.sign($0, with: me.key) })
        try Attacks.point(bo, at: id)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .badProof, at: id)
        try expectSyncRefuses(server, bo, attack: id, code: .badProof)
    }

    // 3. Refs the hook never checked.

    @Test func commitsBehindAForgeRefAreVerifiedWhenPushed() throws {
        let (server, bo, good, tree) = try boAddingFile("x.md")
        let scenario = server.scenario
        // An unsigned commit, written into the server as a forge would (refs/pull/1/head, no hook).
        let unsigned = try Attacks.unsignedCommit(tree: tree, parents: [good], message: "unsigned", signer: signer(scenario.bo.home, in: bo), in: bo)
        let id = try Attacks.writeObject(unsigned.bytes, type: "commit", in: bo)
        try Attacks.point(bo, at: id)
        #expect(try run("git", ["--git-dir", server.bare.path, "fetch", "-q", bo.directory.path, "+refs/heads/main:refs/pull/1/head"],
                        in: scenario.temp.url).status == 0)
        #expect(try server.tip("refs/pull/1/head") == id.hex)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .badSignature, at: id)
    }

    // 4. Signature placement.

    /// A sync-sized commit (100 notices, made with Bo's real key outside `cohort commit`) with one
    /// notice signed by Cy, checked on every core when the push is short: one verdict everywhere, at
    /// that commit, and the owner's sync keeps every byte when it was forced onto the server.
    @Test func aSyncSizedCommitWithOneForeignNoticeIsRefused() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let cy = try signer(scenario.cy.home, in: bo)
        let attack = try forge(bo, signer: me, files: Attacks.noticeFiles(100, by: me, in: scenario.identifier, foreign: cy, at: 63))
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .notPermitted, at: attack)
        try expectSyncRefuses(server, bo, attack: attack, code: .notPermitted)
    }

    /// A sync of 100 notices, all Bo's, one in the middle padded past the largest notice Cohort reads:
    /// while one thread reads the blobs and the others open them, that one is refused for its size at
    /// that commit, the same everywhere, and the owner's sync keeps every byte of her edit.
    @Test func aSyncSizedCommitWithOneOversizedNoticeIsRefused() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let attack = try forge(bo, signer: me, files: Attacks.noticeFiles(100, by: me, in: scenario.identifier, oversizedAt: 41))
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .tooLarge, at: attack)
        try expectSyncRefuses(server, bo, attack: attack, code: .tooLarge)
    }

    /// One notices folder of 10,001 files (one real notice of Bo's at every path), in a commit Bo signs
    /// outside `cohort commit`: one more change under `.cohort/` than verification lists, refused for
    /// its size at that commit everywhere, and the owner's sync keeps every byte of her edit.
    @Test func oneFolderOfMoreNoticesThanTheBoundIsRefused() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let files = try Attacks.oneFolderOfNotices(HistoryVerifier.maxCohortChanges + 1, by: me, in: scenario.identifier)
        let attack = try forge(bo, signer: me, files: files)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .tooLarge, at: attack)
        try expectSyncRefuses(server, bo, attack: attack, code: .tooLarge)
    }

    /// A push long enough for the pipeline's workers (each reading the packs through a reader of its
    /// own): 70 commits by Bo, the 50th adding more notices than a worker opens ahead (600), one of
    /// them near the end signed by Cy's real key. The rules open them and refuse that commit, the same
    /// way everywhere, and the owner's sync keeps every byte of her edit.
    @Test func aLongPushWithAForeignNoticeAmongMoreThanAWorkerOpens() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let cy = try signer(scenario.cy.homes[0], in: bo)
        let forged = try Attacks.longPush(0..<70, in: bo, by: me, in: scenario.identifier, foreign: cy)
        let attack = try bo.head().commit
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .notPermitted, at: forged)
        try expectSyncRefuses(server, bo, attack: attack, code: .notPermitted)
    }

    /// One of Bo's own notices rewritten (a byte of its signature changed) in a commit Bo signs
    /// outside `cohort commit`: git sends the new blob as a delta on the server's copy (a thin pack,
    /// its base added by `index-pack --fix-thin`, the pack kept), which the hook reads through its own
    /// pack reader.
    /// Notices are append-only: refused at that commit everywhere, and the owner's sync keeps her edit.
    @Test func aRewrittenNoticeSentAsADeltaOnTheServersCopyIsRefused() throws {
        let (server, bo, _) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        try server.keepPushesAsPacks()
        // Bo's own notice, made the usual way first, so that it is the server's.
        let (base, path) = try server.acceptedEditWithNotice(by: bo)
        let notice = try Attacks.signatureByteChanged(Data(contentsOf: bo.directory.appendingPathComponent(path)))
        let attack = try forge(bo, signer: me, files: [path: notice])
        // What git sends for it: the rewritten notice as a delta on the server's copy.
        let blob = try #require(try run("git", ["rev-parse", "\(attack.hex):\(path)"], in: bo.directory).stdout.split(separator: "\n").first)
        let packed = try run("/bin/sh", ["-c", "printf '%s\\n^%s\\n' \(attack.hex) \(base.hex) | git pack-objects --thin --stdout --revs | git index-pack --fix-thin --stdin"],
                             in: bo.directory)
        let name = try #require(packed.stdout.split(whereSeparator: { $0 == "\n" || $0 == "\t" }).last, "\(packed)")
        let entries = try run("git", ["verify-pack", "-v", bo.repository.gitDirectory.appendingPathComponent("objects/pack/pack-\(name).idx").path],
                              in: bo.directory)
        let line = entries.stdout.split(separator: "\n").first { $0.hasPrefix(blob) }
        #expect(line?.split(separator: " ", omittingEmptySubsequences: true).count == 7, "sent whole: \(entries.stdout)")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: base, code: .notPermitted, at: attack)
        try expectSyncRefuses(server, bo, attack: attack, code: .notPermitted)
    }

    /// The owner's own next membership, signed with her real key, its `version` spelled `1e16` (a
    /// number Foundation's decoder reads through `Decimal`): refused as malformed everywhere, so no
    /// two readers of the file can disagree about it.
    @Test func aMembershipVersionSpelledAsAHugeNumberIsRefused() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let owner = scenario.owner
        let good = try owner.head().commit
        let ann = try signer(scenario.ann.home, in: owner)
        let state = try owner.state()
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        let payload = try Attacks.payload(next, by: ann, spelling: "version", as: "1e16")
        let attack = try forge(owner, signer: ann, files: [CohortLayout.members: Attacks.envelope(payload: payload, type: Membership.payloadType, by: ann)])
        try expectOneVerdict(server, owner, home: scenario.ann.home, attack: attack, good: good, code: .malformed, at: attack)
    }

    /// The same commit's 100 notices, all Bo's and well formed, under a commit signed with Cy's key
    /// and Bo's proof: refused for its signature (its notices are never opened), the same everywhere;
    /// a stranger's commit of 100 notices likewise; and the first as the side of a merge Bo signs
    /// properly, refused at that side commit.
    @Test func manyNoticesUnderAnotherParticipantsSignatureAreRefused() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let files = try Attacks.noticeFiles(100, by: me, in: scenario.identifier)
        let attack = try forge(bo, signer: signer(scenario.cy.home, in: bo), files: files, trailer: me)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .badSignature, at: attack)

        // A stranger's own key and proof, and 100 notices they signed: refused for who signed, with
        // none of the notices opened.
        try Attacks.point(bo, at: good)
        let eve = try signer(TestPerson.make("eve", in: scenario.temp).home, in: bo)
        let stranger = try forge(bo, signer: eve, files: Attacks.noticeFiles(100, by: eve, in: scenario.identifier))
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: stranger, good: good, code: .unknownRoot, at: stranger)

        try Attacks.point(bo, at: good)
        let mine = try forge(bo, signer: me, files: ["mine.md": Data("mine\n".utf8)])
        let merge = try commitTree(bo, tree: bo.repository.tree(ofCommit: attack), parents: [mine, attack], signer: me)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: merge, good: good, code: .badSignature, at: attack)
    }

    @Test func signatureInTheMessageBodyIsRefused() throws {
        let (server, bo, good, tree) = try boAddingFile("x.md")
        let scenario = server.scenario
        let made = try Attacks.unsignedCommit(tree: tree, parents: [good], message: "body", signer: signer(scenario.bo.home, in: bo), in: bo)
        // No gpgsig header: the armor follows the message (libgit2's extraction finds it there).
        let id = try Attacks.writeObject(made.bytes + Data(made.armored.utf8), type: "commit", in: bo)
        try Attacks.point(bo, at: id)
        let stock = try run("git", ["verify-commit", id.hex], in: bo.directory)
        #expect(stock.status != 0, "stock git verified it")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .badSignature, at: id)
    }

    /// A commit larger than any Cohort reads (`Repository.maxCommitBytes`), signed with a participant's
    /// real key over its whole message: refused for its size everywhere, before its signature is
    /// checked (and before it is inflated: its header is read first).
    @Test func anOversizedSignedCommitIsRefused() throws {
        let (server, bo, good, tree) = try boAddingFile("x.md")
        let scenario = server.scenario
        let message = "big\n\n" + String(repeating: "a line of an oversized message\n", count: Repository.maxCommitBytes / 31 + 10)
        let made = try Attacks.unsignedCommit(tree: tree, parents: [good], message: message, signer: signer(scenario.bo.home, in: bo), in: bo)
        let id = try Attacks.writeObject(Attacks.signedCommit(made.bytes, signatures: [("gpgsig", made.armored)]), type: "commit", in: bo)
        try Attacks.point(bo, at: id)
        let size = try Int(run("git", ["cat-file", "-s", id.hex], in: bo.directory).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((size ?? 0) > Repository.maxCommitBytes, "the commit is not over \(Repository.maxCommitBytes) bytes")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .tooLarge, at: id)
    }

    /// A participant's real signature over a commit whose author line libgit2 cannot read: the same
    /// refusal everywhere, with or without a commit-graph (which lets libgit2's history walk take a
    /// commit's parents without parsing it, so Cohort's own reading of the commit meets it first).
    @Test(arguments: [false, true])
    func aSignedCommitWithAMalformedAuthorIsRefused(commitGraph: Bool) throws {
        let (server, bo, good, tree) = try boAddingFile("author.md")
        let scenario = server.scenario
        let made = try Attacks.unsignedCommit(tree: tree, parents: [good], message: "odd author", signer: signer(scenario.bo.home, in: bo), in: bo)
        let text = Data(String(decoding: made.bytes, as: UTF8.self)
            .replacingOccurrences(of: "author Forger <forger@example.com>", with: "author Forger forger@example.com").utf8)
        let signed = try SSHSignature.sign(text, with: signer(scenario.bo.home, in: bo).key)
        let id = try Attacks.writeObject(Attacks.signedCommit(text, signatures: [("gpgsig", signed)]), type: "commit", in: bo)
        try Attacks.point(bo, at: id)
        if commitGraph {
            #expect(try run("git", ["commit-graph", "write", "--reachable"], in: bo.directory).status == 0)
        }
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .malformed, at: id)
        // Through a folder remote, libgit2's fetch reads the commit before Cohort's verification does.
        try expectSyncRefuses(server, bo, attack: id, code: .malformed, reason: "cannot fetch from origin: an object in the history is not well formed")
    }

    /// Past 256 valid signatures in one process a key is checked through its table of multiples
    /// (`P256KeyTable`): three commits of 100 of Bo's notices take his key there, then a commit carries
    /// Bo's real signature made over another commit's bytes. Refused alike everywhere, with the table
    /// in use in this process's verification, and the owner's sync keeps every byte.
    @Test func aTransplantedSignatureIsRefusedOnceTheKeyHasItsTable() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let id = try Attacks.transplantedSignatureAfterManyValid(bo, signer: me, in: scenario.identifier)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .badSignature, at: id)
        #expect(try P256Key(x963: me.key.publicKey.x963).use.table != nil, "Bo's key never reached its table")
        try expectSyncRefuses(server, bo, attack: id, code: .badSignature)
    }

    /// After 8 valid signatures in one process a key checks through its small table of multiples: a
    /// push of two of Bo's commits, 20 of his notices in the first, and in the second a notice
    /// carrying his real signature made over another notice. The hook (one process for the push)
    /// checks that notice through Bo's small table; refused alike everywhere, and the owner's sync
    /// keeps every byte.
    @Test func aTransplantedNoticeSignatureIsRefusedThroughTheKeysSmallTable() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        try forge(bo, signer: me, files: Attacks.noticeFiles(20, by: me, in: scenario.identifier), message: "twenty notices")
        let attack = try forge(bo, signer: me, files: Attacks.noticeFiles(20, by: me, in: scenario.identifier, transplantedAt: 13),
                               message: "one moved signature")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: attack, good: good, code: .badSignature, at: attack)
        #expect(try P256Key(x963: me.key.publicKey.x963).use.table != nil, "Bo's key never reached a table")
        try expectSyncRefuses(server, bo, attack: attack, code: .badSignature)
    }

    /// A line of three new commits onto main (the hook reads it down to main instead of walking the
    /// graph), the middle one signed with Bo's real key after his removal: refused alike everywhere at
    /// Bo's commit, and nothing of the line lands.
    @Test func aRemovedParticipantsCommitInsideALineOfNewCommitsIsRefused() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        _ = try scenario.owner.removeParticipants(["bo@example.com"])
        try server.expectAccepted(scenario.owner)
        let cy = try server.clone("cy", for: scenario.cy)
        let good = try cy.head().commit
        let cySigner = try signer(scenario.cy.home, in: cy)
        let boSigner = try CollaborationSigner(home: scenario.bo.home, context: cy.state().context)
        try forge(cy, signer: cySigner, files: ["one.md": Data("one\n".utf8)], message: "cy one")
        let bos = try forge(cy, signer: boSigner, files: ["two.md": Data("two\n".utf8)], message: "bo, removed")
        try forge(cy, signer: cySigner, files: ["three.md": Data("three\n".utf8)], message: "cy three")
        let tip = try cy.head().commit
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: tip, good: good, code: .revoked, at: bos)
        #expect(try server.tip() == good.hex)
    }

    @Test(arguments: ["gpgsig", "gpgsig-sha256"])
    func aSecondSignatureHeaderIsRefused(header: String) throws {
        let (server, bo, good, tree) = try boAddingFile("y.md")
        let scenario = server.scenario
        let made = try Attacks.unsignedCommit(tree: tree, parents: [good], message: "two", signer: signer(scenario.bo.home, in: bo), in: bo)
        let bytes = try Attacks.signedCommit(made.bytes, signatures: [("gpgsig", made.armored), (header, made.armored)])
        let id = try Attacks.writeObject(bytes, type: "commit", in: bo)
        try Attacks.point(bo, at: id)
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .badSignature, at: id)
    }

    // 7. Paths git refuses.

    @Test(arguments: [[".GIT", "config"], ["sub", ".git", "config"], ["git~1", "config"], [".git.", "x"], [".git ", "x"],
                      ["a\\b"], ["docs", ".g\u{200C}it", "hooks"], ["..", "x"], ["GIT~1", "x"], [".git::$INDEX_ALLOCATION", "x"]])
    func pathsGitRefusesAreRefused(components: [String]) throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let tree = try Attacks.treeAdding(components, content: Data("[core]\n".utf8), to: bo)
        let id = try commitTree(bo, tree: tree, parents: [good], signer: signer(scenario.bo.home, in: bo), message: "odd path")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .notPermitted, at: id)
        try expectSyncRefuses(server, bo, attack: id, code: .notPermitted)
    }

    /// A remote made with `git init --bare` names an unborn `master`; `cohort clone` then takes `main`,
    /// and must verify it exactly as the hook does: a forged commit on that `main` (Bo's real key, a
    /// path git refuses, a file where a folder was) gets the same code, and nothing is left behind.
    @Test func aCloneThatTakesMainFromAnUnbornHeadVerifiesIt() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        var tree = try Attacks.treeAdding([".GIT", "config"], content: Data("[core]\n".utf8), to: bo)
        tree = try bo.repository.tree(from: tree, putting: ["bread": bo.repository.writeBlob(Data("a file where a folder was\n".utf8))])
        let id = try commitTree(bo, tree: tree, parents: [good], signer: signer(scenario.bo.home, in: bo), message: "odd remote")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .notPermitted, at: id)
        let bare = scenario.temp.path("unborn-head.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: scenario.temp.url).status == 0)
        #expect(try run("git", ["symbolic-ref", "HEAD", "refs/heads/master"], in: bare).status == 0)
        #expect(try run("git", ["--git-dir", bare.path, "fetch", "-q", bo.directory.path, "+\(id.hex):refs/heads/main"],
                        in: scenario.temp.url).status == 0)
        let target = scenario.temp.path("clone-unborn")
        let cloned = try run(cohortBinary.path, ["clone", bare.path, target.path], in: scenario.temp.url,
                             environment: ["COHORT_HOME": scenario.cy.home.directory.path])
        #expect(cloned.status == 1, "cohort clone accepted the history: \(cloned.stdout)")
        #expect(cloned.stderr.hasPrefix("error: \(CohortError.Code.notPermitted.rawValue): "), "\(cloned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target.path), "the refused clone was left behind")
        try expectSyncRefuses(server, bo, attack: id, code: .notPermitted)
    }

    /// Bo, with his real key, commits a folder naming `é` twice (a link to a folder outside, then a
    /// folder holding `authorized_keys`) beside the other spelling of `é` (`e` and a combining accent):
    /// each name passes git's path rules, but git's fsck refuses a tree naming one entry twice, and a
    /// checkout that compares names as strings could be led through the link. Every verifier refuses
    /// it alike (a fresh clone leaves nothing), Ann's sync of it forced past the hook keeps every byte
    /// of her edit, and nothing is written outside.
    @Test(arguments: ["twice", "out of order"])
    func aFolderNamingAnEntryTwiceOrOutOfOrderIsRefused(_ shape: String) throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let outside = scenario.temp.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let repository = bo.repository
        let file = try repository.writeBlob(Data("written?\n".utf8))
        let link = try repository.writeBlob(Data(outside.path.utf8))
        var docs: ObjectID
        if shape == "twice" {
            let decomposed = try Attacks.tree([(0o100644, "f", file)], in: bo)
            let keys = try Attacks.tree([(0o100644, "authorized_keys", file)], in: bo)
            docs = try Attacks.tree([(0o040000, "e\u{301}", decomposed), (0o120000, "\u{e9}", link), (0o040000, "\u{e9}", keys)], in: bo)
        } else {
            // `b` before `a`: written by hand, as no git command writes a tree.
            docs = try Attacks.writeObject(Data("100644 b".utf8) + Data([0]) + Data(hex: file.hex)! + Data("120000 a".utf8) + Data([0])
                                           + Data(hex: link.hex)!, type: "tree", in: bo)
        }
        let top = try repository.entries(ofTree: repository.tree(ofCommit: good)).map { ($0.mode, $0.name, $0.id) }
        let tree = try Attacks.tree(top + [(0o040000, "docs", docs)], in: bo)
        let id = try commitTree(bo, tree: tree, parents: [good], signer: signer(scenario.bo.home, in: bo), message: "docs")
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .notPermitted, at: id)
        try expectSyncRefuses(server, bo, attack: id, code: .notPermitted)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    // 8. Smaller rules.

    @Test func ownersMembershipCommittedBySomeoneElseIsRefused() throws {
        let (server, cy, good) = try cloned(by: \.cy)
        let scenario = server.scenario
        // An owner-signed next membership version (dropping Bo), committed by Cy.
        let ann = try signer(scenario.ann.home, in: cy)
        let state = try cy.state()
        var next = state.membership
        next.version += 1
        next.previous = state.membershipDigest
        next.participants.removeAll { $0.handle == "bo@example.com" }
        next.signer = ann.signer
        let id = try forge(cy, signer: signer(scenario.cy.home, in: cy), files: [CohortLayout.members: sealed(next, by: ann)])
        try expectOneVerdict(server, cy, home: scenario.cy.home, attack: id, good: good, code: .notPermitted, at: id)
    }

    @Test func mentionNamingAnotherHandleIsRefused() throws {
        let (server, bo, good) = try cloned(by: \.bo)
        let scenario = server.scenario
        let me = try signer(scenario.bo.home, in: bo)
        let cyRoot = try #require(try bo.state().membership.participants.first { $0.handle == "cy@example.com" }).root
        let notice = Notice(type: .mention, collaboration: scenario.identifier, actor: me.root,
                            data: ["path": "shortbread.md", "mentioned": cyRoot, "handle": "ann@example.com", "text": "hi"], signer: me.signer)
        let id = try forge(bo, signer: me, files: [notice.path: sealed(notice, by: me)])
        try expectOneVerdict(server, bo, home: scenario.bo.home, attack: id, good: good, code: .notPermitted, at: id)
    }
}
