import CohortIdentity
import Foundation

/// One sync at a time per workspace: `<git dir>/cohort/sync.lock` holds the owner's pid, host and
/// start time, created with O_EXCL. A lock whose process is gone (on this host) is stale and cleared.
public final class SyncLock {
    struct Holder: Codable {
        var pid: Int32
        var host: String
        var since: Date
    }

    let url: URL
    private var held = false

    private init(url: URL) {
        self.url = url
    }

    /// Takes the lock, waiting up to `wait` seconds for a running sync to finish.
    public static func acquire(in gitDirectory: URL, wait: TimeInterval) throws -> SyncLock {
        let directory = gitDirectory.appendingPathComponent("cohort", isDirectory: true)
        try AtomicFile.createDirectory(directory, mode: 0o700)
        let lock = SyncLock(url: directory.appendingPathComponent("sync.lock"))
        let deadline = Date().addingTimeInterval(wait)
        while true {
            if try lock.tryTake() { return lock }
            if let holder = lock.holder(), holder.host == hostName, kill(holder.pid, 0) != 0, errno == ESRCH {
                // The sync that held it died (a crash, a kill): its journal lets this one finish the job.
                try? FileManager.default.removeItem(at: lock.url)
                continue
            }
            guard Date() < deadline else {
                let who = lock.holder().map { "pid \($0.pid) on \($0.host), since \($0.since.formatted(.iso8601))" } ?? "another process"
                throw CohortError(.busy, "another sync is running in this workspace (\(who))",
                                  hint: "wait for it to finish, or pass --wait SECONDS")
            }
            usleep(200_000)
        }
    }

    private func tryTake() throws -> Bool {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw CohortError(.io, "cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = (try? encoder.encode(Holder(pid: getpid(), host: Self.hostName, since: Date()))) ?? Data()
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        held = true
        return true
    }

    func holder() -> Holder? {
        guard let data = try? AtomicFile.read(url, maxBytes: 4096, what: "sync lock") else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(Holder.self, from: data)
    }

    /// Lets the next sync in.
    public func release() {
        guard held else { return }
        held = false
        try? FileManager.default.removeItem(at: url)
    }

    deinit { release() }

    static var hostName: String { ProcessInfo.processInfo.hostName }
}
