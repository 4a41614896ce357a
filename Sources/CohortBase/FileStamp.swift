import Foundation

/// A file's identity, size and modification time, to tell cheaply whether someone wrote to it (or
/// replaced it) since it was last read; nil for a file that is not there.
public struct FileStamp: Equatable, Sendable, CustomStringConvertible {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64

    public init?(_ url: URL) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    /// Whether `other` is the same file (device and inode), whatever was written to it since.
    public func isSameFile(as other: FileStamp?) -> Bool {
        other.map { $0.device == device && $0.inode == inode } ?? false
    }

    /// `device inode size modified-ns`, to keep in a stamp file.
    public var description: String { "\(device) \(inode) \(size) \(modified)" }
}
