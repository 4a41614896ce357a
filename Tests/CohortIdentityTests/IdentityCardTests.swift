import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

@Suite struct IdentityCardTests {
    @Test func roundTripsAndVerifies() throws {
        let (card, _) = try makePerson(devices: 3)
        try card.verify()
        let parsed = try IdentityCard(json: card.jsonData())
        #expect(parsed == card)
        try parsed.verify()
        #expect(try parsed.root(in: testContext) == card.root(in: testContext))
    }

    /// Edits `card`'s JSON object and parses the result.
    func edited(_ card: IdentityCard, _ change: (inout [String: Any]) -> Void) throws -> IdentityCard {
        var object = try #require(try JSONSerialization.jsonObject(with: card.jsonData()) as? [String: Any])
        change(&object)
        return try IdentityCard(json: JSONSerialization.data(withJSONObject: object))
    }

    @Test func tamperingBreaksASignature() throws {
        let (card, _) = try makePerson(devices: 2)
        let changes: [(inout [String: Any]) -> Void] = [
            { $0["name"] = "Mallory" },
            { $0["handle"] = "mallory@example.com" },
            { $0["version"] = 7 },
            { object in
                var devices = object["devices"] as! [[String: Any]]
                devices[1]["name"] = "renamed"
                object["devices"] = devices
            },
        ]
        for change in changes {
            let tampered = try edited(card, change)
            expectCode(.badSignature) { try tampered.verify() }
        }
    }

    @Test func aKeyWithoutItsSignatureIsRefused() throws {
        let (card, keys) = try makePerson(devices: 1)
        let stranger = DeviceKey()
        // Mallory lists a key she holds next to Ann's, signs with hers and keeps Ann's old signature.
        var widened = try IdentityCard(version: 2, handle: card.handle, name: card.name,
                                       devices: card.devices + [.init(name: "mallory", publicKey: stranger.publicKey)])
        try widened.sign(with: stranger)
        expectCode(.badSignature) { try widened.verify() }
        #expect(widened.unsignedDevices.map(\.name) == ["device-0"])
        // Ann's old signature is over another payload.
        try widened.attach(card.signatures[0])
        expectCode(.badSignature) { try widened.verify() }
        // Signed by both, it verifies.
        var both = try IdentityCard(version: 2, handle: card.handle, name: card.name, devices: widened.devices)
        try both.sign(with: keys[0])
        try both.sign(with: stranger)
        try both.verify()
    }

    @Test func signaturesFromOutsideTheCardAreRefused() throws {
        let (card, _) = try makePerson(devices: 1)
        let (other, _) = try makePerson(devices: 1)
        let foreign = try edited(card) { object in
            var signatures = object["signatures"] as! [[String: Any]]
            signatures.append(["publicKey": other.devices[0].publicKey.base64, "signature": other.signatures[0].signature.base64EncodedString()])
            object["signatures"] = signatures
        }
        expectCode(.badSignature) { try foreign.verify() }
        // Swapping in another device's valid signature over another card fails too.
        let swapped = try edited(card) { object in
            object["signatures"] = [["publicKey": card.devices[0].publicKey.base64, "signature": other.signatures[0].signature.base64EncodedString()]]
        }
        expectCode(.badSignature) { try swapped.verify() }
    }

    @Test func malformedCardsAreRefused() throws {
        let (card, _) = try makePerson(devices: 1)
        let json = String(decoding: card.jsonData(), as: UTF8.self)
        expectCode(.malformed) { try IdentityCard(json: Data("not json".utf8)) }
        expectCode(.malformed) { try IdentityCard(json: Data("{}".utf8)) }
        expectCode(.malformed) { try IdentityCard(json: Data(json.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : \"1\"").utf8)) }
        expectCode(.malformed) { try IdentityCard(json: Data(json.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 0").utf8)) }
        expectCode(.malformed) { try IdentityCard(json: Data(repeating: 0x20, count: IdentityCard.maxJSONBytes + 1)) }
        expectCode(.malformed) { try edited(card) { $0["handle"] = "has space" } }
        expectCode(.malformed) { try edited(card) { $0["name"] = "" } }
        expectCode(.malformed) { try edited(card) { $0["name"] = "line\nbreak" } }
        expectCode(.malformed) { try edited(card) { object in
            var devices = object["devices"] as! [[String: Any]]
            devices[0]["publicKey"] = "not base64!"
            object["devices"] = devices
        } }
        expectCode(.malformed) { try edited(card) { object in
            let device = (object["devices"] as! [[String: Any]])[0]
            object["devices"] = [device, device]
        } }
        expectCode(.malformed) { try edited(card) { object in
            object["devices"] = (0..<17).map { ["name": "d\($0)", "publicKey": DeviceKey().publicKey.base64] }
        } }
        expectCode(.malformed) { try edited(card) { object in
            let signature = (object["signatures"] as! [[String: Any]])[0]
            object["signatures"] = [signature, signature]
        } }
    }

    @Test func cardKeysMustBeUncompressedPointsOnTheCurve() throws {
        let (card, _) = try makePerson(devices: 1)
        let good = card.devices[0].publicKey.x963
        var offCurve = good
        offCurve[40] ^= 0x55
        let compressed = Data([0x02 | (good[64] & 1)]) + good[1...32]
        for bad in [offCurve, compressed, good.prefix(64), good + Data([0])] {
            expectCode(.badKey) { try edited(card) { object in
                var devices = object["devices"] as! [[String: Any]]
                devices[0]["publicKey"] = bad.base64EncodedString()
                object["devices"] = devices
            } }
        }
    }
}
