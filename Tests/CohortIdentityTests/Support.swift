import CohortBase
import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

func hex(_ text: String) throws -> Data {
    try #require(Data(hex: text), "not hex: \(text)")
}

let testContext = try! CollaborationContext(identifier: "6f1c2a9e-3b7d-4c55-9a0e-2d8f4b1e7c30", salt: Data(0..<16))

/// A person with `devices` fresh keys and a complete card.
func makePerson(handle: String = "ann@example.com", devices: Int) throws -> (card: IdentityCard, keys: [DeviceKey]) {
    let keys = (0..<devices).map { _ in DeviceKey() }
    var card = try IdentityCard(version: 1, handle: handle, name: "Ann Lee",
                                devices: keys.enumerated().map { try .init(name: "device-\($0.offset)", publicKey: $0.element.publicKey) })
    for key in keys { try card.sign(with: key) }
    return (card, keys)
}
