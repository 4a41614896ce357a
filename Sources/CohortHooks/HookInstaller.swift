import CohortBase
import CohortGit
import Foundation
import Synchronization

/// Installs Cohort's `pre-receive` (verification) and `post-receive` (notice delivery) hooks into a
/// repository: small shell scripts that call, by absolute path, the `cohort` binary that installs
/// them (and for `pre-receive` the `cohort-hook` beside it, when it is this version's). Idempotent;
/// a foreign hook is never overwritten silently.
public enum HookInstaller {
    static let marker = "# cohort-hook: managed by `cohort hook install`"
    /// The hooks Cohort installs.
    public static let hooks = ["pre-receive", "post-receive"]

    /// Names a sinks file that applies to every repository of a server (`cohort serve` sets it to
    /// `<data>/sinks.toml`, there or not): the installed `post-receive` runs Cohort when this or the
    /// repository's own sinks file is there, so one written while the server runs counts at the next push.
    public static let serverSinksVariable = "COHORT_SERVER_SINKS"

    /// The name a foreign hook is kept under when chained.
    public static func chainedName(_ hook: String) -> String { "\(hook).chained" }

    /// What `install` did to one hook.
    public enum Outcome: Equatable, Sendable {
        /// The hook was written for the first time.
        case installed
        /// Cohort's hook was there already; it now calls the program `install` returns beside this
        /// outcome (unchanged if it already did).
        case updated
        /// A foreign hook was kept as `<hook>.chained` and runs after Cohort's.
        case chained
    }

    /// Installs into the repository at `url` (bare or not), calling `binary`. With `chain`, existing
    /// foreign hooks are kept and run after Cohort's; without it, any one of them refuses the whole
    /// install before anything is written. With `resident` (a socket's file URL), `pre-receive`
    /// asks the resident verifier there (`cohort hook serve`) through `cohort-hook-client`, which
    /// must sit beside `binary`, and verifies the push itself when none answers. An empty repository
    /// also gets HEAD pointed at `refs/heads/main`, Cohort's default branch.
    public static func install(into url: URL, binary: URL, chain: Bool, resident: URL? = nil) throws -> [(hook: URL, outcome: Outcome, program: URL)] {
        if resident != nil {
            guard hasClient(beside: binary) else {
                throw CohortError(.notFound, "\(client(beside: binary).path) is not there", hint: "build it with `make release`, which puts it beside cohort")
            }
        }
        let repository = try Repository(at: url)
        let directory = try hooksDirectory(of: repository)
        try AtomicFile.createDirectory(directory, mode: 0o755)
        let fileManager = FileManager.default
        var plan: [(name: String, outcome: Outcome, current: Data?)] = []
        for name in hooks {
            let hook = directory.appendingPathComponent(name)
            guard fileManager.fileExists(atPath: hook.path) else {
                plan.append((name, .installed, nil))
                continue
            }
            let current = try? AtomicFile.read(hook, maxBytes: 1 << 20, what: "existing hook")
            if let current, String(decoding: current, as: UTF8.self).contains(marker) {
                plan.append((name, .updated, current))
                continue
            }
            guard chain else {
                throw CohortError(.io, "\(hook.path) already exists and is not Cohort's",
                                  hint: "pass --chain to keep it and run it after Cohort's, or move it away")
            }
            guard !fileManager.fileExists(atPath: directory.appendingPathComponent(chainedName(name)).path) else {
                throw CohortError(.io, "\(directory.appendingPathComponent(chainedName(name)).path) already exists",
                                  hint: "merge the hooks by hand, then install again")
            }
            plan.append((name, .chained, nil))
        }
        var done: [(hook: URL, outcome: Outcome, program: URL)] = []
        for (name, outcome, current) in plan {
            let hook = directory.appendingPathComponent(name)
            if outcome == .chained {
                try fileManager.moveItem(at: hook, to: directory.appendingPathComponent(chainedName(name)))
            }
            let program = program(name, binary: binary)
            let text = Data(script(name, program: program, binary: binary, resident: resident).utf8)
            // Written only when it changes: installing again over the same hook touches nothing.
            if current != text { try AtomicFile.write(text, to: hook, mode: 0o755, replacing: true) }
            done.append((hook, outcome, program))
        }
        if try repository.referenceTips().isEmpty {
            try repository.setHead(to: "refs/heads/main")
        }
        return done
    }

    /// Where git runs this repository's hooks: `core.hooksPath` when set, else `<git dir>/hooks`.
    static func hooksDirectory(of repository: Repository) throws -> URL {
        if let configured = try repository.configString("core.hooksPath"), !configured.isEmpty {
            let expanded = (configured as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded, isDirectory: true)
                : repository.gitDirectory.appendingPathComponent(expanded, isDirectory: true)
        }
        return repository.gitDirectory.appendingPathComponent("hooks", isDirectory: true)
    }

    /// What a server keeps to know whether the hooks it installed are still this version's, calling
    /// these programs as they are now: the scripts `install` can write for `binary` and `resident`
    /// (`pre-receive` with and without `cohort-hook`) and the identity (device, inode, size, time) of
    /// `binary` and of the `cohort-hook` beside it. Nothing is started: a `cohort` or `cohort-hook` replaced in place
    /// changes it, and the next start installs again, asking the new pair.
    public static func scripts(binary: URL, resident: URL? = nil) -> Data {
        let verifier = sibling(of: binary)
        let variants = hooks.map { script($0, program: binary, binary: binary, resident: resident) }
            + [script("pre-receive", program: verifier, binary: binary, resident: resident)]
        let identities = [binary, verifier].map { "# \($0.path): \(FileStamp($0).map { "\($0)" } ?? "missing")\n" }
        return Data((variants + identities).joined().utf8)
    }

    /// The name of the verification-only program `make release` builds beside `cohort`.
    public static let verifierName = "cohort-hook"

    /// `cohort-hook-client`, which `make release` builds beside `binary`.
    public static func client(beside binary: URL) -> URL {
        binary.deletingLastPathComponent().appendingPathComponent("cohort-hook-client")
    }

    /// Whether hooks calling `binary` can be installed to ask a resident verifier: its client is there.
    public static func hasClient(beside binary: URL) -> Bool {
        FileManager.default.isExecutableFile(atPath: client(beside: binary).path)
    }

    /// The program a hook runs for Cohort's part: for `pre-receive`, `cohort-hook` when it is an
    /// executable file beside `binary` that answers `--version` with this version (it links only
    /// verification, so it starts in about half the time, which every push pays); else, and for
    /// `post-receive` (whose sinks may be any program's own), `binary`.
    public static func program(_ name: String, binary: URL) -> URL {
        let verifier = sibling(of: binary)
        return name == "pre-receive" && isCompanion(verifier) ? verifier : binary
    }

    /// Where `cohort-hook` would sit beside `binary`.
    public static func sibling(of binary: URL) -> URL {
        binary.deletingLastPathComponent().appendingPathComponent(verifierName)
    }

    /// What `isCompanion` found, per path and file identity: a server asks for every repository.
    private static let companions = Mutex<[String: (stamp: FileStamp, answer: Bool)]>([:])

    /// Whether `verifier` is an executable that prints exactly this version for `--version` within
    /// five seconds: another program that happens to bear the name is never handed a push.
    static func isCompanion(_ verifier: URL) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: verifier.path), let stamp = FileStamp(verifier) else { return false }
        if let known = companions.withLock({ $0[verifier.path] }), known.stamp == stamp { return known.answer }
        let process = Process()
        process.executableURL = verifier
        process.arguments = ["--version"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        guard (try? process.run()) != nil else { return false }
        var answer = false
        if ended.wait(timeout: .now() + 5) == .success {
            let text = output.fileHandleForReading.readDataToEndOfFile().prefix(64)
            answer = process.terminationStatus == 0 && text == Data((CohortVersion.text + "\n").utf8)
        } else {
            process.terminate()
        }
        companions.withLock { $0[verifier.path] = (stamp, answer) }
        return answer
    }

    /// `program` with its arguments, quoted for the shell: `binary hook NAME`, or for `cohort-hook`
    /// the installer's version too, so that one left behind by an earlier install refuses every push
    /// instead of checking by older rules. With `resident`, `pre-receive` is that command handed to
    /// `cohort-hook-client`, which runs it when the verifier at `resident` does not answer.
    static func command(_ name: String, program: URL, binary: URL, resident: URL? = nil) -> String {
        let own = program == binary ? "\(ShellWord.quoted(binary.path)) hook \(name)"
            : "\(ShellWord.quoted(program.path)) \(name) --expect-version \(ShellWord.quoted(CohortVersion.text))"
        guard let resident, name == "pre-receive" else { return own }
        return [client(beside: binary).path, resident.path, CohortVersion.text].map(ShellWord.quoted).joined(separator: " ") + " " + own
    }

    /// The hook script: Cohort's part on git's input, then the chained hook (if any) on the same
    /// input. `pre-receive` refuses the push if either refuses; `post-receive` cannot undo a push, so
    /// its result only reaches the log. Without a chained hook the script hands git's input straight
    /// to Cohort (`exec`, no copy), and `post-receive` starts Cohort only when a sinks file exists
    /// (the files `cohort hook post-receive` reads): a push pays for what it uses, not for four extra processes.
    static func script(_ name: String, program: URL, binary: URL, resident: URL? = nil) -> String {
        let cohort = command(name, program: program, binary: binary, resident: resident)
        let verifies = name == "pre-receive"
        // Git runs push hooks in the git directory with GIT_DIR set (usually "."); config.toml is
        // the repository's sinks file, COHORT_SERVER_SINKS names the server's (there or not).
        let runsCohort = verifies ? "true"
            : "[ -e \"${GIT_DIR:-.}/\(CohortDirectory.sinksFileInGitDirectory)\" ] || [ -e \"${\(serverSinksVariable):-}\" ]"
        return """
        #!/bin/sh
        \(marker); changes here are replaced on the next install.
        # \(verifies ? "Verifies every push by Cohort's rules" : "Delivers the notices of the accepted push to the sinks in <git dir>/\(CohortDirectory.sinksFileInGitDirectory)"), then runs \(chainedName(name)) (if any) with the same input.
        case "$0" in */*) chained="${0%/*}/\(chainedName(name))" ;; *) chained="./\(chainedName(name))" ;; esac
        if [ ! -x "$chained" ]; then
          if \(runsCohort); then exec \(cohort); fi
          exit 0
        fi
        input=$(mktemp "${TMPDIR:-/tmp}/cohort-\(name).XXXXXX") || exit 1
        trap 'rm -f "$input"' EXIT
        cat > "$input" || exit 1
        if \(runsCohort); then
          \(cohort) < "$input"\(verifies ? " || exit 1" : "")
        fi
        "$chained" "$@" < "$input"\(verifies ? " || exit 1" : "")
        exit 0

        """
    }
}
