import CohortBase
import Crypto
import Foundation

/// A person's cohort-v1 tree in one collaboration: exactly 16 leaves (one per device, the rest
/// padding), ordered so that a key's position says nothing about how many devices there are.
public struct IdentityTree: Sendable {
    /// Leaves in every cohort-v1 tree.
    public static let leafCount = 16
    static let depth = 4
    static let padDomain = Data("COHORT-V1-PAD".utf8)
    static let orderDomain = Data("COHORT-V1-ORDER".utf8)

    /// The diversified public key of each master key, in the order the master keys were given.
    public let diversifiedKeys: [P256Key]
    /// The 16 leaf values in tree order.
    public let leaves: [Data]
    /// The root.
    public let root: RootHash
    /// levels[0] = leaves, levels[4] = [root].
    private let levels: [[Data]]

    /// Builds the tree of `masterKeys` (1 to 16 distinct keys) for `context`.
    public init(masterKeys: [P256Key], context: CollaborationContext) throws {
        guard (1...Self.leafCount).contains(masterKeys.count) else {
            throw CohortError(.malformed, "a person has 1 to \(Self.leafCount) devices, got \(masterKeys.count)")
        }
        guard Set(masterKeys).count == masterKeys.count else {
            throw CohortError(.malformed, "the same device key is listed twice")
        }
        let scheme = RootScheme.cohortV1
        let diversified = try masterKeys.map { try Diversification.publicKey(for: $0, in: context) }
        var values = diversified.map { scheme.leaf($0.x963) }

        let digest = Self.cardDigest(masterKeys)
        let binding = context.binding
        for j in 0..<(Self.leafCount - masterKeys.count) {
            var hasher = SHA256()
            hasher.update(data: Self.padDomain)
            hasher.update(data: binding)
            hasher.update(data: digest)
            hasher.update(data: [UInt8(j)])
            values.append(hasher.finalize().bytes)
        }

        let ordered = values
            .map { (key: Self.orderKey($0, salt: context.salt), leaf: $0) }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map(\.leaf)

        var levels = [ordered]
        while let last = levels.last, last.count > 1 {
            levels.append(stride(from: 0, to: last.count, by: 2).map { scheme.node(last[$0], last[$0 + 1]) })
        }
        self.levels = levels
        leaves = ordered
        diversifiedKeys = diversified
        root = try RootHash(scheme: scheme, bytes: levels[Self.depth][0])
    }

    /// `SHA-256` of the master keys sorted bytewise and concatenated.
    public static func cardDigest(_ masterKeys: [P256Key]) -> Data {
        var hasher = SHA256()
        for key in masterKeys.map({ Array($0.x963) }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            hasher.update(data: key)
        }
        return hasher.finalize().bytes
    }

    private static func orderKey(_ leaf: Data, salt: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: orderDomain)
        hasher.update(data: salt)
        hasher.update(data: leaf)
        return hasher.finalize().withUnsafeBytes { Array($0) }
    }

    /// The proof of inclusion for a diversified key of this tree, or nil if it is not a leaf.
    public func proof(for diversifiedKey: P256Key) -> InclusionProof? {
        let leaf = RootScheme.cohortV1.leaf(diversifiedKey.x963)
        guard let index = leaves.firstIndex(of: leaf) else { return nil }
        var hashes: [Data] = []
        var position = index
        for level in levels.dropLast() {
            hashes.append(level[position ^ 1])
            position >>= 1
        }
        return InclusionProof(publicKey: diversifiedKey.x963, publicKeyIndex: index, inclusionHashes: hashes)
    }
}
