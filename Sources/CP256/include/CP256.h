#ifndef COHORT_CP256_H
#define COHORT_CP256_H

#include <stdint.h>

/// ECDSA P-256 verification against tables of multiples computed ahead, for a public key that signs
/// many times: fixed-base multiplication, a signed digit of each scalar at a time, with no doublings.
/// Variable-time (only public values pass through it). Written for speed on the common case only:
/// wherever a sum meets a case its formulas do not cover, it answers "undecided" and the caller
/// verifies the usual way.

/// The multiples of one point for digits of `width` bits (4 to 8): `d · 2^(width · j) · P` for
/// d = 1 … 2^(width − 1) and j = 0 … ⌈257 / width⌉ − 1, affine, in Montgomery form. A verification
/// adds one point per non-zero digit of each of its two scalars: width 5 (53,248 bytes) takes 52
/// windows and costs about six verifications to make; width 8 (270,336 bytes) takes 33 and costs
/// about thirty.
typedef struct cohort_p256_table cohort_p256_table;

/// The table of the point (x, y) (32 bytes each, big-endian) for digits of `width` bits; NULL when
/// the width is not 4 to 8, the point is not on the curve (or is its identity), memory runs out, or
/// the generator's table of the same width could not be made (the arithmetic failed its check at
/// start). The first table of a width also makes the generator's, which the process keeps.
cohort_p256_table *cohort_p256_table_new(const uint8_t x[32], const uint8_t y[32], int width);

void cohort_p256_table_free(cohort_p256_table *table);

/// Checks the signature (r, s) (32 bytes each, big-endian) over the SHA-256 `digest` with the key
/// whose table is `key`: 1 valid, 0 invalid, -1 undecided (an exceptional sum, or the generator's
/// table could not be built): the caller must then verify another way.
int cohort_p256_verify(const cohort_p256_table *key, const uint8_t digest[32], const uint8_t r[32], const uint8_t s[32]);

#endif
