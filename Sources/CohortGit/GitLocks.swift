import CohortIdentity
import Foundation

/// git's own lock files (`index.lock`, `refs/heads/main.lock` …) and temporary objects, as a process
/// killed in the middle of a write leaves them. A lock that no running process holds open is stale
/// and removed; one that a live process (a `git` the person runs) holds is waited for, then named.
public enum GitLocks {
    /// Removes stale lock files in `gitDirectory`; waits up to `wait` seconds for live ones.
    public static func clearStale(in gitDirectory: URL, wait: TimeInterval = 10) throws {
        let locks = lockFiles(in: gitDirectory)
        guard !locks.isEmpty else { return }
        let deadline = Date().addingTimeInterval(wait)
        for lock in locks {
            while true {
                let holders = processes(holding: lock)
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

    /// The processes that have `url` open (Linux: `/proc/PID/fd`).
    static func processes(holding url: URL) -> [(pid: Int32, name: String)] {
        let target = url.resolvingSymlinksInPath().path
        var holders: [(Int32, String)] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry) else { continue }
            let fds = "/proc/\(entry)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(fd)")) == target {
                    let name = (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?
                        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                    holders.append((pid, name))
                    break
                }
            }
        }
        return holders
    }
}
