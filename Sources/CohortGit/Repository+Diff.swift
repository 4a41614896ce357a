import CGit2
import CGit2Shim
import CohortBase

/// One changed path between two trees.
public struct Change: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case added, deleted, modified, renamed
    }

    public let kind: Kind
    /// The path before (nil when added).
    public let oldPath: String?
    /// The path after (nil when deleted).
    public let newPath: String?
    public let oldID: ObjectID?
    public let newID: ObjectID?
    /// The git file mode after the change (0 when deleted or unknown).
    public var newMode: UInt32 = 0

    public init(kind: Kind, oldPath: String?, newPath: String?, oldID: ObjectID?, newID: ObjectID?, newMode: UInt32 = 0) {
        self.kind = kind
        self.oldPath = oldPath
        self.newPath = newPath
        self.oldID = oldID
        self.newID = newID
        self.newMode = newMode
    }
}

extension Repository {
    /// The changes from tree `old` (nil: the empty tree) to tree `new`, with renames detected
    /// (git's default similarity, 50%).
    public func changes(from old: ObjectID?, to new: ObjectID, detectRenames: Bool = true) throws -> [Change] {
        var options = git_diff_options()
        try check(git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)), "diff options")
        var diff: OpaquePointer?
        try withTree(new) { newTree in
            if let old {
                try withTree(old) { oldTree in
                    try check(git_diff_tree_to_tree(&diff, pointer, oldTree, newTree, &options), "cannot compare trees")
                }
            } else {
                try check(git_diff_tree_to_tree(&diff, pointer, nil, newTree, &options), "cannot compare trees")
            }
        }
        defer { git_diff_free(diff) }
        if detectRenames {
            var find = git_diff_find_options()
            try check(git_diff_find_options_init(&find, UInt32(GIT_DIFF_FIND_OPTIONS_VERSION)), "rename options")
            find.flags = GIT_DIFF_FIND_RENAMES.rawValue
            try check(git_diff_find_similar(diff, &find), "cannot detect renames")
        }
        return (0..<git_diff_num_deltas(diff)).compactMap { index in
            guard let delta = git_diff_get_delta(diff, index)?.pointee else { return nil }
            let oldPath = delta.old_file.path.map { String(cString: $0) }
            let newPath = delta.new_file.path.map { String(cString: $0) }
            let before = ObjectID(delta.old_file.id)
            let after = ObjectID(delta.new_file.id)
            switch delta.status {
            case GIT_DELTA_ADDED: return Change(kind: .added, oldPath: nil, newPath: newPath, oldID: nil, newID: after)
            case GIT_DELTA_DELETED: return Change(kind: .deleted, oldPath: oldPath, newPath: nil, oldID: before, newID: nil)
            case GIT_DELTA_RENAMED: return Change(kind: .renamed, oldPath: oldPath, newPath: newPath, oldID: before, newID: after)
            default: return Change(kind: .modified, oldPath: oldPath, newPath: newPath, oldID: before, newID: after)
            }
        }
    }
}

extension Repository {
    /// The blob-level changes from tree `old` (nil: empty) to tree `new`, found by walking both trees
    /// and descending only into subtrees whose ids differ: much cheaper than a git diff when a few
    /// files change in a large tree. No rename detection; paths are relative to the trees. Refuses
    /// (`E_TOO_LARGE`) trees nested deeper than `maxDepth`, and stops at the change past `maxChanges`
    /// (within one tree too). `found`, when given, sees each change as the walk finds it, in the
    /// order of the list returned (the walk stops at what it throws).
    public func treeChanges(from old: ObjectID?, to new: ObjectID?, maxDepth: Int = GitPath.maxDepth, maxChanges: Int = 1_000_000,
                            memo: TreeMemo? = nil, found: ((Change) throws -> Void)? = nil) throws -> [Change] {
        var changes: [Change] = []
        var walk = TreeWalk(maxDepth: maxDepth, maxChanges: maxChanges, memo: memo, found: found)
        try collectChanges(from: old, to: new, prefix: "", depth: 1, walk: &walk, into: &changes)
        return changes
    }

    private struct TreeWalk {
        let maxDepth: Int
        let maxChanges: Int
        let memo: TreeMemo?
        let found: ((Change) throws -> Void)?

        func record(_ change: Change, into changes: inout [Change]) throws {
            guard changes.count < maxChanges else {
                throw CohortError(.tooLarge, "more than \(maxChanges) files changed in one commit", hint: "commit fewer files at once (start a larger folder with part of its files), and sync more often so that a merge brings in fewer")
            }
            changes.append(change)
            try found?(change)
        }
    }

    private func collectChanges(from old: ObjectID?, to new: ObjectID?, prefix: String, depth: Int, walk: inout TreeWalk, into changes: inout [Change]) throws {
        guard old != new else { return }
        guard depth <= walk.maxDepth else {
            throw CohortError(.tooLarge, "folders are nested deeper than \(walk.maxDepth) levels at \(prefix)")
        }
        // The new tree first: in a pushed (thin) pack it is usually a delta on the old one, whose copy
        // the reader then keeps, and reading the old tree next costs no second inflation.
        try withTree(new, memo: walk.memo) { newTree in
            try withTree(old, memo: walk.memo) { oldTree in
                // Swift strings only for what changed.
                for pair in try Self.differences(oldTree, newTree, prefix: prefix) {
                    let before = pair.old_index >= 0 ? oldTree?[Int(pair.old_index)] : nil
                    let after = pair.new_index >= 0 ? newTree?[Int(pair.new_index)] : nil
                    if let before, let after {
                        let path = prefix + after.name
                        if after.type == GIT_OBJECT_TREE {
                            try collectChanges(from: before.id, to: after.id, prefix: path + "/", depth: depth + 1, walk: &walk, into: &changes)
                        } else {
                            try walk.record(Change(kind: .modified, oldPath: path, newPath: path, oldID: before.id, newID: after.id,
                                                   newMode: after.filemode), into: &changes)
                        }
                    } else if let before {
                        try entryChange(before, added: false, prefix: prefix, depth: depth, walk: &walk, into: &changes)
                    } else if let after {
                        try entryChange(after, added: true, prefix: prefix, depth: depth, walk: &walk, into: &changes)
                    }
                }
            }
        }
    }

    /// Where trees `old` and `new` (either may be absent) differ, in git's order: both walked side by
    /// side in C (`cohort_tree_differences`), which skips the entries they share without a call back
    /// into Swift for each. Each pair holds the entry's index in each tree, or -1 where it has none.
    /// Refuses (`E_NOT_PERMITTED`) a new tree that names an entry twice or out of git's order, as
    /// git's fsck does: the walk side by side relies on that order, and checkouts write such a tree
    /// differently or not at all. `prefix` is the tree's path, for the error.
    static func differences(_ old: ParsedTree?, _ new: ParsedTree?, prefix: String) throws -> [cohort_tree_pair] {
        let pairs = ParsedTree.differences(old, new)
        // The old tree was checked when it came in. A new tree whose every entry the walk paired with
        // an old one of the same name and kind lists them in the old tree's order, once each: only a
        // tree with an entry of its own is looked through.
        if let new, pairs.contains(where: { $0.old_index < 0 }), let index = new.misorderedEntry {
            throw CohortError(.notPermitted, "the folder '\(prefix.isEmpty ? "/" : GitPath.shown(prefix))' names '\(GitPath.shown(new[index].name))' twice or out of git's order",
                              hint: "git's fsck refuses such a folder: commit it again with git or cohort, which write folders in order")
        }
        return pairs
    }

    /// A whole entry added or deleted: a blob, or every blob below a tree.
    private func entryChange(_ entry: UnsafePointer<cohort_tree_entry>, added: Bool, prefix: String, depth: Int, walk: inout TreeWalk,
                             into changes: inout [Change]) throws {
        let path = prefix + entry.name
        let id = entry.id
        if entry.type == GIT_OBJECT_TREE {
            try collectChanges(from: added ? nil : id, to: added ? id : nil, prefix: path + "/", depth: depth + 1, walk: &walk, into: &changes)
        } else if added {
            try walk.record(Change(kind: .added, oldPath: nil, newPath: path, oldID: nil, newID: id, newMode: entry.filemode), into: &changes)
        } else {
            try walk.record(Change(kind: .deleted, oldPath: path, newPath: nil, oldID: id, newID: nil), into: &changes)
        }
    }
}
