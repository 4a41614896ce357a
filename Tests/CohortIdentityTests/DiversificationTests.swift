import CLibcrypto
import CohortBase
import Crypto
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

@Suite struct DiversificationTests {
    /// swift-crypto's public key for the diversified private key equals the point libcrypto computes
    /// as t · pk_master, for many random keys and collaborations.
    @Test func swiftCryptoAgreesWithLibcrypto() throws {
        for round in 0..<64 {
            let master = DeviceKey()
            let context = try CollaborationContext(identifier: "collab-\(round)", salt: Data((0..<16).map { _ in UInt8.random(in: 0...255) }))
            let t = try Diversification.blindScalar(for: master.publicKey, in: context)
            let viaLibcrypto = try #require(P256Arithmetic.multiply(point: master.publicKey.x963, by: t))
            let diversified = try master.diversified(for: context)
            let viaSwiftCrypto = diversified.privateKey.publicKey.x963Representation
            #expect(viaSwiftCrypto == viaLibcrypto)
            #expect(try Diversification.publicKey(for: master.publicKey, in: context).x963 == viaLibcrypto)
        }
    }

    @Test func scalarProductMatchesPointProduct() throws {
        // (a·b)·G computed as a scalar product and as a point product must agree.
        let a = DeviceKey()
        let b = try #require(P256Arithmetic.reduceModOrder(Data((0..<32).map { _ in UInt8.random(in: 0...255) })))
        let product = try #require(P256Arithmetic.multiplyScalars(a.privateKey.rawRepresentation, b))
        let viaScalar = try DeviceKey(rawScalar: product).publicKey.x963
        let viaPoint = try #require(P256Arithmetic.multiply(point: a.publicKey.x963, by: b))
        #expect(viaScalar == viaPoint)
    }

    @Test func keysAreUnlinkableAcrossCollaborations() throws {
        let master = DeviceKey()
        let first = try Diversification.publicKey(for: master.publicKey, in: CollaborationContext(identifier: "a", salt: Data(count: 16)))
        let second = try Diversification.publicKey(for: master.publicKey, in: CollaborationContext(identifier: "b", salt: Data(count: 16)))
        let resalted = try Diversification.publicKey(for: master.publicKey, in: CollaborationContext(identifier: "a", salt: Data(repeating: 1, count: 16)))
        #expect(Set([first, second, resalted, master.publicKey]).count == 4)
    }

    @Test func reductionRefusesZero() {
        // n itself reduces to zero, which is not a usable scalar.
        let order = Data(hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!
        #expect(P256Arithmetic.reduceModOrder(order) == nil)
        #expect(P256Arithmetic.reduceModOrder(Data(count: 48)) == nil)
        #expect(P256Arithmetic.reduceModOrder(order + Data([0])) == nil, "n·256 is a multiple of n")
        #expect(P256Arithmetic.reduceModOrder(Data([1]) + order) != nil)
    }

    @Test func pointMultiplicationRefusesPointsOffTheCurve() {
        var offCurve = DeviceKey().publicKey.x963
        offCurve[64] ^= 1
        #expect(P256Arithmetic.multiply(point: offCurve, by: Data(repeating: 1, count: 32)) == nil)
    }

    @Test(arguments: ["", String(repeating: "x", count: 256), "has space", "tab\there"])
    func contextRefusesBadIdentifiers(identifier: String) {
        expectCode(.malformed) { try CollaborationContext(identifier: identifier, salt: Data(count: 16)) }
    }

    @Test(arguments: ["", "00", String(repeating: "0", count: 30), String(repeating: "0", count: 34), "zz" + String(repeating: "0", count: 30)])
    func contextRefusesBadSalts(saltHex: String) {
        expectCode(.malformed) { try CollaborationContext(identifier: "c", saltHex: saltHex) }
    }
}
