import CohortBase
import Crypto
import Foundation

/// OpenSSH signatures (`PROTOCOL.sshsig`) with `ecdsa-sha2-nistp256` keys: the format of
/// `ssh-keygen -Y sign` and of git commits signed with `gpg.format = ssh`.
public enum SSHSignature {
    static let magic = Data("SSHSIG".utf8)
    static let keyType = "ecdsa-sha2-nistp256"
    static let curve = "nistp256"
    static let begin = "-----BEGIN SSH SIGNATURE-----"
    static let end = "-----END SSH SIGNATURE-----"
    /// Largest armored signature accepted.
    public static let maxArmoredBytes = 4096

    /// The key as an OpenSSH public key line body: `ecdsa-sha2-nistp256 AAAA…`.
    public static func publicKeyLine(_ key: P256Key) -> String {
        "\(keyType) \(publicKeyBlob(key).base64EncodedString())"
    }

    static func publicKeyBlob(_ key: P256Key) -> Data {
        var writer = SSHWriter()
        writer.string(keyType)
        writer.string(curve)
        writer.string(key.x963)
        return writer.bytes
    }

    /// What is actually signed: `"SSHSIG" ‖ string(namespace) ‖ string("") ‖ string(hash) ‖ string(H(message))`.
    static func signedData(_ message: Data, namespace: String, hash: String) throws -> Data {
        let digest: Data
        switch hash {
        case "sha512": digest = SHA512.hash(data: message).bytes
        case "sha256": digest = SHA256.hash(data: message).bytes
        default: throw CohortError(.badSignature, "SSH signature uses hash '\(hash.prefix(20))'; expected sha256 or sha512")
        }
        var writer = SSHWriter()
        writer.raw(magic)
        writer.string(namespace)
        writer.string(Data())
        writer.string(hash)
        writer.string(digest)
        return writer.bytes
    }

    /// Signs `message` in `namespace` and returns the armored signature (no trailing newline).
    public static func sign(_ message: Data, with key: DeviceKey, namespace: String = "git") throws -> String {
        let toSign = try signedData(message, namespace: namespace, hash: "sha512")
        let der = try key.signature(for: toSign)
        let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation

        var inner = SSHWriter()
        inner.mpint(unsigned: raw.prefix(32))
        inner.mpint(unsigned: raw.suffix(32))
        var signature = SSHWriter()
        signature.string(keyType)
        signature.string(inner.bytes)

        var blob = SSHWriter()
        blob.raw(magic)
        blob.u32(1)
        blob.string(publicKeyBlob(key.publicKey))
        blob.string(namespace)
        blob.string(Data())
        blob.string("sha512")
        blob.string(signature.bytes)

        let encoded = blob.bytes.base64EncodedString()
        let lines = stride(from: 0, to: encoded.count, by: 70).map { start -> String in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            let to = encoded.index(from, offsetBy: min(70, encoded.count - start))
            return String(encoded[from..<to])
        }
        return ([begin] + lines + [end]).joined(separator: "\n")
    }

    /// Verifies an armored signature over `message` in `namespace`; returns the signer's key.
    /// Throws `E_BAD_SIGNATURE` for anything that is not a valid ecdsa-sha2-nistp256 sshsig, and
    /// `E_BAD_KEY` for a key that is not a point on P-256.
    public static func verify(_ armored: String, message: Data, namespace: String = "git") throws -> P256Key {
        guard armored.utf8.count <= maxArmoredBytes else {
            throw CohortError(.badSignature, "SSH signature is larger than \(maxArmoredBytes) bytes")
        }
        // Raw bytes, not Characters nor UTF-8 views: this runs once per commit verified. The lines
        // are trimmed of blanks; empty ones do not count; the first and last must be the armor.
        var text = armored
        let blob: Data? = text.withUTF8 { bytes in
            let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D }
            var lines: [Range<Int>] = []
            var start = 0
            while start < bytes.count {
                var lineEnd = start
                while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
                var first = start
                var last = lineEnd
                while first < last && isBlank(bytes[first]) { first += 1 }
                while last > first && isBlank(bytes[last - 1]) { last -= 1 }
                if first < last { lines.append(first..<last) }
                start = lineEnd + 1
            }
            guard lines.count >= 3, bytes[lines[0]].elementsEqual(begin.utf8), bytes[lines[lines.count - 1]].elementsEqual(end.utf8) else {
                return nil
            }
            var body = Data(capacity: bytes.count)
            for line in lines.dropFirst().dropLast() { body.append(UnsafeBufferPointer(rebasing: bytes[line])) }
            return Data(base64Encoded: body)
        }
        guard let blob else {
            throw CohortError(.badSignature, "not an armored SSH signature", hint: "the commit must be signed with `cohort commit` or ssh-keygen -Y sign")
        }
        var reader = SSHReader(blob, what: "SSH signature")
        guard try reader.raw(6) == magic, try reader.u32() == 1 else {
            throw CohortError(.badSignature, "SSH signature has the wrong magic or version")
        }
        var keyReader = SSHReader(try reader.string(), what: "SSH public key")
        guard try keyReader.text() == keyType, try keyReader.text() == curve else {
            throw CohortError(.badSignature, "SSH signature is not by an ecdsa-sha2-nistp256 key")
        }
        let key = try P256Key(x963: try keyReader.string(maxBytes: 256))
        guard keyReader.isAtEnd else { throw CohortError(.badSignature, "SSH public key has trailing bytes") }
        let signedNamespace = try reader.text()
        guard signedNamespace == namespace else {
            throw CohortError(.badSignature, "SSH signature is for namespace '\(signedNamespace.prefix(40))', not '\(namespace)'")
        }
        _ = try reader.string()  // reserved
        let hash = try reader.text()
        var signatureReader = SSHReader(try reader.string(), what: "SSH signature value")
        guard reader.isAtEnd else { throw CohortError(.badSignature, "SSH signature has trailing bytes") }
        guard try signatureReader.text() == keyType else {
            throw CohortError(.badSignature, "SSH signature value is not ecdsa-sha2-nistp256")
        }
        var integers = SSHReader(try signatureReader.string(maxBytes: 80), what: "SSH signature value")
        let r = try integers.mpint32()
        let s = try integers.mpint32()
        guard integers.isAtEnd, signatureReader.isAtEnd else { throw CohortError(.badSignature, "SSH signature value has trailing bytes") }
        try key.verifySignature(r + s, for: try signedData(message, namespace: namespace, hash: hash), encoding: .raw)
        return key
    }
}
