import CohortBase
import CohortCollaboration
import CohortGit
import CohortVerification
import Foundation

/// What `cohort commit` (or `cohort comment`) recorded.
public struct CommitSummary: Sendable {
    public let commit: ObjectID
    public let notices: [Notice]
}

/// The changes the next commit would record, staged.
public struct PendingChanges: Sendable {
    public let head: (branch: String, commit: ObjectID)
    /// The staged tree (with HEAD's `.cohort/`).
    public let content: ObjectID
    public let changes: [Change]

    public init(head: (branch: String, commit: ObjectID), content: ObjectID, changes: [Change]) {
        self.head = head
        self.content = content
        self.changes = changes
    }
}

extension Workspace {
    /// Checks that this device's person may change content, and returns what they sign with.
    package func writer() throws -> (CollaborationState, CollaborationSigner, Participant) {
        try checkNoInterruptedSync()
        let state = try state()
        let signer = try signer(for: state)
        let me = try me(in: state, signer: signer)
        guard me.permission == .readWrite else {
            throw CohortError(.notPermitted, "\(me.label) is a read-only participant of this collaboration",
                              hint: "your edits stay in this folder; ask the owner for write permission")
        }
        return (state, signer, me)
    }

    /// What `commitChanges` would record: every change staged (new editor temp and lock files and
    /// `.cohort/` skipped, `.cohort/` kept as HEAD has it), compared with HEAD, renames detected.
    /// `writingIndex: false` when a commit follows, which writes the index once with its notices.
    public func pendingChanges(writingIndex: Bool = true) throws -> PendingChanges {
        try repository.batchingObjects { try stagePendingChanges(writingIndex: writingIndex) }
    }

    private func stagePendingChanges(writingIndex: Bool) throws -> PendingChanges {
        // A lock file git or Cohort left when killed would stop every command here until removed by hand.
        try GitLocks.clearStale(in: repository.gitDirectory)
        let head = try head()
        let headTree = try repository.tree(ofCommit: head.commit)
        let staged = try repository.stageAll(
            skippingNew: { EditorArtifacts.matches($0) || CohortLayout.isCohortPath($0) },
            skippingTracked: { CohortLayout.isCohortPath($0) }, writeIndex: writingIndex)
        // `.cohort/` is Cohort's: always HEAD's, whatever the index holds.
        var content = try repository.tree(staged, replacing: CohortLayout.folder,
                                          with: repository.entry(at: CohortLayout.folder, inTree: headTree))
        let unwritten = try UnwrittenPaths.load(from: repository.gitDirectory)
        if !unwritten.isEmpty {
            // What a sync could not write is not the person's edit: the collaboration's version
            // stands there, and changes at, above or beneath it wait in the folder.
            let staged = try repository.treeChanges(from: headTree, to: content)
            let kept = staged.filter { !unwritten.clashes(with: $0.newPath ?? $0.oldPath ?? "") }
            if kept.count != staged.count {
                var edits: [String: IndexEntry?] = [:]
                for change in kept {
                    let path = change.newPath ?? change.oldPath ?? ""
                    edits[path] = change.newID.map { IndexEntry(path: path, id: $0, mode: change.newMode) }
                }
                content = try repository.tree(from: headTree, setting: edits)
            }
        }
        let changes = content == headTree ? [] : try repository.changes(from: headTree, to: content)
        return PendingChanges(head: head, content: content, changes: changes)
    }

    /// Stages every change (see `pendingChanges`), writes one notice per change (created, edited,
    /// renamed within a folder, moved to another folder, deleted) and makes a signed commit. Returns
    /// nil when there is nothing to commit.
    public func commitChanges(message: String, now: Date = Date(), pending: PendingChanges? = nil) throws -> CommitSummary? {
        // Some 4 objects per change (the file, its notice, their folders): one pack, not hundreds of files.
        try repository.batchingObjects { try recordChanges(message: message, now: now, pending: pending) }
    }

    private func recordChanges(message: String, now: Date, pending: PendingChanges?) throws -> CommitSummary? {
        let (state, signer, _) = try writer()
        let pending = try pending ?? pendingChanges(writingIndex: false)
        let (head, content, changes) = (pending.head, pending.content, pending.changes)
        guard !changes.isEmpty else {
            // Nothing to commit, so no commit writes the index: what the look at the files refreshed
            // (and an index a killed sync left behind HEAD) is written here.
            try repository.writeStagedIndex()
            return nil
        }
        let notices = changes.map { change in
            Notice(type: Self.noticeType(for: change), collaboration: state.collaboration.identifier, actor: signer.root,
                   data: Self.noticeData(for: change), time: now, signer: signer.signer)
        }
        let sealed = try seal(notices, by: signer)
        let tree = try repository.tree(from: content, putting: sealed.blobs)
        let id = try commit(tree: tree, on: head, message: message, signer: signer, write: sealed.files)
        return CommitSummary(commit: id, notices: notices)
    }

    /// A sync that stopped while moving the branch and the files must finish first: committing the
    /// half-moved files would undo what arrived.
    package func checkNoInterruptedSync() throws {
        let journal = repository.cohortDirectory.syncJournal
        guard let data = try? AtomicFile.read(journal, maxBytes: 64 << 10, what: "sync journal"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["move"] != nil
        else { return }
        throw CohortError(.notPermitted, "a sync was interrupted while it updated the files", hint: "run `cohort sync` to finish it first")
    }

    static func noticeType(for change: Change) -> NoticeType {
        switch change.kind {
        case .added: return .contentCreated
        case .modified: return .contentEdited
        case .deleted: return .contentDeleted
        case .renamed:
            let folder = { (path: String?) in path.map { ($0 as NSString).deletingLastPathComponent } }
            return folder(change.oldPath) == folder(change.newPath) ? .contentRenamed : .contentMoved
        }
    }

    static func noticeData(for change: Change) -> [String: String] {
        var data = ["path": change.newPath ?? change.oldPath ?? ""]
        if change.kind == .renamed, let old = change.oldPath { data["oldPath"] = old }
        return data
    }
}
