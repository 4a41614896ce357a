import CohortBase
import CohortCollaboration
import CohortGit
import CohortWorkspace
import Foundation

/// What `cohort restore` did.
public struct RestoreOutcome: Sendable {
    /// The commit the version came from, and the new signed commit that brings it back.
    public let from: ObjectID
    /// Nil when the file already was as it was then (nothing to do).
    public let summary: CommitSummary?
    /// Where an uncommitted local version of the file was saved first (nil: there was none).
    public let savedAside: String?
}

/// What `cohort discard` did.
public struct DiscardOutcome: Sendable {
    /// The local changes thrown away.
    public let changes: [Change]
    /// The folder (inside the git directory) where the discarded versions are saved.
    public let savedIn: URL?
}

extension Workspace {
    /// Where `cohort discard` and `cohort restore` save what they replace: one folder per run,
    /// `<git dir>/cohort/aside/<UTC time>/<path>`. Never shared, never removed by Cohort.
    public var asideDirectory: URL { repository.cohortDirectory.aside }

    /// Brings `path` back as it was at commit `revision` (of this collaboration's verified history) as a
    /// new signed edit with its notice; the current version stays in history. A local, uncommitted
    /// version of the file is saved aside first. Nothing else in the folder is committed.
    public func restore(_ path: String, at revision: String, now: Date = Date()) throws -> RestoreOutcome {
        let lock = try SyncLock.acquire(in: repository.gitDirectory, wait: 10)
        defer { lock.release() }
        _ = try writer()
        let head = try head()
        _ = try repository.verifyHistory(to: head.commit)
        let from = try repository.commit(named: revision)
        let reachable = try from == head.commit || repository.isAncestor(from, of: head.commit)
        guard reachable else {
            throw CohortError(.notFound, "\(revision) is not in this collaboration's history", hint: "pick a commit from `cohort history \(path)`")
        }
        guard !CohortLayout.isCohortPath(path), GitPath.isValid(path: path) else {
            throw CohortError(.notPermitted, "\(path) is not a file a collaboration shares")
        }
        guard let old = try repository.entry(at: path, inTree: repository.tree(ofCommit: from)), !old.isTree else {
            throw CohortError(.notFound, "\(path) is not a file at \(from.hex.prefix(12))", hint: "see `cohort history \(path)` for where it was")
        }
        let headTree = try repository.tree(ofCommit: head.commit)
        let current = try repository.entry(at: path, inTree: headTree)
        guard current?.id != old.id || current?.mode != old.mode else {
            return RestoreOutcome(from: from, summary: nil, savedAside: nil)
        }
        guard try !UnwrittenPaths.load(from: repository.gitDirectory).clashes(with: path) else {
            throw CohortError(.notPermitted, "\(path) is where a sync could not write (see `cohort status`)", hint: "clear the way and sync first")
        }
        let tree = try repository.tree(from: headTree, setting: [path: IndexEntry(path: path, id: old.id, mode: old.mode)])
        let changes = try repository.changes(from: headTree, to: tree, detectRenames: false)
        // Exactly this one file changes: never a folder of others' files replaced by it, or the reverse.
        guard changes.count == 1, changes[0].newPath == path || changes[0].oldPath == path else {
            throw CohortError(.notPermitted, "restoring \(path) would replace \(changes.count - 1) other file\(changes.count == 2 ? "" : "s") (a folder and a file of that name)",
                              hint: "restore the files one by one, or move what is in the way first")
        }
        let location = try safeLocation(of: path)
        let folder = stamp(now)
        var savedAside: String?
        if let onDisk = try readableVersion(at: location, path), onDisk != current?.id {
            savedAside = try saveAside(path, from: location, in: folder)
        }
        // The file first: should the commit fail, the folder already holds what was asked for, and
        // the next commit or sync shares it.
        try write(old.id, mode: old.mode, to: location)
        let pending = PendingChanges(head: head, content: tree, changes: changes)
        let summary = try commitChanges(message: "Restore \(path) as it was at \(from.hex.prefix(12))", now: now, pending: pending)
        try repository.stage([path])
        return RestoreOutcome(from: from, summary: summary, savedAside: savedAside.map { folder.appendingPathComponent($0).path })
    }

    /// Throws away local changes (all, or those at or beneath `paths`): each version in the folder
    /// is saved aside first, then the file goes back to the collaboration's version (a new file goes).
    public func discard(_ paths: [String], now: Date = Date()) throws -> DiscardOutcome {
        let lock = try SyncLock.acquire(in: repository.gitDirectory, wait: 10)
        defer { lock.release() }
        try checkNoInterruptedSync()
        let pending = try pendingChanges()
        let chosen = pending.changes.filter { change in
            paths.isEmpty || [change.oldPath, change.newPath].compactMap { $0 }.contains { path in
                paths.contains { path == $0 || path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
            }
        }
        guard !chosen.isEmpty else { return DiscardOutcome(changes: [], savedIn: nil) }
        let folder = stamp(now)
        let headTree = try repository.tree(ofCommit: pending.head.commit)
        // Everything is saved before anything is replaced.
        for change in chosen {
            guard let path = change.newPath, try readableVersion(at: safeLocation(of: path), path) != nil else { continue }
            _ = try saveAside(path, from: safeLocation(of: path), in: folder)
        }
        for change in chosen {
            // A file created or renamed here goes; an edited one is written over just below.
            if let path = change.newPath, change.kind != .modified {
                let location = try safeLocation(of: path)
                if unlink(location.path) != 0, errno != ENOENT {
                    throw CohortError(.io, "cannot remove \(path): \(String(cString: strerror(errno)))")
                }
            }
            if let path = change.kind == .added ? nil : change.oldPath, let entry = try repository.entry(at: path, inTree: headTree) {
                try write(entry.id, mode: entry.mode, to: safeLocation(of: path))
            }
        }
        try repository.resetIndex(chosen.flatMap { [$0.oldPath, $0.newPath].compactMap { $0 } }, to: pending.head.commit)
        return DiscardOutcome(changes: chosen, savedIn: folder)
    }

    /// The folders of saved-aside versions, newest first, with how many files each holds.
    public func savedAside() -> [(folder: URL, files: Int)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: asideDirectory.path)) ?? []
        return names.sorted(by: >).map { name in
            let folder = asideDirectory.appendingPathComponent(name)
            let files = (FileManager.default.enumerator(atPath: folder.path)?.allObjects.count) ?? 0
            return (folder, files)
        }
    }

    private func stamp(_ now: Date) -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HHmmss'Z'"
        var folder = asideDirectory.appendingPathComponent(formatter.string(from: now))
        var attempt = 2
        while FileManager.default.fileExists(atPath: folder.path) {
            folder = asideDirectory.appendingPathComponent(formatter.string(from: now) + "-\(attempt)")
            attempt += 1
        }
        return folder
    }

    /// Copies the file (or link) at `location` to `folder/path`, durably, and returns `path`.
    private func saveAside(_ path: String, from location: URL, in folder: URL) throws -> String {
        let target = folder.appendingPathComponent(path)
        try AtomicFile.createDirectory(target.deletingLastPathComponent(), mode: 0o700)
        var info = stat()
        if lstat(location.path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            let destination = try FileManager.default.destinationOfSymbolicLink(atPath: location.path)
            try FileManager.default.createSymbolicLink(atPath: target.path, withDestinationPath: destination)
        } else {
            let data = try AtomicFile.read(location, maxBytes: 1 << 40, what: path)
            try AtomicFile.write(data, to: target, mode: info.st_mode & 0o777, replacing: false)
        }
        return path
    }

    /// The blob id of the file or link at `location` (nil: nothing there); `E_IO` for anything else
    /// (a folder, a pipe, a file Cohort cannot read), which could not be saved aside before being replaced.
    private func readableVersion(at location: URL, _ path: String) throws -> ObjectID? {
        switch try onDisk(location) {
        case .absent:
            return nil
        case .entry(let id?):
            return id
        default:
            throw CohortError(.io, "\(path) in this folder is not a file Cohort can read, so it cannot be saved aside; nothing was changed",
                              hint: "move it away yourself, then try again")
        }
    }
}
