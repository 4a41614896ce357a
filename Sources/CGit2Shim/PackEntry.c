#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <git2/errors.h>
#include "PackEntry.h"

size_t cohort_pack_entry_header_read(const unsigned char *at, const unsigned char *end, uint64_t offset,
                                     cohort_pack_entry_header *header) {
    const unsigned char *start = at;
    if (at >= end) return 0;
    unsigned char byte = *at++;
    header->kind = (byte >> 4) & 7;
    header->size = byte & 15;
    header->base_offset = 0;
    header->base_id = NULL;
    int shift = 4;
    while (byte & 0x80) {
        if (at >= end || shift > 57) return 0;
        byte = *at++;
        header->size |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    }
    if (header->kind == 6) {
        if (at >= end) return 0;
        byte = *at++;
        uint64_t distance = byte & 0x7f;
        while (byte & 0x80) {
            if (at >= end || distance >= ((uint64_t)1 << 56)) return 0;
            byte = *at++;
            distance = ((distance + 1) << 7) | (byte & 0x7f);
        }
        if (distance == 0 || distance > offset) return 0;
        header->base_offset = offset - distance;
    } else if (header->kind == 7) {
        if (end - at < 20) return 0;
        header->base_id = at;
        at += 20;
    } else if (header->kind < 1 || header->kind > 4) {
        return 0;
    }
    return (size_t)(at - start);
}

// One of a delta's two sizes at its start (base, then result): a little-endian base-128 number.
int cohort_delta_size(const unsigned char **at, const unsigned char *end, uint64_t *size) {
    uint64_t value = 0;
    int shift = 0;
    unsigned char byte;
    do {
        if (*at >= end || shift > 63) return -1;
        byte = *(*at)++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while (byte & 0x80);
    *size = value;
    return 0;
}

// Applies `delta` to `base` into `out` of exactly `size` bytes, with the checks libgit2's
// git_delta_apply makes: the base's size, each copy inside the base and the result, each insertion
// inside the delta and the result, no zero command, and nothing left over.
int cohort_apply_delta(const unsigned char *base, size_t base_size, const unsigned char *delta, size_t delta_size_bytes,
                       unsigned char *out, size_t size) {
    const unsigned char *at = delta, *end = delta + delta_size_bytes;
    uint64_t source, target;
    if (cohort_delta_size(&at, end, &source) != 0 || source != base_size) return -1;
    if (cohort_delta_size(&at, end, &target) != 0 || target != size) return -1;
    size_t left = size;
    unsigned char *write = out;
    while (at < end) {
        unsigned char command = *at++;
        if (command & 0x80) {
            uint64_t offset = 0, length = 0;
            for (int i = 0; i < 4; i++) {
                if (command & (1 << i)) {
                    if (at >= end) return -1;
                    offset |= (uint64_t)*at++ << (8 * i);
                }
            }
            for (int i = 0; i < 3; i++) {
                if (command & (0x10 << i)) {
                    if (at >= end) return -1;
                    length |= (uint64_t)*at++ << (8 * i);
                }
            }
            if (length == 0) length = 0x10000;
            if (offset > base_size || length > base_size - offset || length > left) return -1;
            memcpy(write, base + offset, length);
            write += length;
            left -= length;
        } else if (command) {
            if (command > (size_t)(end - at) || command > left) return -1;
            memcpy(write, at, command);
            at += command;
            write += command;
            left -= command;
        } else {
            return -1;
        }
    }
    return left == 0 ? 0 : -1;
}

int cohort_write_all(int fd, const void *data, size_t size) {
    const unsigned char *bytes = data;
    while (size > 0) {
        ssize_t done = write(fd, bytes, size);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            git_error_set_str(GIT_ERROR_OS, strerror(errno ? errno : EIO));
            return -1;
        }
        bytes += done;
        size -= (size_t)done;
    }
    return 0;
}

int cohort_pack_index_entry_order(const void *a, const void *b) {
    return git_oid_cmp(&((const cohort_pack_index_entry *)a)->id, &((const cohort_pack_index_entry *)b)->id);
}

unsigned char *cohort_pack_index_bytes(const cohort_pack_index_entry *entries, size_t count, const unsigned char *pack_checksum, size_t *size) {
    size_t large = 0;
    for (size_t i = 0; i < count; i++) if (entries[i].offset >= 0x80000000u) large++;
    *size = 8 + 256 * 4 + count * (GIT_OID_RAWSZ + 4 + 4) + large * 8 + 2 * GIT_OID_RAWSZ;
    unsigned char *out = calloc(1, *size);
    if (!out) {
        git_error_set_oom();
        return NULL;
    }
    unsigned char *at = out;
    memcpy(at, "\377tOc", 4);
    cohort_put32(at + 4, 2);
    at += 8;
    size_t below = 0;
    for (unsigned first = 0; first < 256; first++) {
        while (below < count && entries[below].id.id[0] <= first) below++;
        cohort_put32(at + first * 4, (uint32_t)below);
    }
    at += 256 * 4;
    for (size_t i = 0; i < count; i++, at += GIT_OID_RAWSZ) memcpy(at, entries[i].id.id, GIT_OID_RAWSZ);
    for (size_t i = 0; i < count; i++, at += 4) cohort_put32(at, entries[i].crc);
    unsigned char *offsets = at;
    unsigned char *wide = at + count * 4;
    size_t next = 0;
    for (size_t i = 0; i < count; i++) {
        if (entries[i].offset < 0x80000000u) {
            cohort_put32(offsets + i * 4, (uint32_t)entries[i].offset);
        } else {
            cohort_put32(offsets + i * 4, 0x80000000u | (uint32_t)next);
            cohort_put32(wide + next * 8, (uint32_t)(entries[i].offset >> 32));
            cohort_put32(wide + next * 8 + 4, (uint32_t)entries[i].offset);
            next++;
        }
    }
    at = wide + large * 8;
    memcpy(at, pack_checksum, GIT_OID_RAWSZ);
    at += GIT_OID_RAWSZ;
    unsigned int length = 0;
    if (EVP_Digest(out, (size_t)(at - out), at, &length, EVP_sha1(), NULL) != 1) {
        git_error_set_str(GIT_ERROR_SSL, "cannot hash the pack index");
        free(out);
        return NULL;
    }
    return out;
}
