import CohortBase
import Foundation

/// The messages between `cohort-hook-client` (run by the installed `pre-receive`) and the resident
/// verifier: each a list of fields, every field a 4-byte big-endian length and its bytes
/// (Docs/Hooks.md, "A verifier that stays running"). The client is C: this is all it speaks.
enum HookWire {
    static let requestMagic = "cohort-hook-request 1"
    static let replyMagic = "cohort-hook-reply 1"
    /// Fields of a request, in order, with what each may hold at most: magic, version, working
    /// directory, GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, HOME and
    /// XDG_CONFIG_HOME (which say where libgit2 finds the user's git configuration, and so the
    /// push limits), git's input. A variable that is not set is sent empty.
    static let pathBytes = 4096
    static let alternatesBytes = 64 << 10
    static let requestLimits = [64, 64, pathBytes, pathBytes, pathBytes, alternatesBytes, pathBytes, pathBytes, PreReceiveHook.maxInputBytes]

    /// A reply's verdict word.
    enum Answer: String {
        case accept
        case refuse
        /// Not verified here (another version, busy, a repository this verifier does not open):
        /// the client hands the push to the hook program, which verifies it itself.
        case elsewhere
    }

    static func encode(_ fields: [Data]) -> Data {
        var out = Data()
        for field in fields {
            withUnsafeBytes(of: UInt32(field.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(field)
        }
        return out
    }

    /// Reads one request's fields from `read` (which fills its buffer completely or throws).
    static func decodeRequest(_ read: (Int) throws -> Data) throws -> [Data] {
        var fields: [Data] = []
        for limit in requestLimits {
            let header = try read(4)
            let length = header.withUnsafeBytes { Int(UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self))) }
            guard length <= limit else {
                throw CohortError(.tooLarge, "a request field of \(length) bytes (at most \(limit))", hint: "send requests as cohort-hook-client does")
            }
            fields.append(length == 0 ? Data() : try read(length))
            // Another protocol is dropped before any more of it is read.
            guard fields.count > 1 || fields[0] == Data(requestMagic.utf8) else {
                throw CohortError(.malformed, "not a cohort-hook request", hint: "send requests as cohort-hook-client does")
            }
        }
        return fields
    }
}
