import CohortBase
import Foundation

/// Shared JSON habits: sorted, pretty output and one-line descriptions of decoding failures.
enum JSONCoding {
    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            preconditionFailure("encoding plain strings and numbers cannot fail: \(error)")
        }
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _):
            return "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at '\(path(context))'"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "bad value at '\(path(context))'"
        default:
            return "not JSON"
        }
    }

    /// The files people pass in place of one another.
    enum Kind {
        case card, enrolmentRequest
    }

    /// When JSON that failed to parse as `expected` is the other kind of file Cohort writes, the
    /// one-line reason and what to do.
    static func misplaced(_ data: Data, expected: Kind) -> CohortError? {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        switch expected {
        case .card where object["type"] as? String == EnrollmentRequest.type:
            return CohortError(.malformed, "this file is an enrolment request, not an identity card",
                               hint: "add the new device on one of your devices with `cohort id add-device FILE`; owners need the card that `cohort id card` prints")
        case .enrolmentRequest where object["devices"] != nil && object["signatures"] != nil:
            return CohortError(.malformed, "this file is an identity card, not an enrolment request",
                               hint: "on the new device, `cohort id enroll --handle H --output FILE` writes the request; a card is imported with `cohort id import-card`")
        default:
            return nil
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
