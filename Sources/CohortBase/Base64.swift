import Foundation

/// Strict base64 for values that come from outside: standard alphabet, padded, no whitespace, bounded.
public enum Base64Field {
    /// Decodes `text` as the field `name`, refusing anything longer than `maxBytes` once decoded.
    public static func decode(_ text: String, field name: String, maxBytes: Int) throws -> Data {
        // 4 characters carry 3 bytes; refuse before decoding anything oversized.
        guard text.utf8.count <= (maxBytes + 2) / 3 * 4 else {
            throw CohortError(.malformed, "\(name) is longer than \(maxBytes) bytes", hint: "check that the right value was pasted")
        }
        guard text.utf8.count % 4 == 0, let data = Data(base64Encoded: text), data.count <= maxBytes else {
            throw CohortError(.malformed, "\(name) is not standard padded base64", hint: "encode binary values as base64 with '=' padding")
        }
        return data
    }
}
