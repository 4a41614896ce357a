internal import CLibcrypto
import Foundation

/// Point and scalar arithmetic on P-256 through OpenSSL's libcrypto (swift-crypto exposes none).
enum P256Arithmetic {
    /// The curve group: built once, then only read, which libcrypto allows from any thread.
    private final class Curve: @unchecked Sendable {
        let group: OpaquePointer
        let order: OpaquePointer

        init() {
            guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1),
                  let order = EC_GROUP_get0_order(group)
            else { preconditionFailure("libcrypto has no P-256 group") }
            self.group = group
            self.order = order
        }
    }

    private static let curve = Curve()

    /// `value mod n`, as 32 big-endian bytes; nil when the result is zero.
    static func reduceModOrder(_ value: Data) -> Data? {
        withContext { context in
            guard let number = bignum(value), let result = BN_secure_new() else { return nil }
            defer { BN_clear_free(number); BN_clear_free(result) }
            guard BN_nnmod(result, number, curve.order, context) == 1, BN_is_zero(result) == 0 else { return nil }
            return bytes32(result)
        }
    }

    /// `a · b mod n` for two scalars, as 32 big-endian bytes; nil when the result is zero.
    static func multiplyScalars(_ a: Data, _ b: Data) -> Data? {
        withContext { context in
            guard let x = bignum(a), let y = bignum(b), let result = BN_secure_new() else { return nil }
            defer { BN_clear_free(x); BN_clear_free(y); BN_clear_free(result) }
            // One factor is a private key: take libcrypto's constant-time paths.
            for number in [x, y, result] { BN_set_flags(number, BN_FLG_CONSTTIME) }
            guard BN_mod_mul(result, x, y, curve.order, context) == 1, BN_is_zero(result) == 0 else { return nil }
            return bytes32(result)
        }
    }

    /// `scalar · point`, uncompressed; nil when the point is not on the curve or the product is infinity.
    static func multiply(point: Data, by scalar: Data) -> Data? {
        withContext { context in
            let group = curve.group
            guard let input = EC_POINT_new(group), let output = EC_POINT_new(group) else { return nil }
            defer { EC_POINT_free(input); EC_POINT_clear_free(output) }
            let decoded = point.withUnsafeBytes { raw in
                EC_POINT_oct2point(group, input, raw.bindMemory(to: UInt8.self).baseAddress, raw.count, context)
            }
            guard decoded == 1, EC_POINT_is_on_curve(group, input, context) == 1,
                  let k = bignum(scalar)
            else { return nil }
            defer { BN_clear_free(k) }
            guard EC_POINT_mul(group, output, nil, input, k, context) == 1,
                  EC_POINT_is_at_infinity(group, output) == 0
            else { return nil }
            var out = Data(count: 65)
            let written = out.withUnsafeMutableBytes { raw in
                EC_POINT_point2oct(group, output, POINT_CONVERSION_UNCOMPRESSED,
                                   raw.bindMemory(to: UInt8.self).baseAddress, 65, context)
            }
            return written == 65 ? out : nil
        }
    }

    private static func withContext<T>(_ body: (OpaquePointer) -> T?) -> T? {
        guard let context = BN_CTX_secure_new() else { return nil }
        defer { BN_CTX_free(context) }
        return body(context)
    }

    private static func bignum(_ bytes: Data) -> OpaquePointer? {
        bytes.withUnsafeBytes { raw in
            BN_bin2bn(raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count), BN_secure_new())
        }
    }

    private static func bytes32(_ number: OpaquePointer) -> Data? {
        var out = Data(count: 32)
        let written = out.withUnsafeMutableBytes { raw in
            BN_bn2binpad(number, raw.bindMemory(to: UInt8.self).baseAddress, 32)
        }
        return written == 32 ? out : nil
    }

    /// The linked libcrypto's version string.
    static var libraryVersion: String {
        String(cString: OpenSSL_version(OPENSSL_VERSION))
    }
}

/// The cryptographic libraries Cohort links, for `cohort version`.
public enum Libraries {
    /// OpenSSL's version string, e.g. `OpenSSL 3.0.19 …`.
    public static var libcryptoVersion: String { P256Arithmetic.libraryVersion }
}
