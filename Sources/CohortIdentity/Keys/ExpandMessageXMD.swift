import Crypto
import Foundation

/// `expand_message_xmd` with SHA-256 (RFC 9380 §5.3.1).
enum ExpandMessageXMD {
    static func sha256(message: Data, domain: Data, length: Int) -> Data {
        precondition(!domain.isEmpty && domain.count <= 255, "DST must be 1 to 255 bytes")
        precondition(length > 0 && length <= 255 * 32 && length <= 65535, "length out of range")
        let blockCount = (length + 31) / 32
        var domainPrime = domain
        domainPrime.append(UInt8(domain.count))

        var prime = Data(count: 64)  // Z_pad: the SHA-256 block size in zeros
        prime.append(message)
        prime.append(UInt8(length >> 8))
        prime.append(UInt8(length & 0xff))
        prime.append(0)
        prime.append(domainPrime)
        let b0 = SHA256.hash(data: prime).bytes

        var previous = SHA256.hash(data: b0 + [1] + domainPrime).bytes
        var uniform = previous
        var i = 2
        while i <= blockCount {
            var mixed = Data(zip(b0, previous).map { $0 ^ $1 })
            mixed.append(UInt8(i))
            mixed.append(domainPrime)
            previous = SHA256.hash(data: mixed).bytes
            uniform.append(previous)
            i += 1
        }
        return uniform.prefix(length)
    }
}
