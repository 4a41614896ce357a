import CohortBase
import Crypto
import Foundation

/// How an ECDSA P-256 signature is encoded on the wire.
public enum SignatureEncoding: Sendable {
    /// Strict DER (`SEQUENCE { r INTEGER, s INTEGER }`), at most 72 bytes. BER is refused.
    case der
    /// Raw `r ‖ s` (IEEE P1363), exactly 64 bytes.
    case raw
    /// DER, or raw `r ‖ s` (64 bytes) as Apple's APIs produce.
    case derOrRaw
}

/// Largest DER encoding of a P-256 signature: 2 + 2 × (2 + 33).
let maxDERSignatureBytes = 72

extension P256Key {
    /// Checks an ECDSA P-256 / SHA-256 signature over `message`; throws `E_BAD_SIGNATURE` when it is
    /// malformed or does not verify.
    public func verifySignature(_ signature: Data, for message: some DataProtocol, encoding: SignatureEncoding = .der) throws {
        var candidates: [P256.Signing.ECDSASignature] = []
        if encoding != .raw, signature.count <= maxDERSignatureBytes, let der = try? P256.Signing.ECDSASignature(derRepresentation: signature) {
            // The common case (cohort-v1, DER only) needs no second candidate.
            if encoding == .der || signature.count != 64 {
                guard isValid(der, digest: SHA256.hash(data: message)) else { throw mismatch() }
                return
            }
            candidates.append(der)
        }
        if encoding != .der, signature.count == 64, let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) {
            candidates.append(raw)
        }
        guard !candidates.isEmpty else {
            let expected = switch encoding {
            case .der: "strict DER (at most 72 bytes)"
            case .raw: "raw r‖s (64 bytes)"
            case .derOrRaw: "strict DER or raw r‖s (64 bytes)"
            }
            throw CohortError(.badSignature, "signature of \(signature.count) bytes is not \(expected)",
                              hint: "send the ECDSA P-256 signature exactly as the signer produced it")
        }
        let digest = SHA256.hash(data: message)
        guard candidates.contains(where: { isValid($0, digest: digest) }) else { throw mismatch() }
    }

    /// Whether `signature` is valid over the message whose SHA-256 is `digest`: through the key's
    /// table when it has one (`P256KeyTable`), which only ever answers "valid" on its own; every
    /// other answer is swift-crypto's. Debug builds check each of the table's answers against it.
    func isValid(_ signature: P256.Signing.ECDSASignature, digest: SHA256.Digest) -> Bool {
        if let table = use.table, table.verdict(signature, digest: digest) == 1 {
            #if DEBUG
            precondition(signingKey.isValidSignature(signature, for: digest), "a key's table accepted a signature swift-crypto refuses")
            #endif
            // Signatures through a small table count towards the large one; past it, nothing is due.
            if table.size == .small { use.countValid() }
            return true
        }
        guard signingKey.isValidSignature(signature, for: digest) else { return false }
        use.countValid()
        return true
    }

    private func mismatch() -> CohortError {
        CohortError(.badSignature, "signature does not verify with public key \(fingerprint)",
                    hint: "check that the message is exactly the bytes that were signed")
    }
}
