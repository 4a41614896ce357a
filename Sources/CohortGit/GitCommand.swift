import CGit2
import CGit2Shim
import CohortBase
import Foundation

/// Stock git, run as a child process where libgit2 cannot do the work (a push that runs the
/// receiving repository's hooks, `gc`) or does it several times slower (the scan of the files).
///
/// Started with `posix_spawn` and waited for with `waitpid`, not with Foundation's `Process`: on
/// Linux that waits for a socket the child inherits, which git's background `gc --auto` keeps open,
/// so a sync would wait for a whole repack it meant to leave running.
public enum GitCommand {
    /// The git executable: `/usr/bin/git`, else the first `git` on `PATH`; nil when there is none.
    public static let executable: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/git")
        ? "/usr/bin/git" : locate(onPath: ProcessInfo.processInfo.environment["PATH"] ?? "")

    /// The first executable `git` in the absolute entries of `path` (a `PATH` value). A relative entry
    /// (`.`, `bin`) would find a `git` inside the folder, which a collaborator can commit.
    static func locate(onPath path: String) -> String? {
        path.split(separator: ":").filter { $0.hasPrefix("/") }.map { "\($0)/git" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `environment` without what would point git at another repository, index or object store, or
    /// give it settings libgit2 would not read (so that both see the same ignore rules); git never
    /// prompts, and speaks C.
    static func environment(from environment: [String: String]) -> [String: String] {
        var cleaned = environment.filter { name, _ in
            !name.hasPrefix("GIT_CONFIG") && ![
                "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR",
                "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
            ].contains(name)
        }
        cleaned["GIT_TERMINAL_PROMPT"] = "0"
        cleaned["LC_ALL"] = "C"
        return cleaned
    }

    /// What a finished git said.
    struct Output {
        let status: Int32
        let output: Data
        let errors: Data
    }

    /// Runs `git ARGUMENTS` in `directory`, with `environment(from:)` of this process's, and waits
    /// for it (not for what it leaves running in the background). With `collect: false` its output
    /// goes to /dev/null.
    static func run(_ arguments: [String], in directory: URL, git: String, collect: Bool = true,
                    errorOutput: (@Sendable (Data) -> Void)? = nil) throws -> Output {
        let environment = environment(from: ProcessInfo.processInfo.environment)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        defer { (output + errors).filter { $0 >= 0 }.forEach { close($0) } }
        if collect {
            guard cohort_pipe_cloexec(&output) == 0, cohort_pipe_cloexec(&errors) == 0 else {
                throw CohortError(.io, "cannot run git: \(String(cString: strerror(errno)))")
            }
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let prepared = cohort_spawn_chdir_and_close(&actions, directory.path)
        guard prepared == 0 else { throw CohortError(.io, "cannot run git: \(String(cString: strerror(prepared)))") }
        // Signals as a fresh process has them (the parent may ignore SIGPIPE or block some).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([git] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, git, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw CohortError(.git, "cannot run \(git): \(String(cString: strerror(spawned)))", hint: "install git")
        }
        var standardOutput = Data()
        var standardError = Data()
        if collect {
            close(output[1]); output[1] = -1
            close(errors[1]); errors[1] = -1
            // Standard error is read on another thread, so that neither pipe can fill up and block git.
            let errorPipe = errors[0]
            let collected = ErrorText()
            let reader = Thread { collected.set(readToEnd(errorPipe, each: errorOutput)) }
            reader.start()
            standardOutput = readToEnd(output[0])
            standardError = collected.wait()
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CohortError(.git, "cannot wait for git: \(String(cString: strerror(errno)))") }
        }
        // Exited: its code; killed by a signal: 128 + the signal, as a shell says.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Output(status: code, output: standardOutput, errors: standardError)
    }

    /// Everything `fd` gives until its end; `each` sees every chunk as it arrives.
    private static func readToEnd(_ fd: Int32, each: (@Sendable (Data) -> Void)? = nil) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return data }
            each?(Data(buffer[0..<n]))
            data.append(buffer, count: n)
        }
    }
}

private final class ErrorText: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}
