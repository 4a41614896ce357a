import CohortBase
import CohortCollaboration
import CohortIdentity
import Foundation

/// The JSON bodies of a Cohort server's identity API, shared by `cohort serve` and its clients
/// (`cohort clone`, `cohort publish`, `git-credential-cohort`). Docs/Server.md describes each route.
public enum ServerAPI {
    /// Largest JSON body either side reads, in bytes.
    public static let maxBodyBytes = 256 << 10
    /// The path prefix of every collaboration: links are `BASE/c/<identifier>`.
    public static let collaborationPrefix = "c"

    /// What an access token allows.
    public enum Access: String, Codable, Sendable, Comparable {
        case read
        case readWrite = "read-write"

        public static func < (lhs: Access, rhs: Access) -> Bool { lhs == .read && rhs == .readWrite }
    }

    /// `POST /c/<id>/challenge`.
    public struct ChallengeRequest: Codable, Sendable {
        /// `pull`, `push` or `membership` (publishing).
        public var operation: String

        public init(operation: ChallengeOperation) { self.operation = operation.description }
    }

    /// The answer to a challenge request.
    public struct ChallengeResponse: Codable, Sendable {
        /// The challenge bytes, base64: what the device signs, unchanged.
        public var challenge: String
        public var operation: String
        public var expiresAt: Date
        /// The server identity the challenge is bound to.
        public var server: String
        /// The collaboration's identifier and salt (base64), so the device can diversify its key;
        /// the salt is absent while the collaboration is not hosted yet (publishing).
        public var collaboration: Collaboration

        public struct Collaboration: Codable, Sendable {
            public var identifier: String
            public var salt: String?

            public init(identifier: String, salt: String?) {
                self.identifier = identifier
                self.salt = salt
            }
        }

        public init(challenge: String, operation: String, expiresAt: Date, server: String, collaboration: Collaboration) {
            self.challenge = challenge
            self.operation = operation
            self.expiresAt = expiresAt
            self.server = server
            self.collaboration = collaboration
        }
    }

    /// `POST /c/<id>/token`: a signed identity proof over a `pull` or `push` challenge.
    public struct TokenRequest: Codable, Sendable {
        public var operation: String
        /// The signed identity proof in the JSON form of `cohort proof create`.
        public var proof: SignedIdentityProof

        public init(operation: ChallengeOperation, proof: SignedIdentityProof) {
            self.operation = operation.description
            self.proof = proof
        }
    }

    /// A short-lived token: `Authorization: Bearer <token>`, or the password of HTTP Basic.
    public struct TokenResponse: Codable, Sendable {
        public var token: String
        public var access: Access
        public var expiresAt: Date
        /// The proven root, hex, and its scheme.
        public var root: String
        public var scheme: RootScheme

        public init(token: String, access: Access, expiresAt: Date, root: RootHash) {
            self.token = token
            self.access = access
            self.expiresAt = expiresAt
            self.root = root.hex
            scheme = root.scheme
        }
    }

    /// `PUT /c/<id>`: registers a collaboration on the server; only its owner may.
    public struct PublishRequest: Codable, Sendable {
        /// The bytes of `.cohort/collaboration.json` (its DSSE envelope) at genesis, base64.
        public var collaboration: String
        /// The genesis commit, hex: the only history the server will accept.
        public var genesis: String
        /// A signed identity proof over a `membership` challenge, by a device of the owner.
        public var proof: SignedIdentityProof

        public init(collaboration: Data, genesis: String, proof: SignedIdentityProof) {
            self.collaboration = collaboration.base64EncodedString()
            self.genesis = genesis
            self.proof = proof
        }
    }

    /// The answer to a publish: where the collaboration lives now, and a read-write token to push it.
    public struct PublishResponse: Codable, Sendable {
        public var link: String
        public var gitURL: String
        public var created: Bool
        public var token: TokenResponse

        public init(link: String, gitURL: String, created: Bool, token: TokenResponse) {
            self.link = link
            self.gitURL = gitURL
            self.created = created
            self.token = token
        }
    }

    /// `GET /c/<id>` with `Accept: application/json`.
    public struct LinkInfo: Codable, Sendable {
        public var identifier: String
        public var title: String
        public var initiator: CollaborationFile.Initiator
        public var gitURL: String
        public var link: String
        /// Active participants, the owner included; absent before the first push.
        public var participants: Int?

        public init(identifier: String, title: String, initiator: CollaborationFile.Initiator, gitURL: String, link: String, participants: Int?) {
            self.identifier = identifier
            self.title = title
            self.initiator = initiator
            self.gitURL = gitURL
            self.link = link
            self.participants = participants
        }
    }

    /// Every error body: the stable code, what went wrong, what to do.
    public struct ErrorBody: Codable, Sendable {
        public struct Detail: Codable, Sendable {
            public var code: String
            public var reason: String
            public var hint: String?
        }

        public var error: Detail

        public init(_ error: CohortError) {
            self.error = Detail(code: error.code.rawValue, reason: error.reason, hint: error.hint)
        }

        /// The error as a `CohortError` with its code (unknown codes read as `E_NETWORK`).
        public var cohortError: CohortError {
            let code = CohortError.Code.all.first { $0.rawValue == error.code } ?? .network
            return CohortError(code, "server: \(error.reason)", hint: error.hint)
        }
    }

    /// `GET /.well-known/cohort`: how a client recognises a Cohort server.
    public struct ServerInfo: Codable, Sendable {
        public var server: String
        public var version: String
        public var identity: String

        public init(version: String, identity: String) {
            server = "cohort"
            self.version = version
            self.identity = identity
        }
    }

    public static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return try encoder.encode(value)
        } catch {
            preconditionFailure("encoding plain strings and numbers cannot fail: \(error)")
        }
    }

    /// Decodes a bounded JSON body; anything else is `E_MALFORMED` naming `what`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, what: String) throws -> T {
        guard data.count <= maxBodyBytes else {
            throw CohortError(.tooLarge, "\(what) is larger than \(maxBodyBytes >> 10) KiB")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: data)
        } catch let error as CohortError {
            throw error
        } catch {
            throw CohortError(.malformed, "\(what) is not the expected JSON", hint: "see Docs/Server.md for the API")
        }
    }

    /// Collaboration identifiers a server hosts: they become folder names and URL path segments.
    public static func checkHostable(_ identifier: String) throws {
        try CollaborationContext.validate(identifier: identifier)
        let allowed = identifier.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
        guard allowed, identifier.utf8.count <= 128, identifier.first != ".", !identifier.hasSuffix(".git") else {
            throw CohortError(.malformed, "collaboration identifier '\(identifier.prefix(40))' cannot be hosted",
                              hint: "identifiers on a server are 1 to 128 letters, digits, '-', '_' or '.', not starting with '.'")
        }
    }
}

