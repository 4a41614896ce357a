import CohortCollaboration
import CohortGit

extension Repository {
    /// The notices `commits` add under `.cohort/notices/` (compared with each one's first parent), in
    /// the order given, each once, leaving out those already in tree `known` (what this side had).
    /// Their envelopes are opened and checked; that the history obeys the
    /// rules is the verifier's business, done before.
    public func noticesAdded(by commits: [ObjectID], presentIn known: ObjectID? = nil) throws -> [Notice] {
        try signedNoticesAdded(by: commits, presentIn: known).map(\.notice)
    }

    /// The same notices with the envelopes they are stored in.
    public func signedNoticesAdded(by commits: [ObjectID], presentIn known: ObjectID? = nil) throws -> [SignedNotice] {
        let knownNotices = try known.flatMap { try entry(at: CohortLayout.folder, inTree: $0)?.id }
        var notices: [SignedNotice] = []
        var seen = Set<String>()
        for id in commits {
            let commit = try commit(id)
            guard let mine = try entry(at: CohortLayout.folder, inTree: commit.tree)?.id else { continue }
            let parent = try commit.parents.first.flatMap { try entry(at: CohortLayout.folder, inTree: tree(ofCommit: $0))?.id }
            for change in try treeChanges(from: parent, to: mine, maxDepth: 3, maxChanges: HistoryVerifier.maxCohortChanges)
            where change.kind == .added {
                let path = CohortLayout.folder + "/" + (change.newPath ?? "")
                guard let blob = change.newID, CohortLayout.isNoticePath(path) else { continue }
                if let knownNotices, try entry(at: change.newPath ?? "", inTree: knownNotices) != nil { continue }
                let opened = try CommitPreparation.openNotice(blob, path: path, in: self)
                if seen.insert(opened.value.id).inserted { notices.append(SignedNotice(notice: opened.value, envelope: opened.envelope)) }
            }
        }
        return notices
    }
}
