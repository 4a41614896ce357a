import CohortGit
import CohortIdentity

/// A commit that breaks a rule: which commit, and the error with its stable code.
public struct Violation: Error, Sendable, CustomStringConvertible {
    public let commit: ObjectID
    public let error: CohortError

    public init(commit: ObjectID, error: CohortError) {
        self.commit = commit
        self.error = error
    }

    /// `CODE: commit SHA: reason`.
    public var description: String {
        "\(error.code): commit \(commit.hex): \(error.reason)"
    }
}
