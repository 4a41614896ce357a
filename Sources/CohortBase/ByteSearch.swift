import Foundation

extension UnsafeRawBufferPointer {
    /// The index of the first `byte` in `range` (`memchr`), or nil: for the readers of commits and of
    /// files of lines that run on every commit of a history.
    public func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
        guard let base = baseAddress, range.lowerBound >= 0, range.upperBound <= count, !range.isEmpty,
              let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The index of the first `byte` at or after `start`, or nil.
    public func firstIndex(of byte: UInt8, from start: Int) -> Int? {
        start < count ? firstIndex(of: byte, in: start..<count) : nil
    }

    /// Whether `needle` appears anywhere: each place its first byte is found, compared whole.
    public func contains(bytes needle: StaticString) -> Bool {
        let length = needle.utf8CodeUnitCount
        guard length > 0, let base = baseAddress else { return false }
        var position = 0
        while count - position >= length, let found = firstIndex(of: needle.utf8Start.pointee, from: position) {
            if count - found >= length, memcmp(base + found, needle.utf8Start, length) == 0 { return true }
            position = found + 1
        }
        return false
    }

    /// Each line (without its line feed; the last one whether or not a line feed ends it) from `start`.
    public func forEachLine(from start: Int = 0, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var position = start
        while position < count {
            let end = firstIndex(of: 0x0A, from: position) ?? count
            try body(UnsafeRawBufferPointer(rebasing: self[position..<end]))
            position = end + 1
        }
    }
}
