import CZlib
import CohortIdentity

/// Streams a gzip body (`Content-Encoding: gzip`, which git uses for large fetch requests) back to
/// its bytes, refusing more than `limit` of them.
final class GzipInflater {
    private var stream = z_stream()
    private let limit: Int
    private(set) var produced = 0
    private(set) var finished = false

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

    /// The bytes `input` inflates to.
    func inflate(_ input: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard !input.isEmpty else { return [] }
        guard !finished else {
            throw CohortError(.malformed, "the gzip request body has bytes after its end")
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.avail_in = uInt(input.count)
        repeat {
            let status = chunk.withUnsafeMutableBytes { buffer -> Int32 in
                stream.next_out = buffer.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(buffer.count)
                return CZlib.inflate(&stream, Z_NO_FLUSH)
            }
            let count = chunk.count - Int(stream.avail_out)
            output.append(contentsOf: chunk[0..<count])
            produced += count
            guard produced <= limit else {
                throw CohortError(.tooLarge, "the request inflates to more than \(limit >> 20) MiB")
            }
            if status == Z_STREAM_END {
                finished = true
                guard stream.avail_in == 0 else {
                    throw CohortError(.malformed, "the gzip request body has bytes after its end")
                }
                break
            }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw CohortError(.malformed, "the request body is not valid gzip (zlib \(status))")
            }
            if status == Z_BUF_ERROR { break }
        } while stream.avail_in > 0 || stream.avail_out == 0
        stream.next_in = nil
        return output
    }

    /// Checks the stream ended where the body did.
    func finish() throws {
        guard finished else {
            throw CohortError(.malformed, "the gzip request body is truncated")
        }
    }
}
