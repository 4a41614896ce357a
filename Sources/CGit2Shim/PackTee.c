#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <zlib.h>
#include <openssl/evp.h>
#include <git2/sys/odb_backend.h>
#include "CGit2Shim.h"
#include "PackEntry.h"
#include "PackIndexer.h"

// A copy of the pack a fetch writes, read by another thread while libgit2 still indexes it. libgit2
// takes a clone's whole pack in a fifth of its fetch and spends the rest resolving deltas on one core;
// the reader hands on each commit and blob of the pack meanwhile, so that the other core can check
// their signatures ahead. What the reader makes of the bytes decides nothing: it only ever warms
// results that the verifier would compute itself from the same bytes. On anything it does not read
// as git writes it (a stream that does not end where it says, a pack past its room) it stops, and
// the verifier does the rest, as before; a delta whose base it did not keep is skipped.

#define TEE_ROOM ((size_t)256 << 20)          // address space set aside: a longer pack is read no further
#define KEPT_OBJECT_LIMIT ((uint64_t)1 << 20)  // bytes of one commit or blob handed on and kept as a base
#define KEPT_BYTES ((size_t)64 << 20)          // kept in all (each object counted 64 bytes more); past it none
#define KEPT_OVERHEAD 64
#define ENTRY_LIMIT ((uint32_t)1 << 21)        // entries read (56 bytes each)
#define SCRATCH_BYTES ((size_t)64 << 10)       // what is inflated only to find where it ends

typedef struct {
    uint64_t offset;
    int type;                  // 1 commit, 2 tree, 3 blob, 4 tag; 0 unknown (a delta on a base not read)
    unsigned char *data;       // kept: commits and blobs within the limits
    size_t size;
    unsigned char id[20];      // of a kept object: a delta by id finds its base by it
} tee_entry;

#define ID_SLOTS_BITS 20       // kept objects findable by id (1 Mi slots, open addressing)

struct cohort_pack_tee {
    pthread_mutex_t lock;
    pthread_cond_t more;
    atomic_int references;
    unsigned char *room;
    size_t length;             // under `lock`: bytes copied so far
    int claimed;               // under `lock`: a fetch's pack is being copied (only the first is)
    int ended;                 // under `lock`: no more bytes will come
    int indexing;              // under `lock`: Cohort's indexer reads the room (it stays until that ends)
    int forgotten;             // under `lock`: let go while indexing; unmapped when the indexing ends
    atomic_int stopped;        // the reader is told to stop
    // The reader's own state, used by one thread.
    size_t position;
    size_t visible;
    int begun;
    uint32_t remaining;
    tee_entry *entries;
    size_t entry_count, entry_capacity;
    size_t kept_bytes;
    unsigned char *handed;     // an object handed on but not kept, freed by the next call
    uint32_t *by_id;           // kept entries by id: index + 1, 0 empty
    uint64_t id_salt, id_multiplier;   // the table's hash, random: ids are chosen by the server
    EVP_MD_CTX *sha1;
    unsigned char *scratch;
    z_stream zlib;
    int zlib_ready;
};

cohort_pack_tee *cohort_pack_tee_new(void) {
    cohort_pack_tee *tee = calloc(1, sizeof(cohort_pack_tee));
    if (!tee) return NULL;
    tee->room = mmap(NULL, TEE_ROOM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tee->scratch = malloc(SCRATCH_BYTES);
    if (tee->room == MAP_FAILED || !tee->scratch) {
        if (tee->room != MAP_FAILED) munmap(tee->room, TEE_ROOM);
        free(tee->scratch);
        free(tee);
        return NULL;
    }
    pthread_mutex_init(&tee->lock, NULL);
    pthread_cond_init(&tee->more, NULL);
    atomic_init(&tee->references, 1);
    atomic_init(&tee->stopped, 0);
    return tee;
}

// Frees what the reader holds: its objects, its entries, the copy's room.
static void tee_let_go(cohort_pack_tee *tee) {
    for (size_t i = 0; i < tee->entry_count; i++) free(tee->entries[i].data);
    free(tee->entries);
    tee->entries = NULL;
    free(tee->by_id);
    tee->by_id = NULL;
    tee->entry_count = tee->entry_capacity = 0;
    tee->kept_bytes = 0;
    free(tee->handed);
    tee->handed = NULL;
    pthread_mutex_lock(&tee->lock);
    if (tee->indexing) {
        tee->forgotten = 1;
    } else {
        if (tee->room) munmap(tee->room, TEE_ROOM);
        tee->room = NULL;
        tee->length = 0;
        tee->ended = 1;
    }
    tee->visible = 0;
    pthread_mutex_unlock(&tee->lock);
}

void cohort_pack_tee_forget(cohort_pack_tee *tee) {
    cohort_pack_tee_stop(tee);
    tee_let_go(tee);
}

void cohort_pack_tee_release(cohort_pack_tee *tee) {
    if (!tee || atomic_fetch_sub(&tee->references, 1) != 1) return;
    tee_let_go(tee);
    free(tee->scratch);
    EVP_MD_CTX_free(tee->sha1);
    if (tee->zlib_ready) inflateEnd(&tee->zlib);
    pthread_cond_destroy(&tee->more);
    pthread_mutex_destroy(&tee->lock);
    free(tee);
}

void cohort_pack_tee_end(cohort_pack_tee *tee) {
    pthread_mutex_lock(&tee->lock);
    tee->ended = 1;
    pthread_cond_broadcast(&tee->more);
    pthread_mutex_unlock(&tee->lock);
}

void cohort_pack_tee_stop(cohort_pack_tee *tee) {
    atomic_store(&tee->stopped, 1);
    pthread_mutex_lock(&tee->lock);
    pthread_cond_broadcast(&tee->more);
    pthread_mutex_unlock(&tee->lock);
}

// Copies bytes in: 1, or 0 when they do not fit the room (the copy then ends where it was).
static int tee_copy(cohort_pack_tee *tee, const void *data, size_t size) {
    int copied = 0;
    pthread_mutex_lock(&tee->lock);
    if (!tee->ended && tee->room) {
        if (size > TEE_ROOM - tee->length) {
            tee->ended = 1;   // the reader stops where the room ends
        } else {
            memcpy(tee->room + tee->length, data, size);
            tee->length += size;
            copied = 1;
        }
        pthread_cond_broadcast(&tee->more);
    }
    pthread_mutex_unlock(&tee->lock);
    return copied;
}

void cohort_pack_tee_append(cohort_pack_tee *tee, const void *data, size_t size) {
    tee_copy(tee, data, size);
}

// --- The copy, taken where libgit2 writes a fetched pack: a backend whose only part is `writepack`,
// --- which wraps the writer of the backend libgit2 would have used.

// The first pack (a clone's) is indexed by Cohort's indexer (PackIndexer.c), from the copy; libgit2's
// own writer is made only if that indexer declines the pack (then fed every byte so far), or for a
// pack past the copy's room, or for any later pack.
typedef struct {
    git_odb_writepack parent;
    git_odb_writepack *inner;  // libgit2's writer, once made
    cohort_pack_tee *tee;      // NULL: this pack is not copied
    cohort_pack_indexer *indexer;   // NULL: libgit2's writer takes the bytes
    git_odb_backend *writer;
    git_odb *odb;
    git_indexer_progress_cb progress;
    void *payload;
    const char *pack_folder;
} tee_writepack;

typedef struct {
    git_odb_backend parent;
    git_odb_backend *writer;   // the backend libgit2 would have asked: the first that writes packs
    cohort_pack_tee *tee;
    char *pack_folder;         // where the repository's packs are
} tee_backend;

// Ends Cohort's indexing of the room: the room may go once the copy is forgotten.
static void tee_stop_indexing(tee_writepack *tee) {
    if (!tee->indexer) return;
    cohort_pack_indexer_free(tee->indexer);
    tee->indexer = NULL;
    pthread_mutex_lock(&tee->tee->lock);
    tee->tee->indexing = 0;
    if (tee->tee->forgotten && tee->tee->room) {
        munmap(tee->tee->room, TEE_ROOM);
        tee->tee->room = NULL;
        tee->tee->length = 0;
        tee->tee->ended = 1;
    }
    pthread_mutex_unlock(&tee->tee->lock);
}

// Gives the pack to libgit2's writer: every byte the copy holds so far, as if it had come only now.
static int tee_hand_over(tee_writepack *tee, git_indexer_progress *stats) {
    int error = tee->writer->writepack(&tee->inner, tee->writer, tee->odb, tee->progress, tee->payload);
    if (error < 0) {
        tee_stop_indexing(tee);
        return error;
    }
    stats->total_objects = stats->received_objects = stats->indexed_objects = stats->local_objects = 0;
    stats->total_deltas = stats->indexed_deltas = 0;
    pthread_mutex_lock(&tee->tee->lock);
    size_t length = tee->tee->length;
    pthread_mutex_unlock(&tee->tee->lock);
    for (size_t at = 0; at < length && error >= 0; at += (size_t)1 << 20) {
        size_t step = length - at < ((size_t)1 << 20) ? length - at : (size_t)1 << 20;
        error = tee->inner->append(tee->inner, tee->tee->room + at, step, stats);
    }
    tee_stop_indexing(tee);
    return error;
}

static int tee_append(git_odb_writepack *writepack, const void *data, size_t size, git_indexer_progress *stats) {
    tee_writepack *tee = (tee_writepack *)writepack;
    if (tee->indexer) {
        if (tee_copy(tee->tee, data, size)) {
            int read = cohort_pack_indexer_advance(tee->indexer, tee->tee->room, tee->tee->length, stats);
            if (read != 1) return read;
            return tee_hand_over(tee, stats);
        }
        int error = tee_hand_over(tee, stats);   // past the room
        if (error < 0) return error;
        return tee->inner->append(tee->inner, data, size, stats);
    }
    if (tee->tee) cohort_pack_tee_append(tee->tee, data, size);
    return tee->inner->append(tee->inner, data, size, stats);
}

static int tee_commit(git_odb_writepack *writepack, git_indexer_progress *stats) {
    tee_writepack *tee = (tee_writepack *)writepack;
    if (tee->tee) cohort_pack_tee_end(tee->tee);
    if (tee->indexer) {
        int written = cohort_pack_indexer_finish(tee->indexer, tee->tee->room, tee->tee->length, tee->pack_folder, stats);
        if (written != 1) {
            tee_stop_indexing(tee);
            return written;
        }
        int error = tee_hand_over(tee, stats);
        if (error < 0) return error;
    }
    return tee->inner->commit(tee->inner, stats);
}

static void tee_free(git_odb_writepack *writepack) {
    tee_writepack *tee = (tee_writepack *)writepack;
    if (tee->inner) tee->inner->free(tee->inner);
    if (tee->tee) {
        tee_stop_indexing(tee);
        cohort_pack_tee_end(tee->tee);
        cohort_pack_tee_release(tee->tee);
    }
    free(tee);
}

static int tee_backend_writepack(git_odb_writepack **out, git_odb_backend *backend, git_odb *odb,
                                 git_indexer_progress_cb progress, void *payload) {
    tee_backend *self = (tee_backend *)backend;
    tee_writepack *tee = calloc(1, sizeof(tee_writepack));
    if (!tee) {
        git_error_set_oom();
        return -1;
    }
    tee->parent.backend = backend;
    tee->parent.append = tee_append;
    tee->parent.commit = tee_commit;
    tee->parent.free = tee_free;
    tee->writer = self->writer;
    tee->odb = odb;
    tee->progress = progress;
    tee->payload = payload;
    tee->pack_folder = self->pack_folder;
    // git_odb_write_pack holds the object database's lock here: its list of backends is not read now.
    pthread_mutex_lock(&self->tee->lock);
    if (!self->tee->claimed && !self->tee->ended && self->tee->room) {
        self->tee->claimed = 1;
        tee->tee = self->tee;
        atomic_fetch_add(&self->tee->references, 1);
        if (self->pack_folder && (tee->indexer = cohort_pack_indexer_new(progress, payload))) self->tee->indexing = 1;
    }
    pthread_mutex_unlock(&self->tee->lock);
    if (!tee->indexer) {
        int error = self->writer->writepack(&tee->inner, self->writer, odb, progress, payload);
        if (error < 0) {
            tee_free(&tee->parent);
            return error;
        }
    }
    *out = &tee->parent;
    return 0;
}

static void tee_backend_free(git_odb_backend *backend) {
    tee_backend *self = (tee_backend *)backend;
    cohort_pack_tee_release(self->tee);
    free(self->pack_folder);
    free(self);
}

int cohort_git_tee_fetched_pack(git_repository *repository, cohort_pack_tee *tee) {
    git_odb *odb = NULL;
    int result = git_repository_odb(&odb, repository);
    if (result != 0) return result;
    git_odb_backend *writer = NULL;
    for (size_t i = 0, count = git_odb_num_backends(odb); i < count && !writer; i++) {
        git_odb_backend *other = NULL;
        if (git_odb_get_backend(&other, odb, i) == 0 && other->writepack) writer = other;
    }
    if (!writer) {
        git_odb_free(odb);
        git_error_set_str(GIT_ERROR_ODB, "no object database backend writes packs");
        return -1;
    }
    tee_backend *backend = calloc(1, sizeof(tee_backend));
    if (!backend) {
        git_odb_free(odb);
        git_error_set_oom();
        return -1;
    }
    // Where libgit2's writer would put the pack; without it, libgit2's writer indexes it.
    git_buf objects = GIT_BUF_INIT;
    if (git_repository_item_path(&objects, repository, GIT_REPOSITORY_ITEM_OBJECTS) == 0 && objects.size > 0 &&
        asprintf(&backend->pack_folder, "%s%spack", objects.ptr, objects.ptr[objects.size - 1] == '/' ? "" : "/") < 0) {
        backend->pack_folder = NULL;
    }
    git_buf_dispose(&objects);
    result = git_odb_init_backend(&backend->parent, GIT_ODB_BACKEND_VERSION);
    if (result == 0) {
        backend->parent.writepack = tee_backend_writepack;
        backend->parent.free = tee_backend_free;
        backend->writer = writer;
        backend->tee = tee;
        atomic_fetch_add(&tee->references, 1);
        /* Above every other backend, so that git_odb_write_pack asks it first. */
        result = git_odb_add_backend(odb, &backend->parent, 1000);
        if (result != 0) backend->parent.free(&backend->parent);
    } else {
        free(backend);
    }
    git_odb_free(odb);
    return result;
}

// --- The reader.

// Bytes past `at` that have arrived, waiting until at least `need` have or none will come; 0 once the
// reader is stopped.
static size_t tee_wait(cohort_pack_tee *tee, size_t at, size_t need) {
    if (tee->visible >= at + need) return tee->visible - at;
    pthread_mutex_lock(&tee->lock);
    while (tee->length < at + need && !tee->ended && !atomic_load(&tee->stopped)) pthread_cond_wait(&tee->more, &tee->lock);
    tee->visible = tee->length;
    pthread_mutex_unlock(&tee->lock);
    if (atomic_load(&tee->stopped)) return 0;
    return tee->visible > at ? tee->visible - at : 0;
}

// Inflates the stream at `tee->position` into `out` (exactly `size` bytes), or through the scratch
// when `out` is NULL, moving the position past it. 0, or -1 when it does not end where it says.
static int tee_inflate(cohort_pack_tee *tee, unsigned char *out, uint64_t size) {
    z_stream *zlib = &tee->zlib;
    if (!tee->zlib_ready) {
        if (inflateInit(zlib) != Z_OK) return -1;
        tee->zlib_ready = 1;
    } else if (inflateReset(zlib) != Z_OK) {
        return -1;
    }
    unsigned char spare;   // past `size`: any byte written here means the stream is longer than it says
    if (out && size) {
        zlib->next_out = out;
        zlib->avail_out = (uInt)size;
    } else if (out) {
        zlib->next_out = &spare;
        zlib->avail_out = 1;
    } else {
        zlib->next_out = tee->scratch;
        zlib->avail_out = SCRATCH_BYTES;
    }
    for (;;) {
        size_t available = tee_wait(tee, tee->position, 1);
        if (available == 0) return -1;
        zlib->next_in = tee->room + tee->position;
        zlib->avail_in = available > UINT32_MAX ? UINT32_MAX : (uInt)available;
        int status = inflate(zlib, Z_NO_FLUSH);
        tee->position = (size_t)(zlib->next_in - tee->room);
        if (status == Z_STREAM_END) break;
        if (status != Z_OK && status != Z_BUF_ERROR) return -1;
        if (status == Z_BUF_ERROR && zlib->avail_in > 0 && zlib->avail_out > 0) return -1;
        if (zlib->avail_out == 0) {
            // A stream may fill its output before its end is read: the end may still come.
            if (out && zlib->total_out == size) {
                zlib->next_out = &spare;
                zlib->avail_out = 1;
            } else if (out || atomic_load(&tee->stopped) || zlib->total_out > size) {
                return -1;   // longer than it says: read no further
            } else {
                zlib->next_out = tee->scratch;
                zlib->avail_out = SCRATCH_BYTES;
            }
        }
    }
    return zlib->total_out == size ? 0 : -1;
}

static tee_entry *tee_base(cohort_pack_tee *tee, uint64_t offset) {
    size_t low = 0, high = tee->entry_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (tee->entries[middle].offset == offset) return &tee->entries[middle];
        if (tee->entries[middle].offset < offset) low = middle + 1; else high = middle;
    }
    return NULL;
}

// A slot for `id` under a multiply-shift hash keyed at random: a server that chooses its objects' ids
// cannot crowd them into one run of slots.
static size_t tee_slot(const cohort_pack_tee *tee, const unsigned char *id) {
    uint64_t value;
    memcpy(&value, id, sizeof(value));
    return (size_t)(((value ^ tee->id_salt) * tee->id_multiplier) >> (64 - ID_SLOTS_BITS));
}

// Makes a kept object findable by its id ("TYPE SIZE\0" and its bytes, SHA-1): a delta by id finds
// its base among kept objects by it. Plain SHA-1, not libgit2's collision-detecting one (which cost
// the clone 2%): a base found wrongly would only make an object whose results nobody asks for.
static void tee_remember(cohort_pack_tee *tee, size_t index) {
    tee_entry *entry = &tee->entries[index];
    if (!tee->by_id) {
        uint64_t key[2];
        if (getrandom(key, sizeof(key), 0) != sizeof(key)) return;
        if (!(tee->by_id = calloc((size_t)1 << ID_SLOTS_BITS, sizeof(uint32_t)))) return;
        tee->id_salt = key[0];
        tee->id_multiplier = key[1] | 1;
    }
    if (index + 1 >= ((size_t)1 << ID_SLOTS_BITS) / 2) return;   // half full at most
    if (!tee->sha1 && !(tee->sha1 = EVP_MD_CTX_new())) return;
    char header[32];
    int length = snprintf(header, sizeof(header), "%s %zu", entry->type == 1 ? "commit" : "blob", entry->size);
    if (EVP_DigestInit_ex(tee->sha1, EVP_sha1(), NULL) != 1 || EVP_DigestUpdate(tee->sha1, header, (size_t)length + 1) != 1 ||
        EVP_DigestUpdate(tee->sha1, entry->data, entry->size) != 1 || EVP_DigestFinal_ex(tee->sha1, entry->id, NULL) != 1) return;
    size_t mask = ((size_t)1 << ID_SLOTS_BITS) - 1;
    for (size_t slot = tee_slot(tee, entry->id); ; slot = (slot + 1) & mask) {
        if (!tee->by_id[slot]) {
            tee->by_id[slot] = (uint32_t)(index + 1);
            return;
        }
    }
}

static tee_entry *tee_find(cohort_pack_tee *tee, const unsigned char *id) {
    if (!tee->by_id) return NULL;
    size_t mask = ((size_t)1 << ID_SLOTS_BITS) - 1;
    for (size_t slot = tee_slot(tee, id); tee->by_id[slot]; slot = (slot + 1) & mask) {
        tee_entry *entry = &tee->entries[tee->by_id[slot] - 1];
        if (memcmp(entry->id, id, 20) == 0) return entry;
    }
    return NULL;
}

// Reads the next entry: 1 with a commit or blob handed on, 0 with anything else, -1 at the end.
static int tee_read_entry(cohort_pack_tee *tee, int *type, const unsigned char **data, size_t *size) {
    uint64_t offset = tee->position;
    size_t available = tee_wait(tee, offset, 32);
    if (available == 0) return -1;
    const unsigned char *at = tee->room + offset;
    cohort_pack_entry_header header;
    size_t length = cohort_pack_entry_header_read(at, at + (available < 32 ? available : 32), offset, &header);
    if (length == 0) return -1;
    int kind = header.kind;
    uint64_t declared = header.size;
    tee_entry *base = NULL;
    if (kind == 6 && !(base = tee_base(tee, header.base_offset))) return -1;
    if (kind == 7) base = tee_find(tee, header.base_id);   // a base not kept (or not yet read) leaves the delta unread
    tee->position = offset + length;
    int final = kind >= 6 ? (base ? base->type : 0) : kind;
    int wanted = (final == 1 || final == 3) && (kind < 6 || base->data) && declared <= KEPT_OBJECT_LIMIT;
    unsigned char *inflated = NULL;
    if (wanted && !(inflated = malloc(declared ? declared : 1))) return -1;
    if (tee_inflate(tee, inflated, declared) != 0) {
        free(inflated);
        return -1;
    }
    unsigned char *object = inflated;
    uint64_t size_made = declared;
    if (inflated && kind >= 6) {
        const unsigned char *delta = inflated, *delta_end = inflated + declared;
        uint64_t source;
        object = NULL;
        if (cohort_delta_size(&delta, delta_end, &source) == 0 && cohort_delta_size(&delta, delta_end, &size_made) == 0 &&
            size_made <= KEPT_OBJECT_LIMIT && (object = malloc(size_made ? size_made : 1)) != NULL &&
            cohort_apply_delta(base->data, base->size, inflated, (size_t)declared, object, (size_t)size_made) != 0) {
            free(object);
            object = NULL;
        }
        free(inflated);
    }
    if (tee->entry_count == tee->entry_capacity) {
        size_t capacity = tee->entry_capacity ? tee->entry_capacity * 2 : 4096;
        tee_entry *grown = realloc(tee->entries, capacity * sizeof(tee_entry));
        if (!grown) {
            free(object);
            return -1;
        }
        tee->entries = grown;
        tee->entry_capacity = capacity;
    }
    tee_entry *entry = &tee->entries[tee->entry_count++];
    entry->offset = offset;
    entry->type = final;
    entry->data = NULL;
    entry->size = 0;
    if (!object) return 0;
    if (tee->kept_bytes + size_made + KEPT_OVERHEAD <= KEPT_BYTES) {
        entry->data = object;
        entry->size = (size_t)size_made;
        tee->kept_bytes += (size_t)size_made + KEPT_OVERHEAD;
        tee_remember(tee, tee->entry_count - 1);
    } else {
        tee->handed = object;
    }
    *type = final;
    *data = object;
    *size = (size_t)size_made;
    return 1;
}

int cohort_pack_tee_next(cohort_pack_tee *tee, int *type, const unsigned char **data, size_t *size) {
    free(tee->handed);
    tee->handed = NULL;
    if (!tee->room || atomic_load(&tee->stopped)) return 0;
    if (!tee->begun) {
        if (tee_wait(tee, 0, 12) < 12) return 0;
        const unsigned char *header = tee->room;
        uint32_t version = cohort_be32(header + 4), count = cohort_be32(header + 8);
        if (memcmp(header, "PACK", 4) != 0 || (version != 2 && version != 3)) return 0;
        tee->remaining = count < ENTRY_LIMIT ? count : ENTRY_LIMIT;
        tee->position = 12;
        tee->begun = 1;
    }
    while (tee->remaining > 0 && !atomic_load(&tee->stopped)) {
        tee->remaining--;
        int read = tee_read_entry(tee, type, data, size);
        if (read < 0) break;
        if (read == 1) return 1;
    }
    tee->remaining = 0;
    return 0;
}
