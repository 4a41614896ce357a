import CGit2
import CGit2Shim

/// libgit2's process-wide state, set up once before any repository is touched.
public enum GitRuntime {
    private static let setUp: Int32 = {
        let count = git_libgit2_init()
        // Cohort opens repositories its own user created (workspaces, bare repositories under a data
        // directory); git's ownership check still applies to the git CLI that serves them.
        _ = cohort_git_set_strict_object_creation(1)
        return count
    }()

    /// Initialises libgit2 if that has not happened yet; safe to call from any thread, any number of times.
    public static func start() {
        _ = setUp
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
