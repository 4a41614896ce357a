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
    /// it does not parse.
    public static func parse(_ message: String) throws -> (RootScheme, InclusionProof) {
        // Search the bytes from the end: this runs once per commit verified.
        let bytes = message.utf8
        guard let start = bytes.lastRange(of: "\n" + prefix)?.lowerBound ?? (message.hasPrefix(prefix) ? bytes.startIndex : nil) else {
            throw CohortError(.badProof, "commit message has no Cohort-Proof trailer", hint: "commit with `cohort commit`, which adds it")
        }
        let from = bytes[start] == UInt8(ascii: "\n") ? bytes.index(after: start) : start
        let end = bytes[from...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let line = Substring(message.utf8[from..<end])
        guard line.utf8.count <= maxLineBytes else {
            throw CohortError(.badProof, "Cohort-Proof trailer is longer than \(maxLineBytes) bytes")
        }
        let fields = line.dropFirst(prefix.count).split(separator: " ")
        guard fields.count == 4, let index = Int(fields[1]) else {
            throw CohortError(.badProof, "Cohort-Proof trailer is not 'SCHEME INDEX KEY HASHES'")
        }
        let scheme = try RootScheme(name: String(fields[0]))
        let hashes = fields[3].split(separator: ",")
        guard hashes.count <= 64 else { throw CohortError(.badProof, "Cohort-Proof trailer has too many hashes") }
        return (scheme, InclusionProof(
            publicKey: try Base64Field.decode(String(fields[2]), field: "Cohort-Proof key", maxBytes: 256),
            publicKeyIndex: index,
            inclusionHashes: try hashes.map { try Base64Field.decode(String($0), field: "Cohort-Proof hash", maxBytes: 64) }
        ))
    }
}

private extension String.UTF8View {
    /// The last occurrence of `needle`'s bytes.
    func lastRange(of needle: String) -> Range<String.UTF8View.Index>? {
        let pattern = Array(needle.utf8)
        let haystack = Array(self)
        guard pattern.count <= haystack.count else { return nil }
        var position = haystack.count - pattern.count
        while position >= 0 {
            if haystack[position] == pattern[0], Array(haystack[position..<position + pattern.count]) == pattern {
                let lower = index(startIndex, offsetBy: position)
                return lower..<index(lower, offsetBy: pattern.count)
            }
            position -= 1
        }
        return nil
    }
}
