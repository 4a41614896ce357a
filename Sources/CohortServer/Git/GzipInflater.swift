import CZlib
import CohortBase

/// Streams a gzip body (`Content-Encoding: gzip`, which git uses for large fetch requests) back to
/// its bytes, 64 KiB at a time, refusing more than `limit` of them.
final class GzipInflater {
    static let chunkSize = 64 << 10

    private var stream = z_stream()
    private let limit: Int
    private var input: [UInt8] = []
    private var offset = 0
    private var produced = 0
    private var finished = false

    init(limit: Int) throws {
        self.limit = limit
        // 15 window bits + 16: gzip framing only.
        let status = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw CohortError(.io, "cannot start decompressing the request (zlib \(status))")
        }
    }

    deinit {
        inflateEnd(&stream)
    }

    /// Takes the next piece of the compressed body; `next()` then hands out what it inflates to.
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        guard !finished else {
            throw CohortError(.malformed, "the gzip request body has bytes after its end")
        }
        input = Array(input[offset...]) + Array(bytes)
        offset = 0
    }

    /// Up to 64 KiB of inflated bytes, or nil when the input fed so far is used up.
    func next() throws -> [UInt8]? {
        guard offset < input.count, !finished else { return nil }
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        let (status, consumed, written) = input.withUnsafeBufferPointer { source in
            chunk.withUnsafeMutableBufferPointer { target -> (Int32, Int, Int) in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress.map { $0 + offset })
                stream.avail_in = uInt(source.count - offset)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                let consumed = source.count - offset - Int(stream.avail_in)
                stream.next_in = nil
                stream.next_out = nil
                return (status, consumed, target.count - Int(stream.avail_out))
            }
        }
        offset += consumed
        produced += written
        guard produced <= limit else {
            throw CohortError(.tooLarge, "the request inflates to more than \(limit >> 20) MiB")
        }
        switch status {
        case Z_STREAM_END:
            finished = true
            guard offset == input.count else {
                throw CohortError(.malformed, "the gzip request body has bytes after its end")
            }
        case Z_OK, Z_BUF_ERROR:
            if written == 0, consumed == 0 { return nil }
        default:
            throw CohortError(.malformed, "the request body is not valid gzip (zlib \(status))")
        }
        return written > 0 ? Array(chunk[0..<written]) : (finished ? nil : [])
    }

    /// Checks the stream ended where the body did.
    func finish() throws {
        guard finished else {
            throw CohortError(.malformed, "the gzip request body is truncated")
        }
    }
}
