import CohortNotices
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends notices to a file as JSON Lines: UTF-8, one `write` per record with its trailing newline
/// (the file is opened `O_APPEND`, so a concurrent reader never sees half a line from two writers
/// interleaving), fsynced before the notice counts as delivered. When the file is rotated away
/// (renamed or removed by logrotate, say) the next notice reopens, and so creates, the path.
public final class FileNoticeSink: NoticeSink {
    public let name: String
    public let path: URL
    private let descriptor = Mutex<Int32>(-1)

    public init(name: String? = nil, path: URL) {
        self.name = name ?? "file:\(path.path)"
        self.path = path
    }

    deinit {
        descriptor.withLock { if $0 >= 0 { close($0) } }
    }

    public func deliver(_ delivery: NoticeDelivery) async throws {
        var line = delivery.json()
        line.append(UInt8(ascii: "\n"))
        try descriptor.withLock { fd in
            if fd < 0 || rotated(fd) {
                if fd >= 0 { close(fd) }
                fd = open(path.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    throw SinkFailure.retryLater("cannot open \(path.path): \(String(cString: strerror(errno)))")
                }
            }
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count else {
                let reason = written < 0 ? String(cString: strerror(errno)) : "short write"
                close(fd)
                fd = -1
                throw SinkFailure.retryLater("cannot write to \(path.path): \(reason)")
            }
            guard fsync(fd) == 0 else {
                throw SinkFailure.retryLater("cannot flush \(path.path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Whether the open file is no longer the one at `path`.
    private func rotated(_ fd: Int32) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(fd, &open) == 0 else { return true }
        guard stat(path.path, &named) == 0 else { return true }
        return open.st_ino != named.st_ino || open.st_dev != named.st_dev
    }

    public func shutdown() async {
        descriptor.withLock { fd in
            if fd >= 0 {
                _ = fsync(fd)
                close(fd)
                fd = -1
            }
        }
    }
}

/// `type = "file"`: `path`, relative to the configuration file's folder unless absolute.
public struct FileSinkFactory: NoticeSinkFactory {
    public let type = "file"
    public let keys: Set<String> = ["path"]

    public init() {}

    public func configure(_ table: SinkTable) throws -> ConfiguredSink {
        guard let path = try table.path("path") else { throw table.missing("path = \"…\"") }
        return ConfiguredSink(defaultName: "file:\(path.path)") { FileNoticeSink(name: $0.name, path: path) }
    }
}
