import CohortGit
import CohortIdentity
import Foundation

extension Repository {
    /// An OpenSSH allowed-signers file for every key that signed a commit of `tip`'s history (each
    /// commit verified first), so `git verify-commit` and `git log --show-signature` accept Cohort's
    /// commits. Principals are handles (where they are plain), else `root-` and 16 hex digits of the
    /// root; keys of removed participants carry `valid-before` their removal.
    public func allowedSigners(for tip: ObjectID) throws -> String {
        let verifier = HistoryVerifier(repository: self)
        var handles: [String: String] = [:]
        var keys: [(key: P256Key, root: RootHash)] = []
        var seen = Set<P256Key>()
        var last: CollaborationState?
        let history = try commits(from: tip)
        verifier.prepare(history)
        for id in history {
            let state = try verifier.verify(id)
            last = state
            for participant in state.membership.participants { handles[participant.root] = participant.handle ?? handles[participant.root] }
            if let signer = verifier.verifiedSigner(of: id), seen.insert(signer.key).inserted {
                keys.append((signer.key, signer.root))
            }
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return keys.map { entry in
            let root = entry.root.hex
            let principal = handles[root].flatMap(Self.plainPrincipal) ?? "root-" + root.prefix(16)
            var options = "namespaces=\"git\""
            if last?.directory.status(of: entry.root) == .revoked,
               let removed = last?.membership.removed.first(where: { $0.root == root })?.removedAt {
                options += ",valid-before=\"\(formatter.string(from: removed))\""
            }
            return "\(principal) \(options) \(SSHSignature.publicKeyLine(entry.key))\n"
        }.joined()
    }

    /// `handle` if OpenSSH reads it as one literal principal (no pattern characters, commas, quotes or spaces).
    private static func plainPrincipal(_ handle: String) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@._+-")
        return !handle.isEmpty && handle.allSatisfy(allowed.contains) ? handle : nil
    }
}
