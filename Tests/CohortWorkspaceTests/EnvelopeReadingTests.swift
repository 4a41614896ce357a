import CohortBase
import CohortGit
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing
@testable import CohortCollaboration

/// Notices and envelopes are read by Cohort's own JSON reader (Foundation's decoder cost more than
/// their signatures). It must read every file Cohort writes exactly as `JSONDecoder` does, and refuse
/// signed bytes that another reader could see differently.
@Suite struct EnvelopeReadingTests {
    @Test func readsWhatCohortWritesAsFoundationDoes() throws {
        let scenario = try Scenario()
        let ann = try signer(scenario.owner.home, in: scenario.owner)
        let texts = ["plain", "quotes \" and \\ back", "a/b/c", "tab\tnew\nline", "café ☕️ 😀", "\u{0}\u{1f}", "👩‍👩‍👧 e\u{301}", String(repeating: "x", count: 8000)]
        for (index, text) in texts.enumerated() {
            let time = Date(timeIntervalSince1970: TimeInterval(index * 86_399 * 97 + 1_700_000_000))
            let notice = Notice(type: .contentCommented, collaboration: scenario.identifier, actor: ann.root,
                                data: ["path": "notes/\(text.prefix(20)).md", "text": text], time: time, signer: ann.signer)
            let file = try sealed(notice, by: ann)
            let opened = try Envelope.open(file, as: Notice.self, path: notice.path)
            var expected = notice
            expected.signer = ann.signer
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let foundation = try decoder.decode(Notice.self, from: opened.payload)
            #expect(opened.value == foundation)
            #expect(opened.value.data == expected.data)
            #expect(opened.value.time == Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down)))
            #expect(opened.signer == ann.root)
        }
    }

    /// The collaboration file and the membership, as Cohort writes them and changed field by field
    /// (each field dropped, `null`, of every other JSON type, an unknown value, an extra field): the
    /// reader verification uses answers exactly as `JSONDecoder` does, value for value, refusal for refusal.
    @Test func theStateFilesReadAsFoundationReadsThem() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        _ = try owner.removeParticipants([scenario.cy.handle])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        func payload<P: SignedPayload>(_ path: String, as kind: P.Type) throws -> Data {
            try Envelope.open(Data(contentsOf: owner.directory.appendingPathComponent(path)), as: kind, path: path).payload
        }
        func compare<P: SignedPayload & JSONPayload & Equatable>(_ data: Data, as kind: P.Type, _ what: String) {
            let ours = try? P(json: JSONValue.parse(data).object("payload"))
            let foundation = try? decoder.decode(P.self, from: data)
            let agree = ours == foundation
            #expect(agree, "\(P.self) \(what): ours \(ours == nil ? "refused" : "read"), Foundation \(foundation == nil ? "refused" : "read")")
        }
        var cases = 0
        func variants<P: SignedPayload & JSONPayload & Equatable>(of data: Data, as kind: P.Type) throws {
            let original = try JSONSerialization.jsonObject(with: data)
            compare(data, as: kind, "as written")
            let others: [Any] = [NSNull(), 1, 1.5, "x", true, [Any](), [String: Any](), "read-only", "cohort-v1", "2026-11-23T10:00:00Z", 2.0]
            func walk(_ value: Any, _ rebuild: @escaping (Any?) -> Any, _ path: String) throws {
                for other in others {
                    let changed = try JSONSerialization.data(withJSONObject: rebuild(other), options: .fragmentsAllowed)
                    compare(changed, as: kind, "\(path) = \(other)")
                    cases += 1
                }
                if let object = value as? [String: Any] {
                    var extra = object
                    extra["unknown"] = 1
                    compare(try JSONSerialization.data(withJSONObject: rebuild(extra), options: .fragmentsAllowed), as: kind, "\(path) + unknown")
                    for (key, child) in object {
                        compare(try JSONSerialization.data(withJSONObject: rebuild(object.filter { $0.key != key }), options: .fragmentsAllowed), as: kind, "\(path).\(key) dropped")
                        try walk(child, { new in var copy = object; copy[key] = new; return rebuild(copy) }, "\(path).\(key)")
                    }
                } else if let array = value as? [Any] {
                    for (index, child) in array.enumerated() {
                        try walk(child, { new in var copy = array; copy[index] = new!; return rebuild(copy) }, "\(path)[\(index)]")
                    }
                }
            }
            try walk(original, { $0 ?? NSNull() }, "")
        }
        let collaboration = try payload(CohortLayout.collaboration, as: CollaborationFile.self)
        try variants(of: collaboration, as: CollaborationFile.self)
        let members = try payload(CohortLayout.members, as: Membership.self)
        #expect(String(decoding: members, as: UTF8.self).contains("removedBy"))
        try variants(of: members, as: Membership.self)
        #expect(cases > 500)
        // Optional fields absent from the files as written, and integers spelled every way JSON allows.
        let numbers = ["1", "0", "-0", "1.0", "1e0", "10E-1", "0.1e1", "2.5", "-1", "1e3", "9007199254740991", "null", "\"1\"", "true", "[]"]
        let text = String(decoding: collaboration, as: UTF8.self)
        #expect(!text.contains("\"revision\""))
        for number in numbers {
            compare(Data(text.replacingOccurrences(of: "{\"createdAt\"", with: "{\"revision\":\(number),\"createdAt\"").utf8), as: CollaborationFile.self, "revision \(number)")
        }
        let version = try #require(String(decoding: members, as: UTF8.self).firstRange(of: /"version":[0-9]+/))
        for number in numbers {
            var spelled = String(decoding: members, as: UTF8.self)
            spelled.replaceSubrange(version, with: "\"version\":\(number)")
            compare(Data(spelled.utf8), as: Membership.self, "version \(number)")
        }
        // From 2^53 on, Foundation reads an integer through Decimal; Cohort's reader refuses it.
        var huge = String(decoding: members, as: UTF8.self)
        huge.replaceSubrange(version, with: "\"version\":1e16")
        #expect(throws: JSONFailure.self) { try Membership(json: JSONValue.parse(Data(huge.utf8)).object("payload")) }
    }

    /// JSON nested as deep as the reader allows opens on a thread with a small stack (1 MiB; Linux
    /// gives threads 8 MiB, and this debug build needs more than 512 KiB, with or without `indirect`).
    @Test func deepNestingFitsASmallStack() throws {
        let deep = Data((String(repeating: "[", count: JSONValue.maxDepth - 1) + String(repeating: "]", count: JSONValue.maxDepth - 1)).utf8)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var parsed = false
        let thread = Thread {
            parsed = (try? JSONValue.parse(deep)) != nil
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        done.wait()
        #expect(parsed)
    }

    @Test func datesOutsideTheUsualFormAgreeWithFoundation() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let forms = ["2026-11-23T10:00:00Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-02-30T00:00:00Z",
                     "2026-11-23T24:00:00Z", "2026-11-23T10:00:60Z", "1969-12-31T23:59:59Z", "2026-11-23T10:00:00.5Z",
                     "2026-11-23T10:00:00+01:00", "2026-11-23 10:00:00Z", "2026-11-23T10:00:00z", "２026-11-23T10:00:00Z",
                     "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "", "yesterday"]
        for form in forms {
            let foundation = try? decoder.decode([Date].self, from: JSONEncoder().encode([form])).first
            let ours = try? JSONDate.parse(form, field: "time")
            let agree = ours == foundation
            #expect(agree, "\(form): ours \(String(describing: ours)), Foundation's \(String(describing: foundation))")
        }
        // Every second of a few random days, read the fast way, is what Foundation reads.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 0...4_000_000_000, using: &generator)))
            let text = ISO8601DateFormatter().string(from: date)
            #expect(try JSONDate.parse(text, field: "time") == decoder.decode([Date].self, from: JSONEncoder().encode([text])).first)
        }
    }

    @Test func theReaderRefusesWhatAnotherReaderCouldReadDifferently() throws {
        let refused: [String] = [
            #"{"a":1,"a":2}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00x"}"#, #"{"a":"\ud800\u0041"}"#, "{\"a\":\"\u{1}\"}",
            #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":"\x"}"#,
            #"{"a":1} x"#, #"{"a":1,}"#, #"[1,]"#, #"{"a" 1}"#, #"{'a':1}"#, #"{"a":tru}"#, #"{"a":NaN}"#, "",
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ]
        for text in refused {
            #expect(throws: JSONFailure.self, "\(text.prefix(40)) was read") { try JSONValue.parse(Data(text.utf8)) }
        }
        #expect(throws: JSONFailure.self) { try JSONValue.parse(Data([0x22, 0xC3, 0x28, 0x22])) }  // not UTF-8
        #expect(throws: JSONFailure.self) { try JSONValue.parse(Data([0x22, 0xED, 0xA0, 0x80, 0x22])) }  // an encoded surrogate
        #expect(throws: JSONFailure.self) { try JSONValue.parse(#"{"a":1}"#.data(using: .utf16)!) }
        // Integers as JSONDecoder reads them into Int.
        for (text, value) in [("3", 3), ("1.0", 1), ("1e0", 1), ("-0", 0), ("2.5e1", 25)] {
            #expect(try JSONValue.parse(Data(#"{"i":\#(text)}"#.utf8)).object("i").integer("i") == value)
        }
        for text in ["1.5", "1e400", "99999999999999999999"] {
            #expect(throws: JSONFailure.self) { try JSONValue.parse(Data(#"{"i":\#(text)}"#.utf8)).object("i").integer("i") }
        }

        let read: [String: JSONValue] = [
            #" {"a" : [ 1 , -2.5e+3 , true , false , null , "\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\" ] } "#:
                .object(["a": .array([.number("1"), .number("-2.5e+3"), .bool(true), .bool(false), .null, .string("é😀/\u{8}\u{c}\n\r\t\"\\")])]),
            #"{}"#: .object([:]), #"[]"#: .array([]), #""e\u0301""#: .string("e\u{301}"), "0": .number("0"),
            "\u{FEFF}[1]": .array([.number("1")]),
        ]
        for (text, value) in read {
            #expect(try JSONValue.parse(Data(text.utf8)) == value, "\(text)")
        }
        // A key named twice is found however many keys come between, and in any spelling a
        // dictionary's keys would take as one (canonically equivalent).
        for keys in [3, 16, 17, 40] {
            let members = (0..<keys).map { #""k\#($0)":\#($0)"# }
            let object = try JSONValue.parse(Data("{\(members.joined(separator: ","))}".utf8)).object("o")
            #expect(object.count == keys && object["k\(keys - 1)"] == .number("\(keys - 1)"))
            for twice in [#""k0":1"#, #""\u00e9":1,"e\u0301":2"#] {
                let text = "{\((members + [twice]).joined(separator: ","))}"
                #expect(throws: JSONFailure.self, "\(keys) keys") { try JSONValue.parse(Data(text.utf8)) }
            }
        }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character, a byte
    /// of a multi-byte character or a bad byte at every place in and around a word is read (or
    /// refused) as Foundation's `JSONSerialization` reads it.
    @Test func everyByteOfAStringIsSeenWhereverItFalls() throws {
        let specials: [[UInt8]] = [[0x5C, 0x22], [0x5C, 0x5C], [0x5C, 0x6E], [0x22], [0x01], [0x1F], [0x7F], [0x20], [0xC3, 0xA9],
                                   [0xF0, 0x9F, 0x98, 0x80], [0xC3], [0xFF], [0xE2, 0x82], [0x5C, 0x75, 0x30, 0x30, 0x65, 0x39]]
        var compared = 0
        for special in specials {
            for before in 0..<20 {
                for after in [0, 1, 7, 8, 9, 17] {
                    let bytes = [0x5B, 0x22] + Array(repeating: UInt8(ascii: "a"), count: before) + special
                        + Array(repeating: UInt8(ascii: "b"), count: after) + [0x22, 0x5D]
                    let foundation = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String]
                    let ours = try? JSONValue.parse(Data(bytes))
                    if let foundation {
                        #expect(ours == .array(foundation.map { .string($0) }), "\(bytes)")
                    } else {
                        #expect(ours == nil, "\(bytes) was read")
                    }
                    compared += 1
                }
            }
        }
        #expect(compared == specials.count * 20 * 6)
    }

    @Test func aSignedNoticeNamingAFieldTwiceIsRefusedEverywhere() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let ann = try signer(owner.home, in: owner)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: ann.root, data: ["path": "x.md"], signer: ann.signer)
        // `type` twice: a reader keeping the first sees an edit, one keeping the last a membership notice.
        let file = try Attacks.envelope(payload: Attacks.noticePayloadNamingTypeTwice(notice, second: .membershipAdded, by: ann), by: ann)
        #expect {
            try Envelope.open(file, as: Notice.self, path: notice.path)
        } throws: { ($0 as? CohortError)?.code == .malformed && ($0 as? CohortError)?.reason.contains("appears twice") == true }

        let bad = try forge(owner, signer: ann, files: [notice.path: file, "x.md": Data("x\n".utf8)])
        expectViolation(.malformed, in: owner, at: bad)
    }

    @Test func paddingAndLookAlikeDigitsNeverMakeANoticePath() {
        let id = "0123456789abcdef0123456789abcdef"
        #expect(CohortLayout.isNoticePath(".cohort/notices/01/\(id).json"))
        for path in [".cohort/notices/02/\(id).json", ".cohort/notices/01/\(id.uppercased()).json", ".cohort/notices/01/\(id).JSON",
                     ".cohort/notices/０1/０\(id.dropFirst()).json", ".cohort/notices/01/\(id)x.json", ".cohort/notices//\(id).json",
                     ".cohort/notices/01/\(id).json/", "x.cohort/notices/01/\(id).json", ".cohort/notices/01/\(id.dropLast())g.json"] {
            #expect(!CohortLayout.isNoticePath(path), "\(path)")
        }
    }
}
