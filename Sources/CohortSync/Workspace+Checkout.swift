import CohortBase
import CohortGit
import CohortWorkspace
import Foundation

/// What moving the working files to a new commit did.
struct CheckoutOutcome {
    /// Files the person changed that the new commit changes too: their version stays in place, and
    /// the incoming version was saved as `copy` (nil: the commit deleted the file, or it is a link).
    var keptLocal: [(path: String, copy: String?)] = []
    /// Read only: files the person changed that the collaboration changed too, moved aside (path,
    /// copy) so that the file can follow the collaboration.
    var movedAside: [(path: String, copy: String)] = []
    /// Paths of the new commit that are not in the folder as the commit has them, and why (something
    /// of the person's in the way, no permission, no space, a name git refuses). Kept in
    /// `UnwrittenPaths`, so that they never read as local changes, and tried again by every sync.
    var unwritten: [UnwrittenPaths.Path] = []
    /// Of those, the ones this checkout added (the others were already listed).
    var newlyUnwritten: [UnwrittenPaths.Path] = []
}

extension Workspace {
    /// Moves the working files from tree `old` to tree `new` without ever overwriting what the person
    /// wrote: a file is replaced or removed only while it still holds `old`'s version (or already
    /// holds `new`'s); otherwise it stays, and `new`'s version is saved beside it as a conflict copy
    /// (or, with `asideLabel`, for a read-only person, their version moves aside to a copy named
    /// with it and the file follows the collaboration). Nothing is written through a symbolic link
    /// or outside the workspace, nothing into `.git`, and a folder is never removed. Deletions go
    /// first, so that a file can take the place of a folder that went, and the reverse.
    ///
    /// A path that cannot be written is never fatal and never reads as a local change: it is listed
    /// in `UnwrittenPaths` with its reason, and every later checkout (also one from a tree to itself)
    /// tries it again. Running a checkout again after an interruption finishes the job. The index
    /// follows `new`.
    func checkout(from old: ObjectID, to new: ObjectID, copyLabel: String, asideLabel: String? = nil, now: Date) throws -> CheckoutOutcome {
        var outcome = CheckoutOutcome()
        let listed = try UnwrittenPaths.load(from: repository.gitDirectory)
        var changes = try repository.treeChanges(from: old, to: new)
        let moving = Set(changes.map { $0.newPath ?? $0.oldPath ?? "" })
        var baseline: [String: ObjectID?] = [:]
        for path in listed.paths {
            // What the folder holds there is the version from before the path went unwritten.
            baseline[path.path] = path.fromID
            guard !moving.contains(path.path), path.refused != true else { continue }
            let target = try repository.entry(at: path.path, inTree: new)
            changes.append(Change(kind: target == nil ? .deleted : .modified, oldPath: path.path, newPath: target == nil ? nil : path.path,
                                  oldID: path.fromID, newID: target?.id, newMode: target?.mode ?? 0))
        }
        // Deletions first: a file may take the place of a folder that goes, and the reverse.
        changes = changes.filter { $0.newID == nil } + changes.filter { $0.newID != nil }
        var done = 0
        for change in changes {
            let path = change.newPath ?? change.oldPath ?? ""
            let from = baseline[path] ?? change.oldID
            do {
                try apply(change, from: from, at: path, copyLabel: copyLabel, asideLabel: asideLabel, now: now, into: &outcome)
            } catch {
                let reason = (error as? CohortError)?.reason ?? "\(error)"
                outcome.unwritten.append(UnwrittenPaths.Path(path: path, from: from, reason: reason, refused: !GitPath.isValid(path: path)))
            }
            done += 1
            if done == max(1, changes.count / 2) { FaultPoint.reach(.midCheckout) }
        }
        var reached = Set(outcome.unwritten.map(\.path))
        for path in try repository.resetIndex(to: new) where reached.insert(path).inserted {
            outcome.unwritten.append(UnwrittenPaths.Path(path: path, from: nil, reason: "git refuses this name in a working folder", refused: true))
        }
        // Listed paths this checkout did not reach (refused names) stay listed.
        for path in listed.paths where path.refused == true && !reached.contains(path.path) {
            if try repository.entry(at: path.path, inTree: new) != nil { outcome.unwritten.append(path) }
        }
        outcome.newlyUnwritten = outcome.unwritten.filter { listed[$0.path] == nil }
        try UnwrittenPaths(paths: outcome.unwritten).save(to: repository.gitDirectory)
        return outcome
    }

    private func apply(_ change: Change, from oldID: ObjectID?, at path: String, copyLabel: String, asideLabel: String?, now: Date,
                       into outcome: inout CheckoutOutcome) throws {
        let url: URL
        do {
            url = try safeLocation(of: path)
        } catch where change.newID == nil && GitPath.isValid(path: path) {
            // A deletion beneath something that is not a folder here: there is nothing to delete.
            return
        }
        let current = try onDisk(url)
        guard let target = change.newID else {
            // Deleted by the new commit: only a file (or link) still as the old commit had it goes.
            switch current {
            case .absent:
                return
            case .entry(let id) where id == oldID:
                guard unlink(url.path) == 0 else { throw CohortError(.io, "cannot remove \(path): \(String(cString: strerror(errno)))") }
                removeEmptyFolders(above: url)
            default:
                outcome.keptLocal.append((path, nil))
            }
            return
        }
        guard change.newMode == 0o100644 || change.newMode == 0o100755 || change.newMode == 0o120000 else {
            throw CohortError(.malformed, "entries of mode \(String(change.newMode, radix: 8)) are not written to a workspace")
        }
        switch current {
        case .entry(let id) where id == target:
            // The same content; git also records whether a file is executable.
            if change.newMode != 0o120000 { try setExecutable(change.newMode == 0o100755, url, path) }
            return
        case .absent:
            break
        case .entry(let id) where id == oldID:
            break
        case .folder:
            throw CohortError(.notPermitted, "a folder of yours is in its place; move it away and sync again")
        case .special(let kind):
            // A pipe, socket or device is the person's: it stays, and the incoming file goes beside it.
            let copy = try writeCopy(of: target, mode: change.newMode, beside: path, label: copyLabel, now: now)
            throw CohortError(.notPermitted, "\(kind) of yours is in its place; the incoming version is \"\(copy)\"")
        case .entry:
            // Changed here too: the person's version stays, or (read only) moves aside.
            if let asideLabel, change.newMode != 0o120000 {
                let copy = ConflictCopy.path(for: path, label: asideLabel, time: now) { occupied($0) }
                // link() refuses a name that appeared meanwhile, where rename() would replace it.
                guard link(url.path, try safeLocation(of: copy).path) == 0, unlink(url.path) == 0 else {
                    throw CohortError(.io, "cannot move \(path) aside: \(String(cString: strerror(errno)))")
                }
                outcome.movedAside.append((path, copy))
                break
            }
            guard change.newMode != 0o120000 else {
                outcome.keptLocal.append((path, nil))
                return
            }
            outcome.keptLocal.append((path, try writeCopy(of: target, mode: change.newMode, beside: path, label: copyLabel, now: now)))
            return
        }
        try write(target, mode: change.newMode, to: url)
    }

    /// Saves `blob` beside `path` as its conflict copy, and returns the copy's path.
    private func writeCopy(of blob: ObjectID, mode: UInt32, beside path: String, label: String, now: Date) throws -> String {
        let copy = ConflictCopy.path(for: path, label: label, time: now) { occupied($0) }
        try write(blob, mode: mode == 0o120000 ? 0o100644 : mode, to: safeLocation(of: copy), replacing: false)
        return copy
    }

    /// Whether something is at `path` in the folder (or the path cannot hold anything).
    private func occupied(_ path: String) -> Bool {
        guard let location = try? safeLocation(of: path), let found = try? onDisk(location) else { return true }
        if case .absent = found { return false }
        return true
    }

    /// What is at a path now: nothing, a folder, or a file or link with the blob id it would have.
    enum OnDisk {
        case absent
        case folder
        /// A regular file or a link, with the blob id it would have.
        case entry(ObjectID?)
        /// A named pipe, socket or device: never replaced.
        case special(String)
    }

    func onDisk(_ url: URL) throws -> OnDisk {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return .absent }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return .folder
        case S_IFLNK:
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) ?? ""
            return .entry(try? repository.hashBlob(Data(target.utf8)))
        case S_IFREG:
            // A file this process cannot read is never taken for an old version.
            guard let id = repository.hashFile(at: url) else { return .special("a file Cohort cannot read") }
            return .entry(id)
        case S_IFIFO:
            return .special("a named pipe")
        case S_IFSOCK:
            return .special("a socket")
        default:
            return .special("a device file")
        }
    }

    /// The location of tree path `path` in the workspace, if every folder on the way is a real folder
    /// (or missing) and no part of it is `.`, `..` or any spelling of `.git`; `E_NOT_PERMITTED` otherwise.
    func safeLocation(of path: String) throws -> URL {
        // Names git refuses on some system (`.git` in any spelling, `..`, NTFS and HFS+ aliases).
        guard GitPath.isValid(path: path) else { throw CohortError(.notPermitted, "git refuses this name in a working folder") }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var folder = directory
        for part in parts.dropLast() {
            folder.appendPathComponent(part)
            var info = stat()
            if lstat(folder.path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
                let name = folder.path.dropFirst(directory.path.count + 1)
                throw CohortError(.notPermitted, "\(name) is \(info.st_mode & S_IFMT == S_IFLNK ? "a link" : "a file") here, not a folder; move it away and sync again")
            }
        }
        return directory.appendingPathComponent(path)
    }

    func write(_ blob: ObjectID, mode: UInt32, to url: URL, replacing: Bool = true) throws {
        let data = try repository.blob(blob, maxBytes: Int.max)
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o755)
        if mode == 0o120000 {
            // A link replaces only a file or a link, never a folder (checked by the caller).
            _ = unlink(url.path)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: String(decoding: data, as: UTF8.self))
            return
        }
        try AtomicFile.write(data, to: url, mode: mode == 0o100755 ? 0o755 : 0o644, replacing: replacing, durable: false)
    }

    /// Sets or clears the executable bits of the file at `url` (the read bits say for whom).
    private func setExecutable(_ executable: Bool, _ url: URL, _ path: String) throws {
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return }
        let mode = info.st_mode & 0o7777
        let wanted = executable ? mode | ((mode & 0o444) >> 2) : mode & ~0o111
        guard wanted != mode else { return }
        guard chmod(url.path, wanted) == 0 else {
            throw CohortError(.io, "cannot change whether \(path) is executable: \(String(cString: strerror(errno)))")
        }
    }

    private func removeEmptyFolders(above url: URL) {
        var folder = url.deletingLastPathComponent()
        while folder.path.count > directory.path.count, folder.path.hasPrefix(directory.path) {
            guard rmdir(folder.path) == 0 else { return }
            folder = folder.deletingLastPathComponent()
        }
    }
}
