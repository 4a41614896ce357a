import CohortCollaboration
import CohortGit
import CohortVerification
import Foundation

/// One change to a file, as `cohort history PATH` lists it: the commit that carried it and its signed
/// notice (who, when, what, the path then).
public struct FileEvent: Sendable {
    public let commit: ObjectID
    public let notice: Notice
    /// The participant's handle, where the membership knows it.
    public let handle: String?
}

extension Workspace {
    /// The changes to `path` in the verified history, newest first, following renames and moves back
    /// to where the file began, with conflict copies made of it and comments on it. Refuses a history
    /// that fails verification, as `cohort verify` does.
    public func history(of path: String, limit: Int = 1000) throws -> [FileEvent] {
        let head = try head().commit
        _ = try repository.verifyHistory(to: head)
        let handles = try state().membership.everyHandle
        var names: Set<String> = [path]
        var seen = Set<String>()
        var events: [FileEvent] = []
        for commit in try repository.commits(from: head).reversed() {
            // A merge's own notices are those neither parent had (what came through the merge is
            // listed at the commit that made it).
            let parents = try repository.commit(commit).parents
            let known = try parents.count > 1 ? repository.tree(ofCommit: parents[1]) : nil
            for notice in try repository.noticesAdded(by: [commit], presentIn: known).reversed() where seen.insert(notice.id).inserted {
                let touched = [notice.data["path"], notice.data["conflictOf"]].compactMap { $0 }
                guard touched.contains(where: names.contains) else { continue }
                events.append(FileEvent(commit: commit, notice: notice, handle: handles[notice.actor]))
                // Older commits knew the file by its name before a rename or move.
                if let old = notice.data["oldPath"], notice.data["path"].map(names.contains) == true { names.insert(old) }
                if events.count >= limit { return events }
            }
        }
        return events
    }
}
