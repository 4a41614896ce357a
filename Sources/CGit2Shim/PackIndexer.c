#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <openssl/evp.h>
#include <git2.h>
#include "PackEntry.h"
#include "PackIndexer.h"

// Cohort's own indexer of a clone's pack. libgit2's indexer resolves each delta on its own, walking
// its chain back to a base through a small cache: a clone of a long history spent most of its fetch
// there, on one core. This one reads each entry once as the pack arrives (naming every whole object
// then), and at the end applies each delta once, from its base down (a base's deltas, then theirs),
// naming each result. Names are libgit2's own (`git_odb_hash`, SHA-1 with collision detection), the
// pack is written as it came, and its index as libgit2 writes one (version 2).
//
// It only ever takes a pack that git writes: on anything else (a stream that does not end where it
// says, a delta that does not fit its base, a base not in the pack, an object named twice, a
// trailer that does not match) or past its bounds, it declines, writes nothing, and the caller hands
// every byte to libgit2's indexer, which takes or refuses the pack as before.

#define ENTRY_LIMIT ((uint32_t)1 << 22)       // entries (about 80 bytes each)
#define OBJECT_LIMIT ((uint64_t)64 << 20)     // bytes of one object or delta
#define KEPT_LIMIT ((size_t)256 << 20)        // bytes inflated in the first pass and kept for the second
#define KEPT_OVERHEAD 16                      // counted for each kept (an empty object takes memory too)
#define DEPTH_LIMIT 10000                     // deltas on deltas
#define PATH_LIMIT ((size_t)512 << 20)        // bytes held along one chain of deltas
#define PROGRESS_EVERY 256

typedef struct {
    uint64_t offset;      // where the entry starts
    uint64_t data;        // where its zlib stream starts
    uint64_t end;         // where the next entry starts
    uint64_t size;        // as declared: the object's size, or the delta's
    uint64_t base;        // a delta by offset: its base's index; by id: where the base's id is in the pack
    unsigned char *kept;  // what the first pass inflated, kept for the second (or NULL)
    uint32_t crc;
    uint32_t next_ref;    // the next delta by id on the same base: its index + 1
    int8_t kind;          // 1 commit, 2 tree, 3 blob, 4 tag, 6 delta by offset, 7 delta by id
    int8_t type;          // the object's type, once known
    int8_t named;
    unsigned char id[20];
} indexer_entry;

struct cohort_pack_indexer {
    cohort_pack_named named;
    void *context;
    git_indexer_progress_cb progress;
    void *payload;
    int begun;
    int declined;
    uint32_t count;       // entries the pack's header declares
    size_t position;      // the next byte to read
    indexer_entry *entries;
    size_t entry_count, entry_capacity;
    size_t kept_bytes;
    size_t kept_limit;    // KEPT_LIMIT, or less (`cohort_pack_indexer_limit`)
    uint32_t entry_limit; // ENTRY_LIMIT, or less
    // The entry being inflated, if any (the last one).
    int inflating;
    unsigned char *out;
    unsigned char spare;  // written only by a stream longer than it says
    z_stream zlib;
    int zlib_ready;
};

cohort_pack_indexer *cohort_pack_indexer_new(cohort_pack_named named, void *context) {
    cohort_pack_indexer *indexer = calloc(1, sizeof(cohort_pack_indexer));
    if (!indexer) return NULL;
    indexer->named = named;
    indexer->context = context;
    indexer->kept_limit = KEPT_LIMIT;
    indexer->entry_limit = ENTRY_LIMIT;
    return indexer;
}

void cohort_pack_indexer_limit(cohort_pack_indexer *indexer, uint32_t entries, size_t kept) {
    if (entries < indexer->entry_limit) indexer->entry_limit = entries;
    if (kept < indexer->kept_limit) indexer->kept_limit = kept;
}

void cohort_pack_indexer_report_to(cohort_pack_indexer *indexer, git_indexer_progress_cb progress, void *payload) {
    indexer->progress = progress;
    indexer->payload = payload;
}

static void free_kept(cohort_pack_indexer *indexer) {
    for (size_t i = 0; i < indexer->entry_count; i++) {
        free(indexer->entries[i].kept);
        indexer->entries[i].kept = NULL;
    }
    indexer->kept_bytes = 0;
}

void cohort_pack_indexer_free(cohort_pack_indexer *indexer) {
    if (!indexer) return;
    free_kept(indexer);
    free(indexer->entries);
    free(indexer->out);
    if (indexer->zlib_ready) inflateEnd(&indexer->zlib);
    free(indexer);
}

static int decline(cohort_pack_indexer *indexer) {
    indexer->declined = 1;
    free_kept(indexer);
    free(indexer->out);
    indexer->out = NULL;
    indexer->inflating = 0;
    return 1;
}

static int report(cohort_pack_indexer *indexer, git_indexer_progress *stats) {
    return indexer->progress ? indexer->progress(stats, indexer->payload) : 0;
}

static int name_object(const unsigned char *data, uint64_t size, int type, unsigned char id[20]) {
    git_oid oid;
    if (git_odb_hash(&oid, data, (size_t)size, (git_object_t)type) != 0) return -1;
    memcpy(id, oid.id, 20);
    return 0;
}

// The entry that starts at `offset`, by its index; -1 when none does.
static long entry_at(const cohort_pack_indexer *indexer, uint64_t offset) {
    size_t low = 0, high = indexer->entry_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (indexer->entries[middle].offset == offset) return (long)middle;
        if (indexer->entries[middle].offset < offset) low = middle + 1; else high = middle;
    }
    return -1;
}

// Starts the entry at the reading position: 0 started, 1 declined, 2 its header has not all arrived.
static int begin_entry(cohort_pack_indexer *indexer, const unsigned char *pack, size_t length) {
    size_t at = indexer->position, available = length - at;
    cohort_pack_entry_header header;
    size_t header_length = cohort_pack_entry_header_read(pack + at, pack + length, at, &header);
    // A header takes at most 30 bytes: one that does not read with 32 at hand is not git's.
    if (header_length == 0) return available < 32 ? 2 : decline(indexer);
    if (header.size > OBJECT_LIMIT) return decline(indexer);
    uint64_t base = 0;
    if (header.kind == 6) {
        long index = entry_at(indexer, header.base_offset);
        if (index < 0) return decline(indexer);
        base = (uint64_t)index;
    } else if (header.kind == 7) {
        base = (uint64_t)(header.base_id - pack);
    }
    if (indexer->entry_count == indexer->entry_capacity) {
        size_t capacity = indexer->entry_capacity ? indexer->entry_capacity * 2 : 4096;
        indexer_entry *grown = realloc(indexer->entries, capacity * sizeof(indexer_entry));
        if (!grown) return decline(indexer);
        indexer->entries = grown;
        indexer->entry_capacity = capacity;
    }
    if (!(indexer->out = malloc(header.size ? header.size : 1))) return decline(indexer);
    indexer_entry *entry = &indexer->entries[indexer->entry_count++];
    memset(entry, 0, sizeof(*entry));
    entry->offset = at;
    entry->data = at + header_length;
    entry->size = header.size;
    entry->base = base;
    entry->kind = (int8_t)header.kind;
    z_stream *zlib = &indexer->zlib;
    if (!indexer->zlib_ready) {
        if (inflateInit(zlib) != Z_OK) return decline(indexer);
        indexer->zlib_ready = 1;
    } else if (inflateReset(zlib) != Z_OK) {
        return decline(indexer);
    }
    zlib->next_out = header.size ? indexer->out : &indexer->spare;
    zlib->avail_out = header.size ? (uInt)header.size : 1;
    indexer->position = entry->data;
    indexer->inflating = 1;
    return 0;
}

// Ends the entry just inflated: its checksum, its name if it is whole, what is kept of it.
static int end_entry(cohort_pack_indexer *indexer, const unsigned char *pack, git_indexer_progress *stats) {
    indexer_entry *entry = &indexer->entries[indexer->entry_count - 1];
    entry->end = indexer->position;
    entry->crc = (uint32_t)crc32(0L, pack + entry->offset, (uInt)(entry->end - entry->offset));
    if (entry->kind <= 4) {
        if (name_object(indexer->out, entry->size, entry->kind, entry->id) != 0) return decline(indexer);
        entry->type = entry->kind;
        entry->named = 1;
        stats->indexed_objects++;
        if (indexer->named) indexer->named(indexer->context, entry->type, entry->id, indexer->out, (size_t)entry->size);
    }
    if (indexer->kept_bytes + entry->size + KEPT_OVERHEAD <= indexer->kept_limit) {
        entry->kept = indexer->out;
        indexer->kept_bytes += (size_t)entry->size + KEPT_OVERHEAD;
    } else {
        free(indexer->out);
    }
    indexer->out = NULL;
    indexer->inflating = 0;
    stats->received_objects++;
    if (stats->received_objects % PROGRESS_EVERY == 0 || stats->received_objects == stats->total_objects) {
        int stop = report(indexer, stats);
        if (stop) return stop < 0 ? stop : GIT_EUSER;
    }
    return 0;
}

int cohort_pack_indexer_advance(cohort_pack_indexer *indexer, const unsigned char *pack, size_t length,
                                git_indexer_progress *stats) {
    if (indexer->declined) return 1;
    if (!indexer->begun) {
        if (length < 12) return 0;
        uint32_t version = cohort_be32(pack + 4), count = cohort_be32(pack + 8);
        if (memcmp(pack, "PACK", 4) != 0 || version != 2 || count == 0 || count > indexer->entry_limit) {
            return decline(indexer);
        }
        indexer->count = count;
        indexer->position = 12;
        indexer->begun = 1;
        stats->total_objects = count;
        stats->received_objects = stats->indexed_objects = stats->local_objects = 0;
        stats->total_deltas = stats->indexed_deltas = 0;
    }
    z_stream *zlib = &indexer->zlib;
    while (indexer->inflating || indexer->entry_count < indexer->count) {
        if (!indexer->inflating) {
            if (indexer->position >= length) return 0;
            int begun = begin_entry(indexer, pack, length);
            if (begun == 2) return 0;
            if (begun != 0) return begun;
        }
        if (indexer->position >= length) return 0;
        size_t available = length - indexer->position;
        zlib->next_in = (unsigned char *)pack + indexer->position;
        zlib->avail_in = available > UINT32_MAX ? UINT32_MAX : (uInt)available;
        int status = inflate(zlib, Z_NO_FLUSH);
        indexer->position = (size_t)(zlib->next_in - pack);
        uint64_t size = indexer->entries[indexer->entry_count - 1].size;
        if (zlib->total_out > size) return decline(indexer);   // longer than it says
        if (status == Z_STREAM_END) {
            if (zlib->total_out != size) return decline(indexer);
            int ended = end_entry(indexer, pack, stats);
            if (ended != 0) return ended;
            continue;
        }
        if (status != Z_OK && status != Z_BUF_ERROR) return decline(indexer);
        if (zlib->avail_out == 0) {
            // Whole, but its stream may not have ended yet: one byte more would be too long.
            zlib->next_out = &indexer->spare;
            zlib->avail_out = 1;
        } else if (zlib->avail_in > 0 && status == Z_BUF_ERROR) {
            return decline(indexer);
        }
    }
    return 0;
}

// Inflates entry `entry` again from the pack (the first pass did not keep it): exactly its size.
static unsigned char *reinflate(const indexer_entry *entry, const unsigned char *pack) {
    unsigned char *out = malloc(entry->size ? entry->size : 1);
    if (!out) return NULL;
    z_stream zlib = {0};
    if (inflateInit(&zlib) != Z_OK) {
        free(out);
        return NULL;
    }
    zlib.next_in = (unsigned char *)pack + entry->data;
    zlib.avail_in = (uInt)(entry->end - entry->data);
    zlib.next_out = out;
    zlib.avail_out = (uInt)entry->size;
    int status = inflate(&zlib, Z_FINISH);
    int whole = status == Z_STREAM_END && zlib.total_out == entry->size;
    inflateEnd(&zlib);
    if (!whole) {
        free(out);
        return NULL;
    }
    return out;
}

// What the first pass kept of entry `index`, taken from it (the caller frees it), or NULL.
static unsigned char *take_kept(cohort_pack_indexer *indexer, size_t index) {
    indexer_entry *entry = &indexer->entries[index];
    unsigned char *bytes = entry->kept;
    if (bytes) {
        entry->kept = NULL;
        indexer->kept_bytes -= (size_t)entry->size + KEPT_OVERHEAD;
    }
    return bytes;
}

// The bytes of entry `index`, inflated: as the first pass kept them, or again (the caller frees them).
static unsigned char *take(cohort_pack_indexer *indexer, size_t index, const unsigned char *pack) {
    unsigned char *bytes = take_kept(indexer, index);
    return bytes ? bytes : reinflate(&indexer->entries[index], pack);
}

// Deltas by id, in the order of their bases' ids (which a server chooses: a sorted list, unlike a
// table of hashes, cannot be crowded), found by binary search.
typedef struct {
    unsigned char base[20];
    uint32_t index;
} base_link;

typedef struct {
    base_link *sorted;
    size_t count;
} by_base;

static int base_link_order(const void *a, const void *b) {
    const base_link *left = a, *right = b;
    int order = memcmp(left->base, right->base, 20);
    return order ? order : (left->index > right->index) - (left->index < right->index);
}

// Files the deltas by id under their bases (each chained to the next on the same base); 0, or -1
// when memory is refused.
static int file_by_base(cohort_pack_indexer *indexer, const unsigned char *pack, by_base *table) {
    memset(table, 0, sizeof(*table));
    for (size_t i = 0; i < indexer->entry_count; i++) table->count += indexer->entries[i].kind == 7;
    if (table->count == 0) return 0;
    if (!(table->sorted = malloc(table->count * sizeof(base_link)))) return -1;
    for (size_t i = 0, at = 0; i < indexer->entry_count; i++) {
        if (indexer->entries[i].kind != 7) continue;
        memcpy(table->sorted[at].base, pack + indexer->entries[i].base, 20);
        table->sorted[at++].index = (uint32_t)i;
    }
    qsort(table->sorted, table->count, sizeof(base_link), base_link_order);
    for (size_t i = 0; i + 1 < table->count; i++) {
        if (memcmp(table->sorted[i].base, table->sorted[i + 1].base, 20) == 0) {
            indexer->entries[table->sorted[i].index].next_ref = table->sorted[i + 1].index + 1;
        }
    }
    return 0;
}

// The first delta by id on the object named `id`: its index + 1, or 0.
static uint32_t first_on(const by_base *table, const unsigned char *id) {
    size_t low = 0, high = table->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (memcmp(table->sorted[middle].base, id, 20) < 0) low = middle + 1; else high = middle;
    }
    return low < table->count && memcmp(table->sorted[low].base, id, 20) == 0 ? table->sorted[low].index + 1 : 0;
}

// One object along the chain being resolved, with its bytes, and which of its deltas come next.
typedef struct {
    uint32_t index;
    unsigned char *bytes;
    uint64_t size;
    uint32_t next_by_offset;   // position in the list of deltas by offset on it
    uint32_t next_by_id;       // the next delta by id on it: index + 1, or 0
} chain_link;

typedef struct {
    uint32_t *first;           // deltas by offset on entry i: list[first[i] ..< first[i + 1]]
    uint32_t *list;
} by_offset;

static int file_by_offset(cohort_pack_indexer *indexer, by_offset *children) {
    size_t count = indexer->entry_count;
    children->first = calloc(count + 1, sizeof(uint32_t));
    children->list = malloc((count ? count : 1) * sizeof(uint32_t));
    if (!children->first || !children->list) return -1;
    for (size_t i = 0; i < count; i++) {
        if (indexer->entries[i].kind == 6) children->first[indexer->entries[i].base + 1]++;
    }
    for (size_t i = 0; i < count; i++) children->first[i + 1] += children->first[i];
    uint32_t *fill = calloc(count ? count : 1, sizeof(uint32_t));
    if (!fill) return -1;
    for (size_t i = 0; i < count; i++) {
        const indexer_entry *entry = &indexer->entries[i];
        if (entry->kind == 6) children->list[children->first[entry->base] + fill[entry->base]++] = (uint32_t)i;
    }
    free(fill);
    return 0;
}

// Resolves every delta under the whole object `root`, each once, from its base down. 0, 1 declined,
// or the progress callback's stop.
static int resolve_from(cohort_pack_indexer *indexer, const unsigned char *pack, size_t root, const by_offset *children,
                        const by_base *table, chain_link *chain, git_indexer_progress *stats) {
    indexer_entry *entries = indexer->entries;
    if (children->first[root] == children->first[root + 1] && !first_on(table, entries[root].id)) {
        free(take_kept(indexer, root));
        return 0;
    }
    unsigned char *bytes = take(indexer, root, pack);
    if (!bytes) return 1;
    size_t depth = 0, held = (size_t)entries[root].size;
    chain[0] = (chain_link){(uint32_t)root, bytes, entries[root].size, children->first[root],
                            first_on(table, entries[root].id)};
    int result = 0;
    while (result == 0) {
        chain_link *link = &chain[depth];
        uint32_t next;
        if (link->next_by_offset < children->first[link->index + 1]) {
            next = children->list[link->next_by_offset++];
        } else if (link->next_by_id) {
            next = link->next_by_id - 1;
            link->next_by_id = entries[next].next_ref;
        } else {
            held -= (size_t)link->size;
            free(link->bytes);
            link->bytes = NULL;
            if (depth == 0) return 0;
            depth--;
            continue;
        }
        indexer_entry *delta = &entries[next];
        if (delta->named) { result = 1; break; }   // reached twice: not a pack git writes
        unsigned char *instructions = take(indexer, next, pack);
        const unsigned char *at = instructions, *end = instructions ? instructions + delta->size : NULL;
        uint64_t source, target;
        unsigned char *object = NULL;
        if (!instructions || cohort_delta_size(&at, end, &source) != 0 || cohort_delta_size(&at, end, &target) != 0 ||
            source != link->size || target > OBJECT_LIMIT || held + target > PATH_LIMIT ||
            !(object = malloc(target ? target : 1)) ||
            cohort_apply_delta(link->bytes, (size_t)link->size, instructions, (size_t)delta->size, object, (size_t)target) != 0) {
            free(instructions);
            free(object);
            result = 1;
            break;
        }
        free(instructions);
        int type = entries[link->index].type;
        if (name_object(object, target, type, delta->id) != 0) {
            free(object);
            result = 1;
            break;
        }
        delta->type = (int8_t)type;
        delta->named = 1;
        if (indexer->named) indexer->named(indexer->context, type, delta->id, object, (size_t)target);
        stats->indexed_objects++;
        stats->indexed_deltas++;
        if (stats->indexed_deltas % PROGRESS_EVERY == 0) {
            int stop = report(indexer, stats);
            if (stop) {
                free(object);
                result = stop < 0 ? stop : GIT_EUSER;
                break;
            }
        }
        uint32_t by_id = first_on(table, delta->id);
        if (children->first[next] == children->first[next + 1] && !by_id) {
            free(object);
            continue;
        }
        if (depth + 1 >= DEPTH_LIMIT) {
            free(object);
            result = 1;
            break;
        }
        held += (size_t)target;
        chain[++depth] = (chain_link){next, object, target, children->first[next], by_id};
    }
    for (size_t i = 0; i <= depth; i++) free(chain[i].bytes);
    return result;
}

// Writes `size` bytes to a new file in `folder`, read-only as libgit2 leaves packs, then names it
// `final`: 0, or -1 (nothing left behind).
static int write_file(const char *folder, const char *final, const unsigned char *bytes, size_t size) {
    char temporary[4096];
    if (snprintf(temporary, sizeof(temporary), "%s/tmp_cohort_pack_XXXXXX", folder) >= (int)sizeof(temporary)) return -1;
    int fd = mkostemp(temporary, O_CLOEXEC);
    if (fd < 0) return -1;
    int ok = cohort_write_all(fd, bytes, size) == 0 && fchmod(fd, 0444) == 0;
    if (close(fd) != 0) ok = 0;
    if (!ok || rename(temporary, final) != 0) {
        unlink(temporary);
        return -1;
    }
    return 0;
}

static int sha1(const unsigned char *bytes, size_t size, unsigned char out[20]) {
    unsigned int length = 0;
    return EVP_Digest(bytes, size, out, &length, EVP_sha1(), NULL) == 1 && length == 20 ? 0 : -1;
}

int cohort_pack_indexer_finish(cohort_pack_indexer *indexer, const unsigned char *pack, size_t length,
                               const char *pack_folder, git_indexer_progress *stats) {
    if (indexer->declined || !indexer->begun || indexer->inflating || indexer->entry_count != indexer->count) {
        return decline(indexer);
    }
    // Exactly the trailer after the last entry, and it matches.
    unsigned char checksum[20];
    if (length - indexer->position != 20 || sha1(pack, length - 20, checksum) != 0 ||
        memcmp(checksum, pack + length - 20, 20) != 0) {
        return decline(indexer);
    }
    size_t count = indexer->entry_count;
    stats->total_deltas = stats->total_objects - stats->indexed_objects;
    by_offset children = {0};
    by_base table = {0};
    chain_link *chain = malloc(DEPTH_LIMIT * sizeof(chain_link));
    int result = chain && file_by_offset(indexer, &children) == 0 && file_by_base(indexer, pack, &table) == 0 ? 0 : 1;
    for (size_t i = 0; i < count && result == 0; i++) {
        if (indexer->entries[i].kind <= 4) result = resolve_from(indexer, pack, i, &children, &table, chain, stats);
    }
    free(chain);
    free(children.first);
    free(children.list);
    free(table.sorted);
    for (size_t i = 0; i < count && result == 0; i++) {
        if (!indexer->entries[i].named) result = 1;   // a delta on a base the pack does not hold
    }
    if (result != 0) return result < 0 ? result : decline(indexer);
    free_kept(indexer);
    if (!pack_folder) return 0;

    // Names in order; an object named twice is not one git writes.
    cohort_pack_index_entry *listed = malloc(count * sizeof(cohort_pack_index_entry));
    if (!listed) return decline(indexer);
    for (size_t i = 0; i < count; i++) {
        memcpy(listed[i].id.id, indexer->entries[i].id, 20);
        listed[i].offset = indexer->entries[i].offset;
        listed[i].crc = indexer->entries[i].crc;
    }
    qsort(listed, count, sizeof(cohort_pack_index_entry), cohort_pack_index_entry_order);
    int twice = 0;
    for (size_t i = 1; i < count && !twice; i++) twice = cohort_pack_index_entry_order(&listed[i - 1], &listed[i]) == 0;
    size_t index_size = 0;
    unsigned char *index = twice ? NULL : cohort_pack_index_bytes(listed, count, pack + length - 20, &index_size);
    free(listed);
    if (!index) return decline(indexer);

    // The pack first, then its index, which makes it visible: as libgit2 and git leave them.
    char hex[41], pack_path[4096], index_path[4096];
    for (int i = 0; i < 20; i++) snprintf(hex + i * 2, 3, "%02x", pack[length - 20 + i]);
    int written = snprintf(pack_path, sizeof(pack_path), "%s/pack-%s.pack", pack_folder, hex) < (int)sizeof(pack_path) &&
        snprintf(index_path, sizeof(index_path), "%s/pack-%s.idx", pack_folder, hex) < (int)sizeof(index_path) &&
        write_file(pack_folder, pack_path, pack, length) == 0;
    if (written && write_file(pack_folder, index_path, index, index_size) != 0) {
        unlink(pack_path);
        written = 0;
    }
    free(index);
    if (!written) return decline(indexer);
    int stop = report(indexer, stats);
    return stop ? (stop < 0 ? stop : GIT_EUSER) : 0;
}

int cohort_pack_index(const unsigned char *pack, size_t length, size_t piece, const char *pack_folder) {
    cohort_pack_indexer *indexer = cohort_pack_indexer_new(NULL, NULL);
    if (!indexer || !pack_folder) {
        cohort_pack_indexer_free(indexer);
        return 1;
    }
    git_indexer_progress stats = {0};
    int result = 0;
    size_t arrived = 0;
    do {
        arrived = piece && length - arrived > piece ? arrived + piece : length;
        result = cohort_pack_indexer_advance(indexer, pack, arrived, &stats);
    } while (result == 0 && arrived < length);
    if (result == 0) result = cohort_pack_indexer_finish(indexer, pack, length, pack_folder, &stats);
    cohort_pack_indexer_free(indexer);
    return result;
}
