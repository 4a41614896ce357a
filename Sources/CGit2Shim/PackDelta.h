#ifndef COHORT_PACK_DELTA_H
#define COHORT_PACK_DELTA_H

#include <stddef.h>
#include <stdint.h>

// Git's pack deltas, for Cohort's own readers of packs (PackReader.c, PackTee.c); not for Swift.

/// Reads one of the two sizes a delta starts with, moving `*at` past it; -1 when it runs past `end`.
int cohort_delta_size(const unsigned char **at, const unsigned char *end, uint64_t *size);

/// Applies `delta` to `base` into `out` of exactly `size` bytes, with the checks libgit2's
/// git_delta_apply makes; 0, or -1 for a delta that does not fit its base or its result.
int cohort_apply_delta(const unsigned char *base, size_t base_size, const unsigned char *delta, size_t delta_size_bytes,
                       unsigned char *out, size_t size);

#endif
