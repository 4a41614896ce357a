import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

@Suite struct EnrollmentTests {
    @Test func initialiseWritesPrivateFilesAndRefusesASecondTime() throws {
        let temp = try TemporaryDirectory()
        let home = IdentityHome(directory: temp.path("home"))
        let card = try home.initialise(handle: "ann@example.com", name: "Ann Lee", deviceName: "laptop")
        try card.verify()
        let attributes = try FileManager.default.attributesOfItem(atPath: home.keyURL.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: home.directory.path)
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        let keyBefore = try Data(contentsOf: home.keyURL)
        expectCode(.identityExists) { try home.initialise(handle: "ann@example.com", name: "Ann Lee", deviceName: "laptop") }
        expectCode(.identityExists) { try home.enroll(handle: "ann@example.com", deviceName: "phone") }
        #expect(try Data(contentsOf: home.keyURL) == keyBefore, "the existing key is never overwritten")
        // No temporary files are left beside the key.
        let names = try FileManager.default.contentsOfDirectory(atPath: home.directory.path).sorted()
        #expect(names == ["card.json", "device.json", "device.key"])
    }

    @Test func badInputLeavesNothingBehind() throws {
        let temp = try TemporaryDirectory()
        let home = IdentityHome(directory: temp.path("home"))
        expectCode(.malformed) { try home.initialise(handle: "has space", name: "Ann", deviceName: "laptop") }
        expectCode(.malformed) { try home.initialise(handle: "ann@example.com", name: "", deviceName: "laptop") }
        #expect(!home.hasDevice)
        #expect(!FileManager.default.fileExists(atPath: home.cardURL.path))
    }

    /// Two devices of one person: after enrolment both compute the same root and each proves membership.
    @Test func secondDeviceJoinsTheCard() throws {
        let temp = try TemporaryDirectory()
        let laptop = IdentityHome(directory: temp.path("laptop"))
        let phone = IdentityHome(directory: temp.path("phone"))
        _ = try laptop.initialise(handle: "ann@example.com", name: "Ann Lee", deviceName: "laptop")

        let request = try phone.enroll(handle: "ann@example.com", deviceName: "phone")
        #expect(try phone.enroll(handle: "ann@example.com", deviceName: "phone").device == request.device, "a pending enrolment re-emits its request")
        expectCode(.noIdentity) { try phone.proof(signing: Data("m".utf8), in: testContext) }

        let partial = try laptop.addDevice(EnrollmentRequest(json: request.jsonData()))
        #expect(partial.version == 2)
        #expect(partial.unsignedDevices.map(\.name) == ["phone"])
        expectCode(.badSignature) { try partial.verify() }

        let imported = try phone.importCard(IdentityCard(json: partial.jsonData()))
        #expect(imported.signedHere)
        try imported.card.verify()

        // The laptop takes the completed card back; importing it again changes nothing.
        let back = try laptop.importCard(imported.card)
        #expect(!back.signedHere)
        try #require(try laptop.loadCard()).verify()

        let root = try imported.card.root(in: testContext)
        #expect(try laptop.requireCard().root(in: testContext) == root)
        let roots = KnownRoots(active: [root])
        for home in [laptop, phone] {
            let proof = try home.proof(signing: Data("challenge".utf8), in: testContext)
            #expect(try SignedIdentityProof(json: proof.jsonData()).verify(against: roots) == root)
        }
    }

    @Test func thirdDeviceCollectsEverySignature() throws {
        let temp = try TemporaryDirectory()
        let homes = ["a", "b", "c"].map { IdentityHome(directory: temp.path($0)) }
        _ = try homes[0].initialise(handle: "ann@example.com", name: "Ann", deviceName: "a")
        let v2 = try homes[0].addDevice(homes[1].enroll(handle: "ann@example.com", deviceName: "b"))
        let complete2 = try homes[1].importCard(v2).card
        _ = try homes[0].importCard(complete2)
        // b adds c: the card then needs a, b and c.
        let v3 = try homes[1].addDevice(homes[2].enroll(handle: "ann@example.com", deviceName: "c"))
        let afterC = try homes[2].importCard(v3).card
        #expect(afterC.unsignedDevices.map(\.name) == ["a"])
        let afterA = try homes[0].importCard(afterC).card
        try afterA.verify()
        // b still holds the copy without c's and a's signatures; importing the complete one merges.
        try homes[1].importCard(afterA).card.verify()
        let roots = Set(try homes.map { try $0.requireCard().root(in: testContext) })
        #expect(roots.count == 1)
    }

    /// Mallory sends Ann's laptop a card listing the laptop and her own key, signed by hers: the
    /// laptop must not countersign it.
    @Test func cardsNotVouchedForByOwnDevicesAreNotSigned() throws {
        let temp = try TemporaryDirectory()
        let laptop = IdentityHome(directory: temp.path("laptop"))
        let v1 = try laptop.initialise(handle: "ann@example.com", name: "Ann", deviceName: "laptop")
        let mallory = DeviceKey()
        var forged = try IdentityCard(version: 2, handle: "ann@example.com", name: "Ann",
                                      devices: v1.devices + [.init(name: "mallory", publicKey: mallory.publicKey)])
        try forged.sign(with: mallory)
        expectCode(.badSignature) { try laptop.importCard(forged) }
        #expect(try laptop.requireCard() == v1, "the stored card is unchanged")
        // A renamed card signed by nobody Ann trusts is refused too.
        var renamed = try IdentityCard(version: 3, handle: "ann@example.com", name: "Mallory",
                                       devices: v1.devices + [.init(name: "m", publicKey: mallory.publicKey)])
        try renamed.sign(with: mallory)
        expectCode(.badSignature) { try laptop.importCard(renamed) }

        // A new device refuses a card that only it would sign.
        let phone = IdentityHome(directory: temp.path("phone"))
        let request = try phone.enroll(handle: "ann@example.com", deviceName: "phone")
        let selfMade = try IdentityCard(version: 1, handle: "ann@example.com", name: "Ann", devices: [request.device])
        expectCode(.badSignature) { try phone.importCard(selfMade) }
    }

    @Test func readableKeyIsRefused() throws {
        let temp = try TemporaryDirectory()
        let home = IdentityHome(directory: temp.path("home"))
        _ = try home.initialise(handle: "ann@example.com", name: "Ann", deviceName: "laptop")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: home.keyURL.path)
        expectCode(.io) { try home.loadDevice() }
    }

    @Test func requestsAndCardsFromElsewhereAreRefused() throws {
        let temp = try TemporaryDirectory()
        let laptop = IdentityHome(directory: temp.path("laptop"))
        let phone = IdentityHome(directory: temp.path("phone"))
        let mallory = IdentityHome(directory: temp.path("mallory"))
        _ = try laptop.initialise(handle: "ann@example.com", name: "Ann", deviceName: "laptop")
        _ = try mallory.initialise(handle: "mallory@example.com", name: "Mallory", deviceName: "m")

        // A request for another handle.
        let wrongHandle = try phone.enroll(handle: "bob@example.com", deviceName: "phone")
        expectCode(.malformed) { try laptop.addDevice(wrongHandle) }

        // A request whose key was swapped after signing.
        var object = try #require(try JSONSerialization.jsonObject(with: wrongHandle.jsonData()) as? [String: Any])
        object["handle"] = "ann@example.com"
        let forged = try EnrollmentRequest(json: JSONSerialization.data(withJSONObject: object))
        expectCode(.badSignature) { try laptop.addDevice(forged) }
        expectCode(.malformed) { try EnrollmentRequest(json: Data("{\"type\":\"x\"}".utf8)) }

        // Someone else's card, and a card that does not list this device.
        expectCode(.malformed) { try laptop.importCard(mallory.requireCard()) }
        let (stranger, _) = try makePerson(handle: "ann@example.com", devices: 1)
        expectCode(.malformed) { try laptop.importCard(stranger) }

        // An older card after a newer one.
        let other = IdentityHome(directory: temp.path("tablet"))
        let v1 = try laptop.requireCard()
        let v2 = try laptop.addDevice(other.enroll(handle: "ann@example.com", deviceName: "tablet"))
        _ = try other.importCard(v2)
        expectCode(.malformed) { try laptop.importCard(v1) }
        #expect(try laptop.requireCard().version == 2)
    }
}
