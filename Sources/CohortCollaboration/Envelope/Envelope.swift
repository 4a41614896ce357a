import CohortBase
import CohortIdentity
import Crypto
import Foundation

/// A payload that travels signed: its JSON carries the `signer`.
public protocol SignedPayload: Codable, Sendable {
    /// The DSSE `payloadType`.
    static var payloadType: String { get }
    /// The largest envelope of this kind accepted, in bytes.
    static var maxEnvelopeBytes: Int { get }
    var signer: Signer { get set }
}

/// A DSSE envelope (the in-toto / Sigstore "Dead Simple Signing Envelope") with one ECDSA P-256
/// signature over the pre-authentication encoding
/// `"DSSEv1" SP len(type) SP type SP len(payload) SP payload` (lengths in ASCII decimal).
public struct Envelope: Codable, Hashable, Sendable {
    public struct Signature: Codable, Hashable, Sendable {
        /// Hex SHA-256 of the signing key (a hint; the key itself is in the payload's signer).
        public var keyid: String
        /// Base64 DER.
        public var sig: String
    }

    public var payloadType: String
    /// Base64 of the payload bytes.
    public var payload: String
    public var signatures: [Signature]

    /// The pre-authentication encoding.
    public static func pae(type: String, payload: Data) -> Data {
        var out = Data("DSSEv1 \(type.utf8.count) \(type) \(payload.count) ".utf8)
        out.append(payload)
        return out
    }

    /// Signs `value` (its signer set to `signer`) into an envelope.
    public static func seal<P: SignedPayload>(_ value: P, by signer: CollaborationSigner) throws -> Envelope {
        var signed = value
        signed.signer = signer.signer
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let payload = try encoder.encode(signed)
        let signature = try signer.key.signature(for: pae(type: P.payloadType, payload: payload))
        return Envelope(
            payloadType: P.payloadType,
            payload: payload.base64EncodedString(),
            signatures: [Signature(keyid: Data(SHA256.hash(data: signer.key.publicKey.x963)).hexString, sig: signature.base64EncodedString())]
        )
    }

    /// The envelope as stored in the repository: pretty, sorted JSON with a trailing newline.
    public func fileData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings only: encoding cannot fail.
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }
}

/// A verified payload and the root that signed it.
public struct Opened<P: SignedPayload>: Sendable {
    public let value: P
    /// The payload bytes exactly as signed (membership versions chain over their digest).
    public let payload: Data
    public let signer: RootHash
    public let key: P256Key
    /// The envelope as read.
    public let envelope: Envelope
}

extension Envelope {
    /// Parses and verifies an envelope file of kind `P`: size, JSON, type, exactly one signature, the
    /// signer's key, the signature over the PAE, and the signer's proof; returns the payload and the
    /// root the proof folds to. Whether that root may sign is the caller's rule.
    public static func open<P: SignedPayload>(_ file: Data, as kind: P.Type, path: String) throws -> Opened<P> {
        guard file.count <= P.maxEnvelopeBytes else {
            throw CohortError(.tooLarge, "\(path) is \(file.count) bytes, more than the \(P.maxEnvelopeBytes) allowed")
        }
        let envelope: Envelope
        do {
            envelope = try Envelope(json: JSONValue.parse(file).object("envelope"))
        } catch {
            throw CohortError(.malformed, "\(path) is not a signed envelope: \(error.reason.prefix(80))")
        }
        guard envelope.payloadType == P.payloadType else {
            throw CohortError(.malformed, "\(path) holds '\(envelope.payloadType.prefix(80))', expected \(P.payloadType)")
        }
        guard envelope.signatures.count == 1, let signature = envelope.signatures.first else {
            throw CohortError(.badSignature, "\(path) must carry exactly one signature, it has \(envelope.signatures.count)")
        }
        let payload = try Base64Field.decode(envelope.payload, field: "\(path) payload", maxBytes: P.maxEnvelopeBytes)
        let value = try decodePayload(payload, as: P.self, path: path)
        // apple-v1 keys sign raw messages for Apple's stack: such a key never signs a Cohort file.
        guard value.signer.scheme == .cohortV1 else {
            throw CohortError(.badProof, "\(path) is signed under \(value.signer.scheme.rawValue); signed files use cohort-v1 keys")
        }
        let proof = try value.signer.proof()
        let key = try P256Key(x963: proof.publicKey)
        let sig = try Base64Field.decode(signature.sig, field: "\(path) signature", maxBytes: 256)
        do {
            try key.verifySignature(sig, for: pae(type: envelope.payloadType, payload: payload))
        } catch let error as CohortError {
            throw CohortError(error.code, "\(path): \(error.reason)", hint: "the file was changed after it was signed")
        }
        let root = try proof.root(under: value.signer.scheme)
        return Opened(value: value, payload: payload, signer: root, key: key, envelope: envelope)
    }

    private static func decodePayload<P: SignedPayload>(_ payload: Data, as kind: P.Type, path: String) throws -> P {
        if let reader = P.self as? any JSONPayload.Type {
            do {
                // The kinds opened once per commit skip Foundation's decoder.
                return try reader.init(json: JSONValue.parse(payload).object("payload")) as! P
            } catch {
                throw CohortError(.malformed, "\(path) payload does not match \(P.payloadType): \(error.reason.prefix(80))")
            }
        }
        // Every other kind passes the same strict reader first (a key named twice, a lone surrogate,
        // bad UTF-8 refused), so that a signed file means one thing to every reader, then Foundation's
        // decoder gives it its type.
        do {
            _ = try JSONValue.parse(payload)
        } catch {
            throw CohortError(.malformed, "\(path) payload does not match \(P.payloadType): \(error.reason.prefix(80))")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(P.self, from: payload)
        } catch {
            throw CohortError(.malformed, "\(path) payload does not match \(P.payloadType): \(error.localizedDescription.prefix(80))")
        }
    }
}

extension Envelope {
    init(json: JSONObject) throws(JSONFailure) {
        payloadType = try json.string("payloadType")
        payload = try json.string("payload")
        signatures = []
        for item in try json.array("signatures") {
            let signature = try item.object("signatures")
            signatures.append(Signature(keyid: try signature.string("keyid"), sig: try signature.string("sig")))
        }
    }
}
