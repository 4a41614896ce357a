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
        guard let line = message.split(separator: "\n").last(where: { $0.hasPrefix(prefix) }) else {
            throw CohortError(.badProof, "commit message has no Cohort-Proof trailer", hint: "commit with `cohort commit`, which adds it")
        }
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
