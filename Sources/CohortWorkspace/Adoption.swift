import CohortBase
import CohortCollaboration
import CohortGit
import Foundation

/// An existing git repository becoming a collaboration (`cohort start` in it). Its files as they
/// are become the first content. A collaboration's history starts at its own signed genesis, so the
/// old history stays beside it: every branch moves under `pre-cohort/` (a detached HEAD becomes
/// `pre-cohort/detached-head`), and every remote is renamed `pre-cohort-NAME` (with the settings that
/// name it) so that `cohort sync` never pushes the collaboration where the old history went.
///
/// What the repository was is written to `.git/cohort/adoption.json` (and its index beside it)
/// before anything moves, and removed once the start is done. A start that fails puts it all back;
/// so does the next `cohort start` after one that was killed half-way.
struct Adoption {
    static let branchPrefix = "pre-cohort/"
    static let remotePrefix = "pre-cohort-"
    static let detachedHead = "pre-cohort/detached-head"

    /// What the repository was before the start.
    struct Journal: Codable {
        var headBranch: String?
        var headCommit: String?
        var branches: [String]
        var remotes: [String]
        /// Settings that named a remote (`remote.pushDefault`, `branch.*.pushRemote`), as they were.
        var remoteSettings: [String: String]
        var hadIndex: Bool
    }

    let repository: Repository
    let journal: Journal
    private let journalURL: URL
    private let indexCopyURL: URL

    /// Checks that the repository at `directory` can be adopted (finishing the undo of a start that
    /// was killed half-way first) and records what it is now.
    init(_ directory: URL) throws {
        var isFolder: ObjCBool = false
        let dotGit = directory.appendingPathComponent(".git")
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw CohortError(.git, "\(dotGit.path) is a file: this folder is a git worktree or submodule",
                              hint: "start the collaboration in the repository's main folder, or in a new folder")
        }
        let repository = try Repository(at: directory)
        self.repository = repository
        journalURL = repository.cohortDirectory.adoptionJournal
        indexCopyURL = repository.cohortDirectory.adoptionIndex
        if let interrupted = try? AtomicFile.read(journalURL, maxBytes: 1 << 20, what: "adoption journal"),
           let old = try? JSONDecoder().decode(Journal.self, from: interrupted) {
            Self.undo(old, in: repository, indexCopy: indexCopyURL)
            try? FileManager.default.removeItem(at: journalURL)
            try? FileManager.default.removeItem(at: indexCopyURL)
        }
        guard repository.workingDirectory?.standardizedFileURL.path == directory.standardizedFileURL.path else {
            throw CohortError(.git, "the git repository in \(directory.path) keeps its files elsewhere (core.worktree)",
                              hint: "start the collaboration in a new folder and copy the files into it")
        }
        guard !repository.isMidOperation else {
            throw CohortError(.git, "the git repository in \(directory.path) is in the middle of a merge, rebase or similar",
                              hint: "finish or abort it (`git status` says which), then run `cohort start` again")
        }
        let partly = try repository.partlyStagedPaths()
        guard partly.isEmpty else {
            throw CohortError(.git, "\(partly.count) file\(partly.count == 1 ? " has" : "s have") staged changes and other changes on disk (first: \(partly[0]))",
                              hint: "the first commit takes the files as they are on disk: `git add` them, or commit or unstage what is staged, then run `cohort start` again")
        }
        let head = try repository.headTarget()
        let names = try repository.referenceTips().keys.filter { $0.hasPrefix("refs/heads/") }.sorted()
        if let symbolic = names.first(where: { repository.isSymbolicReference($0) }) {
            throw CohortError(.git, "the branch \(symbolic.dropFirst("refs/heads/".count)) is a symbolic reference",
                              hint: "remove it with `git symbolic-ref -d \(symbolic)` (the branch it names stays), then run `cohort start` again")
        }
        let branches = names.map { String($0.dropFirst("refs/heads/".count)) }
        let remotes = try repository.remoteNames().sorted()
        if let clash = branches.first(where: { $0 == "pre-cohort" || $0.hasPrefix(Self.branchPrefix) }) {
            throw CohortError(.git, "the repository already has a branch \(clash), where Cohort would keep the old history",
                              hint: "rename it (`git branch -m \(clash) NEW-NAME`), then run `cohort start` again")
        }
        if let clash = remotes.first(where: { $0.hasPrefix(Self.remotePrefix) }) {
            throw CohortError(.git, "the repository already has a remote \(clash), where Cohort would keep the old remotes",
                              hint: "rename it (`git remote rename \(clash) NEW-NAME`), then run `cohort start` again")
        }
        var settings: [String: String] = [:]
        for entry in try repository.localConfigEntries(matching: "^(remote\\.pushdefault|branch\\..*\\.pushremote)$")
        where remotes.contains(entry.value) {
            settings[entry.name] = entry.value
        }
        journal = Journal(headBranch: head.branch, headCommit: head.commit?.hex, branches: branches, remotes: remotes,
                          remoteSettings: settings,
                          hadIndex: FileManager.default.fileExists(atPath: repository.gitDirectory.appendingPathComponent("index").path))
    }

    /// Writes down what the repository is, before the start changes its index or anything else.
    func begin() throws {
        try AtomicFile.createDirectory(journalURL.deletingLastPathComponent(), mode: 0o755)
        let index = repository.gitDirectory.appendingPathComponent("index")
        if journal.hadIndex {
            try AtomicFile.write(Data(contentsOf: index), to: indexCopyURL, mode: 0o644, replacing: true)
        }
        try AtomicFile.write(JSONEncoder().encode(journal), to: journalURL, mode: 0o644, replacing: true)
    }

    /// Moves the old branches, detached HEAD and remotes aside (main is then free for the collaboration).
    func moveAside() throws {
        for branch in journal.branches {
            try repository.renameBranch(branch, to: Self.branchPrefix + branch)
        }
        if journal.headBranch == nil, let hex = journal.headCommit {
            try repository.updateReference("refs/heads/" + Self.detachedHead, to: ObjectID(hex: hex), expected: nil,
                                           message: "cohort start: the detached HEAD")
        }
        for remote in journal.remotes {
            try repository.renameRemote(remote, to: Self.remotePrefix + remote)
        }
        for (name, remote) in journal.remoteSettings {
            try repository.setConfig(name, to: Self.remotePrefix + remote)
        }
    }

    /// The start is done: the journal goes.
    func finish() {
        try? FileManager.default.removeItem(at: journalURL)
        try? FileManager.default.removeItem(at: indexCopyURL)
    }

    /// Puts the repository back as it was; the collaboration's main and `.cohort/` go.
    func undo() {
        Self.undo(journal, in: repository, indexCopy: indexCopyURL)
        finish()
    }

    /// Undoes whatever part of an adoption happened (each step only when it did), in reverse order.
    private static func undo(_ journal: Journal, in repository: Repository, indexCopy: URL) {
        let fileManager = FileManager.default
        let main = CohortLayout.defaultBranch
        let oldMain = "refs/heads/" + branchPrefix + main.dropFirst("refs/heads/".count)
        // The collaboration's main, unless it still is the repository's own.
        if (try? repository.resolve(main)) != nil,
           !journal.branches.contains(String(main.dropFirst("refs/heads/".count))) || (try? repository.resolve(oldMain)) != nil {
            try? repository.deleteReference(main)
        }
        for (name, remote) in journal.remoteSettings { try? repository.setConfig(name, to: remote) }
        let remotes = (try? repository.remoteNames()) ?? []
        for remote in journal.remotes.reversed() where remotes.contains(remotePrefix + remote) && !remotes.contains(remote) {
            try? repository.renameRemote(remotePrefix + remote, to: remote)
        }
        if journal.headBranch == nil { try? repository.deleteReference("refs/heads/" + detachedHead) }
        for branch in journal.branches.reversed() where (try? repository.resolve("refs/heads/" + branch)) == nil {
            try? repository.renameBranch(branchPrefix + branch, to: branch)
        }
        if let branch = journal.headBranch {
            try? repository.setHead(to: branch)
        } else if let commit = journal.headCommit {
            try? AtomicFile.write(Data((commit + "\n").utf8), to: repository.gitDirectory.appendingPathComponent("HEAD"), mode: 0o644, replacing: true)
        }
        let index = repository.gitDirectory.appendingPathComponent("index")
        if journal.hadIndex, let saved = try? Data(contentsOf: indexCopy) {
            try? AtomicFile.write(saved, to: index, mode: 0o644, replacing: true)
        } else if !journal.hadIndex {
            try? fileManager.removeItem(at: index)
        }
        if let folder = repository.workingDirectory?.appendingPathComponent(CohortLayout.folder) {
            try? fileManager.removeItem(at: folder)
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
