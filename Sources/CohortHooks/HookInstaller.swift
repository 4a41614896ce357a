import CohortGit
import CohortIdentity
import Foundation

/// Installs Cohort's `pre-receive` hook into a repository: a small shell script that calls the
/// `cohort` binary by absolute path. Idempotent; a foreign hook is never overwritten silently.
public enum HookInstaller {
    static let marker = "# cohort-hook: managed by `cohort hook install`"
    public static let chainedName = "pre-receive.chained"

    /// What `install` did.
    public enum Outcome: Equatable, Sendable {
        /// The hook was written for the first time.
        case installed
        /// Cohort's hook was there already; it now calls `binary` (unchanged if it already did).
        case updated
        /// A foreign hook was kept as `pre-receive.chained` and runs after Cohort's checks.
        case chained
    }

    /// Installs into the repository at `url` (bare or not), calling `binary`. With `chain`, an existing
    /// foreign `pre-receive` is kept and run after Cohort's checks; without it, one is refused.
    /// An empty repository also gets HEAD pointed at `refs/heads/main`, Cohort's default branch.
    public static func install(into url: URL, binary: URL, chain: Bool) throws -> (Outcome, URL) {
        let repository = try Repository(at: url)
        let hooks = try hooksDirectory(of: repository)
        try AtomicFile.createDirectory(hooks, mode: 0o755)
        let hook = hooks.appendingPathComponent("pre-receive")
        let chained = hooks.appendingPathComponent(chainedName)
        let fileManager = FileManager.default
        var outcome = Outcome.installed
        if fileManager.fileExists(atPath: hook.path) {
            let current = (try? String(decoding: AtomicFile.read(hook, maxBytes: 1 << 20, what: "existing hook"), as: UTF8.self)) ?? ""
            if current.contains(marker) {
                outcome = .updated
            } else {
                guard chain else {
                    throw CohortError(.io, "\(hook.path) already exists and is not Cohort's",
                                      hint: "pass --chain to keep it and run it after Cohort's checks, or move it away")
                }
                guard !fileManager.fileExists(atPath: chained.path) else {
                    throw CohortError(.io, "\(chained.path) already exists", hint: "merge the two hooks by hand, then install again")
                }
                try fileManager.moveItem(at: hook, to: chained)
                outcome = .chained
            }
        }
        try AtomicFile.write(Data(script(binary: binary).utf8), to: hook, mode: 0o755, replacing: true)
        if try repository.referenceTips().isEmpty {
            try repository.setHead(to: "refs/heads/main")
        }
        return (outcome, hook)
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

    /// The hook: Cohort's checks on git's input, then the chained hook (if any) on the same input.
    static func script(binary: URL) -> String {
        let quoted = "'" + binary.path.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return """
        #!/bin/sh
        \(marker); changes here are replaced on the next install.
        # Verifies every push by Cohort's rules, then runs \(chainedName) (if any) with the same input.
        input=$(mktemp "${TMPDIR:-/tmp}/cohort-pre-receive.XXXXXX") || exit 1
        trap 'rm -f "$input"' EXIT
        cat > "$input"
        \(quoted) hook pre-receive < "$input" || exit 1
        chained="$(dirname "$0")/\(chainedName)"
        if [ -x "$chained" ]; then
          "$chained" "$@" < "$input" || exit 1
        fi
        exit 0

        """
    }
}
