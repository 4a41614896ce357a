import CGit2
import CGit2Shim
import CohortBase
import Foundation

/// A git repository opened through libgit2. Not thread-safe (libgit2 objects are not): use one
/// instance from one task at a time.
public final class Repository {
    /// How a repository was opened, so that another thread can open its own handle the same way.
    public enum Origin: Sendable {
        case path(URL)
        case environment
        /// The repository and object folders git gave a hook, told by the hook to a process git did
        /// not start (the resident verifier, which has none of the hook's environment).
        case hook(HookObjects)
    }

    let pointer: OpaquePointer
    /// How this handle was opened.
    public let origin: Origin

    init(_ pointer: OpaquePointer, origin: Origin) {
        self.pointer = pointer
        self.origin = origin
    }

    /// New objects kept in memory while `batchingObjects` runs, written as one pack before anything names them.
    var batch: ObjectBatch?
    /// Whether `stageAll(writeIndex: false)` staged something the index file does not hold yet.
    var indexUnwritten = false

    deinit {
        git_repository_free(pointer)
    }

    /// Opens the repository at `url` (a working directory or a bare repository), not searching upwards.
    public convenience init(at url: URL) throws {
        GitRuntime.start()
        var repository: OpaquePointer?
        try check(git_repository_open_ext(&repository, url.path, UInt32(GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue), nil),
                  "cannot open a git repository at \(url.path)")
        guard let repository else { throw CohortError(.git, "cannot open \(url.path): libgit2 returned nothing") }
        self.init(repository, origin: .path(url))
    }

    /// Opens the repository containing `url`, searching upwards like git does.
    public convenience init(discoveringFrom url: URL) throws {
        GitRuntime.start()
        var repository: OpaquePointer?
        try check(git_repository_open_ext(&repository, url.path, 0, nil),
                  "\(url.path) is not inside a git repository")
        guard let repository else { throw CohortError(.git, "cannot open \(url.path): libgit2 returned nothing") }
        self.init(repository, origin: .path(URL(fileURLWithPath: String(cString: git_repository_path(repository)), isDirectory: true)))
    }

    /// Opens the repository git's environment describes (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`,
    /// `GIT_ALTERNATE_OBJECT_DIRECTORIES`, …), as a hook must: inside `pre-receive` the pushed objects
    /// are only visible through the quarantine directory git names there.
    public static func openFromEnvironment() throws -> Repository {
        GitRuntime.start()
        var repository: OpaquePointer?
        try check(git_repository_open_ext(&repository, nil, UInt32(GIT_REPOSITORY_OPEN_FROM_ENV.rawValue), nil),
                  "cannot open the repository from git's environment")
        guard let repository else { throw CohortError(.git, "cannot open the repository from git's environment: libgit2 returned nothing") }
        return Repository(repository, origin: .environment)
    }

    /// Opens another handle the way `origin` says; with `ownPacks`, the handle reads the packs of its
    /// object folders through a reader of its own (`cohort_pack_reader_new`): libgit2 reads packs
    /// through one state per pack path for the whole process, and two threads reading objects through
    /// it took longer than one (Docs/Benchmarks.md). Objects found nowhere else (loose, in other
    /// alternates), and pack entries that reader leaves to libgit2, are read as before. With
    /// `keepingTrees` too, those readers read trees kept by earlier such handles of the same repository
    /// and keep the trees they read (`GitRuntime.keepTrees`, which bounds them; a resident verifier's
    /// handles, whose next push's parent is usually the last push's commit).
    public static func reopen(_ origin: Origin, ownPacks: Bool = false, keepingTrees: Bool = false) throws -> Repository {
        let repository = switch origin {
        case .path(let url): try Repository(at: url)
        case .environment: try Repository.openFromEnvironment()
        case .hook(let objects): try Repository.opening(objects)
        }
        if ownPacks {
            // The environment only names a quarantine for a handle opened from it (building the
            // dictionary cost a resident verifier's push about a third of opening its repository).
            let environment: [String: String] = if case .environment = origin { ProcessInfo.processInfo.environment } else { [:] }
            let folders = ownPackFolders(origin: origin, commonDirectory: String(cString: git_repository_commondir(repository.pointer)),
                                         environment: environment)
            // In the order libgit2 reads them, the quarantine's before the repository's, both above
            // libgit2's own backends (priorities 1 and 2). A folder whose reader cannot be made is read
            // by libgit2 as before: the reader only ever speeds a read up.
            for (index, folder) in folders.enumerated() {
                _ = cohort_git_add_own_packs(repository.pointer, folder, Int32(3 + folders.count - index), keepingTrees ? 1 : 0)
            }
        }
        return repository
    }

    /// The repository's own object folder (`<common dir>/objects`), whatever alternates it reads.
    public var objectsDirectory: String {
        Self.objectsDirectory(in: String(cString: git_repository_commondir(pointer)))
    }

    static func objectsDirectory(in commonDirectory: String) -> String {
        (commonDirectory.hasSuffix("/") ? commonDirectory : commonDirectory + "/") + "objects"
    }

    /// The object folders whose packs a handle reads through a reader of its own: a hook's quarantine
    /// (`GIT_OBJECT_DIRECTORY`, when opened from git's environment) and the repository's own objects.
    /// Other alternates keep their place after them.
    static func ownPackFolders(origin: Origin, commonDirectory: String, environment: [String: String]) -> [String] {
        let own = objectsDirectory(in: commonDirectory)
        let quarantine: String? = switch origin {
        case .path: nil
        case .environment: environment["GIT_OBJECT_DIRECTORY"]
        case .hook(let objects): objects.objectDirectory
        }
        guard let quarantine, !quarantine.isEmpty, quarantine != own else { return [own] }
        return [quarantine, own]
    }

    /// Creates a repository at `url` (bare or with a working directory) whose first branch is `branch`.
    /// Refuses to re-initialise an existing repository.
    public static func create(at url: URL, bare: Bool, initialBranch branch: String = "main") throws -> Repository {
        GitRuntime.start()
        var options = git_repository_init_options()
        try check(git_repository_init_options_init(&options, UInt32(GIT_REPOSITORY_INIT_OPTIONS_VERSION)), "init options")
        options.flags = UInt32(GIT_REPOSITORY_INIT_MKPATH.rawValue | GIT_REPOSITORY_INIT_NO_REINIT.rawValue)
        if bare { options.flags |= UInt32(GIT_REPOSITORY_INIT_BARE.rawValue) }
        var repository: OpaquePointer?
        let result = branch.withCString { head in
            options.initial_head = head
            return git_repository_init_ext(&repository, url.path, &options)
        }
        try check(result, "cannot create a git repository at \(url.path)")
        guard let repository else { throw CohortError(.git, "cannot create \(url.path): libgit2 returned nothing") }
        return Repository(repository, origin: .path(url))
    }

    /// The working directory, or nil for a bare repository.
    public var workingDirectory: URL? {
        git_repository_workdir(pointer).map { URL(fileURLWithPath: String(cString: $0), isDirectory: true) }
    }

    /// The `.git` directory (or the bare repository itself).
    public var gitDirectory: URL {
        URL(fileURLWithPath: String(cString: git_repository_path(pointer)), isDirectory: true)
    }

    public var isBare: Bool { git_repository_is_bare(pointer) == 1 }

    /// Where Cohort keeps its own state in this repository's git directory.
    package var cohortDirectory: CohortDirectory { CohortDirectory(gitDirectory: gitDirectory) }
}
