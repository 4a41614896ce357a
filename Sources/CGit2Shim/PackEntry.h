#ifndef COHORT_PACK_ENTRY_H
#define COHORT_PACK_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <git2/oid.h>

// Git's pack entries and pack indexes, for Cohort's own readers and writers of packs (PackReader.c,
// PackIndexer.c, ObjectBatch.c); not for Swift.

static inline uint32_t cohort_be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void cohort_put32(unsigned char *out, uint32_t value) {
    out[0] = (unsigned char)(value >> 24);
    out[1] = (unsigned char)(value >> 16);
    out[2] = (unsigned char)(value >> 8);
    out[3] = (unsigned char)value;
}

/// One entry's header as git writes it: its kind (1 commit, 2 tree, 3 blob, 4 tag, 6 delta by
/// offset, 7 delta by id), the size it declares, and for a delta by offset where its base starts,
/// for a delta by id where the base's 20-byte id is.
typedef struct {
    int kind;
    uint64_t size;
    uint64_t base_offset;
    const unsigned char *base_id;
} cohort_pack_entry_header;

/// Reads the header of the entry at pack offset `offset`, whose bytes start at `at` and may be read
/// up to `end`; returns how many bytes it takes, or 0 when it is not one git writes (an unknown
/// kind, a number past 64 bits, a base distance of 0 or before the pack, bytes past `end`).
size_t cohort_pack_entry_header_read(const unsigned char *at, const unsigned char *end, uint64_t offset,
                                     cohort_pack_entry_header *header);

/// Reads one of the two sizes a delta starts with, moving `*at` past it; -1 when it runs past `end`.
int cohort_delta_size(const unsigned char **at, const unsigned char *end, uint64_t *size);

/// Applies `delta` to `base` into `out` of exactly `size` bytes, with the checks libgit2's
/// git_delta_apply makes; 0, or -1 for a delta that does not fit its base or its result.
int cohort_apply_delta(const unsigned char *base, size_t base_size, const unsigned char *delta, size_t delta_size_bytes,
                       unsigned char *out, size_t size);

/// One object of a pack as its index lists it.
typedef struct {
    git_oid id;
    uint64_t offset;
    uint32_t crc;      // of the entry's bytes in the pack, header included
} cohort_pack_index_entry;

/// qsort's order for index entries: by id.
int cohort_pack_index_entry_order(const void *a, const void *b);

/// The index (version 2, as git writes it) of a pack of `count` entries sorted by id whose trailer is
/// `pack_checksum`, in memory, its size in `size`; NULL (with libgit2's error set) when memory is refused.
unsigned char *cohort_pack_index_bytes(const cohort_pack_index_entry *entries, size_t count, const unsigned char *pack_checksum, size_t *size);

/// Writes all of `data` to `fd`, again after an interrupted write: 0, or -1 with libgit2's error set.
int cohort_write_all(int fd, const void *data, size_t size);

#endif
