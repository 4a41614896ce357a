import CohortBase
import Foundation

/// One sync at a time per workspace: an exclusive `flock(2)` on `<git dir>/cohort/sync.lock`. The
/// kernel lets go of it when its process ends, however it ends, so a crashed or killed sync never
/// leaves a lock behind; the file (which stays) names the holder for the message a waiting sync gives.
public final class SyncLock {
    struct Holder: Codable {
        var pid: Int32
        var host: String
        var since: Date
    }

    private let lock: FileLock
    /// The last holder ended without letting go (a crash, a kill): its leftovers want cleaning up.
    public let previousHolderCrashed: Bool

    private init(lock: FileLock, previousHolderCrashed: Bool) {
        self.lock = lock
        self.previousHolderCrashed = previousHolderCrashed
    }

    /// Takes the lock, waiting up to `wait` seconds for a running sync to finish.
    public static func acquire(in gitDirectory: URL, wait: TimeInterval) throws -> SyncLock {
        let cohort = CohortDirectory(gitDirectory: gitDirectory)
        try AtomicFile.createDirectory(cohort.url, mode: 0o700)
        let url = cohort.syncLock
        guard let lock = try FileLock.acquire(url, wait: wait, poll: 0.2) else {
            let who = holder(of: url).map { "pid \($0.pid) on \($0.host), since \($0.since.formatted(.iso8601))" } ?? "another process"
            throw CohortError(.busy, "another sync is running in this workspace (\(who))",
                              hint: "wait for it to finish, or pass --wait SECONDS")
        }
        // A holder that finished empties the file; one that is still named there died holding it.
        let crashed = lock.size > 0
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        lock.write((try? encoder.encode(Holder(pid: getpid(), host: ProcessInfo.processInfo.hostName, since: Date()))) ?? Data())
        return SyncLock(lock: lock, previousHolderCrashed: crashed)
    }

    /// Who holds the lock now, if a sync is running.
    static func runningHolder(in gitDirectory: URL) -> Holder? {
        let url = CohortDirectory(gitDirectory: gitDirectory).syncLock
        guard FileLock.isHeld(url) else { return nil }
        return holder(of: url) ?? Holder(pid: 0, host: "?", since: Date())
    }

    static func holder(of url: URL) -> Holder? {
        guard let data = try? AtomicFile.read(url, maxBytes: 4096, what: "sync lock") else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(Holder.self, from: data)
    }

    /// Lets the next sync in.
    public func release() {
        lock.release()
    }
}
