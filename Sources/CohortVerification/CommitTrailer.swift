import CohortBase
import CohortIdentity
import Foundation

/// The proof of inclusion a commit carries in its message (inside the signed bytes), as its last
/// trailer: `Cohort-Proof: SCHEME INDEX PUBLICKEY HASH,HASH,…` (key and hashes base64).
public enum CommitTrailer {
    static let prefix = "Cohort-Proof: "
    static let maxLineBytes = 4096

    /// `message` with the trailer appended after a blank line.
    public static func append(to message: String, scheme: RootScheme, proof: InclusionProof) -> String {
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        text += "\n\n" + prefix + [
            scheme.rawValue, String(proof.publicKeyIndex), proof.publicKey.base64EncodedString(),
            proof.inclusionHashes.map { $0.base64EncodedString() }.joined(separator: ","),
        ].joined(separator: " ") + "\n"
        return text
    }

    /// The scheme and proof of the last `Cohort-Proof:` trailer; `E_BAD_PROOF` when there is none or
    /// it does not parse. Works on the message's bytes: this runs once per commit verified, and
    /// splitting by characters cost more than the rest of the commit's checks but its signature.
    public static func parse(_ message: String) throws -> (RootScheme, InclusionProof) {
        var message = message
        return try message.withUTF8 { try parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) throws -> (RootScheme, InclusionProof) {
        let marker = Array(prefix.utf8)
        guard let start = lastLineStart(of: marker, in: bytes) else {
            throw CohortError(.badProof, "commit message has no Cohort-Proof trailer", hint: "commit with `cohort commit`, which adds it")
        }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        guard end - start <= maxLineBytes else {
            throw CohortError(.badProof, "Cohort-Proof trailer is longer than \(maxLineBytes) bytes")
        }
        let fields = bytes[(start + marker.count)..<end].split(separator: UInt8(ascii: " "))
        guard fields.count == 4, let index = Int(String(decoding: fields[1], as: UTF8.self)) else {
            throw CohortError(.badProof, "Cohort-Proof trailer is not 'SCHEME INDEX KEY HASHES'")
        }
        let scheme = try RootScheme(name: String(decoding: fields[0], as: UTF8.self))
        let hashes = fields[3].split(separator: UInt8(ascii: ","))
        guard hashes.count <= 64 else { throw CohortError(.badProof, "Cohort-Proof trailer has too many hashes") }
        return (scheme, InclusionProof(
            publicKey: try Base64Field.decode(String(decoding: fields[2], as: UTF8.self), field: "Cohort-Proof key", maxBytes: 256),
            publicKeyIndex: index,
            inclusionHashes: try hashes.map { try Base64Field.decode(String(decoding: $0, as: UTF8.self), field: "Cohort-Proof hash", maxBytes: 64) }
        ))
    }

    /// Where the last line starting with `marker` starts (the message's first line counts).
    private static func lastLineStart(of marker: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var position = bytes.count - marker.count
        while position >= 0 {
            if (position == 0 || bytes[position - 1] == UInt8(ascii: "\n")),
               bytes[position] == marker[0], marker.indices.allSatisfy({ bytes[position + $0] == marker[$0] }) {
                return position
            }
            position -= 1
        }
        return nil
    }
}
