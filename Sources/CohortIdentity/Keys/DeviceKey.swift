import CohortBase
import Crypto
import Foundation

/// A device's P-256 master key pair. The private half never leaves the device.
public struct DeviceKey: Sendable {
    let privateKey: P256.Signing.PrivateKey

    /// A new random key.
    public init() {
        privateKey = P256.Signing.PrivateKey()
    }

    /// A key from its PEM (PKCS#8) form, as stored under `$COHORT_HOME`.
    public init(pem: String) throws {
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw CohortError(.badKey, "the device key file is not a P-256 private key in PEM form",
                              hint: "restore device.key from a backup, or create a new identity in another COHORT_HOME")
        }
    }

    /// A key from its 32-byte scalar.
    public init(rawScalar: Data) throws {
        do {
            privateKey = try P256.Signing.PrivateKey(rawRepresentation: rawScalar)
        } catch {
            throw CohortError(.badKey, "a P-256 private key must be a 32-byte scalar in [1, n-1]")
        }
    }

    /// The PEM (PKCS#8) form. Secret: write it only with mode 0600.
    public var pem: String { privateKey.pemRepresentation }

    /// The master public key.
    public var publicKey: P256Key { P256Key(privateKey.publicKey) }

    /// An ECDSA P-256 / SHA-256 signature over `message`, DER-encoded.
    public func signature(for message: some DataProtocol) throws -> Data {
        do {
            return try privateKey.signature(for: message).derRepresentation
        } catch {
            throw CohortError(.badSignature, "signing failed: \(error)")
        }
    }
}
