import CohortBase
import Crypto
import Foundation

/// A Standard Webhooks signing secret: `whsec_` followed by base64 of 24 to 64 random bytes.
public struct WebhookSecret: Sendable {
    let key: SymmetricKey

    public init(_ text: String) throws {
        guard text.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(text.dropFirst(6))), (24...64).contains(bytes.count) else {
            throw CohortError(.malformed, "a webhook secret is whsec_ followed by base64 of 24 to 64 bytes",
                              hint: "generate one with: printf 'whsec_%s' \"$(head -c 32 /dev/urandom | base64)\"")
        }
        key = SymmetricKey(data: bytes)
    }

    /// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
    public func signature(id: String, timestamp: Int, body: Data) -> String {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        return "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
    }
}
