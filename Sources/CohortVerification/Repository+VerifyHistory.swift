import CohortBase
import CohortGit
import Foundation

/// The outcome of `cohort verify`.
public struct VerificationReport: Sendable {
    /// Commits in the verified history.
    public let commits: Int
    /// Of them, checked in this run (the rest were remembered from earlier runs).
    public let checkedNow: Int
}

extension Repository {
    /// Re-verifies the history of `tip` by the rules, skipping commits remembered as verified, and
    /// remembers the newly verified ones (also when a later commit fails). Throws the first `Violation`.
    /// `counted` hears the number of commits in the history once it is listed, on this thread, before
    /// any is checked and before the threads that check them start.
    public func verifyHistory(to tip: ObjectID, counted: ((Int) -> Void)? = nil) throws -> VerificationReport {
        let memory = VerifiedCommits(repository: self)
        let verifier = HistoryVerifier(repository: self)
        var checked: [ObjectID] = []
        defer { try? memory.remember(checked) }
        // A history libgit2 cannot walk (a commit not as git writes it) is the tip's violation.
        let all: [ObjectID]
        do { all = try commits(from: tip) } catch let error as CohortError where error.code == .malformed {
            throw Violation(commit: tip, error: error)
        }
        let known = memory.load()
        // Remembered commits are skipped, the genesis among them: the one root on the tip's
        // first-parent line is the collaboration's, and any other root met in the walk is refused.
        verifier.expectedGenesis = try firstParentRoot(of: tip)
        counted?(all.count)
        verifier.prepare(all.filter { !known.contains($0) })
        for id in all where !known.contains(id) {
            try verifier.verify(id)
            checked.append(id)
        }
        return VerificationReport(commits: all.count, checkedNow: checked.count)
    }
}
