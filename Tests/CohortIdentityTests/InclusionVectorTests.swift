import CohortTestSupport
import Foundation
import Testing
@testable import CohortIdentity

/// RFC 9162 inclusion vectors (transparency-dev/merkle) through the general verifier.
@Suite(.enabled(if: Vectors.available, Vectors.unsetReason))
struct InclusionVectorTests {
    static func files() throws -> [URL] {
        guard let directory = Vectors.directory?.appendingPathComponent("rfc9162-inclusion") else { return [] }
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    @Test func everyVector() throws {
        let files = try Self.files()
        #expect(files.count >= 80, "found \(files.count) inclusion vectors")
        var accepted = 0
        for file in files {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            func bytes(_ value: Any?) throws -> Data {
                let text = try #require(value as? String)
                return try #require(Data(base64Encoded: text))
            }
            let leafIndex = try #require((object["leafIdx"] as? NSNumber)?.uint64Value)
            let treeSize = try #require((object["treeSize"] as? NSNumber)?.uint64Value)
            let path = (object["proof"] as? [String]) ?? []
            let proof = try path.map { try bytes($0) }
            let verified = MerkleInclusion.verify(
                leafHash: try bytes(object["leafHash"]), index: leafIndex, treeSize: treeSize,
                path: proof, root: try bytes(object["root"]), scheme: .cohortV1
            )
            let wantError = try #require(object["wantErr"] as? Bool)
            #expect(verified == !wantError, "\(file.path): \(object["desc"] ?? "")")
            if verified { accepted += 1 }
        }
        #expect(accepted >= 6, "the happy paths must verify")
    }
}
