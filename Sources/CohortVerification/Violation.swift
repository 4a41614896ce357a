import CohortBase
import CohortGit

/// A commit that breaks a rule: which commit, and the error with its stable code. Reported as one
/// error, `CODE: commit SHA: reason`, wherever it surfaces (its `cohortError`).
public struct Violation: CohortErrorConvertible, Sendable, CustomStringConvertible {
    public let commit: ObjectID
    public let error: CohortError

    public init(commit: ObjectID, error: CohortError) {
        self.commit = commit
        self.error = error
    }

    /// `CODE: commit SHA: reason (hint)`, as `cohortError` reads.
    public var description: String { cohortError.description }

    /// The violation as one error, naming the commit.
    package var cohortError: CohortError {
        CohortError(error.code, "commit \(commit.hex): \(error.reason)", hint: error.hint)
    }
}
