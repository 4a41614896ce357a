import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file writes that never leave a torn file behind (temporary file, fsync, rename), with the
/// mode set before any byte is written, and bounded reads.
public enum AtomicFile {
    /// Writes `data` to `url` with `mode`. With `replacing: false` an existing file is never touched
    /// and the write fails with `E_IO`.
    /// With `durable: false` the file is still replaced atomically but neither it nor its folder is
    /// flushed to disk: for copies of what is already stored durably elsewhere (a working file of a
    /// committed blob).
    public static func write(_ data: Data, to url: URL, mode: mode_t, replacing: Bool, durable: Bool = true) throws {
        let directory = url.deletingLastPathComponent()
        // `.NAME.cohort-N.tmp`, or `.cohort-N.tmp` where that would pass a file system's 255-byte limit.
        let random = UInt32.random(in: 0...UInt32.max)
        let named = ".\(url.lastPathComponent).cohort-\(random).tmp"
        let temporary = directory.appendingPathComponent(named.utf8.count <= 255 ? named : ".cohort-\(random).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("create a file in", directory) }
        var closed = false
        defer {
            if !closed { close(fd) }
            unlink(temporary.path)
        }
        guard fchmod(fd, mode) == 0 else { throw failure("set the mode of", temporary) }
        guard writeAll(data, to: fd) == 0 else { throw failure("write", url) }
        guard !durable || fsync(fd) == 0 else { throw failure("flush", url) }
        closed = true
        guard close(fd) == 0 else { throw failure("close", url) }
        if replacing {
            guard rename(temporary.path, url.path) == 0 else { throw failure("replace", url) }
        } else {
            // link() refuses an existing name atomically, unlike rename().
            guard link(temporary.path, url.path) == 0 else {
                if errno == EEXIST {
                    throw CohortError(.io, "\(url.path) already exists", hint: "choose another path or move the existing file away")
                }
                throw failure("create", url)
            }
        }
        if durable { syncDirectory(directory) }
    }

    /// Reads at most `maxBytes` from `url`; a larger file is `E_TOO_LARGE`, a missing one `E_IO`.
    public static func read(_ url: URL, maxBytes: Int, what: String) throws -> Data {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CohortError(.io, "cannot read \(what) at \(url.path): \(String(cString: strerror(errno)))", hint: "check the path")
        }
        defer { close(fd) }
        // Read straight into a buffer the file's size (plus one byte, to see it grow past the bound):
        // a verified-commits file is read on every push.
        var status = stat()
        let expected = fstat(fd, &status) == 0 && status.st_size > 0 ? min(Int(status.st_size), maxBytes) + 1 : 4096
        var data = Data(count: expected)
        var count = 0
        while count <= maxBytes {
            if count == data.count { data.count = min(data.count * 2, maxBytes + 1) }
            let got = data.withUnsafeMutableBytes { buffer in systemRead(fd, buffer.baseAddress! + count, buffer.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw CohortError(.io, "cannot read \(what) at \(url.path): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maxBytes else {
            throw CohortError(.tooLarge, "\(what) at \(url.path) is larger than \(maxBytes) bytes")
        }
        data.count = count
        return data
    }

    /// Creates `url` and missing parents with `mode` (existing directories keep theirs).
    public static func createDirectory(_ url: URL, mode: mode_t) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw CohortError(.io, "cannot create directory \(url.path): \(reason(of: error))")
        }
    }

    private static func syncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func failure(_ action: String, _ url: URL) -> CohortError {
        CohortError(.io, "cannot \(action) \(url.path): \(String(cString: strerror(errno)))")
    }

    private static func reason(of error: Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(code)))
        }
        return (error as NSError).localizedDescription
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemRead = Darwin.read
private let systemWrite = Darwin.write
#endif

extension AtomicFile {
    /// Standard input to its end, at most `maxBytes` (`what` names it in the error; `hint` says what
    /// to do instead, by default to give less).
    public static func readStandardInput(maxBytes: Int, what: String, hint: String? = nil) throws -> Data {
        var data = Data()
        while data.count <= maxBytes {
            let chunk = FileHandle.standardInput.readData(ofLength: min(64 << 10, maxBytes + 1 - data.count))
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        guard data.count <= maxBytes else {
            throw CohortError(.tooLarge, "\(what) on standard input is larger than \(maxBytes) bytes", hint: hint ?? "give at most \(maxBytes) bytes")
        }
        return data
    }

    /// Writes all of `data` to the open descriptor `fd`, as many `write` calls as the kernel needs,
    /// retrying on EINTR. Returns 0, or the `errno` of the call that failed (`errno` is left set too).
    public static func writeAll(_ data: Data, to fd: Int32) -> Int32 {
        data.withUnsafeBytes { writeAll($0, to: fd) }
    }

    /// The most one `write` is given (macOS refuses more than 2 GiB at once).
    private static let writeLimit = 1 << 30

    /// As `writeAll(_:to:)`, for bytes where they lie.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(fd, base + offset, min(bytes.count - offset, writeLimit))
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written == 0 ? EIO : errno }
            offset += written
        }
        return 0
    }

    /// Appends `data` (whole lines) to `url`, creating it with `mode`, and fsyncs before returning: a
    /// record counts only once it is on disk. A failed or short write is cut back off, so no partial
    /// line is left for the next append to be glued onto. With `durable: false` nothing is flushed:
    /// for a log whose lost lines only cost time (their readers skip what a crash leaves torn).
    public static func append(_ data: Data, to url: URL, mode: mode_t = 0o600, durable: Bool = true) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("open", url) }
        defer { close(fd) }
        var before = stat()
        guard fstat(fd, &before) == 0 else { throw failure("read", url) }
        guard writeAll(data, to: fd) == 0, !durable || fsync(fd) == 0 else {
            let error = failure("append to", url)
            _ = ftruncate(fd, before.st_size)
            throw error
        }
    }

    /// The complete lines of an append-only log (at most `maxBytes`). A torn last line, left by a crash
    /// during an append, never counted: it is skipped, and with `repair` cut off the file.
    public static func readLines(_ url: URL, maxBytes: Int, what: String, repair: Bool) throws -> [Data] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        var data = try read(url, maxBytes: maxBytes, what: what)
        let complete = (data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? data.startIndex
        if complete != data.endIndex {
            if repair, truncate(url.path, off_t(complete)) != 0 { throw failure("repair", url) }
            data = data.prefix(upTo: complete)
        }
        return data.split(separator: UInt8(ascii: "\n")).map { Data($0) }
    }
}
