import CGit2
import CGit2Shim
import CohortBase
import Foundation
import Synchronization

/// libgit2's process-wide state, set up once before any repository is touched.
public enum GitRuntime {
    private static let setUp: Int32 = {
        // Debian's libgit2 (mbedTLS) would parse the system's certificate bundle here; it is loaded
        // before the first transfer instead (`startNetwork()`).
        cohort_git_defer_certificate_bundle(1)
        let count = git_libgit2_init()
        cohort_git_defer_certificate_bundle(0)
        // Every object a new tree or commit names must exist: a missing one is a bug, never a commit.
        let strict = cohort_git_set_strict_object_creation(1)
        // An object's id is computed from its content when it enters the database (libgit2's and
        // git's indexers hash every object they receive); hashing it again on every read only guards
        // against the disk, which `git fsck` checks, and costs an eighth of verification time.
        let rehash = cohort_git_set_strict_hash_verification(0)
        // libgit2 keeps every small object it reads, up to 256 MiB in all: a verification of 10,000
        // commits reads each once, and the cache's growth alone cost 48,000 page faults and 8% of the
        // CPU time (Docs/Benchmarks.md). Trees read again are kept by Cohort itself (`TreeMemo`).
        let cache = cohort_git_set_cache_max_size(GitRuntime.objectCacheBytes)
        // A repository of thousands of packs (never repacked) must not run the process out of file
        // descriptors: past this, libgit2 closes the pack files least recently used. (The hook's and
        // verification's workers' handles map up to 256 packs per folder for their own reader, and
        // keep no descriptor open.)
        let files = cohort_git_set_mwindow_file_limit(256)
        precondition(count > 0 && strict == 0 && rehash == 0 && cache == 0 && files == 0, "libgit2 could not be initialised")
        return count
    }()

    /// Whether the certificate authorities for HTTPS are loaded: only before the first transfer,
    /// since reading the system's bundle takes about 8 ms in every process, and most commands (the
    /// hooks among them) never touch the network. Until then libgit2 trusts no certificate at all.
    private static let certificatesLoaded = Mutex(false)

    /// The system's certificate authorities as libgit2's initialisation named them and left them
    /// unread: a file, a folder, or neither (with a libgit2 that loads its certificates another way).
    public static var deferredCertificates: (file: String?, directory: String?) {
        start()
        return (cohort_git_deferred_certificate_file().map { String(cString: $0) },
                cohort_git_deferred_certificate_directory().map { String(cString: $0) })
    }

    /// Runs `body` (one libgit2 call that writes trees from an index) without libgit2 looking up every
    /// object the index names: those came from trees read from the database or were written into it
    /// as they were staged, and with 20,000 files the lookups are most of the work. Strict object
    /// creation stays on for every other tree and commit. Only for calls on the sync's own thread,
    /// while no other thread of the process creates objects.
    static func trustingIndexEntries(_ body: () -> Int32) -> Int32 {
        start()
        _ = cohort_git_set_strict_object_creation(0)
        defer { _ = cohort_git_set_strict_object_creation(1) }
        return body()
    }

    /// Keeps up to `count` maps of pack files that no handle reads any more, for the next handles of a
    /// process that verifies push after push (`ResidentVerifier`): unmapping them after every push
    /// cost it more than reading the push's objects. Maps of files gone from the repository are let
    /// go whenever a handle is freed.
    public static func keepPackMaps(_ count: Int) {
        cohort_pack_maps_keep(Int32(clamping: count))
    }

    /// Keeps up to about `bytes` of the trees read through Cohort's pack readers for the handles that
    /// follow, by repository and id (`ResidentVerifier`): a push's parent is usually the commit the
    /// push before it brought, whose trees the next push compares with and whose new trees are deltas on.
    public static func keepTrees(bytes: Int) {
        cohort_pack_objects_keep(max(0, bytes))
    }

    /// The bytes of trees kept now, and how many reads they have answered since the process started.
    public static var keptTrees: (bytes: Int, reads: Int) {
        var bytes = 0, reads = 0
        cohort_pack_objects_kept(&bytes, &reads)
        return (bytes, reads)
    }

    /// The kind of network file system (NFS, SMB, CIFS) holding `folder`, if it is on one (Linux only).
    public static func networkFileSystem(holding folder: String) -> String? {
        var type: UInt64 = 0
        guard cohort_file_system_type(folder, &type) == 0 else { return nil }
        return [0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2"][type]
    }

    /// Keeps memory the process frees for its next allocations (the C library's allocator, where it
    /// can be told): a process that verifies push after push otherwise hands its buffers back to the
    /// system after each push and takes them again, a page fault at a time, in the next.
    public static func keepFreedMemory() {
        cohort_malloc_keep_freed()
    }

    /// The most memory libgit2's caches of objects read may hold, in the whole process.
    public static let objectCacheBytes = 8 << 20

    /// Initialises libgit2 if that has not happened yet; safe to call from any thread, any number of times.
    public static func start() {
        _ = setUp
    }

    /// `start()`, and the certificate authorities for HTTPS: before any clone, fetch or push.
    /// `GIT_SSL_CAINFO` when set (the same variable git itself reads, for a private authority), else
    /// the system's. One that cannot be read is an error naming it, and is tried again next time.
    static func startNetwork() throws {
        start()
        try certificatesLoaded.withLock { loaded in
            guard !loaded else { return }
            let (file, directory) = deferredCertificates
            if let authority = ProcessInfo.processInfo.environment["GIT_SSL_CAINFO"], !authority.isEmpty {
                let result = cohort_git_set_ssl_cert_locations(authority, nil)
                guard result == 0 else { throw unreadableAuthority(authority, detail: gitMessage(result)) }
            } else if file != nil || directory != nil {
                let result = cohort_git_set_ssl_cert_locations(file, directory)
                guard result == 0 else {
                    throw CohortError(.network, "cannot read the system's certificate authorities in \(file ?? directory ?? ""): \(gitMessage(result))",
                                      hint: "reinstall the ca-certificates package, or set GIT_SSL_CAINFO to a PEM file of the authorities to trust")
                }
            }
            loaded = true
        }
    }

    /// `GIT_SSL_CAINFO` names `path`, which cannot be read (`detail`: why, when known): for libgit2
    /// and for Cohort's own HTTP client alike.
    public static func unreadableAuthority(_ path: String, detail: String? = nil) -> CohortError {
        CohortError(.network, "cannot read the certificate authorities in \(path) (GIT_SSL_CAINFO)" + (detail.map { ": \($0)" } ?? ""),
                    hint: "point GIT_SSL_CAINFO at a readable PEM file, or unset it to use the system's")
    }

    /// The linked libgit2's version, as `major.minor.revision`.
    public static var version: String {
        start()
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        git_libgit2_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
