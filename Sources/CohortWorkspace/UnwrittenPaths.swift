import CohortGit
import CohortIdentity
import Foundation

/// Paths of the collaboration that a sync could not write to this folder (something of the person's
/// in the way, no permission, a full disk, a name git refuses), in `<git dir>/cohort/sync/unwritten.json`.
///
/// While a path is listed, what is on disk there is not the person's edit: commits keep the
/// collaboration's version of it, and leave out local changes at, above or beneath it (they stay in
/// the folder, uncommitted). Every sync tries to write the listed paths again.
public struct UnwrittenPaths: Codable, Sendable, Equatable {
    public struct Path: Codable, Sendable, Equatable {
        public var path: String
        /// The blob the folder held there before (nil: nothing): what an unchanged folder still holds.
        public var from: String?
        public var reason: String
        /// A name this folder can never hold (`.GIT/config`): reported once, never tried again.
        public var refused: Bool?

        public init(path: String, from: ObjectID?, reason: String, refused: Bool = false) {
            self.path = path
            self.from = from?.hex
            self.reason = reason
            self.refused = refused ? true : nil
        }

        public var fromID: ObjectID? { from.flatMap { try? ObjectID(hex: $0) } }
    }

    public var paths: [Path] = []

    public init(paths: [Path] = []) {
        self.paths = paths
    }

    public var isEmpty: Bool { paths.isEmpty }

    public subscript(path: String) -> Path? {
        paths.first { $0.path == path }
    }

    /// Whether a change at `path` touches a listed path: the same path, a folder above it, or a path
    /// beneath it.
    public func clashes(with path: String) -> Bool {
        paths.contains { $0.path == path || path.hasPrefix($0.path + "/") || $0.path.hasPrefix(path + "/") }
    }

    static let relativePath = "cohort/sync/unwritten.json"

    public static func load(from gitDirectory: URL) -> UnwrittenPaths {
        let url = gitDirectory.appendingPathComponent(relativePath)
        guard let data = try? AtomicFile.read(url, maxBytes: 16 << 20, what: "list of unwritten paths"),
              let list = try? JSONDecoder().decode(UnwrittenPaths.self, from: data)
        else { return UnwrittenPaths() }
        return list
    }

    public func save(to gitDirectory: URL) throws {
        let url = gitDirectory.appendingPathComponent(Self.relativePath)
        if paths.isEmpty {
            if unlink(url.path) != 0, errno != ENOENT {
                throw CohortError(.io, "cannot remove \(url.path): \(String(cString: strerror(errno)))")
            }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o700)
        try AtomicFile.write(try encoder.encode(self), to: url, mode: 0o600, replacing: true)
    }
}
