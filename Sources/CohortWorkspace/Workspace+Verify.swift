import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
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
    /// remembers the newly verified ones. Throws the first `Violation`.
    public func verifyHistory(to tip: ObjectID) throws -> VerificationReport {
        let memory = VerifiedCommits(repository: self)
        let known = memory.load()
        let verifier = HistoryVerifier(repository: self)
        var checked: [ObjectID] = []
        defer { try? memory.remember(checked) }
        for id in try commits(from: tip, hiding: Array(known.filter { contains($0) })) {
            try verifier.verify(id)
            checked.append(id)
        }
        return VerificationReport(commits: try commits(from: tip).count, checkedNow: checked.count)
    }

    /// An OpenSSH allowed-signers file for every key that signed a commit of `tip`'s history (each
    /// verified), so `git verify-commit` and `git log --show-signature` accept Cohort's commits.
    /// Principals are handles where known, else `root-` and the root's first 16 hex digits.
    public func allowedSigners(for tip: ObjectID) throws -> String {
        let verifier = HistoryVerifier(repository: self)
        var lines: [String] = []
        var seen = Set<String>()
        for id in try commits(from: tip) {
            let state = try verifier.verify(id)
            let commit = try commit(id)
            guard let signature = commit.signature else { continue }
            let key = try SSHSignature.verify(signature.armored, message: signature.signedData)
            let root = try verifier.signer(of: commit)
            let handle = state.membership.participants.first { $0.root == root.hex }?.handle
                ?? state.membership.removed.first { $0.root == root.hex }?.handle
            let principal = handle ?? "root-" + root.hex.prefix(16)
            let line = "\(principal) namespaces=\"git\" \(SSHSignature.publicKeyLine(key))"
            if seen.insert(line).inserted { lines.append(line) }
        }
        return lines.map { $0 + "\n" }.joined()
    }
}
