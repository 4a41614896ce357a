import CohortBase
import CohortGit
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

    public var paths: [Path] = [] {
        didSet { index = Self.index(paths) }
    }

    /// Listed paths by name, and every folder above one: lookups in time of the path's depth.
    private var index: (byPath: [String: Path], folders: Set<String>) = ([:], [])

    public init(paths: [Path] = []) {
        self.paths = paths
        index = Self.index(paths)
    }

    private enum CodingKeys: String, CodingKey { case paths }

    public init(from decoder: any Decoder) throws {
        self.init(paths: try decoder.container(keyedBy: CodingKeys.self).decode([Path].self, forKey: .paths))
    }

    public static func == (a: UnwrittenPaths, b: UnwrittenPaths) -> Bool { a.paths == b.paths }

    private static func index(_ paths: [Path]) -> (byPath: [String: Path], folders: Set<String>) {
        var byPath: [String: Path] = [:]
        var folders = Set<String>()
        for path in paths {
            byPath[path.path] = path
            var folder = Substring(path.path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                folders.insert(String(folder))
            }
        }
        return (byPath, folders)
    }

    public var isEmpty: Bool { paths.isEmpty }

    public subscript(path: String) -> Path? {
        index.byPath[path]
    }

    /// Whether a change at `path` touches a listed path: the same path, a folder above it, or a path
    /// beneath it.
    public func clashes(with path: String) -> Bool {
        if index.byPath[path] != nil || index.folders.contains(path) { return true }
        var folder = Substring(path)
        while let slash = folder.lastIndex(of: "/") {
            folder = folder[..<slash]
            if index.byPath[String(folder)] != nil { return true }
        }
        return false
    }

    /// `<git dir>/cohort/sync/unwritten.json`; absent when nothing waits.
    public static func url(in gitDirectory: URL) -> URL {
        CohortDirectory(gitDirectory: gitDirectory).unwrittenPaths
    }

    /// The list; none when the file does not exist. A list that exists but cannot be read is an error
    /// (`E_IO`): without it, what was not written would read as the person's deletions.
    public static func load(from gitDirectory: URL) throws -> UnwrittenPaths {
        let url = url(in: gitDirectory)
        guard FileManager.default.fileExists(atPath: url.path) else { return UnwrittenPaths() }
        let data = try AtomicFile.read(url, maxBytes: 1 << 30, what: "list of unwritten paths")
        do {
            return try JSONDecoder().decode(UnwrittenPaths.self, from: data)
        } catch {
            throw CohortError(.io, "\(url.path) is damaged: \(error)",
                              hint: "nothing is committed while it cannot be read (the paths it lists would read as your deletions); check the disk and the file")
        }
    }

    public func save(to gitDirectory: URL) throws {
        let url = Self.url(in: gitDirectory)
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
