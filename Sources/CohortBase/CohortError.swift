/// An error with a stable code that the CLI, the server and the hook all report the same way.
///
/// Two errors are equal when their codes are: the reason and hint are for people, the code is for
/// programs and tests.
public struct CohortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, documented error code (`E_…`). New codes are added as static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as printed, e.g. `E_BAD_SIGNATURE`.
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// Input that is not well-formed: bad JSON, bad base64 or hex, wrong types, too large, empty.
        public static let malformed = Code("E_MALFORMED")
        /// A public key that is not an uncompressed P-256 point on the curve.
        public static let badKey = Code("E_BAD_KEY")
        /// A signature that is malformed or does not verify.
        public static let badSignature = Code("E_BAD_SIGNATURE")
        /// A proof of inclusion of the wrong shape: hash sizes, depth, index range.
        public static let badProof = Code("E_BAD_PROOF")
        /// A root that is not a participant of the collaboration under that scheme.
        public static let unknownRoot = Code("E_UNKNOWN_ROOT")
        /// A root that was a participant and has been removed.
        public static let revoked = Code("E_REVOKED")
        /// A challenge the server did not issue (bad tag, bad layout, another server).
        public static let challengeForged = Code("E_CHALLENGE_FORGED")
        /// A challenge past its lifetime.
        public static let challengeExpired = Code("E_CHALLENGE_EXPIRED")
        /// A challenge issued for another collaboration or operation.
        public static let challengeScope = Code("E_CHALLENGE_SCOPE")
        /// A challenge that was already spent.
        public static let challengeReplayed = Code("E_CHALLENGE_REPLAYED")
        /// A participant acting beyond their permission or the collaboration's options.
        public static let notPermitted = Code("E_NOT_PERMITTED")
        /// This device already holds an identity.
        public static let identityExists = Code("E_IDENTITY_EXISTS")
        /// This device holds no identity (or no card) yet.
        public static let noIdentity = Code("E_NO_IDENTITY")
        /// A card that still lacks the signature of one of its devices.
        public static let cardIncomplete = Code("E_CARD_INCOMPLETE")
        /// A file could not be read or written.
        public static let io = Code("E_IO")
        /// A git operation failed (the repository is missing, damaged, or refused the change).
        public static let git = Code("E_GIT")
        /// A server request without a valid access token (missing, expired, forged, or for another
        /// collaboration).
        public static let unauthorized = Code("E_UNAUTHORIZED")
        /// The server does not host that collaboration (or that page).
        public static let notFound = Code("E_NOT_FOUND")
        /// A request body or push larger than the server accepts.
        public static let tooLarge = Code("E_TOO_LARGE")
        /// The server is at a limit (requests per client, concurrent transfers); try again later.
        public static let busy = Code("E_BUSY")
        /// A service the server depends on (its PostgreSQL state store) is down or restarting; nothing
        /// was changed, try again after the `Retry-After` seconds (HTTP 503).
        public static let unavailable = Code("E_UNAVAILABLE")
        /// The server could not be reached, or answered with something that is not Cohort's protocol.
        public static let network = Code("E_NETWORK")
        /// A command line Cohort cannot parse: an unknown option, a missing or out-of-range value (exit 64).
        public static let usage = Code("E_USAGE")

        /// Every code, in documentation order.
        public static let all: [Code] = [
            .malformed, .badKey, .badSignature, .badProof, .unknownRoot, .revoked,
            .challengeForged, .challengeExpired, .challengeScope, .challengeReplayed, .notPermitted,
            .identityExists, .noIdentity, .cardIncomplete, .io, .git,
            .unauthorized, .notFound, .tooLarge, .busy, .unavailable, .network, .usage,
        ]
    }

    /// The stable code.
    public let code: Code
    /// What went wrong.
    public let reason: String
    /// What to do about it, when there is something to do.
    public let hint: String?
    /// Where the error was raised, for bug reports.
    public let file: String
    public let line: UInt

    public init(_ code: Code, _ reason: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.hint = hint
        self.file = file
        self.line = line
    }

    public static func == (lhs: CohortError, rhs: CohortError) -> Bool {
        lhs.code == rhs.code
    }

    /// `CODE: reason (hint)`, on one line.
    public var description: String {
        let text = hint.map { "\(reason) (\($0))" } ?? reason
        return "\(code): \(text.replacingNewlines())"
    }
}

/// An error that reads as one `CohortError`, as every summary and the command line print it: a
/// `CohortError` itself, or a richer one such as a violation of the rules, which names its commit.
package protocol CohortErrorConvertible: Error {
    var cohortError: CohortError { get }
}

extension CohortError: CohortErrorConvertible {
    package var cohortError: CohortError { self }

    /// `error` as Cohort reports it: its own reading when it has one, else `code` with its description.
    package init(_ error: any Error, otherwise code: Code) {
        self = (error as? CohortErrorConvertible)?.cohortError ?? CohortError(code, "\(error)")
    }
}

extension String {
    /// The string with every line break turned into a space, so an error stays on one line.
    func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
