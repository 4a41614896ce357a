import CLibcrypto
import CohortBase
import CohortTestSupport
import Crypto
import Foundation
import Testing
@testable import CohortIdentity

/// A key's table of multiples (`CP256`) must never call a signature valid that swift-crypto refuses,
/// and should decide almost every signature on its own.
struct P256KeyTableTests {
    /// The group order n, big-endian.
    static let order = try! hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    /// `a − b` for two 32-byte big-endian numbers (a ≥ b).
    static func subtract(_ a: Data, _ b: Data) -> Data {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            var value = Int(a[a.startIndex + index]) - Int(b[b.startIndex + index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            result[index] = UInt8(value)
        }
        return Data(result)
    }

    static func number(_ value: UInt8) -> Data {
        Data(repeating: 0, count: 31) + [value]
    }

    /// The table's verdict and swift-crypto's on one raw r ‖ s, which must agree wherever the table decides.
    @discardableResult
    static func agree(_ table: P256KeyTable, _ key: P256Key, raw: Data, digest: some Digest,
                      sourceLocation: SourceLocation = #_sourceLocation) -> Int32? {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else { return nil }
        let verdict = table.verdict(signature, digest: digest)
        let reference = key.signingKey.isValidSignature(signature, for: digest)
        if verdict == 1 { #expect(reference, "the table accepted what swift-crypto refuses", sourceLocation: sourceLocation) }
        if verdict == 0 { #expect(!reference, "the table refused what swift-crypto accepts", sourceLocation: sourceLocation) }
        return verdict
    }

    @Test(.enabled(if: Vectors.available, Vectors.unsetReason), arguments: P256KeyTable.Size.allCases)
    func wycheproofThroughTheTable(size: P256KeyTable.Size) throws {
        let budget = P256KeyTable.Budget(limit: 1)
        var decided = 0
        var undecided = 0
        for (file, der) in [("ecdsa_secp256r1_sha256_test.json", true), ("ecdsa_secp256r1_sha256_p1363_test.json", false)] {
            let document = try Vectors.json("wycheproof/\(file)")
            for group in try #require(document["testGroups"] as? [[String: Any]]) {
                let keyHex = try #require((group["publicKey"] as? [String: Any])?["uncompressed"] as? String)
                let key = try P256Key(x963: try hex(keyHex))
                let table = try #require(P256KeyTable.make(x963: key.x963, size: size, budget: budget))
                for test in try #require(group["tests"] as? [[String: Any]]) {
                    let message = try hex(try #require(test["msg"] as? String))
                    let bytes = try hex(try #require(test["sig"] as? String))
                    let parsed = der ? try? P256.Signing.ECDSASignature(derRepresentation: bytes)
                                     : try? P256.Signing.ECDSASignature(rawRepresentation: bytes)
                    guard let parsed else { continue }
                    let verdict = Self.agree(table, key, raw: parsed.rawRepresentation, digest: SHA256.hash(data: message))
                    if test["result"] as? String == "valid" { #expect(verdict != 0, "tcId \(test["tcId"] ?? "?") should verify") }
                    if verdict == -1 { undecided += 1 } else { decided += 1 }
                }
            }
        }
        // Wycheproof aims some cases at exactly the sums a table leaves undecided; all others it decides.
        #expect(decided > 450, "\(decided) decided")
        #expect(undecided < 20, "\(undecided) undecided")
        #expect(budget.count == 0, "every table was freed")
    }

    @Test(arguments: P256KeyTable.Size.allCases)
    func randomSignaturesAndEdgeScalarsAgree(size: P256KeyTable.Size) throws {
        let budget = P256KeyTable.Budget(limit: 4)
        for _ in 0..<4 {
            let privateKey = P256.Signing.PrivateKey()
            let key = P256Key(privateKey.publicKey)
            let table = try #require(P256KeyTable.make(x963: key.x963, size: size, budget: budget))
            for round in 0..<24 {
                let message = Data("message \(round) \(UUID())".utf8)
                let digest = SHA256.hash(data: message)
                let raw = try privateKey.signature(for: message).rawRepresentation
                let (r, s) = (raw.prefix(32), raw.suffix(32))
                #expect(Self.agree(table, key, raw: raw, digest: digest) == 1, "a fresh signature is decided valid")
                // The same signature over another message, a changed r, s, the other key's signature.
                Self.agree(table, key, raw: raw, digest: SHA256.hash(data: message + [0]))
                var changed = raw
                changed[changed.startIndex + round % 64] ^= 0x01
                Self.agree(table, key, raw: changed, digest: digest)
                Self.agree(table, key, raw: try P256.Signing.PrivateKey().signature(for: message).rawRepresentation, digest: digest)
                // n − s (valid as well for ECDSA), and scalars at and around the edges.
                Self.agree(table, key, raw: r + Self.subtract(Self.order, s), digest: digest)
                for edge in [Self.number(0), Self.number(1), Self.subtract(Self.order, Self.number(1)), Self.order,
                             Data(repeating: 0xff, count: 32)] {
                    Self.agree(table, key, raw: r + edge, digest: digest)
                    Self.agree(table, key, raw: edge + s, digest: digest)
                }
            }
        }
        #expect(budget.count == 0)
    }

    @Test(arguments: P256KeyTable.Size.allCases)
    func aDigestOfZeroOrAboveTheOrderIsReadModuloTheOrder(size: P256KeyTable.Size) throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = P256Key(privateKey.publicKey)
        let table = try #require(P256KeyTable.make(x963: key.x963, size: size, budget: .init(limit: 1)))
        // Digests chosen, not hashed: signatures over them through swift-crypto's digest API.
        for bytes in [Data(repeating: 0, count: 32), Self.order, Data(repeating: 0xff, count: 32), Self.subtract(Self.order, Self.number(1))] {
            let digest = try #require(ChosenDigest(bytes))
            let signature = try privateKey.signature(for: digest)
            let verdict = table.verdict(signature, digest: digest)
            #expect(verdict == 1, "digest \(bytes.hexString)")
        }
    }

    /// x(R) mod n = r also when x(R) is r + n (below p): an honest signature lands there with odds of
    /// about 2^-128, so the test builds one. R first, with x(R) in [n, p); then the key for which
    /// (r = x(R) − n, s) is valid over e: Q = r⁻¹ (s · R − e · G).
    @Test(arguments: P256KeyTable.Size.allCases)
    func aSignatureWhoseRWrapsPastTheOrderIsDecidedValid(size: P256KeyTable.Size) throws {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        defer { EC_GROUP_free(group) }
        let context = try #require(BN_CTX_new())
        defer { BN_CTX_free(context) }
        let order = try #require(EC_GROUP_get0_order(group))
        let numbers = (0..<8).map { _ in BN_new()! }
        defer { numbers.forEach(BN_free) }
        let (p, gap, x, r, s, e, inverse, scalar) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], numbers[6], numbers[7])
        let onG = try #require(BN_new())
        defer { BN_free(onG) }
        let (point, key) = (try #require(EC_POINT_new(group)), try #require(EC_POINT_new(group)))
        defer { EC_POINT_free(point); EC_POINT_free(key) }
        func bytes(_ number: OpaquePointer) -> Data {
            var buffer = [UInt8](repeating: 0, count: 32)
            _ = BN_bn2binpad(number, &buffer, 32)
            return Data(buffer)
        }
        #expect(EC_GROUP_get_curve(group, p, nil, nil, context) == 1)
        #expect(BN_sub(gap, p, order) == 1)
        var made = 0
        for attempt in 0..<400 where made < 6 {
            _ = BN_rand_range(x, gap)
            _ = BN_add(x, x, order)
            ERR_set_mark()
            let onCurve = EC_POINT_set_compressed_coordinates(group, point, x, Int32(attempt & 1), context) == 1
            ERR_pop_to_mark()
            _ = BN_sub(r, x, order)
            _ = BN_rand_range(s, order)
            _ = BN_rand_range(e, order)
            guard onCurve, BN_is_zero(r) == 0, BN_is_zero(s) == 0 else { continue }
            _ = BN_mod_inverse(inverse, r, order, context)
            _ = BN_mod_mul(scalar, s, inverse, order, context)
            _ = BN_mod_mul(onG, e, inverse, order, context)
            _ = BN_sub(onG, order, onG)
            #expect(EC_POINT_mul(group, key, onG, point, scalar, context) == 1)
            guard EC_POINT_is_at_infinity(group, key) == 0 else { continue }
            var x963 = [UInt8](repeating: 0, count: 65)
            #expect(EC_POINT_point2oct(group, key, POINT_CONVERSION_UNCOMPRESSED, &x963, 65, context) == 65)
            let publicKey = try P256Key(x963: Data(x963))
            let table = try #require(P256KeyTable.make(x963: publicKey.x963, size: size, budget: .init(limit: 1)))
            let digest = try #require(ChosenDigest(bytes(e)))
            #expect(Self.agree(table, publicKey, raw: bytes(r) + bytes(s), digest: digest) == 1, "r + n is x(R)")
            // x(R) itself is not below n: no signature.
            #expect(Self.agree(table, publicKey, raw: bytes(x) + bytes(s), digest: digest) != 1)
            made += 1
        }
        #expect(made >= 4)
    }

    /// The signed digits of the 32-byte big-endian `scalar` as a table of `width` bits reads them
    /// (`CP256`'s `add_multiple`), each with the carry that came into its window.
    static func signedDigits(_ scalar: Data, width: Int) -> [(digit: Int, carryIn: Int)] {
        func bit(_ index: Int) -> Int {
            guard index < 256 else { return 0 }
            return Int(scalar[scalar.startIndex + 31 - index / 8] >> (index % 8)) & 1
        }
        var digits: [(digit: Int, carryIn: Int)] = []
        var carry = 0
        for window in 0..<((257 + width - 1) / width) {
            var value = 0
            for offset in 0..<width { value |= bit(window * width + offset) << offset }
            let carryIn = carry
            value += carryIn
            carry = value > 1 << (width - 1) ? 1 : 0
            digits.append((value - (carry << width), carryIn))
        }
        return digits
    }

    /// Valid signatures built so that the sum meets a case the addition does not cover: the
    /// accumulator, u1 · G plus the digits of u2 below window j times Q, lands on ± the point window j
    /// adds, d_j · 2^(w·j) · Q. The digits below j add up to (u2 mod 2^(w·j)) − carry_j · 2^(w·j); with
    /// the key's scalar c known, u1 = ±c · d_j · 2^(w·j) − c · that puts the sum there; then r is
    /// x((u1 + c · u2) · G), s = r / u2 and e = u1 · s. The table must leave every one undecided, and
    /// the key (swift-crypto behind it) must still accept it. Sums that end at the identity (e = −c · r)
    /// are no signature at all.
    @Test(arguments: P256KeyTable.Size.allCases)
    func aValidSignatureAimedAtAnExceptionalSumIsUndecided(size: P256KeyTable.Size) throws {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        defer { EC_GROUP_free(group) }
        let context = try #require(BN_CTX_new())
        defer { BN_CTX_free(context) }
        let order = try #require(EC_GROUP_get0_order(group))
        let numbers = (0..<11).map { _ in BN_new()! }
        defer { numbers.forEach(BN_free) }
        let (c, u1, u2, part, digit, t, k, x, r, s) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4],
                                                        numbers[5], numbers[6], numbers[7], numbers[8], numbers[9])
        let power = numbers[10]
        let e = try #require(BN_new())
        defer { BN_free(e) }
        let point = try #require(EC_POINT_new(group))
        defer { EC_POINT_free(point) }
        func bytes(_ number: OpaquePointer) -> Data {
            var buffer = [UInt8](repeating: 0, count: 32)
            _ = BN_bn2binpad(number, &buffer, 32)
            return Data(buffer)
        }
        let width = Int(size.rawValue)
        let privateKey = P256.Signing.PrivateKey()
        let key = P256Key(privateKey.publicKey)
        let table = try #require(P256KeyTable.make(x963: key.x963, size: size, budget: .init(limit: 1)))
        privateKey.rawRepresentation.withUnsafeBytes { _ = BN_bin2bn($0.baseAddress, 32, c) }
        var made = 0
        var negativeDigits = 0
        for attempt in 0..<128 {
            _ = BN_rand_range(u2, order)
            let digits = Self.signedDigits(bytes(u2), width: width)
            let j = attempt % digits.count
            guard digits[j].digit != 0 else { continue }
            if digits[j].digit < 0 { negativeDigits += 1 }
            // part = (u2 mod 2^(w·j)) − carry_j · 2^(w·j), what the windows below j add up to.
            _ = BN_copy(part, u2)
            _ = BN_mask_bits(part, Int32(width * j))
            _ = BN_set_word(power, 1)
            _ = BN_lshift(power, power, Int32(width * j))
            if digits[j].carryIn == 1 { _ = BN_sub(part, part, power) }
            // t = ±c · d_j · 2^(w·j)
            _ = BN_set_word(digit, UInt(abs(digits[j].digit)))
            _ = BN_mul(digit, digit, power, context)
            _ = BN_mod_mul(t, c, digit, order, context)
            if (digits[j].digit < 0) != (attempt & 1 == 1) { _ = BN_sub(t, order, t) }
            _ = BN_mod_mul(u1, c, part, order, context)
            _ = BN_mod_sub(u1, t, u1, order, context)
            _ = BN_mod_mul(k, c, u2, order, context)
            _ = BN_mod_add(k, k, u1, order, context)
            guard BN_is_zero(k) == 0, BN_is_zero(u1) == 0 else { continue }
            #expect(EC_POINT_mul(group, point, k, nil, nil, context) == 1)
            #expect(EC_POINT_get_affine_coordinates(group, point, x, nil, context) == 1)
            _ = BN_nnmod(r, x, order, context)
            guard BN_is_zero(r) == 0 else { continue }
            _ = BN_mod_inverse(t, u2, order, context)
            _ = BN_mod_mul(s, r, t, order, context)
            _ = BN_mod_mul(e, u1, s, order, context)
            let digest = try #require(ChosenDigest(bytes(e)))
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: bytes(r) + bytes(s))
            #expect(table.verdict(signature, digest: digest) == -1, "attempt \(attempt): the sum meets ± a table point")
            #expect(key.signingKey.isValidSignature(signature, for: digest), "attempt \(attempt): the signature is valid")
            made += 1
        }
        #expect(made >= 100)
        #expect(negativeDigits >= 20, "negative digits (points with y negated) are aimed at too")
        for _ in 0..<32 {
            _ = BN_rand_range(r, order)
            _ = BN_rand_range(s, order)
            guard BN_is_zero(r) == 0, BN_is_zero(s) == 0 else { continue }
            _ = BN_mod_mul(e, c, r, order, context)
            _ = BN_sub(e, order, e)
            Self.agree(table, key, raw: bytes(r) + bytes(s), digest: try #require(ChosenDigest(bytes(e))))
        }
    }

    /// The digits a table reads add up to the scalar, each within its size's range.
    @Test(arguments: P256KeyTable.Size.allCases)
    func signedDigitsAddUpToTheScalar(size: P256KeyTable.Size) throws {
        let width = Int(size.rawValue)
        let (sum, term, expected) = (BN_new()!, BN_new()!, BN_new()!)
        defer { [sum, term, expected].forEach(BN_free) }
        for scalar in [Self.number(0), Self.number(1), Self.subtract(Self.order, Self.number(1)), Data(repeating: 0xff, count: 32)]
            + (0..<64).map({ _ in Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }) {
            let digits = Self.signedDigits(scalar, width: width)
            #expect(digits.allSatisfy { abs($0.digit) <= 1 << (width - 1) })
            _ = BN_set_word(sum, 0)
            for (window, entry) in digits.enumerated() where entry.digit != 0 {
                _ = BN_set_word(term, UInt(abs(entry.digit)))
                _ = BN_lshift(term, term, Int32(window * width))
                _ = entry.digit > 0 ? BN_add(sum, sum, term) : BN_sub(sum, sum, term)
            }
            scalar.withUnsafeBytes { _ = BN_bin2bn($0.baseAddress, 32, expected) }
            #expect(BN_cmp(sum, expected) == 0, "\(size) \(scalar.hexString)")
        }
    }

    @Test func onlyPointsOnTheCurveGetATable() throws {
        let key = P256Key(P256.Signing.PrivateKey().publicKey)
        var offCurve = key.x963
        offCurve[64] ^= 0x01
        let budget = P256KeyTable.Budget(limit: 2)
        for size in P256KeyTable.Size.allCases {
            #expect(P256KeyTable.make(x963: offCurve, size: size, budget: budget) == nil)
            #expect(P256KeyTable.make(x963: Data(key.x963.prefix(33)), size: size, budget: budget) == nil)
        }
        #expect(budget.count == 0, "a refused table gives its place back")
    }

    @Test func aKeyEarnsItsSmallThenItsLargeTableWithinTheBudgets() throws {
        let budgets = (small: P256KeyTable.Budget(limit: 1), large: P256KeyTable.Budget(limit: 1))
        let x963 = P256Key(P256.Signing.PrivateKey().publicKey).x963
        let other = P256Key(P256.Signing.PrivateKey().publicKey).x963
        let first = P256KeyUse(x963: x963, smallAfter: 3, largeAfter: 6, budgets: budgets)
        let second = P256KeyUse(x963: other, smallAfter: 3, largeAfter: 6, budgets: budgets)
        for _ in 0..<2 {
            first.countValid()
            #expect(first.table == nil)
        }
        first.countValid()
        #expect(first.table?.size == .small)
        for _ in 0..<2 { first.countValid() }
        #expect(first.table?.size == .small)
        first.countValid()
        #expect(first.table?.size == .large, "the large table replaces the small one")
        #expect(budgets.small.count == 0 && budgets.large.count == 1, "the small table was let go")
        // Small tables to spare, the large ones spent: the other key gets a small one and stays there.
        for _ in 0..<12 { second.countValid() }
        #expect(second.table?.size == .small, "the large budget is spent")
        // Both budgets spent: a third key goes without, and asks again later.
        let third = P256KeyUse(x963: P256Key(P256.Signing.PrivateKey().publicKey).x963, smallAfter: 3, largeAfter: 6, budgets: budgets)
        for _ in 0..<12 { third.countValid() }
        #expect(third.table == nil)
        // A table freed gives its place back: a key's next try is granted.
        let spare = P256KeyTable.Budget(limit: 1)
        var held = P256KeyTable.make(x963: other, size: .small, budget: spare)
        #expect(held != nil && P256KeyTable.make(x963: x963, size: .small, budget: spare) == nil)
        held = nil
        #expect(spare.count == 0 && P256KeyTable.make(x963: x963, size: .small, budget: spare) != nil)
    }

    /// A key refused a small table (every one held by other keys) still earns its large one.
    @Test func aKeyRefusedASmallTableStillEarnsALargeOne() throws {
        let budgets = (small: P256KeyTable.Budget(limit: 0), large: P256KeyTable.Budget(limit: 1))
        let use = P256KeyUse(x963: P256Key(P256.Signing.PrivateKey().publicKey).x963, smallAfter: 2, largeAfter: 8, budgets: budgets)
        for _ in 0..<7 { use.countValid() }
        #expect(use.table == nil)
        use.countValid()
        #expect(use.table?.size == .large)
    }

    /// Signatures that fail never earn a key its table (nor spend the process's budget).
    @Test func failedSignaturesDoNotCount() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try P256Key(x963: privateKey.publicKey.x963Representation)
        let signature = try privateKey.signature(for: Data("notice".utf8)).derRepresentation
        for _ in 0...P256KeyUse.largeAfter {
            #expect(throws: CohortError.self) { try key.verifySignature(signature, for: Data("another".utf8)) }
        }
        #expect(key.use.table == nil)
    }

    /// Through `verifySignature`, as commits and notices are checked: past each threshold the key has
    /// its small, then its large table (signatures checked through the small one count towards the
    /// large), and a bad signature is still refused with the usual error.
    @Test func aKeyThatSignsOftenVerifiesThroughItsTables() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try P256Key(x963: privateKey.publicKey.x963Representation)
        let message = Data("notice".utf8)
        let signature = try privateKey.signature(for: message).derRepresentation
        for _ in 0..<P256KeyUse.smallAfter { try key.verifySignature(signature, for: message) }
        #expect(key.use.table?.size == .small)
        for _ in P256KeyUse.smallAfter..<P256KeyUse.largeAfter { try key.verifySignature(signature, for: message) }
        #expect(key.use.table?.size == .large)
        let refused = #expect(throws: CohortError.self) { try key.verifySignature(signature, for: message + [0]) }
        #expect(refused?.code == .badSignature)
    }
}

/// A digest given as bytes, for signing a chosen value through swift-crypto.
struct ChosenDigest: Digest {
    static let byteCount = 32
    let bytes: [UInt8]

    init?(_ data: Data) {
        guard data.count == 32 else { return nil }
        bytes = Array(data)
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    func makeIterator() -> Array<UInt8>.Iterator { bytes.makeIterator() }
    var description: String { Data(bytes).hexString }
}
