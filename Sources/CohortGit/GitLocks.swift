import CohortBase
import Foundation

/// git's own lock files (`index.lock`, `refs/heads/main.lock` …) and temporary objects, as a process
/// killed in the middle of a write leaves them. A lock is stale, and removed, when no running process
/// holds it open and no `git` process works in this repository (`git commit -a` closes its index lock
/// while the editor is open); otherwise it is waited for, then named.
public enum GitLocks {
    /// Removes stale lock files in `gitDirectory`; waits up to `wait` seconds for live ones.
    public static func clearStale(in gitDirectory: URL, wait: TimeInterval = 10) throws {
        let locks = lockFiles(in: gitDirectory)
        guard !locks.isEmpty else { return }
        let deadline = Date().addingTimeInterval(wait)
        let workTree = gitDirectory.deletingLastPathComponent()
        for lock in locks {
            while true {
                let holders = processes(holding: lock) + gitProcesses(in: [gitDirectory, workTree])
                if holders.isEmpty {
                    // Not open anywhere. A writer between closing and renaming its lock is gone within
                    // moments: only a lock left for a second is someone's leftover.
                    if let age = age(of: lock), age < 1, Date() < deadline {
                        usleep(200_000)
                        continue
                    }
                    if unlink(lock.path) != 0, errno != ENOENT {
                        throw CohortError(.io, "cannot remove the stale lock \(lock.path): \(String(cString: strerror(errno)))",
                                          hint: "remove it by hand once no git command runs here")
                    }
                    break
                }
                guard Date() < deadline else {
                    let who = holders.map { "pid \($0.pid) (\($0.name))" }.joined(separator: ", ")
                    throw CohortError(.busy, "\(lock.lastPathComponent) in \(gitDirectory.path) is held by \(who)",
                                      hint: "wait for that command to finish, then try again")
                }
                usleep(200_000)
            }
        }
    }

    /// Temporary objects and packs a killed writer left in `objects/` (no process holds them open).
    public static func removeTemporaryObjects(in gitDirectory: URL) {
        let objects = gitDirectory.appendingPathComponent("objects")
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: objects.path)) ?? [])
            .filter { $0.count == 2 || $0 == "pack" }
        for folder in folders {
            let url = objects.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            where name.hasPrefix("tmp_") || name.hasPrefix("pack_git2_") {
                let file = url.appendingPathComponent(name)
                if processes(holding: file).isEmpty, (age(of: file) ?? 0) >= 1 { unlink(file.path) }
            }
        }
        // A pack whose index never arrived (a writer killed between its two renames) is invisible to
        // git and libgit2 alike; one left for a minute is debris.
        let packs = objects.appendingPathComponent("pack")
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: packs.path)) ?? [])
        for name in names where name.hasPrefix("pack-") && name.hasSuffix(".pack")
            && !names.contains(String(name.dropLast(".pack".count)) + ".idx") {
            let file = packs.appendingPathComponent(name)
            if processes(holding: file).isEmpty, (age(of: file) ?? 0) >= 60 { unlink(file.path) }
        }
    }

    static func lockFiles(in gitDirectory: URL) -> [URL] {
        var found = ["index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock"]
            .map { gitDirectory.appendingPathComponent($0) }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        let refs = gitDirectory.appendingPathComponent("refs")
        if let walker = FileManager.default.enumerator(at: refs, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.lastPathComponent.hasSuffix(".lock") { found.append(url) }
        }
        return found
    }

    /// Seconds since `url` was last modified (nil: it is gone).
    static func age(of url: URL) -> TimeInterval? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return Date().timeIntervalSince1970 - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// The processes that have `url` open (Linux: `/proc/PID/fd`), matched by device and inode so that
    /// another spelling of the path (a bind mount) is found too.
    static func processes(holding url: URL) -> [(pid: Int32, name: String)] {
        var target = stat()
        guard stat(url.path, &target) == 0 else { return [] }
        var holders: [(Int32, String)] = []
        for pid in processIDs() {
            let fds = "/proc/\(pid)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
                var info = stat()
                if stat("\(fds)/\(fd)", &info) == 0, info.st_dev == target.st_dev, info.st_ino == target.st_ino {
                    holders.append((pid, name(of: pid)))
                    break
                }
            }
        }
        return holders
    }

    /// `git` processes (other than this one) whose working folder is in one of `folders`.
    static func gitProcesses(in folders: [URL]) -> [(pid: Int32, name: String)] {
        let roots = folders.map { $0.resolvingSymlinksInPath().path }
        return processIDs().compactMap { pid in
            guard pid != getpid(), name(of: pid).hasPrefix("git"),
                  let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd"),
                  roots.contains(where: { cwd == $0 || cwd.hasPrefix($0 + "/") })
            else { return nil }
            return (pid, name(of: pid))
        }
    }

    private static func processIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init)
    }

    private static func name(of pid: Int32) -> String {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }
}
