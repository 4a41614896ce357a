import CGit2
import CohortIdentity

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
            var oldID = delta.old_file.id
            var newID = delta.new_file.id
            let before = ObjectID(withUnsafePointer(to: &oldID) { $0 })
            let after = ObjectID(withUnsafePointer(to: &newID) { $0 })
            switch delta.status {
            case GIT_DELTA_ADDED: return Change(kind: .added, oldPath: nil, newPath: newPath, oldID: nil, newID: after)
            case GIT_DELTA_DELETED: return Change(kind: .deleted, oldPath: oldPath, newPath: nil, oldID: before, newID: nil)
            case GIT_DELTA_RENAMED: return Change(kind: .renamed, oldPath: oldPath, newPath: newPath, oldID: before, newID: after)
            default: return Change(kind: .modified, oldPath: oldPath, newPath: newPath, oldID: before, newID: after)
            }
        }
    }
}
