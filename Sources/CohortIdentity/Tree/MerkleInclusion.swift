import CohortBase
import Foundation

/// Verification of a Merkle inclusion proof (RFC 9162 §2.1.3.2), for any tree size. Cohort's trees are
/// full (16 leaves for cohort-v1, 2^depth for apple-v1), where this is exactly the fold of the brief.
public enum MerkleInclusion {
    /// The root that `path` proves for `leafHash` at `index` in a tree of `treeSize` leaves.
    ///
    /// Throws `E_BAD_PROOF` when the shape is wrong: a hash that is not 32 bytes, an index outside the
    /// tree, or a path of the wrong length for the tree.
    public static func root(
        leafHash: Data, index: UInt64, treeSize: UInt64, path: [Data], scheme: RootScheme
    ) throws -> Data {
        guard leafHash.count == 32 else {
            throw CohortError(.badProof, "leaf hash is \(leafHash.count) bytes, expected 32")
        }
        if let bad = path.firstIndex(where: { $0.count != 32 }) {
            throw CohortError(.badProof, "inclusion hash \(bad) is \(path[bad].count) bytes, expected 32")
        }
        guard index < treeSize else {
            throw CohortError(.badProof, "leaf index \(index) is outside a tree of \(treeSize) leaves")
        }
        var fn = index
        var sn = treeSize - 1
        var hash = leafHash
        for sibling in path {
            guard sn != 0 else {
                throw CohortError(.badProof, "inclusion path has \(path.count) hashes, too many for \(treeSize) leaves")
            }
            if fn & 1 == 1 || fn == sn {
                hash = scheme.node(sibling, hash)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                hash = scheme.node(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        guard sn == 0 else {
            throw CohortError(.badProof, "inclusion path has \(path.count) hashes, too few for \(treeSize) leaves")
        }
        return hash
    }

    /// Whether `path` proves `leafHash` at `index` in a tree of `treeSize` leaves with root `root`.
    public static func verify(
        leafHash: Data, index: UInt64, treeSize: UInt64, path: [Data], root expected: Data, scheme: RootScheme
    ) -> Bool {
        guard expected.count == 32,
              let computed = try? root(leafHash: leafHash, index: index, treeSize: treeSize, path: path, scheme: scheme)
        else { return false }
        return computed == expected
    }
}
