import CGit2
import CohortBase
import Foundation

/// Where a hook's repository keeps the objects git lets it read: the git directory, and inside
/// `pre-receive` the quarantine holding the pushed objects (`GIT_OBJECT_DIRECTORY`) with the
/// repository's own objects as an alternate (`GIT_ALTERNATE_OBJECT_DIRECTORIES`). Paths are absolute,
/// and otherwise exactly as git gave them (a `..` after a symbolic link is the kernel's to resolve).
public struct HookObjects: Sendable, Equatable {
    public var gitDirectory: String
    public var objectDirectory: String?
    public var alternates: [String]

    /// Reads git's variables as a hook sees them, relative paths taken from `workingDirectory` (git
    /// runs hooks in the git directory with `GIT_DIR=.`). Throws when git's alternates are quoted (a
    /// path holding a colon): that repository is left to a hook that reads its environment itself.
    public init(workingDirectory: String, gitDirectory: String, objectDirectory: String?, alternates: String?) throws {
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : workingDirectory + "/" + path
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
    /// Opens `objects.gitDirectory` (that folder itself, never a `.git` inside it) with the other
    /// object folders as alternates: for reading, the objects libgit2 reads when it opens the
    /// repository from the hook's environment (the hook writes no object). Throws, so that the hook
    /// decides, when the folders are not what git gives a hook: a quarantine without the repository's
    /// own objects among the alternates, or a git directory libgit2 finds elsewhere.
    static func opening(_ objects: HookObjects) throws -> Repository {
        GitRuntime.start()
        var pointer: OpaquePointer?
        try check(git_repository_open_ext(&pointer, objects.gitDirectory,
                                          UInt32(GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue | GIT_REPOSITORY_OPEN_NO_DOTGIT.rawValue), nil),
                  "cannot open a git repository at \(objects.gitDirectory)")
        guard let pointer else { throw CohortError(.git, "cannot open \(objects.gitDirectory): libgit2 returned nothing") }
        let repository = Repository(pointer, origin: .hook(objects))
        guard stamp(String(cString: git_repository_path(pointer)))?.isSameFile(as: stamp(objects.gitDirectory)) == true else {
            throw CohortError(.git, "libgit2 opened another folder than \(objects.gitDirectory)", hint: "the hook reads this repository itself")
        }
        let own = stamp(repository.objectsDirectory)
        let named = [objects.objectDirectory].compactMap { $0 } + objects.alternates
        func isOwn(_ folder: String) -> Bool { own?.isSameFile(as: stamp(folder)) == true }
        if objects.objectDirectory != nil, !named.contains(where: isOwn) {
            throw CohortError(.git, "the quarantine's alternates leave out the repository's own objects", hint: "the hook reads this repository itself")
        }
        let extra = named.filter { !isOwn($0) }
        guard !extra.isEmpty else { return repository }
        var odb: OpaquePointer?
        try check(git_repository_odb(&odb, pointer), "cannot open the object database")
        defer { git_odb_free(odb) }
        for folder in extra {
            try check(git_odb_add_disk_alternate(odb, folder), "cannot read the objects in \(folder)")
        }
        return repository
    }

    private static func stamp(_ path: String) -> FileStamp? {
        FileStamp(URL(fileURLWithPath: path))
    }
}
