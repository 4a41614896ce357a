import CohortIdentity
import Foundation

/// A signed payload read by `JSONValue` rather than `JSONDecoder`: the kinds verification opens once
/// per commit. Field names, types and the refusal of a missing field are exactly the `Codable`
/// ones; the reader is stricter only where `JSONValue` says.
protocol JSONPayload {
    init(json: JSONObject) throws(JSONFailure)
}

extension Notice: JSONPayload {
    init(json: JSONObject) throws(JSONFailure) {
        let typeName = try json.string("type")
        guard let type = NoticeType(rawValue: typeName) else { throw JSONFailure("bad value at 'type'") }
        var data: [String: String] = [:]
        for (key, value) in try json.object("data") {
            guard case .string(let text) = value else { throw JSONFailure("wrong type at 'data.\(key.prefix(40))'") }
            data[key] = text
        }
        id = try json.string("id")
        self.type = type
        time = try JSONDate.parse(json.string("time"), field: "time")
        collaboration = try json.string("collaboration")
        actor = try json.string("actor")
        self.data = data
        signer = try Signer(json: json.object("signer"))
    }
}

extension Signer {
    init(json: JSONObject) throws(JSONFailure) {
        guard let scheme = RootScheme(rawValue: try json.string("scheme")) else { throw JSONFailure("bad value at 'signer.scheme'") }
        var hashes: [String] = []
        for item in try json.array("inclusionHashes") {
            guard case .string(let text) = item else { throw JSONFailure("wrong type at 'signer.inclusionHashes'") }
            hashes.append(text)
        }
        self.scheme = scheme
        publicKey = try json.string("publicKey")
        publicKeyIndex = try json.integer("publicKeyIndex")
        inclusionHashes = hashes
    }
}

/// Dates as `JSONDecoder`'s `.iso8601` strategy reads them. The form Cohort writes
/// (`2026-11-23T10:00:00Z`, a real calendar date and time from 1970 on) is read directly; anything
/// else is handed to Foundation's own decoder, so that both readers give the same verdict.
enum JSONDate {
    static func parse(_ text: String, field: String) throws(JSONFailure) -> Date {
        if let date = fast(text) { return date }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let json = try? JSONEncoder().encode([text]), let date = try? decoder.decode([Date].self, from: json).first else {
            throw JSONFailure("bad value at '\(field)'")
        }
        return date
    }

    private static func fast(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == UInt8(ascii: "T"), bytes[13] == 0x3A,
              bytes[16] == 0x3A, bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (0x30...0x39).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1970, (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[month - 1]).contains(day) else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }
}
