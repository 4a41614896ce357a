import CohortBase
import CohortCollaboration
import CohortIdentity
import Crypto
import Foundation

/// `cohort-bench notice FILE [SECONDS]`: where the time of opening one notice envelope goes, stage by
/// stage, beside swift-crypto's bare check of its signature (one thread; the key is parsed once, as
/// verification does for a signer's repeated key, and gets its table of multiples after 256 checks,
/// so opening the whole notice can take less than the bare check).
func noticeBenchmark(file: URL, seconds: Double) throws {
    let data = try Data(contentsOf: file)
    let opened = try Envelope.open(data, as: Notice.self, path: file.lastPathComponent)
    let message = Envelope.pae(type: Notice.payloadType, payload: opened.payload)
    // Opened above, so its one signature is base64.
    let sig = try Base64Field.decode(opened.envelope.signatures[0].sig, field: "signature", maxBytes: 256)
    let signature = try P256.Signing.ECDSASignature(derRepresentation: sig)
    let digest = SHA256.hash(data: message)
    let key = try P256.Signing.PublicKey(x963Representation: opened.key.x963)
    let stages: [(String, Double)] = [
        ("open the notice (all of it)", try rate(seconds: seconds, batch: 64) { _ = try Envelope.open(data, as: Notice.self, path: "n") }),
        ("raw ECDSA check (swift-crypto, digest and signature parsed)", rate(seconds: seconds, batch: 64) { _ = key.isValidSignature(signature, for: digest) }),
        ("parse the DER signature (swift-crypto)", try rate(seconds: seconds, batch: 256) { _ = try P256.Signing.ECDSASignature(derRepresentation: sig) }),
        ("SHA-256 of the signed message (\(message.count) bytes)", rate(seconds: seconds, batch: 256) { _ = SHA256.hash(data: message) }),
        ("fold the signer's proof", try rate(seconds: seconds, batch: 256) { _ = try opened.value.signer.proof().root(under: .cohortV1) }),
    ]
    print("| stage of opening one notice (\(data.count) bytes) | microseconds |")
    print("|---|---:|")
    for (name, perSecond) in stages {
        print(String(format: "| %@ | %.2f |", name, 1e6 / perSecond))
    }
}
