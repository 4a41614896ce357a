import CohortBase
import CohortTestSupport
import Foundation
import Testing

/// `AtomicFile.read`: bounded reads with one clear error each way (it reads with `read(2)` into a
/// buffer of the size the file reports, and grows it for files that report none).
@Suite struct AtomicFileTests {
    @Test func aFileOfExactlyTheBoundIsReadAndOneByteMoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("verified")
        let bytes = Data((0..<4096).map { UInt8($0 % 251) })
        try bytes.write(to: file)
        #expect(try AtomicFile.read(file, maxBytes: 4096, what: "the file") == bytes)
        #expect(try AtomicFile.read(file, maxBytes: 1 << 20, what: "the file") == bytes)
        #expect(throws: CohortError.self) { try AtomicFile.read(file, maxBytes: 4095, what: "the file") }
        do {
            _ = try AtomicFile.read(file, maxBytes: 4095, what: "the file")
        } catch let error as CohortError {
            #expect(error.code == .tooLarge && error.reason.contains("larger than 4095 bytes"), "\(error)")
        }
        try Data().write(to: file)
        #expect(try AtomicFile.read(file, maxBytes: 16, what: "the file") == Data())
    }

    @Test func aMissingFileOrAFolderIsAnIOError() throws {
        let directory = try TemporaryDirectory()
        for url in [directory.path("missing"), directory.url] {
            do {
                _ = try AtomicFile.read(url, maxBytes: 1 << 20, what: "the card")
                Issue.record("read \(url.path)")
            } catch let error as CohortError {
                #expect(error.code == .io && error.reason.hasPrefix("cannot read the card at \(url.path): "), "\(error)")
            }
        }
    }

    /// A file that reports no size (as those under /proc do) is read whole, past the first buffer.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps"), "needs /proc"))
    func aFileThatReportsNoSizeIsReadWhole() throws {
        let maps = URL(fileURLWithPath: "/proc/self/maps")
        let read = try AtomicFile.read(maps, maxBytes: 64 << 20, what: "the maps")
        #expect(read.count > 4096, "\(read.count) bytes")
        #expect(String(decoding: read, as: UTF8.self).hasSuffix("\n"))
    }
}
