import CohortBase
import Foundation

/// A commit's signature exactly as stock `git verify-commit` finds it: the value of the one `gpgsig`
/// header (continuation lines joined), over the commit's bytes without that header. A signature
/// anywhere else (in the message body, where libgit2's extraction also looks; in `gpgsig-sha256`)
/// does not count, and a commit with two signature headers is refused rather than guessed at.
public enum CommitSignature {
    static let header = Array("gpgsig ".utf8)
    static let otherHeader = Array("gpgsig".utf8)

    /// Splits the raw commit object `raw`: the armored signature and the signed bytes, or nil when the
    /// commit carries no `gpgsig` header. Throws `E_BAD_SIGNATURE` for more than one signature header.
    public static func split(_ raw: Data) throws -> (armored: String, signedData: Data)? {
        return try raw.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            // Unsigned commits are rare in verified history; find the header before copying anything.
            guard bytes.contains(bytes: "\ngpgsig") else { return nil }
            var payload = Data()
            payload.reserveCapacity(bytes.count)
            var signature: [UInt8] = []
            var signatures = 0
            var inSignature = false
            var inOtherSignature = false
            var position = 0
            while position < bytes.count {
                let end = bytes.firstIndex(of: 0x0A, from: position).map { $0 + 1 } ?? bytes.count
                let line = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
                if line.first == 0x0A {
                    // The blank line ends the headers: the message follows, signed as it is.
                    payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position...]))
                    break
                }
                if (inSignature || inOtherSignature) && line.first == 0x20 {
                    if inSignature { signature.append(contentsOf: line.dropFirst()) }
                } else if line.starts(with: header) {
                    signatures += 1
                    inSignature = true
                    inOtherSignature = false
                    signature.append(contentsOf: line.dropFirst(header.count))
                } else if line.starts(with: otherHeader) {
                    // gpgsig-sha256 and the like: git leaves them out of the signed bytes; Cohort refuses them.
                    let name = String(decoding: line.prefix(while: { $0 != 0x20 && $0 != 0x0A }).prefix(32), as: UTF8.self)
                    throw CohortError(.badSignature, "the commit carries a '\(name)' header",
                                      hint: "Cohort commits carry one gpgsig header and nothing like it")
                } else {
                    inSignature = false
                    inOtherSignature = false
                    payload.append(contentsOf: line)
                }
                position = end
            }
            guard signatures > 0 else { return nil }
            guard signatures == 1 else {
                throw CohortError(.badSignature, "the commit carries \(signatures) gpgsig headers", hint: "a commit is signed once")
            }
            return (String(decoding: signature, as: UTF8.self), payload)
        }
    }
}
