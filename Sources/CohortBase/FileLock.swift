import Foundation
import Synchronization

/// An exclusive `flock(2)` on a file, between processes and between two holders in one process (each
/// holder opens the file itself). The kernel lets go when the holder's process ends, however it ends,
/// so a crash never leaves a lock behind. The file stays: a holder may write a note into it (who holds
/// it, for those who wait), and letting go empties it.
public final class FileLock: Sendable {
    public let url: URL
    private let descriptor = Mutex<Int32>(-1)

    private init(url: URL, descriptor: Int32) {
        self.url = url
        self.descriptor.withLock { $0 = descriptor }
    }

    /// The lock on `url` (created 0600), or nil when another holder still has it after `wait`
    /// seconds; waits without blocking a thread for longer than `poll`.
    public static func acquire(_ url: URL, wait: TimeInterval, poll: TimeInterval = 0.05) throws -> FileLock? {
        let descriptor = try open(url)
        let deadline = Date().addingTimeInterval(wait)
        while try !tryLock(descriptor, url) {
            guard Date() < deadline else {
                close(descriptor)
                return nil
            }
            usleep(useconds_t(poll * 1_000_000))
        }
        return FileLock(url: url, descriptor: descriptor)
    }

    /// As `acquire(_:wait:poll:)`, sleeping as a task between tries.
    public static func acquire(_ url: URL, wait: TimeInterval, poll: Duration = .milliseconds(50)) async throws -> FileLock? {
        let descriptor = try open(url)
        let deadline = Date().addingTimeInterval(wait)
        while try !tryLock(descriptor, url) {
            guard Date() < deadline, !Task.isCancelled else {
                close(descriptor)
                return nil
            }
            try? await Task.sleep(for: poll)
        }
        return FileLock(url: url, descriptor: descriptor)
    }

    /// Whether some holder has the lock on `url` now.
    public static func isHeld(_ url: URL) -> Bool {
        let descriptor = Glibc.open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }

    private static func open(_ url: URL) throws -> Int32 {
        let descriptor = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CohortError(.io, "cannot open the lock file \(url.path): \(String(cString: strerror(errno)))",
                              hint: "check that this user may write to \(url.deletingLastPathComponent().path)")
        }
        return descriptor
    }

    private static func tryLock(_ descriptor: Int32, _ url: URL) throws -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        guard errno == EWOULDBLOCK || errno == EINTR else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw CohortError(.io, "cannot lock \(url.path): \(reason)", hint: "the folder must be on a local file system that supports flock")
        }
        return false
    }

    /// The lock file's size in bytes (what the holder before wrote, if it did not empty it).
    public var size: Int {
        descriptor.withLock { descriptor in
            var info = stat()
            return fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        }
    }

    /// Replaces what the lock file holds (a note naming the holder, for those who wait).
    public func write(_ data: Data) {
        descriptor.withLock { descriptor in
            _ = ftruncate(descriptor, 0)
            _ = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Lets the next holder in; the file is emptied first, so the next holder can tell a holder that
    /// finished from one that died holding it.
    public func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            _ = ftruncate(descriptor, 0)
            flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }
    }

    deinit { release() }
}
