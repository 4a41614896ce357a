import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import Foundation

/// What `cohort start` is asked for.
public struct StartRequest: Sendable {
    public var directory: URL
    public var title: String
    public var localIdentifier: String?
    public var options: ShareOptions

    public init(directory: URL, title: String, localIdentifier: String? = nil, options: ShareOptions = .defaults()) {
        self.directory = directory
        self.title = title
        self.localIdentifier = localIdentifier
        self.options = options
    }
}

extension Workspace {
    /// Creates a collaboration in `request.directory` (new, or an existing folder whose files become
    /// its first content; a git repository there is adopted, see `Adoption`): the repository, the
    /// signed collaboration file, membership version 1 with this device's person as owner, a
    /// `content.created` notice per file, and the signed genesis commit. If any step fails, nothing is
    /// left behind (an adopted repository is as it was).
    public static func start(_ request: StartRequest, home: IdentityHome, now: Date = Date()) throws -> (Workspace, CollaborationFile) {
        let device = try home.loadDevice()
        let card = try home.requireCard()
        try card.verifyPresentSignatures()
        let fileManager = FileManager.default
        let directory = request.directory.standardizedFileURL
        var isFolder: ObjCBool = false
        let existed = fileManager.fileExists(atPath: directory.path, isDirectory: &isFolder)
        guard !existed || isFolder.boolValue else {
            throw CohortError(.io, "\(directory.path) is a file", hint: "give a new or existing folder")
        }
        if fileManager.fileExists(atPath: directory.appendingPathComponent(CohortLayout.folder).path) {
            throw CohortError(.git, "\(directory.path) already has \(CohortLayout.folder)/: it is, or was, a collaboration",
                              hint: "work in it with `cohort status` and `cohort sync`, or start a new collaboration in another folder")
        }
        // A git repository there is adopted: its files become the first content, its history stays beside.
        let adoption = existed && fileManager.fileExists(atPath: directory.appendingPathComponent(".git").path)
            ? try Adoption(directory) : nil
        if existed, adoption == nil, (try? Repository(at: directory))?.isBare == true {
            throw CohortError(.git, "\(directory.path) is a bare git repository (a server's copy, with no files to share)",
                              hint: "start the collaboration in a folder of files; `cohort hook install` prepares a bare repository to receive it")
        }

        let identifier = UUID().uuidString.lowercased()
        var salt = Data(count: CollaborationContext.saltBytes)
        salt.withUnsafeMutableBytes { buffer in
            var random = SystemRandomNumberGenerator()
            for i in buffer.indices { buffer[i] = random.next() }
        }
        let context = try CollaborationContext(identifier: identifier, salt: salt)
        let signer = try CollaborationSigner(device: device, card: card, context: context)
        let collaboration = CollaborationFile(
            identifier: identifier, localIdentifier: request.localIdentifier ?? identifier, title: request.title,
            initiator: .init(handle: card.handle, name: card.name), salt: salt, owner: signer.root,
            shareOptions: request.options, createdAt: now, signer: signer.signer)
        try collaboration.validate()
        let owner = Participant(root: signer.root, handle: card.handle, name: card.name, permission: .readWrite,
                                mentions: true, comments: true, addedBy: signer.root.hex, addedAt: now)
        let membership = Membership(collaboration: identifier, version: 1, previous: nil, participants: [owner], removed: [], signer: signer.signer)

        do {
            try adoption?.begin()
            let repository = try adoption?.repository ?? Repository.create(at: directory, bare: false)
            let workspace = try Workspace(repository: repository, home: home)
            // The folder's files are the first content; `.cohort/` is built apart, never staged from disk.
            // What an adopted repository's index tracked under `.cohort/` is left out too.
            let staged = try repository.tree(repository.stageAll(
                skippingNew: { EditorArtifacts.matches($0) || CohortLayout.isCohortPath($0) },
                skippingTracked: { CohortLayout.isCohortPath($0) }), replacing: CohortLayout.folder, with: nil)
            let created = try repository.treeChanges(from: nil, to: staged).compactMap(\.newPath)
            let notices = created.map {
                Notice(type: .contentCreated, collaboration: identifier, actor: signer.root, data: ["path": $0], time: now, signer: signer.signer)
            }
            var (blobs, files) = try workspace.seal(notices, by: signer)
            files[CohortLayout.collaboration] = try Envelope.seal(collaboration, by: signer).fileData()
            files[CohortLayout.members] = try Envelope.seal(membership, by: signer).fileData()
            for path in [CohortLayout.collaboration, CohortLayout.members] {
                blobs[path] = try repository.writeBlob(files[path] ?? Data())
            }
            let tree = try repository.tree(from: staged, putting: blobs)
            let genesis = try repository.createVerifiedCommit(
                tree: tree, parents: [], message: "Start \(request.title)", signer: signer,
                author: Person(name: card.name, email: card.handle, time: now))
            try adoption?.moveAside()
            // For the crash tests: a kill here leaves a half-adopted repository for the next start to undo.
            if adoption != nil, ProcessInfo.processInfo.environment["COHORT_START_FAULT"] == "after-move-aside" { kill(getpid(), SIGKILL) }
            try repository.updateReference(CohortLayout.defaultBranch, to: genesis, expected: nil, message: "cohort: start")
            if adoption != nil { try repository.setHead(to: CohortLayout.defaultBranch) }
            try workspace.writeFiles(files)
            try repository.resetIndex([CohortLayout.folder], to: genesis)
            adoption?.finish()
            return (workspace, collaboration)
        } catch {
            if let adoption {
                adoption.undo()
            } else if existed {
                try? fileManager.removeItem(at: directory.appendingPathComponent(".git"))
                try? fileManager.removeItem(at: directory.appendingPathComponent(CohortLayout.folder))
            } else {
                try? fileManager.removeItem(at: directory)
            }
            throw error
        }
    }
}
