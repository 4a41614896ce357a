import CohortBase
import Foundation

/// A proof that a public key is a leaf of a root: the key, its leaf index and the sibling hashes from
/// the leaf up to the root.
public struct InclusionProof: Hashable, Sendable {
    /// The public key as received; `P256Key` validates it.
    public let publicKey: Data
    public let publicKeyIndex: Int
    public let inclusionHashes: [Data]

    public init(publicKey: Data, publicKeyIndex: Int, inclusionHashes: [Data]) {
        self.publicKey = publicKey
        self.publicKeyIndex = publicKeyIndex
        self.inclusionHashes = inclusionHashes
    }

    /// The root this proof folds to under `scheme`; throws `E_BAD_PROOF` when its shape is wrong for
    /// the scheme (depth, hash sizes, index range).
    public func root(under scheme: RootScheme) throws -> RootHash {
        try Self.folded.value(for: Folding(scheme: scheme, proof: self)) { try fold(under: scheme) }
    }

    private struct Folding: Hashable, Sendable {
        let scheme: RootScheme
        let proof: InclusionProof
    }

    /// Proofs folded lately: every commit and notice of a participant's device carries the same one.
    private static let folded = RecentResults<Folding, RootHash>(capacity: 4096)

    private func fold(under scheme: RootScheme) throws -> RootHash {
        let depth = inclusionHashes.count
        guard scheme.allowedDepths.contains(depth) else {
            throw CohortError(.badProof, "proof has \(depth) inclusion hashes; \(scheme.rawValue) needs \(Self.describe(scheme.allowedDepths))")
        }
        let treeSize = UInt64(1) << UInt64(depth)
        guard publicKeyIndex >= 0, UInt64(publicKeyIndex) < treeSize else {
            throw CohortError(.badProof, "publicKeyIndex \(publicKeyIndex) is outside 0...\(treeSize - 1) for a proof of depth \(depth)")
        }
        let bytes = try MerkleInclusion.root(
            leafHash: scheme.leaf(publicKey), index: UInt64(publicKeyIndex), treeSize: treeSize,
            path: inclusionHashes, scheme: scheme
        )
        return try RootHash(scheme: scheme, bytes: bytes)
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        range.count == 1 ? "exactly \(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
    }
}
