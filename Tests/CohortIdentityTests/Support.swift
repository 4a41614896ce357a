import Foundation
import Testing
@testable import CohortIdentity

/// The shared test vectors, found through `COHORT_TEST_VECTORS`.
enum Vectors {
    static let directory: URL? = ProcessInfo.processInfo.environment["COHORT_TEST_VECTORS"]
        .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }

    static var available: Bool { directory != nil }

    /// Shown when a conformance suite is skipped.
    static let unsetReason: Comment = "COHORT_TEST_VECTORS is unset: conformance vectors skipped (CI sets it to ../shared/vectors)"

    static func url(_ relative: String) throws -> URL {
        let directory = try #require(directory, "COHORT_TEST_VECTORS is unset")
        return directory.appendingPathComponent(relative)
    }

    static func json(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: url(relative))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// A directory that exists for one test and is removed afterwards.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

func hex(_ text: String) throws -> Data {
    try #require(Data(hex: text), "not hex: \(text)")
}

/// Asserts that `body` throws a `CohortError` with `code`.
func expectCode<T>(_ code: CohortError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    do {
        _ = try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CohortError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
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
