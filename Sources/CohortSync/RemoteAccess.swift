import CohortCollaboration
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

    init(url: String, home: IdentityHome, client: ServerClient) {
        link = try? CollaborationLink(url)
        exchange = TokenExchange(home: home, client: client)
    }

    /// Runs a transfer; a server's refusal is explained by its own error code (see `TokenExchange.explain`).
    func transfer<T>(_ operation: ChallengeOperation, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            guard let link else { throw error }
            throw exchange.explain(error, link: link, operation: operation)
        }
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
}
