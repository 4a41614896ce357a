import CohortBase
import Crypto
import Foundation

/// Issues challenges and verifies signed identity proofs over them: the one verifier the server, the
/// credential helper's peer and the tests use.
public final class ChallengeAuthority: Sendable {
    /// Challenges may claim an issue time this far in the future (clock steps between instances).
    static let allowedSkew: UInt64 = 30

    /// The server identity every challenge is bound to.
    public let server: String
    private let key: SymmetricKey
    private let spent: any SpentChallengeStore
    private let lifetime: UInt16
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - server: this server's identity (1 to 255 bytes), usually its public URL.
    ///   - key: the HMAC-SHA-256 key (at least 32 bytes), kept secret and stable across restarts.
    ///   - spent: where spent nonces are kept. With a durable store (`FileSpentChallenges`) challenges
    ///     survive a restart of the server; with a store in memory they are bound to this instance.
    ///   - lifetime: seconds a challenge may be answered, 1 to 300.
    ///   - now: the clock, replaceable in tests.
    public init(
        server: String, key: SymmetricKey, spent: any SpentChallengeStore, lifetime: UInt16 = 120,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try TextField.check(server, field: "server identity", maxBytes: 255)
        guard key.bitCount >= 256 else {
            throw CohortError(.malformed, "the challenge key must be at least 32 bytes")
        }
        guard (1...Challenge.maxLifetime).contains(lifetime) else {
            throw CohortError(.malformed, "challenge lifetime must be 1 to \(Challenge.maxLifetime) seconds")
        }
        self.server = server
        if spent.isDurable {
            self.key = key
        } else {
            // Spent nonces die with this process, so its challenges must too: a per-process key.
            var ephemeral = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            ephemeral.append(Data("COHORT-EPHEMERAL-CHALLENGES".utf8))
            self.key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: ephemeral, using: key).withUnsafeBytes { Data($0) })
        }
        self.spent = spent
        self.lifetime = lifetime
        self.now = now
    }

    private var currentTime: UInt64 { UInt64(max(0, now().timeIntervalSince1970)) }

    /// A fresh challenge for `operation` on `collaboration`.
    public func issue(collaboration: String, operation: ChallengeOperation) throws -> Challenge {
        try CollaborationContext.validate(identifier: collaboration)
        var nonce = Data(count: 32)
        nonce.withUnsafeMutableBytes { buffer in
            var generator = SystemRandomNumberGenerator()
            for i in buffer.indices { buffer[i] = generator.next() }
        }
        let unsigned = Challenge(nonce: nonce, issuedAt: currentTime, lifetime: lifetime, operation: operation,
                                 server: server, collaboration: collaboration, tag: Data())
        return Challenge(nonce: nonce, issuedAt: unsigned.issuedAt, lifetime: lifetime, operation: operation,
                         server: server, collaboration: collaboration, tag: tag(for: unsigned))
    }

    private func tag(for challenge: Challenge) -> Data {
        HMAC<SHA256>.authenticationCode(for: challenge.signedPart, using: key).withUnsafeBytes { Data($0) }
    }

    /// The challenge `proof` answers, checked as this authority issued it for `operation` on
    /// `collaboration`: sizes, forged, expired, scope. Nothing is looked up or spent, and the proof's
    /// signature is not checked: `verify` does the rest.
    public func challenge(answeredBy proof: SignedIdentityProof, collaboration: String, operation: ChallengeOperation) throws -> Challenge {
        try SignedIdentityProof.checkMessage(proof.message)
        let challenge = try Challenge(bytes: proof.message)
        let time = currentTime
        guard HMAC<SHA256>.isValidAuthenticationCode(challenge.tag, authenticating: challenge.signedPart, using: key) else {
            throw CohortError(.challengeForged, "challenge was not issued by this server", hint: "request a new challenge and sign it unchanged")
        }
        guard challenge.server == server, challenge.lifetime <= Challenge.maxLifetime,
              challenge.issuedAt <= time + Self.allowedSkew
        else {
            throw CohortError(.challengeForged, "challenge fields are not ones this server issues")
        }
        let expiry = challenge.expiry
        guard time <= expiry else {
            throw CohortError(.challengeExpired, "challenge expired \(time - expiry) s ago", hint: "request a new challenge and answer it within \(lifetime) s")
        }
        guard challenge.collaboration == collaboration, challenge.operation == operation else {
            throw CohortError(.challengeScope,
                              "challenge was issued for \(challenge.operation) on \(challenge.collaboration), not \(operation) on \(collaboration)",
                              hint: "request a challenge for this collaboration and operation")
        }
        return challenge
    }

    /// Verifies `proof`, whose message must be a challenge from this authority for `operation` on
    /// `collaboration`, then spends the challenge. Checks run in the documented order: sizes; the
    /// challenge (forged, expired, scope, replayed); the key; the signature; the proof's shape; the
    /// fold; the root's membership; `beforeSpending`; and last, the spend.
    public func verify(
        _ proof: SignedIdentityProof, collaboration: String, operation: ChallengeOperation,
        against roots: some RootDirectory, beforeSpending: () async throws -> Void = {}
    ) async throws -> RootHash {
        let challenge = try challenge(answeredBy: proof, collaboration: collaboration, operation: operation)
        guard try await !spent.contains(challenge.nonce) else {
            throw CohortError(.challengeReplayed, "challenge was already used", hint: "request a new challenge for every attempt")
        }
        let root = try proof.verify(against: roots)
        try await beforeSpending()
        guard try await spent.spend(challenge.nonce, expiresAt: challenge.expiry, now: currentTime) else {
            throw CohortError(.challengeReplayed, "challenge was already used", hint: "request a new challenge for every attempt")
        }
        return root
    }
}
