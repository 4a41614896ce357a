import CohortBase
import CohortIdentity
import CohortServerAPI
import Crypto
import Foundation

/// What a verified access token says: who (a root), where (a collaboration), what (read or
/// read-write), until when.
public struct AccessToken: Sendable, Equatable {
    public let collaboration: String
    public let root: RootHash
    public let access: ServerAPI.Access
    public let issuedAt: Date
    public let expiresAt: Date
}

/// Issues and checks stateless access tokens: `cohort1.<payload>.<tag>`, where the payload is compact
/// JSON (base64url) and the tag HMAC-SHA-256 over `cohort1.<payload>` under the server's token key.
/// Nothing is stored per token; membership is looked up again on every request, so a removed
/// participant's token stops working at once.
public struct TokenAuthority: Sendable {
    static let prefix = "cohort1."
    /// Longest token accepted, in bytes.
    public static let maxTokenBytes = 2048

    private struct Payload: Codable {
        var s: String
        var c: String
        var r: String
        var k: RootScheme
        var a: ServerAPI.Access
        var i: Int64
        var e: Int64
    }

    /// The server identity tokens are bound to.
    public let server: String
    private let key: SymmetricKey
    /// Seconds a token lives.
    public let lifetime: TimeInterval

    public init(server: String, key: SymmetricKey, lifetime: TimeInterval) throws {
        guard key.bitCount >= 256 else {
            throw CohortError(.malformed, "the token key must be at least 32 bytes")
        }
        guard (10...86_400).contains(lifetime) else {
            throw CohortError(.malformed, "token lifetime must be 10 s to 24 h")
        }
        self.server = server
        self.key = key
        self.lifetime = lifetime
    }

    /// A token for `root` on `collaboration` with `access`, valid from `now` for `lifetime`.
    public func issue(collaboration: String, root: RootHash, access: ServerAPI.Access, now: Date = Date()) -> (token: String, expiresAt: Date) {
        let issued = Int64(now.timeIntervalSince1970)
        let expires = issued + Int64(lifetime)
        let payload = Payload(s: server, c: collaboration, r: root.hex, k: root.scheme, a: access, i: issued, e: expires)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Plain strings and integers always encode.
        let body = Self.prefix + ((try? encoder.encode(payload)) ?? Data()).base64URL
        return (body + "." + tag(body).base64URL, Date(timeIntervalSince1970: TimeInterval(expires)))
    }

    private func tag(_ body: String) -> Data {
        HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: key).withUnsafeBytes { Data($0) }
    }

    /// Checks the token's form, its tag (in constant time), its server, its collaboration and its
    /// expiry. Any failure is `E_UNAUTHORIZED`.
    public func verify(_ token: String, collaboration: String, now: Date = Date()) throws -> AccessToken {
        func refuse(_ reason: String) -> CohortError {
            CohortError(.unauthorized, reason, hint: "get a new token: git's credential helper `cohort` (or `cohort clone`/`cohort sync`) does it for you")
        }
        guard token.utf8.count <= Self.maxTokenBytes, token.hasPrefix(Self.prefix) else {
            throw refuse("the access token is not a Cohort token")
        }
        let parts = token.dropFirst(Self.prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payloadBytes = Data(base64URL: String(parts[0])), let tagBytes = Data(base64URL: String(parts[1])) else {
            throw refuse("the access token is not a Cohort token")
        }
        let body = Self.prefix + parts[0]
        guard HMAC<SHA256>.isValidAuthenticationCode(tagBytes, authenticating: Data(body.utf8), using: key) else {
            throw refuse("the access token was not issued by this server")
        }
        guard let payload = try? JSONDecoder().decode(Payload.self, from: payloadBytes), payload.s == server else {
            throw refuse("the access token was not issued by this server")
        }
        guard payload.c == collaboration else {
            throw refuse("the access token is for another collaboration")
        }
        guard Int64(now.timeIntervalSince1970) < payload.e else {
            throw refuse("the access token expired")
        }
        let root: RootHash
        do {
            root = try RootHash(scheme: payload.k, hex: payload.r)
        } catch {
            throw refuse("the access token names no valid root")
        }
        return AccessToken(collaboration: payload.c, root: root, access: payload.a,
                           issuedAt: Date(timeIntervalSince1970: TimeInterval(payload.i)),
                           expiresAt: Date(timeIntervalSince1970: TimeInterval(payload.e)))
    }
}

extension Data {
    /// Base64url without padding (RFC 4648 §5).
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    init?(base64URL text: String) {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        self.init(base64Encoded: standard)
    }
}
