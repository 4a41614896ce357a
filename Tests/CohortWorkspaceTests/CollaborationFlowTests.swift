import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

@Suite struct CollaborationFlowTests {
    /// Owner plus two participants, one with two devices: everyone commits in their own clone, the
    /// owner pulls with stock git, and the whole history verifies everywhere.
    @Test func ownerAndTwoParticipants() throws {
        let scenario = try Scenario()
        let state = try scenario.owner.state()
        #expect(state.membership.version == 2)
        #expect(state.membership.participants.map(\.handle) == ["ann@example.com", "bo@example.com", "cy@example.com"])
        #expect(state.membership.participants.allSatisfy { $0.permission == .readWrite })

        let bo = try scenario.clone("bo", for: scenario.bo.home)
        try scenario.write("500 g flour\n20 g salt\n", to: "bread/sourdough.md", in: bo)
        let boCommit = try #require(try bo.commitChanges(message: "More salt"))
        #expect(boCommit.notices.map(\.type) == [.contentEdited])
        #expect(try bo.repository.verifyHistory(to: bo.head().commit).commits == 3)
        try scenario.pull(into: scenario.owner, from: bo)

        let cyLaptop = try scenario.clone("cy-0", for: scenario.cy.homes[0])
        let comment = try cyLaptop.comment(on: "bread/sourdough.md", text: "Less salt, @bo@example.com?")
        #expect(comment.notices.map(\.type) == [.contentCommented, .mention])
        #expect(comment.notices[1].data["mentioned"] == state.membership.participant(handle: "bo@example.com")?.root)
        try scenario.pull(into: scenario.owner, from: cyLaptop)

        // Cy's second device signs with its own key; both fold to Cy's one root.
        let cyPhone = try scenario.clone("cy-1", for: scenario.cy.homes[1])
        try scenario.write("Blondies\n", to: "blondies.md", in: cyPhone)
        _ = try #require(try cyPhone.commitChanges(message: "Blondies"))
        try scenario.pull(into: scenario.owner, from: cyPhone)
        let laptopSigner = try signer(scenario.cy.homes[0], in: cyPhone)
        let phoneSigner = try signer(scenario.cy.homes[1], in: cyPhone)
        #expect(laptopSigner.root == phoneSigner.root)
        #expect(laptopSigner.key.publicKey != phoneSigner.key.publicKey)

        let report = try scenario.owner.repository.verifyHistory(to: scenario.owner.head().commit)
        #expect(report.commits == 5)
        // Nothing is left uncommitted in any workspace.
        for workspace in [scenario.owner, bo, cyLaptop, cyPhone] {
            let status = try run("git", ["status", "--porcelain"], in: workspace.directory)
            #expect(status.stdout.isEmpty, "\(workspace.directory.path): \(status.stdout)")
        }
    }

    /// An implementation written apart (Python, `cryptography`) recomputes the DSSE encoding, verifies
    /// each envelope's signature with its key and folds its proof to the expected root.
    @Test func envelopesCheckOutIndependently() throws {
        let scenario = try Scenario()
        _ = try scenario.owner.comment(on: "shortbread.md", text: "Chill the dough first")
        let state = try scenario.owner.state()
        let script = testScript("verify_dsse.py")
        var files = [CohortLayout.collaboration, CohortLayout.members]
        let notices = try FileManager.default.subpathsOfDirectory(atPath: scenario.owner.directory.appendingPathComponent(CohortLayout.notices).path)
            .filter { $0.hasSuffix(".json") }.map { CohortLayout.notices + "/" + $0 }
        #expect(notices.count == 5)  // two created, two added, one comment
        files += notices
        for file in files {
            let result = try run("python3", [script.path, file, state.owner.hex], in: scenario.owner.directory)
            #expect(result.status == 0, "\(file): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.hasPrefix("ok application/vnd.cohort."))
        }
        // The independent check fails on a tampered file.
        let tampered = scenario.temp.path("tampered.json")
        var envelope = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: scenario.owner.directory.appendingPathComponent(CohortLayout.members))) as? [String: Any])
        let encoded = try #require(envelope["payload"] as? String)
        let decoded = try #require(Data(base64Encoded: encoded))
        var payload = String(decoding: decoded, as: UTF8.self)
        payload = payload.replacingOccurrences(of: "\"read-write\"", with: "\"read-only\"")
        envelope["payload"] = Data(payload.utf8).base64EncodedString()
        try JSONSerialization.data(withJSONObject: envelope).write(to: tampered)
        #expect(try run("python3", [script.path, tampered.path, state.owner.hex], in: scenario.temp.url).status == 1)
    }

    @Test func renamesAndMoves() throws {
        let scenario = try Scenario(addEveryone: false)
        let owner = scenario.owner
        let folder = owner.directory
        try FileManager.default.moveItem(at: folder.appendingPathComponent("shortbread.md"), to: folder.appendingPathComponent("shortbread-classic.md"))
        let renamed = try #require(try owner.commitChanges(message: "Rename"))
        #expect(renamed.notices.map(\.type) == [.contentRenamed])
        #expect(renamed.notices[0].data == ["path": "shortbread-classic.md", "oldPath": "shortbread.md"])

        try FileManager.default.createDirectory(at: folder.appendingPathComponent("biscuits"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("shortbread-classic.md"), to: folder.appendingPathComponent("biscuits/shortbread-classic.md"))
        let moved = try #require(try owner.commitChanges(message: "Move"))
        #expect(moved.notices.map(\.type) == [.contentMoved])
        #expect(moved.notices[0].data == ["path": "biscuits/shortbread-classic.md", "oldPath": "shortbread-classic.md"])

        try FileManager.default.removeItem(at: folder.appendingPathComponent("bread/sourdough.md"))
        try Data("x".utf8).write(to: folder.appendingPathComponent(".notes.md.swp"))
        try Data("x".utf8).write(to: folder.appendingPathComponent(".~lock.notes.odt#"))
        let deleted = try #require(try owner.commitChanges(message: "Delete"))
        #expect(deleted.notices.map(\.type) == [.contentDeleted], "editor temp and lock files are never committed")
        #expect(try owner.commitChanges(message: "Nothing") == nil)
        #expect(try owner.repository.verifyHistory(to: owner.head().commit).commits == 4)
    }

    @Test func startLeavesNothingBehindOnFailure() throws {
        let temp = try TemporaryDirectory()
        let nobody = IdentityHome(directory: temp.path("nobody"))
        expectCode(.noIdentity) { try Workspace.start(StartRequest(directory: temp.path("new"), title: "T"), home: nobody) }
        #expect(!FileManager.default.fileExists(atPath: temp.path("new").path))

        let ann = try TestPerson.make("ann", in: temp)
        expectCode(.malformed) { try Workspace.start(StartRequest(directory: temp.path("new"), title: ""), home: ann.home) }
        #expect(!FileManager.default.fileExists(atPath: temp.path("new").path))

        // A folder with a .cohort/ of its own is refused, its files untouched.
        let existing = temp.path("existing")
        try FileManager.default.createDirectory(at: existing.appendingPathComponent(".cohort"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: existing.appendingPathComponent("notes.md"))
        expectCode(.git) { try Workspace.start(StartRequest(directory: existing, title: "T"), home: ann.home) }
        #expect(try String(decoding: Data(contentsOf: existing.appendingPathComponent("notes.md")), as: UTF8.self) == "mine")
        #expect(!FileManager.default.fileExists(atPath: existing.appendingPathComponent(".git").path))

        // A git repository with no commits yet is adopted: its files are the first content.
        let fresh = temp.path("fresh")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        #expect(try run("git", ["init", "-q", "-b", "master"], in: fresh).status == 0)
        try Data("mine".utf8).write(to: fresh.appendingPathComponent("notes.md"))
        let (adopted, _) = try Workspace.start(StartRequest(directory: fresh, title: "T"), home: ann.home)
        #expect(try adopted.repository.verifyHistory(to: adopted.head().commit).commits == 1)
        #expect(try String(decoding: Data(contentsOf: fresh.appendingPathComponent("notes.md")), as: UTF8.self) == "mine")
        #expect(try adopted.keptFromBeforeCohort().branches.isEmpty)
    }

    /// A participant's merge commit (two branches joined) is accepted, including notices the other
    /// branch brought, signed by their own authors.
    @Test func mergeCommitByParticipant() throws {
        let scenario = try Scenario()
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        let cy = try scenario.clone("cy", for: scenario.cy.home)
        try scenario.write("bo's line\n", to: "bo.md", in: bo)
        _ = try #require(try bo.commitChanges(message: "Bo"))
        try scenario.write("cy's line\n", to: "cy.md", in: cy)
        let cyCommit = try #require(try cy.commitChanges(message: "Cy"))
        #expect(try run("git", ["fetch", "-q", cy.directory.path, "main"], in: bo.directory).status == 0)

        // Bo merges Cy's branch: the union of both trees, signed by Bo.
        let repository = bo.repository
        let mine = try bo.head().commit
        let theirs = cyCommit.commit
        let tree = try repository.tree(from: repository.tree(ofCommit: mine),
                                       putting: Dictionary(uniqueKeysWithValues: try cyAdditions(cy)))
        let boSigner = try signer(scenario.bo.home, in: bo)
        let merged = try repository.createCommit(
            tree: tree, parents: [mine, theirs],
            message: CommitTrailer.append(to: "Merge", scheme: .cohortV1, proof: boSigner.proof),
            author: Person(name: "Bo", email: "bo@example.com"),
            sign: { try SSHSignature.sign($0, with: boSigner.key) })
        try repository.updateReference(bo.head().branch, to: merged, expected: mine, message: "merge")
        #expect(try repository.verifyHistory(to: merged).commits >= 5)
    }

    /// Paths and blobs Cy's commit added.
    private func cyAdditions(_ cy: Workspace) throws -> [(String, ObjectID)] {
        let head = try cy.head().commit
        let commit = try cy.repository.commit(head)
        let changes = try cy.repository.changes(from: cy.repository.tree(ofCommit: commit.parents[0]), to: commit.tree, detectRenames: false)
        return changes.compactMap { change in change.newPath.flatMap { path in change.newID.map { (path, $0) } } }
    }
}

@Suite struct IndexAndIgnoreTests {
    /// What the user staged by hand stays staged across Cohort's own commits.
    @Test func commentKeepsWhatTheUserStaged() throws {
        let scenario = try Scenario()
        try scenario.write("draft\n", to: "draft.md", in: scenario.owner)
        #expect(try run("git", ["add", "draft.md"], in: scenario.owner.directory).status == 0)
        _ = try scenario.owner.comment(on: "shortbread.md", text: "hi")
        let staged = try run("git", ["diff", "--cached", "--name-only"], in: scenario.owner.directory)
        #expect(staged.stdout == "draft.md\n")
        #expect(try run("git", ["status", "--porcelain", ".cohort"], in: scenario.owner.directory).stdout.isEmpty)
    }

    /// A folder of 10,001 files (with the collaboration and membership files, more changes under
    /// `.cohort/` than an earlier bound allowed in one commit) is started, and one commit editing every
    /// file is made: both verify, as the hook will verify them.
    @Test func aFolderOfTenThousandFilesStartsAndCommits() throws {
        let temp = try TemporaryDirectory()
        let ann = try TestPerson.make("ann", in: temp)
        let folder = temp.path("library")
        let count = 10_001
        for index in 0..<count {
            let section = folder.appendingPathComponent(String(format: "s%02d", index % 64))
            if index < 64 { try FileManager.default.createDirectory(at: section, withIntermediateDirectories: true) }
            try Data("page \(index)\n".utf8).write(to: section.appendingPathComponent("p\(index).md"))
        }
        let (workspace, _) = try Workspace.start(StartRequest(directory: folder, title: "Library"), home: ann.home)
        let genesis = try workspace.head().commit
        let files = try workspace.repository.treeChanges(from: nil, to: workspace.repository.tree(ofCommit: genesis)).compactMap(\.newPath)
        #expect(files.filter { $0.hasPrefix(CohortLayout.notices + "/") }.count == count)
        for index in 0..<count {
            let file = folder.appendingPathComponent(String(format: "s%02d/p\(index).md", index % 64))
            try Data("page \(index), edited\n".utf8).write(to: file)
        }
        let edit = try #require(try workspace.commitChanges(message: "every page"))
        #expect(edit.notices.count == count)
        #expect(try workspace.repository.verifyHistory(to: edit.commit).commits == 2)
    }

    /// A `.gitignore` that would hide Cohort's files changes nothing: `.cohort/` is never staged from disk.
    @Test func startAndCommitDespiteIgnoreRules() throws {
        let temp = try TemporaryDirectory()
        let ann = try TestPerson.make("ann", in: temp)
        let folder = temp.path("notes")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("*.json\n.*\n!.gitignore\n".utf8).write(to: folder.appendingPathComponent(".gitignore"))
        try Data("hello\n".utf8).write(to: folder.appendingPathComponent("hello.md"))
        let (workspace, _) = try Workspace.start(StartRequest(directory: folder, title: "Notes"), home: ann.home)
        try Data("hello again\n".utf8).write(to: folder.appendingPathComponent("hello.md"))
        _ = try #require(try workspace.commitChanges(message: "again"))
        #expect(try workspace.repository.verifyHistory(to: workspace.head().commit).commits == 2)
    }
}
