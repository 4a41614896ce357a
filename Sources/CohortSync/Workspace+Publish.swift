import CohortBase
import CohortCollaboration
import CohortGit
import CohortRemote
import CohortServerAPI
import CohortVerification
import CohortWorkspace
import Foundation

/// What `cohort publish` did.
public struct PublishOutcome: Sendable {
    public let link: CollaborationLink
    /// False when the server already hosted this collaboration (publishing again pushes what is new).
    public let created: Bool
    public let pushed: ObjectID
}

extension Workspace {
    /// Registers this collaboration on the server at `base` (only its owner may) and pushes the
    /// default branch there, setting `remote` to the link. Refused pushes throw with the server's
    /// reasons; nothing local changes but the remote's URL.
    public func publish(to base: String, remote: String = "origin", client: ServerClient,
                        progress: (@Sendable (TransferProgress) -> Void)? = nil) throws -> PublishOutcome {
        let head = try head()
        let state = try state()
        let signer = try signer(for: state)
        guard signer.root == state.owner else {
            throw CohortError(.notPermitted, "only the owner of '\(state.collaboration.title)' may publish it",
                              hint: "ask \(state.collaboration.initiator.name) to publish it, then `cohort clone` the link")
        }
        let link = CollaborationLink(base: base, identifier: state.collaboration.identifier)
        _ = try CollaborationLink(link.url)
        if let existing = try repository.remoteURL(remote), existing != link.url {
            throw CohortError(.git, "remote \(remote) already points at \(existing)", hint: "pass --remote NAME to publish under another remote name")
        }
        let genesis = try repository.firstParentRoot(of: head.commit)
        guard let fileEntry = try repository.entry(at: CohortLayout.collaboration, inTree: repository.tree(ofCommit: genesis)) else {
            throw CohortError(.malformed, "the genesis commit has no \(CohortLayout.collaboration)")
        }
        let fileBytes = try repository.blob(fileEntry.id, maxBytes: CollaborationFile.maxEnvelopeBytes)

        let registered = try Blocking.wait {
            let challenge = try await client.challenge(link, operation: .membership)
            let proof = try TokenExchange.proof(answering: challenge, for: link, operation: .membership, with: signer)
            return try await client.publish(link, request: ServerAPI.PublishRequest(collaboration: fileBytes, genesis: genesis.hex, proof: proof))
        }
        try repository.setRemote(remote, url: registered.gitURL)
        TokenCache(home: home).store(registered.token, for: link)
        let exchange = TokenExchange(home: home, client: client)
        let first = registered.token.token
        let result = try repository.push(remote: remote, refspecs: ["\(head.branch):\(CohortLayout.defaultBranch)"], callbacks: RemoteCallbacks(
            credential: { _, attempt in
                let token = attempt == 1 ? first : try exchange.blockingToken(link, operation: .push, attempt: attempt).token
                return RemoteCredential(username: "cohort", password: token)
            },
            progress: progress
        ))
        try result.check()
        return PublishOutcome(link: link, created: registered.created, pushed: head.commit)
    }
}

extension PushResult {
    /// Throws the code the server names (its hook writes `E_…`; E_NOT_PERMITTED when it names none),
    /// with each refused ref and the server's reasons.
    public func check() throws {
        guard !accepted else { return }
        let reasons = remoteMessages.filter { $0.contains("rejected") || $0.contains("E_") }
        let refs = refused.map { "\($0.ref) (\($0.reason))" }.joined(separator: ", ")
        // The server's own code (its hook writes `E_…`), else E_NOT_PERMITTED.
        let named = reasons.lazy.filter { $0.contains("rejected") }.compactMap { line in
            CohortError.Code.all.first { line.contains($0.rawValue + ":") || line.contains($0.rawValue + " ") }
        }.first
        throw CohortError(named ?? .notPermitted, "the server refused \(refs)" + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")),
                          hint: "nothing was lost locally; fix what the server names, then push again")
    }
}
