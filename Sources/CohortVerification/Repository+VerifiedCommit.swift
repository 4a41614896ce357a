import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

extension Repository {
    /// Creates a commit signed by `signer`, with its `Cohort-Proof` trailer, and runs it through the
    /// verification core (its parents trusted) before returning it, and remembers it as verified. No
    /// reference moves: a refused commit is only an unreachable object.
    package func createVerifiedCommit(tree: ObjectID, parents: [ObjectID], message: String, signer: CollaborationSigner,
                              author: Person) throws -> ObjectID {
        let id = try createCommit(
            tree: tree, parents: parents, message: CommitTrailer.append(to: message, scheme: signer.root.scheme, proof: signer.proof),
            author: author, sign: { try SSHSignature.sign($0, with: signer.key) })
        do {
            try HistoryVerifier(repository: self).verify(id)
        } catch let violation as Violation {
            throw violation.error
        }
        // Remembered as verified, so `cohort verify` and the next sync do not check it again.
        try? VerifiedCommits(repository: self).remember([id])
        return id
    }
}
