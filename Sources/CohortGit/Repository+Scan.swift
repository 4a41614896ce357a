import CGit2
import CohortBase
import Foundation

/// A file in the working directory that differs from the index: by its path's bytes, as found.
struct WorkdirChange {
    enum Kind { case untracked, modified, deleted }
    let kind: Kind
    let path: [UInt8]
}

extension Repository {
    /// The working directory against the index, by `git status` (which writes the stat data it
    /// refreshed into the index, when no one else holds its lock, so that the next scan need not hash
    /// those files again), whether git found nothing at all (the index is then HEAD's tree and the
    /// files match it) and the HEAD it read. git is pointed at this repository explicitly, without a file-system monitor or
    /// an untracked cache, and must name the HEAD Cohort reads. Fails when git does or disagrees; the
    /// caller then falls back to libgit2.
    func scanWithGit(_ git: String) throws -> (changes: [WorkdirChange], clean: Bool, head: ObjectID?) {
        guard let directory = workingDirectory else { throw CohortError(.git, "a bare repository has no files") }
        let run = try GitCommand.run(["--git-dir=\(gitDirectory.path)", "--work-tree=\(directory.path)", "-c", "core.fsmonitor=false",
                                      "-c", "core.untrackedCache=false", "status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind",
                                      "--untracked-files=all", "--no-renames"], in: directory, git: git)
        guard run.status == 0 else {
            throw CohortError(.git, "git status failed: \(String(decoding: run.errors.prefix(4096), as: UTF8.self))")
        }
        let status = try Self.parseStatus(run.output)
        let head = try resolve("HEAD")
        guard status.head == (head?.hex ?? "(initial)") else {
            throw CohortError(.git, "git status read another HEAD (\(status.head ?? "none"))")
        }
        return (status.changes, status.records == 0, head)
    }

    /// Reads `git status --porcelain=v2 -z --branch`: `# branch.oid SHA` (HEAD), `1 XY sub mH mI mW hH hI
    /// PATH`, `2 … Xscore PATH` followed by the old path, `u …` (a conflict: left as it is), `? PATH`.
    /// Y, the files against the index, is what counts: M or T (or A, meant to be added) changed, D
    /// deleted. Returns those, the HEAD git read and how many records (headers aside) it printed.
    static func parseStatus(_ output: Data) throws -> (changes: [WorkdirChange], head: String?, records: Int) {
        var changes: [WorkdirChange] = []
        var head: String?
        var count = 0
        var records = output.split(separator: 0, omittingEmptySubsequences: true)[...]
        while let record = records.popFirst() {
            let bytes = Array(record)
            guard let tag = bytes.first else { continue }
            if tag == UInt8(ascii: "#") {
                let header = String(decoding: bytes, as: UTF8.self)
                if header.hasPrefix("# branch.oid ") { head = String(header.dropFirst("# branch.oid ".count)) }
                continue
            }
            count += 1
            switch tag {
            case UInt8(ascii: "?"):
                guard bytes.count > 2 else { throw CohortError(.git, "git status printed an empty path") }
                changes.append(WorkdirChange(kind: .untracked, path: Array(bytes[2...])))
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                // The path follows the 8th (ordinary) or 9th (rename) space.
                let fields = tag == UInt8(ascii: "1") ? 8 : 9
                var spaces = 0
                guard let start = bytes.firstIndex(where: { byte in
                    if byte == UInt8(ascii: " ") { spaces += 1 }
                    return spaces == fields
                }), bytes.count > start + 1, bytes.count > 3 else {
                    throw CohortError(.git, "git status printed a line Cohort cannot read")
                }
                if tag == UInt8(ascii: "2") { _ = records.popFirst() }
                let path = Array(bytes[(start + 1)...])
                switch bytes[3] {
                case UInt8(ascii: "M"), UInt8(ascii: "T"), UInt8(ascii: "A"): changes.append(WorkdirChange(kind: .modified, path: path))
                case UInt8(ascii: "D"): changes.append(WorkdirChange(kind: .deleted, path: path))
                default: continue
                }
            case UInt8(ascii: "u"), UInt8(ascii: "!"):
                continue
            default:
                throw CohortError(.git, "git status printed a line Cohort cannot read")
            }
        }
        return (changes, head, count)
    }

    /// The working directory against `index` by libgit2's diff, which also records the stat data of
    /// unchanged files in the index.
    func scanWithLibgit2(_ index: OpaquePointer?) throws -> [WorkdirChange] {
        var options = git_diff_options()
        try check(git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)), "diff options")
        options.flags = GIT_DIFF_UPDATE_INDEX.rawValue | GIT_DIFF_INCLUDE_UNTRACKED.rawValue | GIT_DIFF_RECURSE_UNTRACKED_DIRS.rawValue
            | GIT_DIFF_INCLUDE_TYPECHANGE.rawValue
        var diff: OpaquePointer?
        try check(git_diff_index_to_workdir(&diff, pointer, index, &options), "cannot compare the index with the files")
        defer { git_diff_free(diff) }
        var changes: [WorkdirChange] = []
        for position in 0..<git_diff_num_deltas(diff) {
            guard let delta = git_diff_get_delta(diff, position)?.pointee else { continue }
            let kind: WorkdirChange.Kind
            switch delta.status {
            case GIT_DELTA_UNTRACKED: kind = .untracked
            case GIT_DELTA_MODIFIED, GIT_DELTA_TYPECHANGE: kind = .modified
            case GIT_DELTA_DELETED: kind = .deleted
            default: continue
            }
            guard let raw = kind == .deleted ? delta.old_file.path : delta.new_file.path else { continue }
            changes.append(WorkdirChange(kind: kind, path: Array(UnsafeBufferPointer(start: raw, count: strlen(raw))).map { UInt8(bitPattern: $0) }))
        }
        return changes
    }
}
