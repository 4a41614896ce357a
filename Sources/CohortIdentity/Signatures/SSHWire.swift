import CohortBase
import Foundation

/// The SSH wire encoding (RFC 4251 §5): `string` = u32 length ‖ bytes, `mpint` = two's-complement
/// big-endian, minimal.
struct SSHWriter {
    private(set) var bytes = Data()

    mutating func raw(_ data: some DataProtocol) { bytes.append(contentsOf: data) }

    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xff)) }
    }

    mutating func string(_ data: some DataProtocol) {
        u32(UInt32(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func string(_ text: String) { string(Data(text.utf8)) }

    /// A positive integer given as unsigned big-endian bytes.
    mutating func mpint(unsigned value: Data) {
        var trimmed = value.drop { $0 == 0 }
        if let first = trimmed.first, first & 0x80 != 0 { trimmed.insert(0, at: trimmed.startIndex) }
        string(Data(trimmed))
    }
}

struct SSHReader {
    private let bytes: [UInt8]
    private var offset = 0
    private let what: String

    init(_ data: some DataProtocol, what: String) {
        bytes = Array(data)
        self.what = what
    }

    var isAtEnd: Bool { offset == bytes.count }

    private func failure(_ reason: String) -> CohortError {
        CohortError(.badSignature, "\(what): \(reason)", hint: "the signature is damaged or not an OpenSSH signature")
    }

    mutating func raw(_ count: Int) throws -> Data {
        guard count >= 0, bytes.count - offset >= count else { throw failure("truncated") }
        defer { offset += count }
        return Data(bytes[offset..<offset + count])
    }

    /// Read where it lies: a signature has a dozen lengths, each a `Data` of its own before.
    mutating func u32() throws -> UInt32 {
        guard bytes.count - offset >= 4 else { throw failure("truncated") }
        defer { offset += 4 }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func string(maxBytes: Int = 4096) throws -> Data {
        let count = try u32()
        guard count <= maxBytes else { throw failure("field of \(count) bytes is too large") }
        return try raw(Int(count))
    }

    mutating func text(maxBytes: Int = 256) throws -> String {
        let data = try string(maxBytes: maxBytes)
        guard let text = String(data: data, encoding: .utf8) else { throw failure("text field is not UTF-8") }
        return text
    }

    /// A positive mpint of at most `maxBytes` significant bytes, in minimal form, as 32 unsigned bytes.
    mutating func mpint32() throws -> Data {
        let value = try string(maxBytes: 33)
        guard let first = value.first, first & 0x80 == 0 else { throw failure("integer is zero or negative") }
        if first == 0 {
            guard value.count > 1, value[value.startIndex + 1] & 0x80 != 0 else { throw failure("integer is not minimal") }
        }
        let magnitude = value.drop { $0 == 0 }
        guard magnitude.count <= 32 else { throw failure("integer is larger than 256 bits") }
        return Data(repeating: 0, count: 32 - magnitude.count) + magnitude
    }
}
