import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import Foundation

/// A collaboration checked out on this device: its repository and working directory, and this
/// device's identity. Every change it makes is a signed commit that passes the verification core
/// before any branch moves.
public final class Workspace {
    public let repository: Repository
    public let home: IdentityHome
    public let directory: URL

    public init(repository: Repository, home: IdentityHome) throws {
        guard let directory = repository.workingDirectory else {
            throw CohortError(.git, "\(repository.gitDirectory.path) is a bare repository", hint: "run this in a workspace (a clone)")
        }
        self.repository = repository
        self.home = home
        self.directory = directory
    }

    /// The workspace containing `url`.
    public convenience init(containing url: URL, home: IdentityHome) throws {
        let repository: Repository
        do {
            repository = try Repository(discoveringFrom: url)
        } catch let error as CohortError where error.code == .git {
            throw CohortError(.git, "\(url.path) is not in a Cohort workspace (no git repository there or above)",
                              hint: "run this inside a workspace, give --workspace DIR, or start one with `cohort start DIR`")
        }
        try self.init(repository: repository, home: home)
    }

    /// Refuses a git repository that is not a collaboration (its HEAD has no `.cohort/`), so that a
    /// command there says so instead of failing on the first rule a plain commit breaks.
    public func checkIsCollaboration() throws {
        let head = try head()
        guard try repository.entry(at: CohortLayout.folder, inTree: repository.tree(ofCommit: head.commit)) != nil else {
            throw CohortError(.git, "\(directory.path) is a git repository but not a Cohort collaboration (no \(CohortLayout.folder)/ in \(head.branch))",
                              hint: "`cohort start . --title T` here adopts it: its files become the first content and its history stays on pre-cohort/ branches")
        }
    }

    /// The branch HEAD is on and the commit it points at.
    public func head() throws -> (branch: String, commit: ObjectID) {
        let branch = try repository.headBranch()
        guard let commit = try repository.resolve(branch) else {
            throw CohortError(.git, "\(branch) has no commits", hint: "this is not a Cohort collaboration; create one with `cohort start`")
        }
        return (branch, commit)
    }

    /// The collaboration as of HEAD (its files' signatures checked).
    public func state() throws -> CollaborationState {
        try HistoryVerifier(repository: repository).state(at: head().commit)
    }

    /// This device's signer for the collaboration: with the newest of this device's cards whose root
    /// the collaboration knows (a device added later does not lock its person out; they rotate when
    /// they want the new device to sign here too), else with the current card.
    public func signer(for state: CollaborationState) throws -> CollaborationSigner {
        let device = try home.loadDevice()
        let cards = try home.cardHistory()
        for card in cards {
            let candidate = try CollaborationSigner(device: device, card: card, context: state.context)
            if state.directory.status(of: candidate.root) != nil { return candidate }
        }
        return try CollaborationSigner(device: device, card: home.requireCard(), context: state.context)
    }

    /// This device's participant entry, or `E_UNKNOWN_ROOT` / `E_REVOKED`.
    public func me(in state: CollaborationState, signer: CollaborationSigner) throws -> Participant {
        try state.requireParticipant(signer.root)
    }

    /// Commits `tree` on top of `head` (read once by the caller, so a concurrent change is refused
    /// rather than built upon), signed by `signer`, after the verification core has accepted it. Then
    /// writes `files` (under `.cohort/`) to the working directory and makes their index entries match
    /// the commit, leaving the rest of what the user staged alone.
    @discardableResult
    public func commit(tree: ObjectID, on head: (branch: String, commit: ObjectID), message: String,
                       signer: CollaborationSigner, write files: [String: Data] = [:]) throws -> ObjectID {
        let card = try home.requireCard()
        try markHistoryBeforeChanges(head: head.commit)
        let id = try repository.createVerifiedCommit(tree: tree, parents: [head.commit], message: message, signer: signer,
                                                     author: Person(name: card.name, email: card.handle))
        try repository.updateReference(head.branch, to: id, expected: head.commit,
                                       message: "cohort: \(message.split(separator: "\n").first ?? "")")
        // The commit is made: what follows only mirrors `.cohort/` into the folder (Cohort reads it
        // from the commits), so a failure here (a full disk) must not make the commit look undone.
        let written = files.filter { (try? writeFiles([$0.key: $0.value])) != nil }
        // The files were just written with the commit's content: recording them in the index with
        // their stat data (resetting all of `.cohort/` would drop every earlier notice's) means the
        // next look at the files need not hash them.
        try? repository.stage(written: written)
        return id
    }

    /// Writes tool-owned files (under `.cohort/`) into the working directory.
    package func writeFiles(_ files: [String: Data]) throws {
        for (path, data) in files {
            let url = directory.appendingPathComponent(path)
            try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o755)
            // The commit holds them durably; the working copies need not be flushed one by one.
            try AtomicFile.write(data, to: url, mode: 0o644, replacing: true, durable: false)
        }
    }

    /// Seals `notices` and returns their blobs by path plus their file contents.
    package func seal(_ notices: [Notice], by signer: CollaborationSigner) throws -> (blobs: [String: ObjectID], files: [String: Data]) {
        var blobs: [String: ObjectID] = [:]
        var files: [String: Data] = [:]
        for notice in notices {
            let data = try Envelope.seal(notice, by: signer).fileData()
            blobs[notice.path] = try repository.writeBlob(data)
            files[notice.path] = data
        }
        return (blobs, files)
    }
}
