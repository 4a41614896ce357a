import CohortBase
import CohortGit
import CohortIdentity
import CohortRemote
import Foundation

/// How libgit2 authenticates to a workspace's remote: a Cohort link buys tokens with this device's
/// key (pull for fetching, push for pushing); any other remote (a folder, ssh with an agent, plain
/// http) goes without Cohort's help.
struct RemoteAccess {
    let link: CollaborationLink?
    let exchange: TokenExchange
    let url: String

    init(url: String, home: IdentityHome, client: ServerClient) {
        self.url = url
        link = try? CollaborationLink(url)
        exchange = TokenExchange(home: home, client: client)
    }

    /// Runs a transfer; a server's refusal is explained by its own error code (see `TokenExchange.explain`).
    func transfer<T>(_ operation: ChallengeOperation, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let explained = link.map { exchange.explain(error, link: $0, operation: operation) } ?? error
            throw Self.offline(explained, url: url) ?? explained
        }
    }

    /// `E_NETWORK` when `error` says the remote could not be reached (no route, refused, timed out,
    /// a name that does not resolve, a folder that is not there): work stays here until a sync reaches it.
    static func offline(_ error: any Error, url: String) -> CohortError? {
        guard let failure = error as? CohortError, failure.code == .git || failure.code == .network else { return nil }
        let reason = failure.reason.lowercased()
        let unreachable = ["failed to connect", "could not connect", "connection refused", "timed out", "could not resolve",
                           "name or service not known", "network is unreachable", "no route to host", "connection reset",
                           "failed to resolve address", "temporary failure in name resolution"]
        // A folder remote that is not there (an unmounted drive); one that is there but unreadable is a failure.
        let missingFolder = Repository.localPath(ofRemote: url).map { !FileManager.default.fileExists(atPath: $0) } ?? false
        // A server that answered, but not in Cohort's API, is a wrong address rather than an offline one.
        let unreached = failure.isUnreachedServer
        guard unreached || (failure.code == .git && unreachable.contains(where: reason.contains)) || missingFolder else { return nil }
        let kept = "what you committed is kept here and goes out at the next sync that reaches it"
        if unreached, let hint = failure.hint {
            // Already said by the server client, with what to do.
            return CohortError(.network, failure.reason, hint: "\(hint); \(kept)")
        }
        return CohortError(.network, "cannot reach \(shown(url)): \(failure.reason)",
                           hint: "you are offline or the remote is down; \(kept)")
    }

    func callbacks(for operation: ChallengeOperation, progress: (@Sendable (TransferProgress) -> Void)?) -> RemoteCallbacks {
        guard let link else { return RemoteCallbacks(progress: progress) }
        let exchange = exchange
        return RemoteCallbacks(
            credential: { _, attempt in
                RemoteCredential(username: "cohort", password: try exchange.blockingToken(link, operation: operation, attempt: attempt).token)
            },
            progress: progress
        )
    }

    /// `url` with whatever stands before its host (a user, a password, a token) replaced by `***`,
    /// for messages.
    static func shown(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.user != nil || components.password != nil else { return url }
        components.user = "***"
        components.password = nil
        return components.string ?? "the remote"
    }
}
