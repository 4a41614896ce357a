import CGit2
import CohortBase
import Foundation

/// Where a hook's repository keeps the objects git lets it read: the git directory, and inside
/// `pre-receive` the quarantine holding the pushed objects (`GIT_OBJECT_DIRECTORY`) with the
/// repository's own objects as an alternate (`GIT_ALTERNATE_OBJECT_DIRECTORIES`). Paths are absolute.
public struct HookObjects: Sendable, Equatable {
    public var gitDirectory: String
    public var objectDirectory: String?
    public var alternates: [String]

    /// Reads git's variables as a hook sees them, relative paths taken from `workingDirectory` (git
    /// runs hooks in the git directory with `GIT_DIR=.`). Throws when git's alternates are quoted (a
    /// path holding a colon): that repository is left to a hook that reads its environment itself.
    public init(workingDirectory: String, gitDirectory: String, objectDirectory: String?, alternates: String?) throws {
        func absolute(_ path: String) -> String {
            let joined = path.hasPrefix("/") ? path : workingDirectory + "/" + path
            return URL(fileURLWithPath: joined).standardizedFileURL.path
        }
        guard workingDirectory.hasPrefix("/"), !gitDirectory.isEmpty else {
            throw CohortError(.malformed, "a hook's repository needs an absolute working directory and GIT_DIR",
                              hint: "run the hook as git runs it, inside the repository with GIT_DIR set")
        }
        let listed = (alternates ?? "").split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        guard !listed.contains(where: { $0.hasPrefix("\"") }) else {
            throw CohortError(.malformed, "GIT_ALTERNATE_OBJECT_DIRECTORIES holds a quoted path",
                              hint: "the hook reads such a repository itself; nothing to do")
        }
        self.gitDirectory = absolute(gitDirectory)
        self.objectDirectory = objectDirectory.flatMap { $0.isEmpty ? nil : absolute($0) }
        self.alternates = listed.map(absolute)
    }
}

extension Repository {
    /// Opens `objects.gitDirectory` with the other object folders as alternates: for reading, the
    /// same objects as libgit2 opening it from the hook's environment (the hook writes no object).
    static func opening(_ objects: HookObjects) throws -> Repository {
        let repository = try Repository(at: URL(fileURLWithPath: objects.gitDirectory, isDirectory: true))
        let own = URL(fileURLWithPath: String(cString: git_repository_commondir(repository.pointer)))
            .appendingPathComponent("objects").standardizedFileURL.path
        let extra = ([objects.objectDirectory].compactMap { $0 } + objects.alternates).filter { $0 != own }
        guard !extra.isEmpty else { return repository }
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, repository.pointer), "cannot open the object database")
        defer { git_odb_free(odb) }
        for folder in extra {
            try check(git_odb_add_disk_alternate(odb, folder), "cannot read the objects in \(folder)")
        }
        return repository
    }
}
