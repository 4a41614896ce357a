#ifndef COHORT_CP256_H
#define COHORT_CP256_H

#include <stdint.h>

/// ECDSA P-256 verification against tables of multiples computed ahead, for a public key that signs
/// many times: fixed-base multiplication, a byte of each scalar at a time, with no doublings at all.
/// Variable-time (only public values pass through it). Written for speed on the common case only:
/// wherever a sum meets a case its formulas do not cover, it answers "undecided" and the caller
/// verifies the usual way.

/// The multiples of one point, `d · 256^j · P` for every byte `d` (1…255) and position `j` (0…31),
/// affine, in Montgomery form: 522,240 bytes.
typedef struct cohort_p256_table cohort_p256_table;

/// The table of the point (x, y) (32 bytes each, big-endian); NULL when the point is not on the
/// curve (or is its identity), memory runs out, or the generator's own table could not be made (the
/// arithmetic failed its check at start). Takes about as long as 50 verifications (3 ms).
cohort_p256_table *cohort_p256_table_new(const uint8_t x[32], const uint8_t y[32]);

void cohort_p256_table_free(cohort_p256_table *table);

/// Checks the signature (r, s) (32 bytes each, big-endian) over the SHA-256 `digest` with the key
/// whose table is `key`: 1 valid, 0 invalid, -1 undecided (an exceptional sum, or the generator's
/// table could not be built): the caller must then verify another way.
int cohort_p256_verify(const cohort_p256_table *key, const uint8_t digest[32], const uint8_t r[32], const uint8_t s[32]);

#endif
