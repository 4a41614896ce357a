import CohortBase
import Foundation

/// Builds the length-prefixed byte strings that Cohort hashes and signs (`u8`, `u16`, `u32`, `u64`
/// big-endian).
struct ByteWriter {
    private(set) var bytes = Data()

    init() {}

    mutating func append(_ data: some DataProtocol) {
        bytes.append(contentsOf: data)
    }

    mutating func appendU8(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func appendU16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xff))
    }

    mutating func appendU32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8((value >> UInt32(shift)) & 0xff))
        }
    }

    mutating func appendU64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8((value >> UInt64(shift)) & 0xff))
        }
    }

    /// `u16(len) ‖ bytes`; the caller guarantees the length fits (every such field is bounded first).
    mutating func appendU16Prefixed(_ data: some DataProtocol) {
        precondition(data.count <= Int(UInt16.max), "length-prefixed field over 65535 bytes")
        appendU16(UInt16(data.count))
        append(data)
    }

    mutating func appendU16Prefixed(utf8 text: String) {
        appendU16Prefixed(Data(text.utf8))
    }
}

/// Reads what `ByteWriter` wrote; every read is bounds-checked and throws `E_MALFORMED` past the end.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0
    private let what: String

    init(_ data: some DataProtocol, what: String) {
        bytes = Array(data)
        self.what = what
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func read(_ count: Int) throws -> Data {
        guard count >= 0, bytes.count - offset >= count else {
            throw CohortError(.malformed, "\(what) is truncated")
        }
        defer { offset += count }
        return Data(bytes[offset..<offset + count])
    }

    mutating func readU8() throws -> UInt8 {
        try read(1)[0]
    }

    mutating func readU16() throws -> UInt16 {
        let d = try read(2)
        return UInt16(d[d.startIndex]) << 8 | UInt16(d[d.startIndex + 1])
    }

    mutating func readU64() throws -> UInt64 {
        try read(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func readU16Prefixed() throws -> Data {
        try read(Int(readU16()))
    }
}
