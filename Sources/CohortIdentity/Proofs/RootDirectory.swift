import CohortBase
import Foundation

/// Whether a root may act in a collaboration.
public enum RootStatus: Sendable, Hashable {
    case active
    case revoked
}

/// Where a verifier looks roots up: a membership file, a roots file, a server's state.
public protocol RootDirectory: Sendable {
    /// The root's status, or nil when it was never a participant.
    func status(of root: RootHash) -> RootStatus?
}

/// A set of roots held in memory, each active or revoked.
public struct KnownRoots: RootDirectory, Sendable {
    /// Largest roots file accepted, in bytes.
    public static let maxFileBytes = 64 << 20
    /// Most roots in one file.
    public static let maxRoots = 1_000_000

    private var entries: [RootHash: RootStatus] = [:]

    public init() {}

    public init(active roots: some Sequence<RootHash>) {
        for root in roots { entries[root] = .active }
    }

    /// Records `root` with `status`, replacing what was known about it.
    public mutating func insert(_ root: RootHash, status: RootStatus = .active) {
        entries[root] = status
    }

    public var count: Int { entries.count }

    public func status(of root: RootHash) -> RootStatus? {
        entries[root]
    }

    /// Parses a roots file: one `SCHEME HEX` per line, optionally followed by `revoked`; blank lines and
    /// lines starting with `#` are skipped. Errors name the line.
    public init(rootsFile data: Data) throws {
        guard data.count <= Self.maxFileBytes else {
            throw CohortError(.malformed, "roots file is larger than \(Self.maxFileBytes >> 20) MiB")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CohortError(.malformed, "roots file is not UTF-8 text")
        }
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 2 || (fields.count == 3 && fields[2] == "revoked") else {
                throw CohortError(.malformed, "roots file line \(lineNumber): expected 'SCHEME HEX' or 'SCHEME HEX revoked'")
            }
            let root: RootHash
            do {
                root = try RootHash(scheme: RootScheme(name: String(fields[0])), hex: String(fields[1]))
            } catch let error as CohortError {
                throw CohortError(error.code, "roots file line \(lineNumber): \(error.reason)", hint: error.hint)
            }
            // A root listed as revoked anywhere stays revoked, whatever the order of the lines.
            if fields.count == 3 || entries[root] == .revoked {
                insert(root, status: .revoked)
            } else {
                insert(root, status: .active)
            }
            guard count <= Self.maxRoots else {
                throw CohortError(.malformed, "roots file lists more than \(Self.maxRoots) roots")
            }
        }
    }
}
