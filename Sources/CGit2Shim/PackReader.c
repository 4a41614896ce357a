#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <git2/sys/odb_backend.h>
#include "CGit2Shim.h"
#include "PackEntry.h"
#include "KeptObjects.h"

// A reader of one folder's packs for one repository handle. libgit2 reads packs through one state per
// pack path for the whole process, behind a lock every thread takes several times per object; this
// reader maps each pack and its index on its own and keeps its own delta bases, so the threads of a
// verification never wait on each other. It serves only what it reads exactly as libgit2 would: any
// entry, delta or index it does not take as well-formed is passed to libgit2's own pack reader
// (GIT_PASSTHROUGH), which then reads it, or refuses it, as it always has. It answers no "exists" (nor
// libgit2's "freshen", which falls back to it): its list of packs is taken when it opens, and a write
// must never be skipped for an object whose pack `git gc` has since deleted.

#define PACK_LIMIT 256                        // packs read per folder (libgit2 reads any others)
#define OBJECT_LIMIT ((uint64_t)256 << 20)    // larger objects are left to libgit2
#define CHAIN_LIMIT 4096                      // deltas followed to reach a base
#define CACHE_SLOT_BITS 12                    // 4,096 delta bases kept, by their place in the pack
#define CACHE_SLOTS ((size_t)1 << CACHE_SLOT_BITS)
#define CACHE_BYTES ((size_t)16 << 20)          // per reader: a verification has two per thread,
#define CACHE_ALL_BYTES ((size_t)128 << 20)     // and all readers of the process together
#define CACHE_ENTRY_BYTES ((size_t)1 << 20)     // as libgit2's own cache of bases
#define DELTA_HEADER_BYTES ((uint64_t)1 << 20)  // a delta read whole for its size (larger: libgit2)
#define TOP_DELTA_BYTES ((uint64_t)64 << 10)    // a delta inflated once for its result's size and its use
// What one read may inflate and rebuild, bases and deltas together, past what it returns: git's
// pack-objects never makes a delta much smaller than its base, so only a pack built to make every read
// inflate one huge base again goes past it. That pack is left to libgit2, which reads it (or not) as it
// always has, under its lock, one thread at a time.
#define READ_BUDGET ((uint64_t)64 << 20)
#define READ_BUDGET_FACTOR 64

typedef struct {
    const unsigned char *index;
    size_t index_size;
    const unsigned char *pack;
    size_t pack_size;
    uint32_t count;
    uint32_t fanout[256];
    const unsigned char *ids;
    const unsigned char *offsets;
    const unsigned char *large_offsets;
    uint64_t large_count;
} pack_file;

typedef struct {
    uint64_t key;          // (pack number + 1) << 48 | offset; 0: empty
    unsigned char *data;
    size_t size;
    git_object_t type;
} cached_base;

typedef struct {
    git_odb_backend parent;
    pthread_mutex_t lock;
    pack_file *packs;      // pack_count of them, room for pack_room
    size_t pack_count, pack_room;
    cached_base *cache;    // CACHE_SLOTS, made when the first base is kept
    size_t cache_bytes;
    z_stream zlib;
    int zlib_ready;
    uint64_t last_key;     // a delta read whole to learn its size, kept for the read that follows
    void *last_data;       // (allocated by libgit2's allocator: handed over as it is)
    size_t last_size;
    git_object_t last_type;
    unsigned char repository[16];   // the repository's identity, for the trees kept between handles
    int keeps;                      // whether trees are kept between handles (KeptObjects.c)
} pack_reader;

// One pack entry's header: its kind, the size it declares, where its deflated data starts, and for a
// delta where its base is.
typedef struct {
    int kind;               // 1 commit, 2 tree, 3 blob, 4 tag, 6 delta by offset, 7 delta by id
    size_t pack;            // where the entry is
    uint64_t offset;
    uint64_t size;
    uint64_t data;
    uint64_t base;          // kind 6 and 7: the base's offset, in the same pack
    unsigned char base_id[20];  // kind 7: the base's id
} pack_entry_header;

static uint64_t be64(const unsigned char *p) {
    return (uint64_t)cohort_be32(p) << 32 | cohort_be32(p + 4);
}

// Maps of pack and index files, shared by every reader of the process and found by the file's
// identity (device, inode, size, modification time; git never rewrites a pack in place): a hook's
// handles, its own and its workers', map each file once rather than once each. A process that keeps
// running (the resident verifier) also keeps up to `kept_limit` maps no reader uses, of files still
// at their path: unmapping in a busy process interrupts every core to flush its address translations,
// which cost a push more than reading its objects. A file found again under another path (a push's
// quarantine moved into the repository) keeps its map; maps of files gone from their path (a pack
// `git gc` replaced) are let go whenever a reader is freed.
typedef struct shared_map {
    dev_t device;
    ino_t inode;
    off_t size;
    struct timespec modified;
    char *path;
    const unsigned char *data;
    int users;
    uint64_t released;     // when the last user let go (a counter), for the oldest to go first
    int stale;             // a deleted file's, whose identity another file took: let go when unused
    struct shared_map *next;
} shared_map;

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_map *maps;
static int kept_limit;
static uint64_t release_clock;

void cohort_pack_maps_keep(int count) {
    pthread_mutex_lock(&maps_lock);
    kept_limit = count < 0 ? 0 : count;
    pthread_mutex_unlock(&maps_lock);
}

static int same_file(const struct stat *status, const shared_map *map) {
    return status->st_dev == map->device && status->st_ino == map->inode && status->st_size == map->size &&
           status->st_mtim.tv_sec == map->modified.tv_sec && status->st_mtim.tv_nsec == map->modified.tv_nsec;
}

// Unmaps and forgets the unused maps that `drop` picks (with `maps_lock` held).
static void drop_unused(int (*drop)(const shared_map *map, void *context), void *context) {
    for (shared_map **link = &maps; *link;) {
        shared_map *map = *link;
        if (map->users == 0 && drop(map, context)) {
            *link = map->next;
            munmap((void *)map->data, (size_t)map->size);
            free(map->path);
            free(map);
        } else {
            link = &map->next;
        }
    }
}

static int gone_from_path(const shared_map *map, void *context) {
    (void)context;
    struct stat status;
    return map->stale || stat(map->path, &status) != 0 || !same_file(&status, map);
}

static int released_before(const shared_map *map, void *context) {
    return map->released <= *(uint64_t *)context;
}

// Keeps at most `kept_limit` unused maps, the most recently released (with `maps_lock` held).
static void trim_unused(void) {
    uint64_t kept = 0, oldest_kept = UINT64_MAX;
    for (shared_map *map = maps; map; map = map->next) if (map->users == 0) kept++;
    while (kept > (uint64_t)kept_limit) {
        oldest_kept = UINT64_MAX;
        for (shared_map *map = maps; map; map = map->next)
            if (map->users == 0 && map->released < oldest_kept) oldest_kept = map->released;
        drop_unused(released_before, &oldest_kept);
        kept = 0;
        for (shared_map *map = maps; map; map = map->next) if (map->users == 0) kept++;
    }
}

static int map_file(const char *path, const unsigned char **data, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat status;
    int result = -1;
    if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0) {
        pthread_mutex_lock(&maps_lock);
        shared_map *found = maps;
        while (found && (found->stale || !same_file(&status, found))) found = found->next;
        // A map of a deleted file whose device, inode, size and time a new file happens to take is not
        // that file: its last 20 bytes (a pack's or an index's checksum) must be the file's too.
        unsigned char trailer[20];
        if (found && (status.st_size < 20 || pread(fd, trailer, 20, status.st_size - 20) != 20 ||
                      memcmp(trailer, found->data + found->size - 20, 20) != 0)) {
            found->stale = 1;
            found = NULL;
        }
        if (found) {
            found->users++;
            // The same file under another name (a push's quarantine moved into the repository): the
            // map stays, known by where the file is now.
            if (strcmp(found->path, path) != 0) {
                char *moved = strdup(path);
                if (moved) {
                    free(found->path);
                    found->path = moved;
                }
            }
        } else {
            void *mapped = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            found = mapped == MAP_FAILED ? NULL : calloc(1, sizeof(shared_map));
            if (found && !(found->path = strdup(path))) {
                free(found);
                found = NULL;
            }
            if (found) {
                found->device = status.st_dev;
                found->inode = status.st_ino;
                found->size = status.st_size;
                found->modified = status.st_mtim;
                found->data = mapped;
                found->users = 1;
                found->next = maps;
                maps = found;
            } else if (mapped != MAP_FAILED) {
                munmap(mapped, (size_t)status.st_size);
            }
        }
        pthread_mutex_unlock(&maps_lock);
        if (found) {
            *data = found->data;
            *size = (size_t)found->size;
            result = 0;
        }
    }
    close(fd);
    return result;
}

static void release_file(const unsigned char *data) {
    pthread_mutex_lock(&maps_lock);
    for (shared_map *map = maps; map; map = map->next) {
        if (map->data != data) continue;
        if (--map->users == 0) map->released = ++release_clock;
        break;
    }
    trim_unused();
    pthread_mutex_unlock(&maps_lock);
}

static void unmap_pack(pack_file *pack) {
    if (pack->index) release_file(pack->index);
    if (pack->pack) release_file(pack->pack);
    memset(pack, 0, sizeof(*pack));
}

// Maps an index (version 2) and its pack, and takes them only if they agree: the index's size for its
// count, ascending fan-out, the pack's signature, version and count, and the pack's own checksum as the
// index records it (the checks libgit2 makes when it opens a pack).
static int open_pack(pack_file *pack, const char *index_path) {
    size_t length = strlen(index_path);
    char pack_path[4200];
    if (length < 4 || length + 2 > sizeof(pack_path)) return -1;
    memcpy(pack_path, index_path, length - 4);
    memcpy(pack_path + length - 4, ".pack", 6);
    memset(pack, 0, sizeof(*pack));
    if (map_file(index_path, &pack->index, &pack->index_size) != 0) return -1;
    if (map_file(pack_path, &pack->pack, &pack->pack_size) != 0) {
        unmap_pack(pack);
        return -1;
    }
    const unsigned char *index = pack->index;
    size_t fixed = 8 + 256 * 4 + 40;
    if (pack->index_size < fixed || memcmp(index, "\377tOc", 4) != 0 || cohort_be32(index + 4) != 2) goto refuse;
    uint32_t previous = 0;
    for (int i = 0; i < 256; i++) {
        uint32_t value = cohort_be32(index + 8 + 4 * i);
        if (value < previous) goto refuse;
        pack->fanout[i] = previous = value;
    }
    pack->count = pack->fanout[255];
    uint64_t small = fixed + (uint64_t)pack->count * 28;
    if (pack->index_size < small || (pack->index_size - small) % 8 != 0) goto refuse;
    pack->large_count = (pack->index_size - small) / 8;
    if (pack->large_count > (pack->count ? pack->count - 1 : 0)) goto refuse;   // as libgit2 allows
    pack->ids = index + 8 + 256 * 4;
    pack->offsets = pack->ids + (size_t)pack->count * 24;
    pack->large_offsets = pack->offsets + (size_t)pack->count * 4;
    if (pack->pack_size < 32 || memcmp(pack->pack, "PACK", 4) != 0) goto refuse;
    uint32_t version = cohort_be32(pack->pack + 4);
    if (version != 2 || cohort_be32(pack->pack + 8) != pack->count) goto refuse;
    if (memcmp(pack->pack + pack->pack_size - 20, index + pack->index_size - 40, 20) != 0) goto refuse;
    return 0;
refuse:
    unmap_pack(pack);
    return -1;
}

// Where object `id` starts in pack `pack`, or 0 when the pack's index does not list it (or lists it at
// a place no entry can start).
static uint64_t find_in_pack(const pack_file *pack, const unsigned char *id) {
    uint32_t low = id[0] == 0 ? 0 : pack->fanout[id[0] - 1], high = pack->fanout[id[0]];
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        int order = memcmp(pack->ids + (size_t)middle * 20, id, 20);
        if (order == 0) {
            uint32_t offset = cohort_be32(pack->offsets + (size_t)middle * 4);
            uint64_t place = offset;
            if (offset & 0x80000000u) {
                uint64_t slot = offset & 0x7fffffffu;
                if (slot >= pack->large_count) return 0;
                place = be64(pack->large_offsets + slot * 8);
            }
            return place >= 12 && place < pack->pack_size - 20 ? place : 0;
        }
        if (order < 0) low = middle + 1; else high = middle;
    }
    return 0;
}

static int find(const pack_reader *reader, const unsigned char *id, size_t *pack, uint64_t *offset) {
    for (size_t i = 0; i < reader->pack_count; i++) {
        uint64_t place = find_in_pack(&reader->packs[i], id);
        if (place) {
            *pack = i;
            *offset = place;
            return 0;
        }
    }
    return -1;
}

static int read_entry_header(const pack_reader *reader, size_t pack_number, uint64_t offset, pack_entry_header *header) {
    const pack_file *pack = &reader->packs[pack_number];
    uint64_t end = pack->pack_size - 20;
    if (offset < 12 || offset >= end) return -1;
    cohort_pack_entry_header read;
    size_t length = cohort_pack_entry_header_read(pack->pack + offset, pack->pack + end, offset, &read);
    if (length == 0 || offset + length >= end) return -1;
    header->kind = read.kind;
    header->size = read.size;
    header->pack = pack_number;
    header->offset = offset;
    header->base = read.base_offset;
    // A delta by id in the same pack only, as libgit2 reads it (index-pack --fix-thin puts a thin
    // pack's bases there).
    if (read.kind == 7) {
        if ((header->base = find_in_pack(pack, read.base_id)) == 0) return -1;
        memcpy(header->base_id, read.base_id, 20);
    }
    header->data = offset + length;
    return 0;
}

// Points the reader's one zlib stream, reset, at the entry's data (up to the pack's checksum).
static int start_inflating(pack_reader *reader, const pack_entry_header *header) {
    const pack_file *pack = &reader->packs[header->pack];
    uint64_t available = pack->pack_size - 20 - header->data;
    if (!reader->zlib_ready) {
        if (inflateInit(&reader->zlib) != Z_OK) return -1;
        reader->zlib_ready = 1;
    } else if (inflateReset(&reader->zlib) != Z_OK) {
        return -1;
    }
    reader->zlib.next_in = (unsigned char *)pack->pack + header->data;
    reader->zlib.avail_in = available > UINT32_MAX ? UINT32_MAX : (uInt)available;
    return 0;
}

// Inflates the entry's data into exactly `size` bytes; the stream must end there.
static int inflate_exactly(pack_reader *reader, const pack_entry_header *header, unsigned char *out, size_t size) {
    unsigned char spare;
    if (start_inflating(reader, header) != 0) return -1;
    reader->zlib.next_out = size ? out : &spare;
    reader->zlib.avail_out = size ? (uInt)size : 1;
    int status = inflate(&reader->zlib, Z_FINISH);
    return status == Z_STREAM_END && reader->zlib.total_out == size ? 0 : -1;
}

// The size a delta entry's result declares: the second number at the start of its inflated data.
static int delta_result_size(pack_reader *reader, const pack_entry_header *header, uint64_t *size) {
    unsigned char start[32];
    if (start_inflating(reader, header) != 0) return -1;
    reader->zlib.next_out = start;
    reader->zlib.avail_out = (uInt)(header->size < sizeof(start) ? header->size : sizeof(start));
    if (reader->zlib.avail_out == 0) return -1;
    int status = inflate(&reader->zlib, Z_SYNC_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) return -1;
    const unsigned char *at = start, *end = start + reader->zlib.total_out;
    uint64_t source;
    return cohort_delta_size(&at, end, &source) == 0 && cohort_delta_size(&at, end, size) == 0 ? 0 : -1;
}

static size_t cached_in_all_readers;   // atomic

static cached_base *cache_slot(pack_reader *reader, uint64_t key) {
    uint64_t hash = key * 0x9E3779B97F4A7C15ull;
    return reader->cache ? &reader->cache[hash >> (64 - CACHE_SLOT_BITS)] : NULL;
}

static uint64_t cache_key(size_t pack, uint64_t offset) {
    return (uint64_t)(pack + 1) << 48 | offset;
}

static const cached_base *cache_find(pack_reader *reader, size_t pack, uint64_t offset) {
    uint64_t key = cache_key(pack, offset);
    cached_base *slot = cache_slot(reader, key);
    return slot && slot->key == key ? slot : NULL;
}

// Keeps a copy of a base other deltas may need; only within the cache's bounds.
static void cache_keep(pack_reader *reader, size_t pack, uint64_t offset, const unsigned char *data, size_t size, git_object_t type) {
    if (size > CACHE_ENTRY_BYTES) return;
    if (!reader->cache && !(reader->cache = calloc(CACHE_SLOTS, sizeof(cached_base)))) return;
    uint64_t key = cache_key(pack, offset);
    cached_base *slot = cache_slot(reader, key);
    if (slot->key == key) return;
    size_t freed = slot->key ? slot->size : 0;
    if (reader->cache_bytes - freed + size > CACHE_BYTES) return;
    if (__atomic_add_fetch(&cached_in_all_readers, size, __ATOMIC_RELAXED) - freed > CACHE_ALL_BYTES) {
        __atomic_sub_fetch(&cached_in_all_readers, size, __ATOMIC_RELAXED);
        return;
    }
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) {
        __atomic_sub_fetch(&cached_in_all_readers, size, __ATOMIC_RELAXED);
        return;
    }
    memcpy(copy, data, size);
    if (slot->key) {
        free(slot->data);
        __atomic_sub_fetch(&cached_in_all_readers, freed, __ATOMIC_RELAXED);
    }
    reader->cache_bytes = reader->cache_bytes - freed + size;
    slot->key = key;
    slot->data = copy;
    slot->size = size;
    slot->type = type;
}

// Hands libgit2 an object in memory from its allocator, with the zero it expects after the bytes.
static void hand_over(unsigned char *data, size_t size, git_object_t type, void **out, size_t *out_size, git_object_t *out_type) {
    data[size] = 0;
    *out = data;
    *out_size = size;
    *out_type = type;
}

static unsigned char *allocate_plain(void *context, size_t size) {
    (void)context;
    return malloc(size);
}

static unsigned char *allocate_for_libgit2(void *context, size_t size) {
    return git_odb_backend_data_alloc(context, size);
}

// The key of object `id` among the trees kept between handles: this reader's repository, then the id.
static void kept_key(const pack_reader *reader, const unsigned char *id, unsigned char key[KEPT_KEY_BYTES]) {
    memcpy(key, reader->repository, 16);
    memcpy(key + 16, id, 20);
}

// A copy of the tree `id` kept from an earlier handle of the same repository (KeptObjects.c), or NULL.
static unsigned char *kept_by_id(const pack_reader *reader, const unsigned char *id, size_t *size, git_object_t *type,
                                 unsigned char *(*allocate)(void *, size_t), void *context) {
    unsigned char key[KEPT_KEY_BYTES];
    kept_key(reader, id, key);
    return cohort_kept_object(key, size, type, allocate, context);
}

// Whether a tree's bytes hash to `id`: git's object name, SHA-1 over `tree SIZE\0` and the bytes. Plain
// SHA-1 (libcrypto's, five times faster here than libgit2's with collision detection, which took a
// push as long as the trees it saved): git computed every name in the repository's packs with
// collision detection when it indexed them; this only catches an index that does not match its pack.
static int tree_is_named(const unsigned char *id, const void *data, size_t size) {
    char header[32];
    int length = snprintf(header, sizeof(header), "tree %zu", size);
    if (length < 0 || (size_t)length >= sizeof(header)) return 0;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int named = context && EVP_DigestInit_ex(context, EVP_sha1(), NULL) == 1 &&
                EVP_DigestUpdate(context, header, (size_t)length + 1) == 1 && EVP_DigestUpdate(context, data, size) == 1 &&
                EVP_DigestFinal_ex(context, digest, &digest_length) == 1 && digest_length == 20 && memcmp(digest, id, 20) == 0;
    EVP_MD_CTX_free(context);
    return named;
}

// Keeps a tree the reader read for later handles, once its bytes hash to its id: what is kept is the
// tree the id names, whatever a damaged or forged index said (this reader, like libgit2 as Cohort
// runs it, does not check the hash of what it reads).
static void keep_tree(const pack_reader *reader, const unsigned char *id, const void *data, size_t size, git_object_t type) {
    if (!reader->keeps || type != GIT_OBJECT_TREE || !tree_is_named(id, data, size)) return;
    unsigned char key[KEPT_KEY_BYTES];
    kept_key(reader, id, key);
    cohort_keep_object(key, data, size, type);
}

// Reads the object whose entry is at `offset` of pack `pack_number`, of at most `max_size` bytes: its
// base, then each delta on the way back to it (every base is in the same pack). The result is allocated by libgit2 (one byte more) so
// that libgit2 can own it.
static int read_object(pack_reader *reader, size_t pack_number, uint64_t offset, uint64_t max_size,
                       void **out, size_t *out_size, git_object_t *out_type) {
    pack_entry_header chain[64];
    pack_entry_header *deltas = chain;
    size_t depth = 0, capacity = 64;
    int result = GIT_PASSTHROUGH;
    unsigned char *base = NULL;
    size_t base_size = 0;
    int base_owned = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    uint64_t place = offset;
    uint64_t budget = 0, spent = 0;
    unsigned char *top = NULL;  // the first delta's instructions, when inflated for its size
    for (;;) {
        const cached_base *cached = cache_find(reader, pack_number, place);
        if (cached && depth == 0) {
            unsigned char *data = git_odb_backend_data_alloc(&reader->parent, cached->size + 1);
            if (!data) goto done;
            memcpy(data, cached->data, cached->size);
            hand_over(data, cached->size, cached->type, out, out_size, out_type);
            result = 0;
            goto done;
        }
        if (cached) {
            base = cached->data;
            base_size = cached->size;
            type = cached->type;
            break;
        }
        pack_entry_header header;
        if (read_entry_header(reader, pack_number, place, &header) != 0 || header.size > OBJECT_LIMIT) goto done;
        if (header.kind <= 4) {
            type = (git_object_t)header.kind;
            base_size = (size_t)header.size;
            if (depth == 0) {
                if (base_size > max_size) goto done;
                unsigned char *data = git_odb_backend_data_alloc(&reader->parent, base_size + 1);
                if (!data) goto done;
                if (inflate_exactly(reader, &header, data, base_size) != 0) {
                    git_odb_backend_data_free(&reader->parent, data);
                    goto done;
                }
                hand_over(data, base_size, type, out, out_size, out_type);
                result = 0;
                goto done;
            }
            spent += base_size;
            if (spent > budget) goto done;
            base = malloc(base_size ? base_size : 1);
            if (!base) goto done;
            base_owned = 1;
            if (inflate_exactly(reader, &header, base, base_size) != 0) goto done;
            cache_keep(reader, pack_number, place, base, base_size, type);
            break;
        }
        if (depth == CHAIN_LIMIT) goto done;
        if (depth == capacity) {
            pack_entry_header *larger = malloc(sizeof(pack_entry_header) * capacity * 2);
            if (!larger) goto done;
            memcpy(larger, deltas, sizeof(pack_entry_header) * depth);
            if (deltas != chain) free(deltas);
            deltas = larger;
            capacity *= 2;
        }
        if (depth == 0) {
            uint64_t result_size, source;
            if (header.size <= TOP_DELTA_BYTES) {
                // Inflated whole once: for the size of its result now, for its instructions last.
                top = malloc(header.size ? (size_t)header.size : 1);
                const unsigned char *at = top;
                if (!top || inflate_exactly(reader, &header, top, (size_t)header.size) != 0 ||
                    cohort_delta_size(&at, top + header.size, &source) != 0 || cohort_delta_size(&at, top + header.size, &result_size) != 0) goto done;
            } else if (delta_result_size(reader, &header, &result_size) != 0) {
                goto done;
            }
            if (result_size > max_size) goto done;
            budget = READ_BUDGET + READ_BUDGET_FACTOR * result_size;
        }
        deltas[depth++] = header;
        place = header.base;
        // A base named by id (a pushed pack's) may be a tree kept from an earlier handle.
        if (header.kind == 7 && reader->keeps &&
            (base = kept_by_id(reader, header.base_id, &base_size, &type, allocate_plain, NULL)) != NULL) {
            base_owned = 1;
            spent += base_size;
            if (spent > budget) goto done;
            break;
        }
    }
    while (depth > 0) {
        pack_entry_header *delta = &deltas[--depth];
        spent += delta->size;
        if (spent > budget) goto done;
        unsigned char *instructions = depth == 0 ? top : NULL;
        top = NULL;
        if (!instructions) {
            instructions = malloc(delta->size ? (size_t)delta->size : 1);
            if (!instructions) goto done;
            if (inflate_exactly(reader, delta, instructions, (size_t)delta->size) != 0) {
                free(instructions);
                goto done;
            }
        }
        uint64_t size;
        const unsigned char *at = NULL;
        at = instructions;
        uint64_t source;
        if (cohort_delta_size(&at, instructions + delta->size, &source) != 0 || cohort_delta_size(&at, instructions + delta->size, &size) != 0 ||
            size > OBJECT_LIMIT || (spent += size) > budget) {
            free(instructions);
            goto done;
        }
        unsigned char *target = depth == 0 ? git_odb_backend_data_alloc(&reader->parent, (size_t)size + 1) : malloc(size ? (size_t)size : 1);
        if (!target) {
            free(instructions);
            goto done;
        }
        int applied = cohort_apply_delta(base, base_size, instructions, (size_t)delta->size, target, (size_t)size);
        free(instructions);
        if (applied != 0) {
            if (depth == 0) git_odb_backend_data_free(&reader->parent, target); else free(target);
            goto done;
        }
        if (base_owned) free(base);
        base = target;
        base_size = (size_t)size;
        base_owned = depth > 0;
        if (depth == 0) {
            base = NULL;
            hand_over(target, base_size, type, out, out_size, out_type);
            result = 0;
            goto done;
        }
        // The entry this delta made is itself a base (it is reached as one).
        cache_keep(reader, delta->pack, delta->offset, target, base_size, type);
    }
done:
    free(top);
    if (base_owned) free(base);
    if (deltas != chain) free(deltas);
    return result;
}

// A whole entry's type and size come from its header, as libgit2 reads them. A delta's are those of
// the object it makes, read whole (at most 1 MiB; larger ones are left to libgit2): when a delta's
// stream is damaged, libgit2 1.5.1 reports as its size whatever its header buffer held (it reads on
// past the failed inflation), so only a delta that reads whole gets a size here. The object is kept
// for the read that usually follows.
static int object_type_and_size(pack_reader *reader, size_t pack_number, uint64_t offset, size_t *size, git_object_t *type) {
    pack_entry_header header;
    if (read_entry_header(reader, pack_number, offset, &header) != 0 || header.size > OBJECT_LIMIT) return GIT_PASSTHROUGH;
    if (header.kind <= 4) {
        *size = (size_t)header.size;
        *type = (git_object_t)header.kind;
        return 0;
    }
    void *data = NULL;
    size_t data_size;
    git_object_t data_type;
    if (read_object(reader, pack_number, offset, DELTA_HEADER_BYTES, &data, &data_size, &data_type) != 0) return GIT_PASSTHROUGH;
    if (reader->last_data) git_odb_backend_data_free(&reader->parent, reader->last_data);
    reader->last_key = cache_key(pack_number, offset);
    reader->last_data = data;
    reader->last_size = data_size;
    reader->last_type = data_type;
    *size = data_size;
    *type = data_type;
    return 0;
}

static int reader_read(void **out, size_t *size, git_object_t *type, git_odb_backend *backend, const git_oid *id) {
    pack_reader *reader = (pack_reader *)backend;
    size_t pack;
    uint64_t offset;
    pthread_mutex_lock(&reader->lock);
    int result = GIT_ENOTFOUND;
    if (find(reader, id->id, &pack, &offset) == 0) {
        if (reader->last_data && reader->last_key == cache_key(pack, offset)) {
            *out = reader->last_data;
            *size = reader->last_size;
            *type = reader->last_type;
            reader->last_data = NULL;
            result = 0;
            keep_tree(reader, id->id, *out, *size, *type);
        } else if (reader->keeps && (*out = kept_by_id(reader, id->id, size, type, allocate_for_libgit2, &reader->parent)) != NULL) {
            ((unsigned char *)*out)[*size] = 0;   // libgit2's trailing zero, as `hand_over` writes it
            result = 0;
        } else if ((result = read_object(reader, pack, offset, OBJECT_LIMIT, out, size, type)) == 0) {
            keep_tree(reader, id->id, *out, *size, *type);
        }
    }
    pthread_mutex_unlock(&reader->lock);
    return result;
}

static int reader_read_header(size_t *size, git_object_t *type, git_odb_backend *backend, const git_oid *id) {
    pack_reader *reader = (pack_reader *)backend;
    size_t pack;
    uint64_t offset;
    pthread_mutex_lock(&reader->lock);
    int result = find(reader, id->id, &pack, &offset) == 0 ? object_type_and_size(reader, pack, offset, size, type) : GIT_ENOTFOUND;
    pthread_mutex_unlock(&reader->lock);
    return result;
}

static void reader_free(git_odb_backend *backend) {
    pack_reader *reader = (pack_reader *)backend;
    for (size_t i = 0; i < reader->pack_count; i++) unmap_pack(&reader->packs[i]);
    free(reader->packs);
    __atomic_sub_fetch(&cached_in_all_readers, reader->cache_bytes, __ATOMIC_RELAXED);
    if (reader->cache) {
        for (size_t i = 0; i < CACHE_SLOTS; i++) free(reader->cache[i].data);
        free(reader->cache);
    }
    if (reader->zlib_ready) inflateEnd(&reader->zlib);
    if (reader->last_data) git_odb_backend_data_free(&reader->parent, reader->last_data);
    pthread_mutex_destroy(&reader->lock);
    free(reader);
    // Maps of files gone from their path are let go here, when a handle is freed (a resident verifier
    // frees a push's handle after it has answered), not when one opens: unmapping the last map of a
    // deleted pack makes the kernel free the file, which a push should not wait for.
    pthread_mutex_lock(&maps_lock);
    drop_unused(gone_from_path, NULL);
    pthread_mutex_unlock(&maps_lock);
}

// A read-only object database backend over the packs of `objects_directory` (index version 2).
static int cohort_pack_reader_new(git_odb_backend **out, const char *objects_directory, const unsigned char repository[16]) {
    size_t length = strlen(objects_directory);
    if (length == 0 || length > 4000) return GIT_EINVALID;
    char folder[4100];
    snprintf(folder, sizeof(folder), "%s/pack", objects_directory);
    pack_reader *reader = calloc(1, sizeof(pack_reader));
    if (!reader) {
        git_error_set_oom();
        return -1;
    }
    int error = git_odb_init_backend(&reader->parent, GIT_ODB_BACKEND_VERSION);
    if (error < 0) {
        free(reader);
        return error;
    }
    pthread_mutex_init(&reader->lock, NULL);
    if (repository && cohort_kept_objects_on()) {
        memcpy(reader->repository, repository, 16);
        reader->keeps = 1;
    }
    DIR *directory = opendir(folder);
    if (directory) {
        struct dirent *entry;
        while ((entry = readdir(directory)) != NULL && reader->pack_count < PACK_LIMIT) {
            size_t name = strlen(entry->d_name);
            if (name < 9 || strncmp(entry->d_name, "pack-", 5) != 0 || strcmp(entry->d_name + name - 4, ".idx") != 0) continue;
            char path[4200];
            if ((size_t)snprintf(path, sizeof(path), "%s/%s", folder, entry->d_name) >= sizeof(path)) continue;
            if (reader->pack_count == reader->pack_room) {
                size_t room = reader->pack_room ? 2 * reader->pack_room : 8;
                pack_file *grown = realloc(reader->packs, room * sizeof(pack_file));
                if (!grown) break;   // the packs not opened are libgit2's to read
                reader->packs = grown;
                reader->pack_room = room;
            }
            if (open_pack(&reader->packs[reader->pack_count], path) == 0) reader->pack_count++;
        }
        closedir(directory);
    }
    reader->parent.read = reader_read;
    reader->parent.read_header = reader_read_header;
    reader->parent.free = reader_free;
    *out = &reader->parent;
    return 0;
}

int cohort_git_add_own_packs(git_repository *repository, const char *objects_directory, int priority, int keep_trees) {
    git_odb *odb = NULL;
    int result = git_repository_odb(&odb, repository);
    if (result != 0) return result;
    git_odb_backend *backend = NULL;
    // The repository's identity: its common folder's device and inode.
    unsigned char identity[16];
    struct stat status;
    int known = keep_trees && stat(git_repository_commondir(repository), &status) == 0;
    if (known) {
        uint64_t device = (uint64_t)status.st_dev, inode = (uint64_t)status.st_ino;
        memcpy(identity, &device, 8);
        memcpy(identity + 8, &inode, 8);
    }
    result = cohort_pack_reader_new(&backend, objects_directory, known ? identity : NULL);
    /* Above the default backends (loose 1, packed 2): found here first, anything else as before. */
    if (result == 0 && (result = git_odb_add_backend(odb, backend, priority)) != 0) backend->free(backend);
    git_odb_free(odb);
    return result;
}
