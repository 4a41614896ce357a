import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortWorkspace
import Foundation

/// What moving the working files to a new commit did.
struct CheckoutOutcome {
    /// Files written, replaced or removed.
    var updated: [String] = []
    /// Files the person changed that the new commit changes too: their version stays in place.
    var keptLocal: [String] = []
    /// Where the incoming version of such a file was saved instead.
    var incomingCopies: [String] = []
}

extension Workspace {
    /// Moves the working files from tree `old` to tree `new` without ever overwriting what the person
    /// wrote: a file is replaced or removed only while it still holds `old`'s version (or already
    /// holds `new`'s); otherwise it stays, and `new`'s version is saved beside it as a conflict copy.
    /// Running it again after an interruption finishes the job. The index follows `new`.
    func checkout(from old: ObjectID, to new: ObjectID, copyLabel: String, now: Date) throws -> CheckoutOutcome {
        var outcome = CheckoutOutcome()
        let changes = try repository.treeChanges(from: old, to: new)
        var done = 0
        for change in changes {
            let path = change.newPath ?? change.oldPath ?? ""
            guard !path.isEmpty, !path.split(separator: "/").contains(where: { $0 == ".." || $0 == ".git" }) else { continue }
            let url = directory.appendingPathComponent(path)
            let current = repository.hashFile(at: url)
            let exists = FileManager.default.fileExists(atPath: url.path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
            if let target = change.newID {
                if current == target, change.newMode != 0o120000 { continue }
                if exists, current != change.oldID, change.newMode != 0o120000 {
                    let copy = ConflictCopy.path(for: path, label: copyLabel, time: now, taken: { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) })
                    try write(target, mode: change.newMode, to: directory.appendingPathComponent(copy))
                    outcome.keptLocal.append(path)
                    outcome.incomingCopies.append(copy)
                    continue
                }
                try write(target, mode: change.newMode, to: url)
                outcome.updated.append(path)
            } else {
                guard exists else { continue }
                if current != change.oldID {
                    outcome.keptLocal.append(path)
                    continue
                }
                try FileManager.default.removeItem(at: url)
                removeEmptyFolders(above: url)
                outcome.updated.append(path)
            }
            done += 1
            if done == max(1, changes.count / 2) { FaultPoint.reach(.midCheckout) }
        }
        try repository.resetIndex(to: new)
        return outcome
    }

    private func write(_ blob: ObjectID, mode: UInt32, to url: URL) throws {
        let data = try repository.blob(blob, maxBytes: Int.max)
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o755)
        if mode == 0o120000 {
            try? FileManager.default.removeItem(at: url)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: String(decoding: data, as: UTF8.self))
            return
        }
        try AtomicFile.write(data, to: url, mode: mode == 0o100755 ? 0o755 : 0o644, replacing: true, durable: false)
    }

    private func removeEmptyFolders(above url: URL) {
        var folder = url.deletingLastPathComponent()
        while folder.path.count > directory.path.count, folder.path.hasPrefix(directory.path),
              (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true {
            try? FileManager.default.removeItem(at: folder)
            folder = folder.deletingLastPathComponent()
        }
    }
}
