import CohortBase
import Crypto
import Foundation

/// cohort-v1 key diversification: each device key becomes a different, unlinkable key per
/// collaboration, computable from the public key by anyone and from the private key by the device only.
///
/// `t = OS2IP(expand_message_xmd_SHA256(salt ‖ u16(len cid) ‖ cid ‖ pk_master, "COHORT-V1-DIVERSIFY", 48)) mod n`,
/// `pk_c = t · pk_master`, `sk_c = t · sk_master mod n`.
public enum Diversification {
    static let domain = Data("COHORT-V1-DIVERSIFY".utf8)

    /// The blind scalar `t` for `masterKey` in `context`, as 32 big-endian bytes.
    public static func blindScalar(for masterKey: P256Key, in context: CollaborationContext) throws -> Data {
        let uniform = ExpandMessageXMD.sha256(message: context.binding + masterKey.x963, domain: domain, length: 48)
        guard let t = P256Arithmetic.reduceModOrder(uniform) else {
            throw CohortError(.badKey, "diversification scalar is zero for key \(masterKey.fingerprint)",
                              hint: "this happens with probability 2^-256; use another device key")
        }
        return t
    }

    /// The device's public key for `context`: `t · pk_master`.
    public static func publicKey(for masterKey: P256Key, in context: CollaborationContext) throws -> P256Key {
        let t = try blindScalar(for: masterKey, in: context)
        guard let point = P256Arithmetic.multiply(point: masterKey.x963, by: t) else {
            throw CohortError(.badKey, "diversified key of \(masterKey.fingerprint) could not be computed")
        }
        return try P256Key(x963: point)
    }
}

extension DeviceKey {
    /// This device's private key for `context`: `t · sk_master mod n`, checked against `t · pk_master`.
    public func diversified(for context: CollaborationContext) throws -> DeviceKey {
        let master = publicKey
        let t = try Diversification.blindScalar(for: master, in: context)
        guard let scalar = P256Arithmetic.multiplyScalars(t, privateKey.rawRepresentation) else {
            throw CohortError(.badKey, "diversified private key of \(master.fingerprint) could not be computed")
        }
        let key = try DeviceKey(rawScalar: scalar)
        // Two libraries compute the same point two ways; a mismatch means one of them is wrong.
        guard let expected = P256Arithmetic.multiply(point: master.x963, by: t), expected == key.publicKey.x963 else {
            throw CohortError(.badKey, "diversified key of \(master.fingerprint) is inconsistent between libcrypto and swift-crypto")
        }
        return key
    }
}
