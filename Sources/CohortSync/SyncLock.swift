import CohortIdentity
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

    let url: URL
    private var descriptor: Int32
    /// The last holder ended without letting go (a crash, a kill): its leftovers want cleaning up.
    public let previousHolderCrashed: Bool

    private init(url: URL, descriptor: Int32, previousHolderCrashed: Bool) {
        self.url = url
        self.descriptor = descriptor
        self.previousHolderCrashed = previousHolderCrashed
    }

    /// Takes the lock, waiting up to `wait` seconds for a running sync to finish.
    public static func acquire(in gitDirectory: URL, wait: TimeInterval) throws -> SyncLock {
        let directory = gitDirectory.appendingPathComponent("cohort", isDirectory: true)
        try AtomicFile.createDirectory(directory, mode: 0o700)
        let url = directory.appendingPathComponent("sync.lock")
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CohortError(.io, "cannot open \(url.path): \(String(cString: strerror(errno)))")
        }
        let deadline = Date().addingTimeInterval(wait)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                throw CohortError(.io, "cannot lock \(url.path): \(String(cString: strerror(errno)))")
            }
            guard Date() < deadline else {
                let who = holder(of: url).map { "pid \($0.pid) on \($0.host), since \($0.since.formatted(.iso8601))" } ?? "another process"
                close(descriptor)
                throw CohortError(.busy, "another sync is running in this workspace (\(who))",
                                  hint: "wait for it to finish, or pass --wait SECONDS")
            }
            usleep(200_000)
        }
        // A holder that finished empties the file; one that is still named there died holding it.
        var info = stat()
        let crashed = fstat(descriptor, &info) == 0 && info.st_size > 0
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = (try? encoder.encode(Holder(pid: getpid(), host: ProcessInfo.processInfo.hostName, since: Date()))) ?? Data()
        _ = ftruncate(descriptor, 0)
        _ = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return SyncLock(url: url, descriptor: descriptor, previousHolderCrashed: crashed)
    }

    /// Who holds the lock now, if a sync is running (the lock taken and let go at once otherwise).
    static func runningHolder(in gitDirectory: URL) -> Holder? {
        let url = gitDirectory.appendingPathComponent("cohort/sync.lock")
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
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
        guard descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
