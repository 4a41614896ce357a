import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// A person with one or more devices, each an identity home under the test's directory.
public struct TestPerson {
    public let handle: String
    public let homes: [IdentityHome]

    public var home: IdentityHome { homes[0] }

    public func card() throws -> IdentityCard { try home.requireCard() }

    /// A person whose devices have all enrolled and hold the complete card.
    public static func make(_ name: String, devices: Int = 1, in temp: TemporaryDirectory) throws -> TestPerson {
        let handle = "\(name)@example.com"
        let homes = (0..<devices).map { IdentityHome(directory: temp.path("homes/\(name)-\($0)")) }
        _ = try homes[0].initialise(handle: handle, name: name.capitalized, deviceName: "\(name)-0")
        for (index, home) in homes.enumerated().dropFirst() {
            let card = try homes[0].addDevice(home.enroll(handle: handle, deviceName: "\(name)-\(index)"))
            let complete = try home.importCard(card).card
            for other in homes[..<index] { _ = try other.importCard(complete) }
        }
        return TestPerson(handle: handle, homes: homes)
    }
}

/// Ann owns "Baking Recipes"; Bo (one device) and Cy (two devices) take part with write permission.
public final class Scenario {
    public let temp: TemporaryDirectory
    public let ann: TestPerson
    public let bo: TestPerson
    public let cy: TestPerson
    public let owner: Workspace

    public init(options: ShareOptions = .defaults(), addEveryone: Bool = true) throws {
        temp = try TemporaryDirectory()
        ann = try .make("ann", in: temp)
        bo = try .make("bo", in: temp)
        cy = try .make("cy", devices: 2, in: temp)
        let folder = temp.path("ann")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("bread"), withIntermediateDirectories: true)
        try Data("500 g flour\n".utf8).write(to: folder.appendingPathComponent("bread/sourdough.md"))
        try Data("butter, sugar, flour\n".utf8).write(to: folder.appendingPathComponent("shortbread.md"))
        owner = try Workspace.start(StartRequest(directory: folder, title: "Baking Recipes", options: options), home: ann.home).0
        if addEveryone {
            try owner.addParticipants([bo.card(), cy.card()], settings: ParticipantSettings())
        }
    }

    public var identifier: String { (try? owner.state().collaboration.identifier) ?? "" }

    /// A clone of the owner's workspace (stock `git clone`) used by `home`.
    public func clone(_ name: String, for home: IdentityHome, from source: Workspace? = nil) throws -> Workspace {
        let target = temp.path(name)
        let result = try run("git", ["clone", "-q", (source ?? owner).directory.path, target.path], in: temp.url)
        #expect(result.status == 0, "\(result.stderr)")
        return try Workspace(containing: target, home: home)
    }

    /// Fast-forwards `workspace` to `source`'s main branch with stock `git pull`.
    public func pull(into workspace: Workspace, from source: Workspace) throws {
        let result = try run("git", ["pull", "-q", "--ff-only", source.directory.path, "main"], in: workspace.directory)
        #expect(result.status == 0, "\(result.stderr)")
    }

    public func write(_ text: String, to path: String, in workspace: Workspace) throws {
        let url = workspace.directory.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }
}

/// Writes `files` (and removes `removing`) on top of HEAD and commits it signed by `signer` with the
/// trailer of `trailer` (default: the signer), moving the branch without any check: how an attacker
/// (or a buggy client) makes history that `cohort verify` must refuse.
@discardableResult
public func forge(_ workspace: Workspace, signer: CollaborationSigner, files: [String: Data] = [:], removing: Set<String> = [],
           trailer: CollaborationSigner? = nil, parents: [ObjectID]? = nil, tree: ObjectID? = nil, mode: UInt32 = 0o100644,
           message: String = "forged") throws -> ObjectID {
    let repository = workspace.repository
    let (branch, head) = try workspace.head()
    var blobs: [String: ObjectID] = [:]
    for (path, data) in files { blobs[path] = try repository.writeBlob(data) }
    let tree = try repository.tree(from: tree ?? repository.tree(ofCommit: head), putting: blobs, removing: removing, mode: mode)
    let proofSigner = trailer ?? signer
    let id = try repository.createCommit(
        tree: tree, parents: parents ?? [head],
        message: CommitTrailer.append(to: message, scheme: proofSigner.root.scheme, proof: proofSigner.proof),
        author: Person(name: "Forger", email: "forger@example.com"),
        sign: { try SSHSignature.sign($0, with: signer.key) })
    try repository.updateReference(branch, to: id, expected: head, message: "forged")
    return id
}

/// Makes a signed commit with exactly `tree` and `parents` (a merge, say) and moves the branch to it.
@discardableResult
public func commitTree(_ workspace: Workspace, tree: ObjectID, parents: [ObjectID], signer: CollaborationSigner, message: String = "merge") throws -> ObjectID {
    let repository = workspace.repository
    let (branch, head) = try workspace.head()
    let id = try repository.createCommit(
        tree: tree, parents: parents, message: CommitTrailer.append(to: message, scheme: signer.root.scheme, proof: signer.proof),
        author: Person(name: "Merger", email: "merger@example.com"), sign: { try SSHSignature.sign($0, with: signer.key) })
    try repository.updateReference(branch, to: id, expected: head, message: message)
    return id
}

/// Asserts that verifying `workspace`'s history stops at `commit` (if given) with `code`.
public func expectViolation(_ code: CohortError.Code, in workspace: Workspace, at commit: ObjectID? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let report = try workspace.repository.verifyHistory(to: workspace.head().commit)
        Issue.record("expected \(code), history verified (\(report.commits) commits)", sourceLocation: sourceLocation)
    } catch let violation as Violation {
        #expect(violation.error.code == code, "got \(violation)", sourceLocation: sourceLocation)
        if let commit { #expect(violation.commit == commit, sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// The signer of `home` in `workspace`'s collaboration.
public func signer(_ home: IdentityHome, in workspace: Workspace) throws -> CollaborationSigner {
    try CollaborationSigner(home: home, context: workspace.state().context)
}

/// A sealed envelope's file bytes.
public func sealed<P: SignedPayload>(_ value: P, by signer: CollaborationSigner) throws -> Data {
    try Envelope.seal(value, by: signer).fileData()
}
