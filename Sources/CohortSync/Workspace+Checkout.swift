import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortWorkspace
import Foundation

/// What moving the working files to a new commit did.
struct CheckoutOutcome {
    /// Files the person changed that the new commit changes too: their version stays in place.
    var keptLocal: [String] = []
    /// Where the incoming version of such a file was saved instead.
    var incomingCopies: [String] = []
    /// Paths the new commit has that were not written, and why (unsafe paths, folders in the way,
    /// kinds of entry a workspace does not hold).
    var skipped: [(path: String, reason: String)] = []
}

extension Workspace {
    /// Moves the working files from tree `old` to tree `new` without ever overwriting what the person
    /// wrote: a file is replaced or removed only while it still holds `old`'s version (or already
    /// holds `new`'s); otherwise it stays, and `new`'s version is saved beside it as a conflict copy.
    /// Nothing is written through a symbolic link or outside the workspace, nothing into `.git`, and
    /// a folder is never removed. A path that cannot be written is reported, not fatal. Running it
    /// again after an interruption finishes the job. The index follows `new`.
    func checkout(from old: ObjectID, to new: ObjectID, copyLabel: String, now: Date) throws -> CheckoutOutcome {
        var outcome = CheckoutOutcome()
        let changes = try repository.treeChanges(from: old, to: new)
        var done = 0
        for change in changes {
            let path = change.newPath ?? change.oldPath ?? ""
            do {
                try apply(change, at: path, copyLabel: copyLabel, now: now, into: &outcome)
            } catch let error as CohortError {
                outcome.skipped.append((path, error.reason))
            }
            done += 1
            if done == max(1, changes.count / 2) { FaultPoint.reach(.midCheckout) }
        }
        try repository.resetIndex(to: new)
        return outcome
    }

    private func apply(_ change: Change, at path: String, copyLabel: String, now: Date, into outcome: inout CheckoutOutcome) throws {
        let url = try safeLocation(of: path)
        let current = try onDisk(url)
        guard let target = change.newID else {
            // Deleted by the new commit: only a file (or link) still as the old commit had it goes.
            switch current {
            case .absent:
                return
            case .entry(let id) where id == change.oldID:
                guard unlink(url.path) == 0 else { throw CohortError(.io, "cannot remove \(path): \(String(cString: strerror(errno)))") }
                removeEmptyFolders(above: url)
            default:
                outcome.keptLocal.append(path)
            }
            return
        }
        guard change.newMode == 0o100644 || change.newMode == 0o100755 || change.newMode == 0o120000 else {
            throw CohortError(.malformed, "entries of mode \(String(change.newMode, radix: 8)) are not written to a workspace")
        }
        switch current {
        case .entry(let id) where id == target:
            return
        case .absent:
            break
        case .entry(let id) where id == change.oldID:
            break
        default:
            // Changed here too (or a folder stands there): the person's version stays.
            outcome.keptLocal.append(path)
            guard change.newMode != 0o120000 else { return }
            let copy = ConflictCopy.path(for: path, label: copyLabel, time: now) { candidate in
                guard let location = try? safeLocation(of: candidate), let found = try? onDisk(location) else { return false }
                if case .absent = found { return false }
                return true
            }
            try write(target, mode: change.newMode, to: safeLocation(of: copy))
            outcome.incomingCopies.append(copy)
            return
        }
        try write(target, mode: change.newMode, to: url)
    }

    /// What is at a path now: nothing, a folder, or a file or link with the blob id it would have.
    private enum OnDisk {
        case absent
        case folder
        case entry(ObjectID?)
    }

    private func onDisk(_ url: URL) throws -> OnDisk {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return .absent }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return .folder
        case S_IFLNK:
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) ?? ""
            return .entry(try? repository.hashBlob(Data(target.utf8)))
        case S_IFREG:
            return .entry(repository.hashFile(at: url))
        default:
            return .entry(nil)
        }
    }

    /// The location of tree path `path` in the workspace, if every folder on the way is a real folder
    /// (or missing) and no part of it is `.`, `..` or any spelling of `.git`; `E_NOT_PERMITTED` otherwise.
    private func safeLocation(of path: String) throws -> URL {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for part in parts {
            // `.git`, also as `.GIT`, `.git.` or `.git ` (case-folding and trailing-dot file systems)
            // and `git~1` (its short name on NTFS).
            var folded = part.lowercased()
            while folded.hasSuffix(".") || folded.hasSuffix(" ") { folded.removeLast() }
            guard !part.isEmpty, part != ".", part != "..", folded != ".git", folded != "git~1",
                  !part.contains("\\"), !part.contains("\0")
            else {
                throw CohortError(.notPermitted, "\(path) is not a path a workspace holds")
            }
        }
        var folder = directory
        for part in parts.dropLast() {
            folder.appendPathComponent(part)
            var info = stat()
            if lstat(folder.path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
                throw CohortError(.notPermitted, "\(path) is not written: \(folder.path.dropFirst(directory.path.count + 1)) is not a folder here")
            }
        }
        return directory.appendingPathComponent(path)
    }

    private func write(_ blob: ObjectID, mode: UInt32, to url: URL) throws {
        let data = try repository.blob(blob, maxBytes: Int.max)
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o755)
        if mode == 0o120000 {
            // A link replaces only a file or a link, never a folder (checked by the caller).
            _ = unlink(url.path)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: String(decoding: data, as: UTF8.self))
            return
        }
        try AtomicFile.write(data, to: url, mode: mode == 0o100755 ? 0o755 : 0o644, replacing: true, durable: false)
    }

    private func removeEmptyFolders(above url: URL) {
        var folder = url.deletingLastPathComponent()
        while folder.path.count > directory.path.count, folder.path.hasPrefix(directory.path) {
            guard rmdir(folder.path) == 0 else { return }
            folder = folder.deletingLastPathComponent()
        }
    }
}
