import CGit2
import CohortBase
import Foundation

/// What Cohort reads of a commit.
public struct Commit: Sendable {
    public let id: ObjectID
    public let tree: ObjectID
    public let parents: [ObjectID]
    public let message: String
    /// The one `gpgsig` header's value and the bytes it signs, when the commit is signed (`CommitSignature`).
    public let signature: (armored: String, signedData: Data)?
}

extension Commit {
    /// The commit whose object bytes are `raw`, read as `parse` reads them, and its signature.
    package init(raw: Data, id: ObjectID) throws {
        let (tree, parents, message) = try Commit.parse(raw, id: id)
        // libgit2's own extraction also looks in the message body, which `git verify-commit` never does.
        self.init(id: id, tree: tree, parents: parents, message: message, signature: try CommitSignature.split(raw))
    }

    /// The tree, parents and message of a commit object's bytes, read as libgit2 reads them: a `tree`
    /// line first, then any `parent` lines, then `author` and `committer` (each `NAME <EMAIL> TIME
    /// ZONE`, by libgit2's own signature parser); the message starts after the first empty line and,
    /// as libgit2 keeps it, ends at a NUL. A commit without those lines is refused.
    package static func parse(_ raw: Data, id: ObjectID) throws -> (tree: ObjectID, parents: [ObjectID], message: String) {
        try raw.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var malformed: CohortError {
                CohortError(.malformed, "commit \(id.hex) is not a well-formed commit object", hint: malformedObjectHint)
            }
            var position = 0
            func line(_ prefix: StaticString) -> Bool {
                let count = prefix.utf8CodeUnitCount
                guard bytes.count - position >= count,
                      memcmp(bytes.baseAddress! + position, prefix.utf8Start, count) == 0 else { return false }
                return true
            }
            func objectID(_ prefix: StaticString) -> ObjectID? {
                let start = position + prefix.utf8CodeUnitCount
                guard line(prefix), bytes.count - start >= 41, bytes[start + 40] == 0x0A else { return nil }
                var oid = git_oid()
                guard git_oid_fromstrn(&oid, (bytes.baseAddress! + start).assumingMemoryBound(to: CChar.self), 40) == 0 else { return nil }
                position = start + 41
                return ObjectID(oid)
            }
            func skipLine(_ prefix: StaticString) -> Bool {
                guard line(prefix), let end = bytes.firstIndex(of: 0x0A, from: position) else { return false }
                position = end + 1
                return true
            }
            // An `author` or `committer` line as libgit2 checks it (its own parser, on the line's
            // text: `NAME <EMAIL> TIME ZONE`); a line holding a NUL is refused outright.
            func signatureLine(_ prefix: StaticString) -> Bool {
                let start = position + prefix.utf8CodeUnitCount
                guard line(prefix), let end = bytes.firstIndex(of: 0x0A, from: position), start < end,
                      bytes.firstIndex(of: 0, in: start..<end) == nil else { return false }
                var text = [CChar](repeating: 0, count: end - start + 1)
                text.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<end])) }
                var signature: UnsafeMutablePointer<git_signature>?
                defer { git_signature_free(signature) }
                guard git_signature_from_buffer(&signature, text) == 0 else { return false }
                position = end + 1
                return true
            }
            guard let tree = objectID("tree ") else { throw malformed }
            var parents: [ObjectID] = []
            while let parent = objectID("parent ") { parents.append(parent) }
            guard signatureLine("author ") else { throw malformed }
            // Some tools write more than one author; libgit2 skips the others unread.
            while line("author ") { guard skipLine("author ") else { throw malformed } }
            guard signatureLine("committer ") else { throw malformed }
            // More headers may follow, up to the first empty line; a commit without one has no message.
            var message = ""
            var end = position - 1
            while true {
                if end + 1 < bytes.count, bytes[end + 1] == 0x0A {
                    let body = UnsafeRawBufferPointer(rebasing: bytes[(end + 2)...])
                    message = String(decoding: body.prefix(while: { $0 != 0 }), as: UTF8.self)
                    break
                }
                guard let next = bytes.firstIndex(of: 0x0A, from: end + 1) else { break }
                end = next
            }
            return (tree, parents, message)
        }
    }
}

/// A commit's author or committer.
public struct Person: Sendable {
    public let name: String
    public let email: String
    public let time: Date

    public init(name: String, email: String, time: Date = Date()) {
        self.name = name
        self.email = email
        self.time = time
    }
}

extension Repository {
    func withCommit<T>(_ id: ObjectID, _ body: (OpaquePointer?) throws -> T) throws -> T {
        var commit: OpaquePointer?
        var oid = id.raw
        try check(git_commit_lookup(&commit, pointer, &oid), "cannot read commit \(id.hex)")
        defer { git_commit_free(commit) }
        return try body(commit)
    }

    /// Largest commit object read, in bytes (a commit is a few hundred bytes plus its message).
    public static let maxCommitBytes = 1 << 20

    /// Reads commit `id`, with its signature if it has one; refuses commits over `maxCommitBytes`
    /// before inflating them (a walk need not have read it: with a commit-graph, libgit2 takes a
    /// commit's parents from the graph). The object is read once: its tree, parents and message as
    /// libgit2 parses them (`Commit.parse`), its signature as stock git finds it.
    public func commit(_ id: ObjectID) throws -> Commit {
        let header = try objectHeader(id)
        guard header.type == GIT_OBJECT_COMMIT else { throw CohortError(.malformed, "object \(id.hex) is not a commit") }
        guard header.size <= Self.maxCommitBytes else {
            throw CohortError(.tooLarge, "commit \(id.hex) is \(header.size) bytes, more than the \(Self.maxCommitBytes) allowed")
        }
        return try Commit(raw: rawObject(id), id: id)
    }

    /// Creates a commit of `tree` with `parents`, signed by `sign` (which receives the exact bytes of
    /// the unsigned commit and returns the armored signature for the `gpgsig` header). Does not move
    /// any reference.
    public func createCommit(
        tree: ObjectID, parents: [ObjectID], message: String, author: Person,
        sign: (Data) throws -> String
    ) throws -> ObjectID {
        var signature: UnsafeMutablePointer<git_signature>?
        guard git_signature_new(&signature, author.name, author.email, git_time_t(author.time.timeIntervalSince1970), 0) == 0 else {
            throw CohortError(.malformed, "git cannot write '\(author.name) <\(author.email)>' as a commit's author (\(gitMessage(-1)))",
                              hint: "use a name and an email that are not empty and hold no '<', '>' or line break")
        }
        defer { git_signature_free(signature) }

        var treePointer: OpaquePointer?
        var treeOID = tree.raw
        try check(git_tree_lookup(&treePointer, pointer, &treeOID), "cannot read tree \(tree.hex)")
        defer { git_tree_free(treePointer) }

        var parentPointers: [OpaquePointer?] = []
        defer { parentPointers.forEach { git_commit_free($0) } }
        for parent in parents {
            var commit: OpaquePointer?
            var oid = parent.raw
            try check(git_commit_lookup(&commit, pointer, &oid), "cannot read parent \(parent.hex)")
            parentPointers.append(commit)
        }

        var buffer = git_buf()
        defer { git_buf_dispose(&buffer) }
        let result = parentPointers.withUnsafeMutableBufferPointer { parentsBuffer in
            git_commit_create_buffer(&buffer, pointer, signature, signature, nil, message, treePointer,
                                     parents.count, parentsBuffer.baseAddress)
        }
        try check(result, "cannot build the commit")
        guard let content = buffer.ptr else { throw CohortError(.git, "libgit2 built an empty commit") }
        let unsigned = Data(bytes: content, count: buffer.size)
        let armored = try sign(unsigned)
        var oid = git_oid()
        try check(git_commit_create_with_signature(&oid, pointer, content, armored, "gpgsig"), "cannot write the signed commit")
        return ObjectID(oid)
    }

    /// The commits from `tip` down its line of single parents to the first one in `stop` (not
    /// included), parents first; nil when the line first meets a merge, a root, more than `limit`
    /// commits, or anything it cannot read (a walk of the whole graph then decides). Only a line: it
    /// says nothing of whether a commit on it is also reached from a commit in `stop` some other way.
    public func lineOfCommits(from tip: ObjectID, downTo stop: Set<ObjectID>, limit: Int) -> [ObjectID]? {
        var line: [ObjectID] = []
        var next = tip
        while !stop.contains(next) {
            guard line.count < limit, let commit = try? commit(next), commit.parents.count == 1 else { return nil }
            line.append(next)
            next = commit.parents[0]
        }
        return line.reversed()
    }

    /// Commits from `tip` back to (not including) `hidden` and their ancestors, parents before children.
    public func commits(from tip: ObjectID, hiding hidden: [ObjectID] = []) throws -> [ObjectID] {
        try walk(from: tip, hiding: hidden, sorting: GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_REVERSE.rawValue, firstParentOnly: false)
    }

    /// Commits reachable from any of `tips` and from none of `hidden`, parents before children.
    public func commits(fromAll tips: [ObjectID], hiding hidden: [ObjectID]) throws -> [ObjectID] {
        try walk(from: tips, hiding: hidden, sorting: GIT_SORT_TOPOLOGICAL.rawValue | GIT_SORT_REVERSE.rawValue, firstParentOnly: false)
    }

    private func walk(from tip: ObjectID, hiding hidden: [ObjectID], sorting: UInt32, firstParentOnly: Bool) throws -> [ObjectID] {
        try walk(from: [tip], hiding: hidden, sorting: sorting, firstParentOnly: firstParentOnly)
    }

    /// The ids a libgit2 revision walk yields from `tips`.
    private func walk(from tips: [ObjectID], hiding hidden: [ObjectID], sorting: UInt32, firstParentOnly: Bool) throws -> [ObjectID] {
        var walk: OpaquePointer?
        try check(git_revwalk_new(&walk, pointer), "cannot walk history")
        defer { git_revwalk_free(walk) }
        try check(git_revwalk_sorting(walk, sorting), "cannot sort history")
        if firstParentOnly { try check(git_revwalk_simplify_first_parent(walk), "cannot walk first parents") }
        for tip in tips {
            var start = tip.raw
            try check(git_revwalk_push(walk, &start), "cannot walk from \(tip.hex)")
        }
        for id in hidden {
            var oid = id.raw
            try check(git_revwalk_hide(walk, &oid), "cannot hide \(id.hex)")
        }
        var ids: [ObjectID] = []
        var oid = git_oid()
        while true {
            let result = git_revwalk_next(&oid, walk)
            if result == GIT_ITEROVER.rawValue { break }
            try check(result, "cannot walk history")
            ids.append(ObjectID(oid))
        }
        return ids
    }

    /// First parents read from a descendant before `isAncestor` asks libgit2.
    static let firstParentSteps = 64

    /// Whether `ancestor` is `descendant` or one of its ancestors. `descendant`'s first parents are
    /// read first (at most `firstParentSteps`): a push onto a branch finds the branch's tip there in
    /// a step or two, where libgit2's merge-base walk reads back as far as commits share a date, and
    /// a push's new commits, in no commit-graph, give it no generation numbers to stop at (a
    /// script's history, made in one second, was read whole on every push: Docs/Benchmarks.md).
    public func isAncestor(_ ancestor: ObjectID, of descendant: ObjectID) throws -> Bool {
        if ancestor == descendant { return true }
        var next = descendant
        for _ in 0..<Self.firstParentSteps {
            guard let parent = (try? commit(next))?.parents.first else { break }
            if parent == ancestor { return true }
            next = parent
        }
        var a = descendant.raw
        var b = ancestor.raw
        let result = git_graph_descendant_of(pointer, &a, &b)
        try check(result, "cannot compare \(ancestor.hex) and \(descendant.hex)")
        return result == 1
    }
}

extension Repository {
    /// The root commit reached by following first parents from `commit`.
    public func firstParentRoot(of commit: ObjectID) throws -> ObjectID {
        try firstParentLine(from: commit).last ?? commit
    }

    /// The commits on the first-parent line from `commit` back to the root, newest first.
    public func firstParentLine(from commit: ObjectID) throws -> [ObjectID] {
        try walk(from: commit, hiding: [], sorting: GIT_SORT_NONE.rawValue, firstParentOnly: true)
    }

    /// How many commits `local` has that `upstream` lacks, and the reverse.
    public func aheadBehind(_ local: ObjectID, _ upstream: ObjectID) throws -> (ahead: Int, behind: Int) {
        var ahead = 0
        var behind = 0
        var a = local.raw
        var b = upstream.raw
        try check(git_graph_ahead_behind(&ahead, &behind, pointer, &a, &b), "cannot compare \(local.hex) with \(upstream.hex)")
        return (ahead, behind)
    }
}
