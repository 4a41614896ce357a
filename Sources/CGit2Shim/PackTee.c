#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <git2/sys/odb_backend.h>
#include "CGit2Shim.h"
#include "PackIndexer.h"

// A copy of the pack a clone fetches, indexed by Cohort's own indexer (PackIndexer.c) as it arrives,
// which hands on each commit, and each blob that starts like a JSON object (a notice), with the name
// it gave it, to a reader on another thread: that core checks their signatures ahead while the pack
// is still indexed. What the reader makes of an object decides nothing: it only ever warms results
// that the verifier would compute itself for the object of that name. Where the indexer declines the
// pack, nothing more is handed on.

#define TEE_ROOM ((size_t)256 << 20)          // address space set aside: a longer pack goes to libgit2
#define HANDED_OBJECT_LIMIT ((size_t)1 << 20) // bytes of one object handed on
#define HANDED_BYTES ((size_t)64 << 20)       // handed on and not yet read (each counted 64 bytes more); past it none
#define HANDED_OVERHEAD 64

typedef struct handed_object {
    struct handed_object *next;
    int type;
    unsigned char id[20];
    size_t size;
    unsigned char bytes[];
} handed_object;

struct cohort_pack_tee {
    pthread_mutex_t lock;
    pthread_cond_t more;
    atomic_int references;
    unsigned char *room;
    size_t length;             // under `lock`: bytes copied so far
    int claimed;               // under `lock`: a fetch's pack is being copied (only the first is)
    int full;                  // under `lock`: the room takes no more bytes
    int ended;                 // under `lock`: no more objects will be handed on
    int indexing;              // under `lock`: a fetch's writer indexes the room (it stays until that ends)
    int forgotten;             // under `lock`: let go while indexing; unmapped when the indexing ends
    int whole_only;            // fed by hand, its deltas never named (`cohort_pack_tee_read_only_whole`)
    atomic_int stopped;        // the reader is told to stop
    cohort_pack_indexer *indexer;   // names the copy's objects; used by the one thread that copies bytes in
    git_indexer_progress stats;     // its counts, for a copy fed by hand
    handed_object *first, *last;    // under `lock`: handed on, not yet read
    size_t handed_bytes;            // under `lock`
    handed_object *reading;         // the reader's object, freed at its next call
};

// Called by the indexer for each object it names: commits, and blobs that may be notices, are copied
// for the reader, unless it has stopped or too much waits.
static void tee_offer(void *context, int type, const unsigned char *id, const unsigned char *bytes, size_t size) {
    cohort_pack_tee *tee = context;
    if ((type != 1 && type != 3) || size > HANDED_OBJECT_LIMIT || (type == 3 && (size == 0 || bytes[0] != '{'))) return;
    if (atomic_load(&tee->stopped)) return;
    pthread_mutex_lock(&tee->lock);
    int room = !tee->ended && tee->handed_bytes + size + HANDED_OVERHEAD <= HANDED_BYTES;
    if (room) tee->handed_bytes += size + HANDED_OVERHEAD;
    pthread_mutex_unlock(&tee->lock);
    if (!room) return;
    handed_object *object = malloc(sizeof(handed_object) + size);
    if (object) {
        object->next = NULL;
        object->type = type;
        memcpy(object->id, id, 20);
        object->size = size;
        memcpy(object->bytes, bytes, size);
    }
    pthread_mutex_lock(&tee->lock);
    if (!object) {
        // Let go of its place, unless the copy was let go meanwhile (which counts from 0 again).
        if (tee->handed_bytes >= size + HANDED_OVERHEAD) tee->handed_bytes -= size + HANDED_OVERHEAD;
    } else if (tee->last) {
        tee->last->next = object;
        tee->last = object;
    } else {
        tee->first = tee->last = object;
    }
    pthread_cond_broadcast(&tee->more);
    pthread_mutex_unlock(&tee->lock);
}

cohort_pack_tee *cohort_pack_tee_new(void) {
    cohort_pack_tee *tee = calloc(1, sizeof(cohort_pack_tee));
    if (!tee) return NULL;
    tee->room = mmap(NULL, TEE_ROOM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tee->indexer = cohort_pack_indexer_new(tee_offer, tee);
    if (tee->room == MAP_FAILED || !tee->indexer) {
        if (tee->room != MAP_FAILED) munmap(tee->room, TEE_ROOM);
        cohort_pack_indexer_free(tee->indexer);
        free(tee);
        return NULL;
    }
    pthread_mutex_init(&tee->lock, NULL);
    pthread_cond_init(&tee->more, NULL);
    atomic_init(&tee->references, 1);
    atomic_init(&tee->stopped, 0);
    return tee;
}

// No more objects will be handed on: the reader reads what waits, then ends.
static void tee_close(cohort_pack_tee *tee) {
    pthread_mutex_lock(&tee->lock);
    tee->ended = 1;
    pthread_cond_broadcast(&tee->more);
    pthread_mutex_unlock(&tee->lock);
}

// The indexer, taken from the copy (the caller frees it), or NULL.
static cohort_pack_indexer *tee_take_indexer(cohort_pack_tee *tee) {
    pthread_mutex_lock(&tee->lock);
    cohort_pack_indexer *indexer = tee->indexer;
    tee->indexer = NULL;
    pthread_mutex_unlock(&tee->lock);
    return indexer;
}

// Frees what waits to be read, and the room unless a fetch's writer still indexes it.
static void tee_let_go(cohort_pack_tee *tee) {
    free(tee->reading);
    tee->reading = NULL;
    pthread_mutex_lock(&tee->lock);
    for (handed_object *object = tee->first, *next; object; object = next) {
        next = object->next;
        free(object);
    }
    tee->first = tee->last = NULL;
    tee->handed_bytes = 0;
    if (tee->indexing) {
        tee->forgotten = 1;
    } else {
        if (tee->room) munmap(tee->room, TEE_ROOM);
        tee->room = NULL;
        tee->length = 0;
        tee->full = 1;
    }
    tee->ended = 1;
    pthread_mutex_unlock(&tee->lock);
}

void cohort_pack_tee_forget(cohort_pack_tee *tee) {
    cohort_pack_tee_stop(tee);
    tee_let_go(tee);
}

void cohort_pack_tee_release(cohort_pack_tee *tee) {
    if (!tee || atomic_fetch_sub(&tee->references, 1) != 1) return;
    tee_let_go(tee);
    cohort_pack_indexer_free(tee->indexer);
    pthread_cond_destroy(&tee->more);
    pthread_mutex_destroy(&tee->lock);
    free(tee);
}

void cohort_pack_tee_end(cohort_pack_tee *tee) {
    // A copy fed by hand: the indexer names the objects of deltas now, without writing anything.
    // One read for its whole objects only names nothing more.
    cohort_pack_indexer *indexer = tee_take_indexer(tee);
    if (indexer) {
        pthread_mutex_lock(&tee->lock);
        size_t length = tee->room ? tee->length : 0;
        pthread_mutex_unlock(&tee->lock);
        if (length && !tee->whole_only) cohort_pack_indexer_finish(indexer, tee->room, length, NULL, &tee->stats);
        cohort_pack_indexer_free(indexer);
    }
    tee_close(tee);
}

void cohort_pack_tee_read_only_whole(cohort_pack_tee *tee, uint32_t entries) {
    // Before any byte is appended, on the thread that appends.
    if (tee->indexer) cohort_pack_indexer_limit(tee->indexer, entries, 0);
    tee->whole_only = 1;
}

void cohort_pack_tee_stop(cohort_pack_tee *tee) {
    atomic_store(&tee->stopped, 1);
    pthread_mutex_lock(&tee->lock);
    pthread_cond_broadcast(&tee->more);
    pthread_mutex_unlock(&tee->lock);
}

// Copies bytes in: 1, or 0 when they do not fit the room (which then takes no more).
static int tee_copy(cohort_pack_tee *tee, const void *data, size_t size) {
    int copied = 0;
    pthread_mutex_lock(&tee->lock);
    if (!tee->full && tee->room) {
        if (size > TEE_ROOM - tee->length) {
            tee->full = 1;
        } else {
            memcpy(tee->room + tee->length, data, size);
            tee->length += size;
            copied = 1;
        }
    }
    pthread_mutex_unlock(&tee->lock);
    return copied;
}

void cohort_pack_tee_append(cohort_pack_tee *tee, const void *data, size_t size) {
    if (!tee->indexer) return;
    if (!tee_copy(tee, data, size) || cohort_pack_indexer_advance(tee->indexer, tee->room, tee->length, &tee->stats) != 0) {
        cohort_pack_indexer_free(tee_take_indexer(tee));
        tee_close(tee);
    }
}

int cohort_pack_tee_next(cohort_pack_tee *tee, int *type, unsigned char id[20], const unsigned char **data, size_t *size) {
    free(tee->reading);
    tee->reading = NULL;
    pthread_mutex_lock(&tee->lock);
    while (!tee->first && !tee->ended && !atomic_load(&tee->stopped)) pthread_cond_wait(&tee->more, &tee->lock);
    handed_object *object = atomic_load(&tee->stopped) ? NULL : tee->first;
    if (object) {
        tee->first = object->next;
        if (!tee->first) tee->last = NULL;
        tee->handed_bytes -= object->size + HANDED_OVERHEAD;
    }
    pthread_mutex_unlock(&tee->lock);
    if (!object) return 0;
    tee->reading = object;
    *type = object->type;
    memcpy(id, object->id, 20);
    *data = object->bytes;
    *size = object->size;
    return 1;
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

// Ends Cohort's indexing of the room: nothing more is handed on, and the room may go once the copy
// is forgotten.
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
        tee->tee->full = 1;
    }
    pthread_mutex_unlock(&tee->tee->lock);
    tee_close(tee->tee);
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
    if (tee->indexer) {
        int written = cohort_pack_indexer_finish(tee->indexer, tee->tee->room, tee->tee->length, tee->pack_folder, stats);
        if (written != 1) {
            tee_stop_indexing(tee);
            return written;
        }
        int error = tee_hand_over(tee, stats);
        if (error < 0) return error;
    } else if (tee->tee) {
        cohort_pack_tee_end(tee->tee);
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
        // The copy's indexer, now this writer's: it writes the pack where libgit2 would.
        if (self->pack_folder && self->tee->indexer) {
            tee->indexer = self->tee->indexer;
            self->tee->indexer = NULL;
            self->tee->indexing = 1;
            cohort_pack_indexer_report_to(tee->indexer, progress, payload);
        }
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
        free(backend->pack_folder);
        free(backend);
    }
    git_odb_free(odb);
    return result;
}

