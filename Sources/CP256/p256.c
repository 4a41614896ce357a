// ECDSA P-256 verification with per-key tables of multiples (see CP256.h).
//
// Numbers are four 64-bit limbs, least significant first. Field elements (mod p) and scalars (mod n)
// are multiplied in Montgomery form (CIOS, one conditional subtraction), so every value kept is
// fully reduced and two values are equal exactly when their limbs are.
//
// On x86-64 Linux (COHORT_P256_BORINGSSL, set by Package.swift) the field multiplication and the
// verification's mixed additions are swift-crypto's own:
// the x86-64 assembly of the BoringSSL it links into every program that links this target (its
// `Crypto` product; see Package.swift), which keeps the same representation (R = 2^256, inputs and
// results below p). Its mixed addition does not cover a = ±b either; there its result's Z is zero,
// and that is read as the same "undecided" as here.

#include "CP256.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__SIZEOF_INT128__)
// Without 128-bit products there are no tables: every key is checked the usual way.
cohort_p256_table *cohort_p256_table_new(const uint8_t x[32], const uint8_t y[32], int width) {
    (void)x; (void)y; (void)width;
    return NULL;
}
void cohort_p256_table_free(cohort_p256_table *table) { (void)table; }
int cohort_p256_verify(const cohort_p256_table *key, const uint8_t digest[32], const uint8_t r[32], const uint8_t s[32]) {
    (void)key; (void)digest; (void)r; (void)s;
    return -1;
}
#else

typedef unsigned __int128 u128;
typedef uint64_t num[4];

enum { MIN_WIDTH = 4, MAX_WIDTH = 8 };

typedef struct {
    const uint64_t *m;
    uint64_t m0;  // -m^-1 mod 2^64, as `setup` must find it
    num one;      // R mod m (R = 2^256)
    num r2;       // R^2 mod m
} modulus;

typedef struct { num x, y; } affine;
// X, Y and Z first, laid out as BoringSSL's P256_POINT (the assembly reads and writes only those).
typedef struct { num x, y, z; int infinity; } jacobian;

#if defined(__x86_64__) && defined(COHORT_P256_BORINGSSL) && !defined(COHORT_P256_PORTABLE)
#define COHORT_P256_NISTZ 1
// BoringSSL's "nohw" variants use only the base instruction set (on this project's machines they are
// also faster than its ADX ones), so no processor check is needed.
void CCryptoBoringSSL_ecp_nistz256_mul_mont_nohw(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void CCryptoBoringSSL_ecp_nistz256_point_add_affine_nohw(jacobian *r, const jacobian *a, const affine *b);
#endif

/// Signed digits of `width` bits: window j holds d · 2^(width · j) · P for d = 1 … 2^(width − 1),
/// the negatives being the same points with y negated. ⌈257 / width⌉ windows leave room for the carry
/// the top digit may pass on.
struct cohort_p256_table {
    int width;
    int windows;
    int digits;
    affine t[];  // windows × digits: t[j · digits + d − 1] = d · 2^(width · j) · P
};

static const uint64_t P_LIMBS[4] = {0xffffffffffffffffULL, 0x00000000ffffffffULL, 0x0000000000000000ULL, 0xffffffff00000001ULL};
static const uint64_t N_LIMBS[4] = {0xf3b9cac2fc632551ULL, 0xbce6faada7179e84ULL, 0xffffffffffffffffULL, 0xffffffff00000000ULL};
// -p^-1 and -n^-1 mod 2^64; `setup` computes both again and turns the tables off if they differ.
static const uint64_t P_M0 = 1;
static const uint64_t N_M0 = 0xccd1c8aaee00bc4fULL;
static modulus P = {P_LIMBS, P_M0};
static modulus N = {N_LIMBS, N_M0};
static const num B = {0x3bce3c3e27d2604bULL, 0x651d06b0cc53b0f6ULL, 0xb3ebbd55769886bcULL, 0x5ac635d8aa3a93e7ULL};
static const num GX = {0xf4a13945d898c296ULL, 0x77037d812deb33a0ULL, 0xf8bce6e563a440f2ULL, 0x6b17d1f2e12c4247ULL};
static const num GY = {0xcbb6406837bf51f5ULL, 0x2bce33576b315eceULL, 0x8ee7eb4a7c0f9e16ULL, 0x4fe342e2fe1a7f9bULL};

// MARK: - Plain 256-bit arithmetic

static uint64_t add4(num r, const num a, const num b) {
    u128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (u128)a[i] + b[i];
        r[i] = (uint64_t)c;
        c >>= 64;
    }
    return (uint64_t)c;
}

static uint64_t sub4(num r, const num a, const num b) {
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        u128 d = (u128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    return borrow;
}

static int is_zero(const num a) {
    return (a[0] | a[1] | a[2] | a[3]) == 0;
}

static int equal(const num a, const num b) {
    return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0;
}

/// a < b
static int less(const num a, const num b) {
    num t;
    return (int)sub4(t, a, b);
}

static void from_bytes(num r, const uint8_t bytes[32]) {
    for (int i = 0; i < 4; i++) {
        uint64_t limb = 0;
        for (int j = 0; j < 8; j++) limb = (limb << 8) | bytes[(3 - i) * 8 + j];
        r[i] = limb;
    }
}

/// Bits start … start + count − 1 of a (count < 32; bits past 255 are zero).
static unsigned bits_at(const num a, int start, int count) {
    if (start >= 256) return 0;
    int limb = start / 64, shift = start % 64;
    uint64_t value = a[limb] >> shift;
    if (shift + count > 64 && limb < 3) value |= a[limb + 1] << (64 - shift);
    return (unsigned)value & ((1u << count) - 1);
}

// MARK: - Modular arithmetic (inputs below the modulus, results too)

#define INLINE static inline __attribute__((always_inline))

INLINE void add_with(num r, const num a, const num b, const uint64_t m[4]) {
    num t, u;
    uint64_t carry = add4(t, a, b);
    uint64_t borrow = sub4(u, t, m);
    memcpy(r, (carry || !borrow) ? u : t, sizeof(num));
}

INLINE void sub_with(num r, const num a, const num b, const uint64_t m[4]) {
    num t, u;
    uint64_t borrow = sub4(t, a, b);
    add4(u, t, m);
    memcpy(r, borrow ? u : t, sizeof(num));
}

/// a · b · R^-1 mod m (CIOS), for m0 = -m^-1 mod 2^64.
INLINE void mul_with(num r, const num a, const num b, const uint64_t m[4], uint64_t m0) {
    uint64_t t[6] = {0};
#pragma clang loop unroll(full)
    for (int i = 0; i < 4; i++) {
        u128 c = 0;
#pragma clang loop unroll(full)
        for (int j = 0; j < 4; j++) {
            c += (u128)a[j] * b[i] + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        c += t[4];
        t[4] = (uint64_t)c;
        t[5] = (uint64_t)(c >> 64);
        uint64_t q = t[0] * m0;
        c = (u128)q * m[0] + t[0];
        c >>= 64;
#pragma clang loop unroll(full)
        for (int j = 1; j < 4; j++) {
            c += (u128)q * m[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += t[4];
        t[3] = (uint64_t)c;
        t[4] = t[5] + (uint64_t)(c >> 64);
    }
    // t < 2m: subtract m once if t ≥ m.
    num u;
    uint64_t borrow = sub4(u, t, m);
    memcpy(r, (t[4] || !borrow) ? u : t, sizeof(num));
}

// Mod p, for coordinates.
static void fe_add(num r, const num a, const num b) { add_with(r, a, b, P_LIMBS); }
static void fe_sub(num r, const num a, const num b) { sub_with(r, a, b, P_LIMBS); }
#if defined(COHORT_P256_NISTZ)
static void fe_mul(num r, const num a, const num b) { CCryptoBoringSSL_ecp_nistz256_mul_mont_nohw(r, a, b); }
#else
static void fe_mul(num r, const num a, const num b) { mul_with(r, a, b, P_LIMBS, P_M0); }
#endif

// Mod n, for scalars.
static void sc_mul(num r, const num a, const num b) { mul_with(r, a, b, N_LIMBS, N_M0); }

/// 1/a mod p in Montgomery form (a in Montgomery form, not zero), by Fermat: a^(p−2), a nibble of
/// the exponent at a time. Only while a table is built (a verification inverts nothing mod p).
static void fe_invert(num r, const num a) {
    num e, two = {2, 0, 0, 0};
    sub4(e, P_LIMBS, two);
    num powers[16];
    memcpy(powers[0], P.one, sizeof(num));
    memcpy(powers[1], a, sizeof(num));
    for (int i = 2; i < 16; i++) fe_mul(powers[i], powers[i - 1], a);
    num acc;
    memcpy(acc, P.one, sizeof(num));
    for (int nibble = 63; nibble >= 0; nibble--) {
        for (int k = 0; k < 4; k++) fe_mul(acc, acc, acc);
        unsigned digit = (unsigned)(e[nibble / 16] >> (4 * (nibble % 16))) & 0xf;
        if (digit) fe_mul(acc, acc, powers[digit]);
    }
    memcpy(r, acc, sizeof(num));
}

static int is_one(const num a) {
    return ((a[0] ^ 1) | a[1] | a[2] | a[3]) == 0;
}

static void halve(num a) {
    a[0] = (a[0] >> 1) | (a[1] << 63);
    a[1] = (a[1] >> 1) | (a[2] << 63);
    a[2] = (a[2] >> 1) | (a[3] << 63);
    a[3] >>= 1;
}

/// x / 2 mod m (m odd, x below m).
static void halve_mod(num x, const uint64_t m[4]) {
    uint64_t carry = 0;
    if (x[0] & 1) carry = add4(x, x, m);
    halve(x);
    x[3] |= carry << 63;
}

/// 1/a mod m (m odd and prime, a in [1, m)), plain form, by the binary extended Euclidean algorithm:
/// variable time, for public values only. Keeps x1 · a ≡ u and x2 · a ≡ v (mod m) while (u, v)
/// descends from (a, m) to a 1.
static void invert_binary(num r, const num a, const uint64_t m[4]) {
    num u, v, x1 = {1, 0, 0, 0}, x2 = {0, 0, 0, 0};
    memcpy(u, a, sizeof(num));
    memcpy(v, m, sizeof(num));
    while (!is_one(u) && !is_one(v)) {
        while (!(u[0] & 1)) {
            halve(u);
            halve_mod(x1, m);
        }
        while (!(v[0] & 1)) {
            halve(v);
            halve_mod(x2, m);
        }
        if (!less(u, v)) {
            sub4(u, u, v);
            sub_with(x1, x1, x2, m);
        } else {
            sub4(v, v, u);
            sub_with(x2, x2, x1, m);
        }
    }
    memcpy(r, is_one(u) ? x1 : x2, sizeof(num));
}

/// Derives R mod m and R² mod m, and checks the constant −m^-1 mod 2^64 the multiplication uses.
static int setup_modulus(modulus *m) {
    // -m^-1 mod 2^64 by Newton's iteration (each step doubles the correct low bits).
    uint64_t inverse = 1;
    for (int i = 0; i < 7; i++) inverse *= 2 - m->m[0] * inverse;
    if ((uint64_t)0 - inverse != m->m0) return -1;
    // R mod m = 2^256 - m, as m > 2^255; then R^2 = R · 2^256 by 256 doublings.
    num zero = {0, 0, 0, 0};
    sub4(m->one, zero, m->m);
    memcpy(m->r2, m->one, sizeof(num));
    for (int i = 0; i < 256; i++) add_with(m->r2, m->r2, m->r2, m->m);
    return 0;
}

// MARK: - Points (coordinates in Montgomery form mod p)

static void set_point(jacobian *r, const num x, const num y, const num z) {
    memcpy(r->x, x, sizeof(num));
    memcpy(r->y, y, sizeof(num));
    memcpy(r->z, z, sizeof(num));
    r->infinity = 0;
}

/// r = a + b. 0, or -1 when a = ±b (the formula does not cover it; never met while a table is
/// built, and left to the caller while verifying).
static int add_affine(jacobian *r, const jacobian *a, const affine *b) {
    if (a->infinity) {
        set_point(r, b->x, b->y, P.one);
        return 0;
    }
    num z1z1, u2, s2, h, rr, hh, hhh, v, x3, y3, z3, t;
    fe_mul(z1z1, a->z, a->z);
    fe_mul(u2, b->x, z1z1);
    fe_mul(s2, b->y, a->z);
    fe_mul(s2, s2, z1z1);
    fe_sub(h, u2, a->x);
    fe_sub(rr, s2, a->y);
    if (is_zero(h)) return -1;
    fe_mul(hh, h, h);
    fe_mul(hhh, h, hh);
    fe_mul(v, a->x, hh);
    // x3 = rr² − hhh − 2v
    fe_mul(x3, rr, rr);
    fe_sub(x3, x3, hhh);
    fe_sub(x3, x3, v);
    fe_sub(x3, x3, v);
    // y3 = rr · (v − x3) − y1 · hhh
    fe_sub(t, v, x3);
    fe_mul(y3, rr, t);
    fe_mul(t, a->y, hhh);
    fe_sub(y3, y3, t);
    // z3 = z1 · h
    fe_mul(z3, a->z, h);
    set_point(r, x3, y3, z3);
    return 0;
}

/// r = 2a (a = −3 doubling). 0, or -1 when the result would be the identity.
static int twice(jacobian *r, const jacobian *a) {
    if (a->infinity || is_zero(a->y)) return -1;
    num delta, gamma, beta, alpha, t, u, x3, y3, z3;
    fe_mul(delta, a->z, a->z);
    fe_mul(gamma, a->y, a->y);
    fe_mul(beta, a->x, gamma);
    // alpha = 3 (x − delta)(x + delta)
    fe_sub(t, a->x, delta);
    fe_add(u, a->x, delta);
    fe_mul(alpha, t, u);
    fe_add(t, alpha, alpha);
    fe_add(alpha, t, alpha);
    // x3 = alpha² − 8 beta
    fe_add(u, beta, beta);   // 2 beta
    fe_add(u, u, u);         // 4 beta
    fe_mul(x3, alpha, alpha);
    fe_sub(x3, x3, u);
    fe_sub(x3, x3, u);
    // z3 = (y + z)² − gamma − delta
    fe_add(t, a->y, a->z);
    fe_mul(z3, t, t);
    fe_sub(z3, z3, gamma);
    fe_sub(z3, z3, delta);
    // y3 = alpha (4 beta − x3) − 8 gamma²
    fe_sub(t, u, x3);
    fe_mul(y3, alpha, t);
    fe_mul(t, gamma, gamma);
    fe_add(t, t, t);
    fe_add(t, t, t);
    fe_add(t, t, t);
    fe_sub(y3, y3, t);
    set_point(r, x3, y3, z3);
    return 0;
}

/// r = a + b, both Jacobian (add-2007-bl). 0, or -1 when a = ±b (never met while a table is built).
static int add_jacobian(jacobian *r, const jacobian *a, const jacobian *b) {
    num z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, x3, y3, z3, t;
    fe_mul(z1z1, a->z, a->z);
    fe_mul(z2z2, b->z, b->z);
    fe_mul(u1, a->x, z2z2);
    fe_mul(u2, b->x, z1z1);
    fe_mul(s1, a->y, b->z);
    fe_mul(s1, s1, z2z2);
    fe_mul(s2, b->y, a->z);
    fe_mul(s2, s2, z1z1);
    fe_sub(h, u2, u1);
    if (is_zero(h)) return -1;
    // i = (2h)², j = h · i, rr = 2 (s2 − s1), v = u1 · i
    fe_add(t, h, h);
    fe_mul(i, t, t);
    fe_mul(j, h, i);
    fe_sub(rr, s2, s1);
    fe_add(rr, rr, rr);
    fe_mul(v, u1, i);
    // x3 = rr² − j − 2v; y3 = rr (v − x3) − 2 s1 j; z3 = ((z1 + z2)² − z1z1 − z2z2) h
    fe_mul(x3, rr, rr);
    fe_sub(x3, x3, j);
    fe_sub(x3, x3, v);
    fe_sub(x3, x3, v);
    fe_sub(t, v, x3);
    fe_mul(y3, rr, t);
    fe_mul(t, s1, j);
    fe_add(t, t, t);
    fe_sub(y3, y3, t);
    fe_add(t, a->z, b->z);
    fe_mul(z3, t, t);
    fe_sub(z3, z3, z1z1);
    fe_sub(z3, z3, z2z2);
    fe_mul(z3, z3, h);
    set_point(r, x3, y3, z3);
    return 0;
}

/// Affine forms of `count` points (none the identity), with one inversion for all (Montgomery's trick).
static void to_affine(affine *out, const jacobian *in, int count, num *scratch) {
    memcpy(scratch[0], in[0].z, sizeof(num));
    for (int i = 1; i < count; i++) fe_mul(scratch[i], scratch[i - 1], in[i].z);
    num inverse, zinv, zinv2;
    fe_invert(inverse, scratch[count - 1]);
    for (int i = count - 1; i >= 0; i--) {
        if (i > 0) {
            fe_mul(zinv, inverse, scratch[i - 1]);
            fe_mul(inverse, inverse, in[i].z);
        } else {
            memcpy(zinv, inverse, sizeof(num));
        }
        fe_mul(zinv2, zinv, zinv);
        fe_mul(out[i].x, in[i].x, zinv2);
        fe_mul(zinv2, zinv2, zinv);
        fe_mul(out[i].y, in[i].y, zinv2);
    }
}

/// Whether (x, y) (Montgomery form, below p) is on the curve: y² = x³ − 3x + b.
static int on_curve(const num x, const num y) {
    num left, right, t, b;
    fe_mul(left, y, y);
    fe_mul(t, x, x);
    fe_mul(right, t, x);
    fe_sub(right, right, x);
    fe_sub(right, right, x);
    fe_sub(right, right, x);
    fe_mul(b, B, P.r2);
    fe_add(right, right, b);
    return equal(left, right);
}

// MARK: - Tables

/// Fills `table` from `base` (affine, on the curve): every point in Jacobian form first, row after
/// row (each row's base is twice the last point of the one before), then all made affine with one
/// inversion.
static int fill(cohort_p256_table *table, const affine *base) {
    int count = table->windows * table->digits;
    jacobian *points = malloc(sizeof(jacobian) * (size_t)count);
    num *scratch = malloc(sizeof(num) * (size_t)count);
    int failed = points == NULL || scratch == NULL;
    jacobian row_base;
    set_point(&row_base, base->x, base->y, P.one);
    for (int j = 0; j < table->windows && !failed; j++) {
        jacobian *row = points + j * table->digits;
        row[0] = row_base;
        failed |= twice(&row[1], &row[0]) != 0;
        for (int d = 3; d <= table->digits && !failed; d++) failed |= add_jacobian(&row[d - 1], &row[d - 2], &row[0]) != 0;
        if (j + 1 < table->windows && !failed) failed |= twice(&row_base, &row[table->digits - 1]) != 0;
    }
    if (!failed) to_affine(table->t, points, count, scratch);
    free(points);
    free(scratch);
    return failed ? -1 : 0;
}

static cohort_p256_table *new_table(const num x, const num y, int width) {
    if (width < MIN_WIDTH || width > MAX_WIDTH || !less(x, P.m) || !less(y, P.m)) return NULL;
    affine base;
    fe_mul(base.x, x, P.r2);
    fe_mul(base.y, y, P.r2);
    if (!on_curve(base.x, base.y)) return NULL;
    int windows = (257 + width - 1) / width, digits = 1 << (width - 1);
    cohort_p256_table *table = malloc(sizeof(cohort_p256_table) + sizeof(affine) * (size_t)(windows * digits));
    if (table == NULL) return NULL;
    table->width = width;
    table->windows = windows;
    table->digits = digits;
    if (fill(table, &base) != 0) {
        free(table);
        return NULL;
    }
    return table;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
/// Whether the arithmetic passed its checks at start (without them no table is made).
static int ready;
static pthread_mutex_t generators_lock = PTHREAD_MUTEX_INITIALIZER;
/// The generator's table for each width, made when the first key's table of that width is.
static cohort_p256_table *generators[MAX_WIDTH + 1];

static const cohort_p256_table *generator(int width) {
    cohort_p256_table *table = __atomic_load_n(&generators[width], __ATOMIC_ACQUIRE);
    if (table != NULL) return table;
    pthread_mutex_lock(&generators_lock);
    table = generators[width];
    if (table == NULL) {
        table = new_table(GX, GY, width);
        __atomic_store_n(&generators[width], table, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&generators_lock);
    return table;
}

#if defined(COHORT_P256_NISTZ)
/// Whether the assembly still computes what this file expects of it (the symbols are BoringSSL's
/// internals, which a later swift-crypto could change under the same names): products against the C
/// multiplication, and a mixed addition against the C formulas, limb for limb, G + G left at Z = 0.
static int assembly_agrees(void) {
    const uint64_t *values[] = {GX, GY, B, P.one, P.r2, N_LIMBS};
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            num c, asm_product;
            mul_with(c, values[i], values[j], P_LIMBS, P_M0);
            CCryptoBoringSSL_ecp_nistz256_mul_mont_nohw(asm_product, values[i], values[j]);
            if (!equal(c, asm_product)) return 0;
        }
    }
    affine g;
    fe_mul(g.x, GX, P.r2);
    fe_mul(g.y, GY, P.r2);
    jacobian one, two, expected, sum;
    set_point(&one, g.x, g.y, P.one);
    if (twice(&two, &one) != 0 || add_affine(&expected, &two, &g) != 0) return 0;
    CCryptoBoringSSL_ecp_nistz256_point_add_affine_nohw(&sum, &two, &g);
    if (!equal(sum.x, expected.x) || !equal(sum.y, expected.y) || !equal(sum.z, expected.z)) return 0;
    CCryptoBoringSSL_ecp_nistz256_point_add_affine_nohw(&sum, &one, &g);
    return is_zero(sum.z);
}
#endif

static void setup(void) {
    if (setup_modulus(&P) != 0 || setup_modulus(&N) != 0) return;
#if defined(COHORT_P256_NISTZ)
    // Without tables every verification goes the usual way, through swift-crypto.
    if (!assembly_agrees()) return;
#endif
    ready = 1;
}

cohort_p256_table *cohort_p256_table_new(const uint8_t x[32], const uint8_t y[32], int width) {
    pthread_once(&once, setup);
    // Without the generator's table of the same width no verification could use the key's.
    if (!ready || width < MIN_WIDTH || width > MAX_WIDTH || generator(width) == NULL) return NULL;
    num px, py;
    from_bytes(px, x);
    from_bytes(py, y);
    return new_table(px, py, width);
}

void cohort_p256_table_free(cohort_p256_table *table) {
    free(table);
}

// MARK: - Verification

/// acc += b: 0, or -1 when acc = ±b (a sum the formulas do not cover).
static int add_to(jacobian *acc, const affine *b) {
#if defined(COHORT_P256_NISTZ)
    if (acc->infinity) {
        set_point(acc, b->x, b->y, P.one);
        return 0;
    }
    // Z3 = Z1 · H, below p: zero exactly when H is, that is when acc = ±b.
    CCryptoBoringSSL_ecp_nistz256_point_add_affine_nohw(acc, acc, b);
    return is_zero(acc->z) ? -1 : 0;
#else
    return add_affine(acc, acc, b);
#endif
}

/// acc += k · P, from P's table: k in signed digits of the table's width (each in −2^(w−1) + 1 …
/// 2^(w−1), the carry passed up), one addition per non-zero digit, a negative one adding the point
/// with y negated.
static int add_multiple(jacobian *acc, const cohort_p256_table *table, const num k) {
    int width = table->width, half = 1 << (width - 1), carry = 0;
    for (int j = 0; j < table->windows; j++) {
        int digit = (int)bits_at(k, j * width, width) + carry;
        carry = digit > half;
        if (carry) digit -= 1 << width;
        if (digit == 0) continue;
        const affine *point = &table->t[j * table->digits + (digit > 0 ? digit : -digit) - 1];
        if (digit < 0) {
            affine negated;
            memcpy(negated.x, point->x, sizeof(num));
            sub4(negated.y, P_LIMBS, point->y);
            if (add_to(acc, &negated) != 0) return -1;
        } else if (add_to(acc, point) != 0) {
            return -1;
        }
    }
    return carry ? -1 : 0;
}

int cohort_p256_verify(const cohort_p256_table *key, const uint8_t digest[32], const uint8_t rb[32], const uint8_t sb[32]) {
    if (key == NULL) return -1;
    // The key's table exists, so the arithmetic passed its checks and the generator's table of the
    // same width was made.
    const cohort_p256_table *base = generator(key->width);
    if (base == NULL) return -1;
    num r, s, e;
    from_bytes(r, rb);
    from_bytes(s, sb);
    from_bytes(e, digest);
    if (is_zero(r) || is_zero(s) || !less(r, N.m) || !less(s, N.m)) return 0;
    if (!less(e, N.m)) sub4(e, e, N.m);
    // w = s^-1 · R (Montgomery form); u1 = e · s^-1 and u2 = r · s^-1 (plain form).
    num inverse, w, u1, u2;
    invert_binary(inverse, s, N.m);
    sc_mul(w, inverse, N.r2);
    sc_mul(u1, e, w);
    sc_mul(u2, r, w);
    jacobian acc = {.infinity = 1};
    if (add_multiple(&acc, base, u1) != 0 || add_multiple(&acc, key, u2) != 0 || acc.infinity) return -1;
    // Every coordinate kept is below p; one that is not is left undecided rather than compared.
    if (!less(acc.x, P.m) || !less(acc.z, P.m)) return -1;
    // x(R) mod n = r, with x(R) = X / Z²: X = r · Z², or X = (r + n) · Z² when r + n < p.
    num zz, rm, t, rn;
    fe_mul(zz, acc.z, acc.z);
    fe_mul(rm, r, P.r2);
    fe_mul(t, rm, zz);
    if (equal(t, acc.x)) return 1;
    if (add4(rn, r, N.m) == 0 && less(rn, P.m)) {
        fe_mul(rm, rn, P.r2);
        fe_mul(t, rm, zz);
        if (equal(t, acc.x)) return 1;
    }
    return 0;
}

#endif
