import CGit2
import CGit2Shim
import CohortBase

/// A tree read and parsed by Cohort (`cohort_tree_read`), for the walks that read thousands of them:
/// a tree in git's usual form in one pass over its bytes, any other through libgit2, which reads it
/// (or refuses it) as it always does.
final class ParsedTree {
    private let pointer: OpaquePointer
    let count: Int

    /// Reads tree `id` of `repository`.
    init(_ id: ObjectID, in repository: Repository) throws {
        var tree: OpaquePointer?
        var oid = id.raw
        try check(cohort_tree_read(&tree, repository.pointer, &oid), "cannot read tree \(id.hex)")
        guard let tree else { throw CohortError(.git, "cannot read tree \(id.hex)") }
        pointer = tree
        count = cohort_tree_count(tree)
    }

    deinit {
        cohort_tree_free(pointer)
    }

    /// Entry `index` (below `count`); it points into the tree, so it is used only while the tree is held.
    subscript(index: Int) -> UnsafePointer<cohort_tree_entry> {
        // cohort_tree_entry_at is NULL only past the end, which no caller reaches.
        cohort_tree_entry_at(pointer, index)!
    }

    /// The places where `old` and `new` (either may be absent: empty) differ, in git's order
    /// (`cohort_tree_differences`).
    static func differences(_ old: ParsedTree?, _ new: ParsedTree?) -> [cohort_tree_pair] {
        let capacity = (old?.count ?? 0) + (new?.count ?? 0)
        guard capacity > 0 else { return [] }
        return [cohort_tree_pair](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = min(cohort_tree_differences(old?.pointer, new?.pointer, buffer.baseAddress, capacity), capacity)
        }
    }

    /// The index of the first entry out of git's order or named twice, if any (`cohort_tree_misordered_entry`).
    var misorderedEntry: Int? {
        let index = cohort_tree_misordered_entry(pointer)
        return index >= 0 ? Int(index) : nil
    }
}

extension UnsafePointer where Pointee == cohort_tree_entry {
    /// The entry's name (invalid UTF-8 repaired, as `String(cString:)` does).
    var name: String {
        String(decoding: UnsafeRawBufferPointer(start: pointee.name, count: Int(pointee.name_length)), as: UTF8.self)
    }

    var id: ObjectID { ObjectID(bytes: pointee.id) }
    var type: git_object_t { cohort_tree_entry_type(self) }
    /// The mode as libgit2's `git_tree_entry_filemode` gives it.
    var filemode: UInt32 { cohort_tree_entry_filemode(self).rawValue }
}

/// Trees kept parsed between calls, on one thread: the path rules read every folder a commit changes
/// and the same folder in its parent, which the commit before it read as its own. Holds the last
/// `capacity` trees.
public final class TreeMemo {
    private var trees: [ObjectID: ParsedTree] = [:]
    private var order: [ObjectID] = []
    private let capacity: Int

    public init(capacity: Int = 16) {
        self.capacity = capacity
    }

    /// The last commits read on this thread, with their trees: the next commit's parent is usually one.
    private var commitTrees: [ObjectID: ObjectID] = [:]

    /// Remembers that commit `commit` has tree `tree`.
    public func note(commit: ObjectID, tree: ObjectID) {
        if commitTrees.count >= capacity { commitTrees.removeAll(keepingCapacity: true) }
        commitTrees[commit] = tree
    }

    /// The tree of commit `commit`, from memory or read.
    public func tree(ofCommit commit: ObjectID, in repository: Repository) throws -> ObjectID {
        if let known = commitTrees[commit] { return known }
        return try repository.tree(ofCommit: commit)
    }

    /// Tree `id`, from memory or read (and kept). A caller holds it as long as it needs it, also
    /// once it has left the memo.
    func tree(_ id: ObjectID, in repository: Repository) throws -> ParsedTree {
        if let known = trees[id] { return known }
        let tree = try ParsedTree(id, in: repository)
        trees[id] = tree
        order.append(id)
        if order.count > capacity {
            trees.removeValue(forKey: order.removeFirst())
        }
        return tree
    }
}

extension Repository {
    /// The tree `id` (nil: none), parsed by Cohort and kept in `memo` when there is one.
    func withTree<T>(_ id: ObjectID?, memo: TreeMemo?, _ body: (ParsedTree?) throws -> T) throws -> T {
        guard let id else { return try body(nil) }
        return try body(memo?.tree(id, in: self) ?? ParsedTree(id, in: self))
    }
}
