import CGit2
import CGit2Shim

/// libgit2's process-wide state, set up once before any repository is touched.
public enum GitRuntime {
    private static let setUp: Int32 = {
        let count = git_libgit2_init()
        // Every object a new tree or commit names must exist: a missing one is a bug, never a commit.
        let strict = cohort_git_set_strict_object_creation(1)
        precondition(count > 0 && strict == 0, "libgit2 could not be initialised")
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
