import CohortBase
import CohortCollaboration
import CohortIdentity
import CohortServerAPI
import Foundation

/// The challenge–response that buys an access token: ask the server for a challenge, sign it with
/// this device's key diversified for the collaboration, send the proof. A person with several card
/// versions tries each (newest first) until one's root is a participant.
public struct TokenExchange: Sendable {
    /// Card versions tried at most.
    static let maxCards = 4

    public let home: IdentityHome
    public let client: ServerClient

    public init(home: IdentityHome, client: ServerClient) {
        self.home = home
        self.client = client
    }

    /// A token for `operation` (`pull` or `push`) on `link`: a cached one while it lasts, else a
    /// new one (which is cached).
    public func token(_ link: CollaborationLink, operation: ChallengeOperation) async throws -> ServerAPI.TokenResponse {
        let cache = TokenCache(home: home)
        if let cached = cache.token(for: link, access: operation == .push ? .readWrite : .read) {
            return cached
        }
        let token = try await exchange(link, operation: operation)
        cache.store(token, for: link)
        return token
    }

    /// The challenge–response itself, without the cache.
    public func exchange(_ link: CollaborationLink, operation: ChallengeOperation) async throws -> ServerAPI.TokenResponse {
        let device = try home.loadDevice()
        let cards = Array(try home.cardHistory().prefix(Self.maxCards))
        var firstError: CohortError?
        for card in cards {
            let challenge = try await client.challenge(link, operation: operation)
            let proof = try Self.sign(challenge, for: link, operation: operation, device: device, card: card)
            do {
                return try await client.token(link, operation: operation, proof: proof)
            } catch let error as CohortError where error.code == .unknownRoot {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? CohortError(.noIdentity, "this device has no card", hint: "cohort id init")
    }

    /// Signs the challenge with `device`'s key, diversified with the salt the server sent.
    public static func sign(_ challenge: ServerAPI.ChallengeResponse, for link: CollaborationLink, operation: ChallengeOperation,
                            device: LocalDevice, card: IdentityCard) throws -> SignedIdentityProof {
        guard let text = challenge.collaboration.salt else {
            throw CohortError(.network, "the server sent no salt for \(link.identifier)",
                              hint: "the server does not host it yet; ask its owner to `cohort publish` it")
        }
        let salt = try Base64Field.decode(text, field: "salt", maxBytes: CollaborationContext.saltBytes)
        let context = try CollaborationContext(identifier: link.identifier, salt: salt)
        return try proof(answering: challenge, for: link, operation: operation, with: CollaborationSigner(device: device, card: card, context: context))
    }

    /// A signed identity proof over the challenge's bytes, unchanged, by `signer` — once the challenge
    /// is seen to name the server at the link's address, the link's collaboration and `operation`:
    /// a proof signed for one server must not be usable at another that relayed the challenge.
    package static func proof(answering challenge: ServerAPI.ChallengeResponse, for link: CollaborationLink, operation: ChallengeOperation,
                      with signer: CollaborationSigner) throws -> SignedIdentityProof {
        let message = try Base64Field.decode(challenge.challenge, field: "challenge", maxBytes: Challenge.maxBytes)
        let parsed = try Challenge(bytes: message)
        guard parsed.server.lowercased() == link.base.lowercased() else {
            throw CohortError(.challengeScope, "the server at \(link.base) sent a challenge for \(parsed.server.prefix(80))",
                              hint: "nothing was signed; if the server sits behind a proxy, its operator sets --public-url to the address you use")
        }
        guard parsed.collaboration == link.identifier, challenge.collaboration.identifier == link.identifier, parsed.operation == operation else {
            throw CohortError(.challengeScope, "the server sent a challenge for \(parsed.operation) on \(parsed.collaboration.prefix(64)), not \(operation) on \(link.identifier)",
                              hint: "nothing was signed")
        }
        return try SignedIdentityProof(signing: message, with: signer.key, scheme: signer.root.scheme, proof: signer.proof)
    }

    /// libgit2 reports a refusal by a server as a bare HTTP status. When `error` is such a refusal
    /// (401 or 403) of a Cohort server, the cached token is dropped and a fresh exchange tells why:
    /// its error (removed, not a participant, read only) replaces libgit2's. Blocks.
    public func explain(_ error: any Error, link: CollaborationLink, operation: ChallengeOperation) -> any Error {
        guard let failure = error as? CohortError, failure.code == .git,
              failure.reason.contains("status code: 403") || failure.reason.contains("status code: 401")
        else { return error }
        TokenCache(home: home).remove(for: link)
        do {
            let token = try Blocking.wait { try await exchange(link, operation: operation) }
            TokenCache(home: home).store(token, for: link)
            return error
        } catch {
            return error
        }
    }

    /// For libgit2's credential callback (a thread that may block): the first attempt may use the
    /// cache; a later one means the server refused that token, so it is dropped and a new one bought.
    public func blockingToken(_ link: CollaborationLink, operation: ChallengeOperation, attempt: Int) throws -> ServerAPI.TokenResponse {
        if attempt > 1 { TokenCache(home: home).remove(for: link) }
        return try Blocking.wait { try await token(link, operation: operation) }
    }
}

/// Runs async work to completion from synchronous code. Only for threads outside Swift's cooperative
/// pool (the main thread, libgit2's transfer thread): it blocks the caller.
public enum Blocking {
    private final class Box<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }

    public static func wait<T>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                box.result = .success(try await work())
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        guard let result = box.result else {
            throw CohortError(.io, "an operation ended without a result")
        }
        return try result.get()
    }
}
