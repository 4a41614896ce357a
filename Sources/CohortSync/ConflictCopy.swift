import CohortGit
import Foundation

/// Names and decisions for what a merge could not settle. The version already on the remote keeps the
/// path; the other becomes `name (conflict, <handle>, <UTC time>).ext` beside it. An edit beats a
/// delete. Two renames of one file keep both names. No conflict markers are ever written.
enum ConflictCopy {
    /// `bread/rye (conflict, ann@example.com, 2026-11-21 130512Z).md`; `taken` says whether a name is
    /// in use, and a number is added until one is free.
    /// A folder's copy (`isFolder`) keeps its whole name: `notes.v2 (conflict, …)`.
    static func path(for path: String, label: String, time: Date, isFolder: Bool = false, taken: (String) -> Bool) -> String {
        let url = URL(fileURLWithPath: path)
        let folder = (path as NSString).deletingLastPathComponent
        let ext = isFolder ? "" : url.pathExtension
        let base = ext.isEmpty ? url.lastPathComponent : String(url.lastPathComponent.dropLast(ext.count + 1))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HHmmss'Z'"
        let safeLabel = label.map { $0 == "/" || $0 == "\\" || $0.isNewline ? "-" : $0 }
        var attempt = 1
        while true {
            let suffix = attempt == 1 ? "" : " \(attempt)"
            let tail = " (conflict, \(String(safeLabel.prefix(64))), \(formatter.string(from: time))\(suffix))" + (ext.isEmpty || ext.utf8.count > 32 ? "" : ".\(ext)")
            // One name stays within a file system's 255 bytes: the base is shortened if need be.
            var shortened = Substring(ext.utf8.count > 32 ? url.lastPathComponent : base)
            while shortened.utf8.count + tail.utf8.count > 255, !shortened.isEmpty { shortened.removeLast() }
            let name = String(shortened) + tail
            let candidate = folder.isEmpty ? name : folder + "/" + name
            if !taken(candidate) { return candidate }
            attempt += 1
        }
    }

    /// Whether `path` is a conflict copy.
    static func isCopy(_ path: String) -> Bool {
        (path as NSString).lastPathComponent.contains(" (conflict, ")
    }

    /// The entries that settle a file against a folder at one path. The side on the remote keeps the
    /// path: when that is the file (`theirsIsFile`), everything beneath this device's folder moves to
    /// `name (conflict, <label>, <time>)/…`; otherwise this device's file moves to its conflict copy.
    static func settle(_ clash: FolderClash, theirsIsFile: Bool, label: String, time: Date,
                       taken: (String) -> Bool) -> (entries: [IndexEntry], copies: [(path: String, of: String)]) {
        let folder = clash.file.path
        if theirsIsFile {
            let base = path(for: folder, label: label, time: time, isFolder: true, taken: taken)
            let moved = clash.beneath.map { entry in
                IndexEntry(path: base + entry.path.dropFirst(folder.count), id: entry.id, mode: entry.mode)
            }
            return ([clash.file] + moved, zip(moved, clash.beneath).map { ($0.path, $1.path) })
        }
        let copy = path(for: folder, label: label, time: time, taken: taken)
        return (clash.beneath + [IndexEntry(path: copy, id: clash.file.id, mode: clash.file.mode)], [(copy, folder)])
    }

    /// The entries that settle one conflict, and the conflict copy made (if any). `ours` is this
    /// device's side, not yet on the remote; `label` names its author.
    static func resolve(_ conflict: MergeConflict, label: String, time: Date, taken: (String) -> Bool) -> (entries: [IndexEntry], copy: (path: String, of: String)?) {
        switch (conflict.ours, conflict.theirs) {
        case let (ours?, theirs?):
            if ours.path != theirs.path { return ([theirs, ours], nil) }
            if ours.id == theirs.id { return ([theirs], nil) }
            let copy = path(for: ours.path, label: label, time: time, taken: taken)
            return ([theirs, IndexEntry(path: copy, id: ours.id, mode: ours.mode)], (copy, ours.path))
        case let (ours?, nil):
            return ([ours], nil)
        case let (nil, theirs?):
            return ([theirs], nil)
        case (nil, nil):
            return ([], nil)
        }
    }
}
