import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// An existing git repository becoming a collaboration (`cohort start` in it). Its files as they
/// are become the first content. A collaboration's history starts at its own signed genesis, so the
/// old history stays beside it: every branch moves under `pre-cohort/` (a detached HEAD becomes
/// `pre-cohort/detached-head`), and every remote is renamed `pre-cohort-NAME` so that `cohort sync`
/// never pushes the collaboration where the old history went. If a later step fails, `undo()` puts
/// everything back.
struct Adoption {
    static let branchPrefix = "pre-cohort/"
    static let remotePrefix = "pre-cohort-"
    static let detachedHead = "pre-cohort/detached-head"

    let repository: Repository
    let head: (branch: String?, commit: ObjectID?)
    let branches: [String]
    let remotes: [String]
    let index: Data?
    private var renamedBranches: [String] = []
    private var renamedRemotes: [String] = []
    private var savedDetachedHead = false

    /// Checks that the repository at `directory` can be adopted and records what it is now.
    init(_ directory: URL) throws {
        var isFolder: ObjCBool = false
        let dotGit = directory.appendingPathComponent(".git")
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw CohortError(.git, "\(dotGit.path) is a file: this folder is a git worktree or submodule",
                              hint: "start the collaboration in the repository's main folder, or in a new folder")
        }
        repository = try Repository(at: directory)
        guard !repository.isMidOperation else {
            throw CohortError(.git, "the git repository in \(directory.path) is in the middle of a merge, rebase or similar",
                              hint: "finish or abort it (`git status` says which), then run `cohort start` again")
        }
        head = try repository.headTarget()
        let tips = try repository.referenceTips()
        branches = tips.keys.filter { $0.hasPrefix("refs/heads/") }.map { String($0.dropFirst("refs/heads/".count)) }.sorted()
        remotes = try repository.remoteNames().sorted()
        if let clash = branches.first(where: { $0 == "pre-cohort" || $0.hasPrefix(Self.branchPrefix) }) {
            throw CohortError(.git, "the repository already has a branch \(clash), where Cohort would keep the old history",
                              hint: "rename or delete it (`git branch -m`), then run `cohort start` again")
        }
        if let clash = remotes.first(where: { $0.hasPrefix(Self.remotePrefix) }) {
            throw CohortError(.git, "the repository already has a remote \(clash), where Cohort would keep the old remotes",
                              hint: "rename or remove it (`git remote rename`), then run `cohort start` again")
        }
        let indexFile = repository.gitDirectory.appendingPathComponent("index")
        index = FileManager.default.fileExists(atPath: indexFile.path) ? try Data(contentsOf: indexFile) : nil
    }

    /// Where the old history is now: branch names under `pre-cohort/`, and the renamed remotes.
    var keptBranches: [String] { renamedBranches.map { Self.branchPrefix + $0 } + (savedDetachedHead ? [Self.detachedHead] : []) }
    var keptRemotes: [String] { renamedRemotes.map { Self.remotePrefix + $0 } }

    /// Moves the old branches and remotes aside (main is then free for the collaboration).
    mutating func moveAside() throws {
        for branch in branches {
            try repository.renameBranch(branch, to: Self.branchPrefix + branch)
            renamedBranches.append(branch)
        }
        if head.branch == nil, let commit = head.commit {
            try repository.updateReference("refs/heads/" + Self.detachedHead, to: commit, expected: nil, message: "cohort start: the detached HEAD")
            savedDetachedHead = true
        }
        for remote in remotes {
            try repository.renameRemote(remote, to: Self.remotePrefix + remote)
            renamedRemotes.append(remote)
        }
    }

    /// Puts the repository back as it was (best effort, in reverse order): the collaboration's main
    /// and files go, the branches, remotes, HEAD and index return.
    func undo(createdMain: Bool) {
        let gitDirectory = repository.gitDirectory
        if createdMain { try? repository.deleteReference(CohortLayout.defaultBranch) }
        for remote in renamedRemotes.reversed() { try? repository.renameRemote(Self.remotePrefix + remote, to: remote) }
        if savedDetachedHead { try? repository.deleteReference("refs/heads/" + Self.detachedHead) }
        for branch in renamedBranches.reversed() { try? repository.renameBranch(Self.branchPrefix + branch, to: branch) }
        if let branch = head.branch {
            try? repository.setHead(to: branch)
        } else if let commit = head.commit {
            try? AtomicFile.write(Data((commit.hex + "\n").utf8), to: gitDirectory.appendingPathComponent("HEAD"), mode: 0o644, replacing: true)
        }
        let indexFile = gitDirectory.appendingPathComponent("index")
        if let index {
            try? AtomicFile.write(index, to: indexFile, mode: 0o644, replacing: true)
        } else {
            try? FileManager.default.removeItem(at: indexFile)
        }
    }
}

extension Workspace {
    /// What an adopted repository kept from before it became a collaboration: its branches (under
    /// `pre-cohort/`) and its remotes (`pre-cohort-NAME`); empty for a collaboration started afresh.
    public func keptFromBeforeCohort() throws -> (branches: [String], remotes: [String]) {
        let branches = try repository.referenceTips().keys.filter { $0.hasPrefix("refs/heads/" + Adoption.branchPrefix) }
            .map { String($0.dropFirst("refs/heads/".count)) }.sorted()
        return (branches, try repository.remoteNames().filter { $0.hasPrefix(Adoption.remotePrefix) }.sorted())
    }
}
