#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __APPLE__
#include <stdlib.h>
#else
#include <sys/random.h>
#endif
#include "CGit2Shim.h"
#include "KeptObjects.h"

// The trees the pack readers of a resident verifier read, kept by repository and id for the handles
// that follow. A push's parent is usually the commit the push before it brought, so the trees that
// push read anew are the ones the next push diffs against, and the bases its new trees are deltas on
// (a pushed pack's deltas name their base by id): kept, neither is inflated again. A tree is kept only
// once its bytes hash to its id (`PackReader.c`), so a kept tree is the tree whatever pack it came
// from, even one whose index lies; keys also carry the repository, and a reader only asks for an id
// its own packs list. Two generations bound the memory, each entry's header counted: when the newer
// is full the older is dropped (freed once the lock is let go) and the newer takes its place; a tree
// found in the older moves to the newer while it has room. Buckets are chosen by a keyed hash with a
// random key, so that nobody can choose ids that pile up in one.

#define BUCKETS 16384
#define LARGEST_KEPT ((size_t)1 << 20)
// What an entry costs beside its bytes (its header, and the allocator's own): counted against the
// bound, so that a push of many tiny trees cannot keep many times the bound in entries.
#define ENTRY_OVERHEAD (sizeof(kept_object) + 16)

typedef struct kept_object {
    struct kept_object *next;
    unsigned char key[KEPT_KEY_BYTES];
    git_object_t type;
    size_t size;
    unsigned char data[];
} kept_object;

typedef struct {
    kept_object *buckets[BUCKETS];
    size_t bytes;
} generation;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static generation *generations[2];   // [0] the newer; made when keeping starts
static size_t generation_limit;      // bytes per generation, entries' costs included; 0: nothing is kept
static uint64_t seed[2];
static size_t served;                // reads answered from kept trees

// Frees a generation's entries and the generation (with `lock` not held: a generation of tiny trees
// takes a while, and readers of every push wait on `lock`).
static void free_generation(generation *g) {
    if (!g) return;
    for (size_t i = 0; i < BUCKETS; i++) {
        for (kept_object *object = g->buckets[i], *next; object; object = next) {
            next = object->next;
            free(object);
        }
    }
    free(g);
}

void cohort_pack_objects_keep(size_t bytes) {
    generation *dropped[2] = {NULL, NULL};
    pthread_mutex_lock(&lock);
    if (bytes > 0 && !generations[0]) {
#ifdef __APPLE__
        arc4random_buf(seed, sizeof(seed));
#else
        if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
            pthread_mutex_unlock(&lock);
            return;   // no key for the buckets: keep nothing rather than use a guessable one
        }
#endif
        generations[0] = calloc(1, sizeof(generation));
        generations[1] = calloc(1, sizeof(generation));
        if (!generations[0] || !generations[1]) {
            free(generations[0]);
            free(generations[1]);
            generations[0] = generations[1] = NULL;
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    // Smaller bounds apply from the next tree kept; none lets every tree go.
    generation_limit = generations[0] ? bytes / 2 : 0;
    if (generation_limit == 0) {
        dropped[0] = generations[0];
        dropped[1] = generations[1];
        generations[0] = generations[1] = NULL;
    }
    pthread_mutex_unlock(&lock);
    free_generation(dropped[0]);
    free_generation(dropped[1]);
}

void cohort_pack_objects_kept(size_t *bytes, size_t *reads) {
    pthread_mutex_lock(&lock);
    *bytes = generations[0] ? generations[0]->bytes + generations[1]->bytes : 0;
    *reads = served;
    pthread_mutex_unlock(&lock);
}

int cohort_kept_objects_on(void) {
    pthread_mutex_lock(&lock);
    int on = generation_limit > 0;
    pthread_mutex_unlock(&lock);
    return on;
}

static size_t bucket_of(const unsigned char *key) {
    uint64_t words[5] = {0};
    memcpy(words, key, 32);
    memcpy(&words[4], key + 32, 4);
    uint64_t hash = seed[0];
    for (int i = 0; i < 5; i++) {
        hash ^= words[i] + seed[1];
        hash *= 0x9E3779B97F4A7C15ull;
        hash ^= hash >> 29;
    }
    return (size_t)(hash >> 50) & (BUCKETS - 1);
}

// The entry for `key` in `g`, and the link that points at it (with `lock` held).
static kept_object **find_link(generation *g, const unsigned char *key, size_t bucket) {
    kept_object **link = &g->buckets[bucket];
    while (*link && memcmp((*link)->key, key, KEPT_KEY_BYTES) != 0) link = &(*link)->next;
    return link;
}

// Links `object` into the newer generation (with `lock` held; the caller has checked its room).
static void link_newer(kept_object *object, size_t bucket) {
    object->next = generations[0]->buckets[bucket];
    generations[0]->buckets[bucket] = object;
    generations[0]->bytes += ENTRY_OVERHEAD + object->size;
}

unsigned char *cohort_kept_object(const unsigned char key[KEPT_KEY_BYTES], size_t *size, git_object_t *type,
                                  unsigned char *(*allocate)(void *context, size_t size), void *context) {
    unsigned char *copy = NULL;
    pthread_mutex_lock(&lock);
    if (generation_limit > 0) {
        size_t bucket = bucket_of(key);
        kept_object *object = *find_link(generations[0], key, bucket);
        if (!object) {
            kept_object **older = find_link(generations[1], key, bucket);
            object = *older;
            // Used again: into the newer generation while it has room (a full one is left as it is:
            // making room would drop the older generation, this entry's own, under the lock).
            if (object && generations[0]->bytes + ENTRY_OVERHEAD + object->size <= generation_limit) {
                *older = object->next;
                generations[1]->bytes -= ENTRY_OVERHEAD + object->size;
                link_newer(object, bucket);
            }
        }
        if (object && (copy = allocate(context, object->size + 1))) {
            memcpy(copy, object->data, object->size);
            *size = object->size;
            *type = object->type;
            served++;
        }
    }
    pthread_mutex_unlock(&lock);
    return copy;
}

// Takes `object` into the newer generation (with `lock` held), first replacing a full one with a fresh
// one, the older then returned in `dropped` for the caller to free once `lock` is let go. Returns the
// object when it was not taken (kept already, past the bound, or no memory), for the caller to free.
static kept_object *take_locked(kept_object *object, generation **dropped) {
    size_t cost = ENTRY_OVERHEAD + object->size;
    if (generation_limit == 0 || cost > generation_limit) return object;
    size_t bucket = bucket_of(object->key);
    if (*find_link(generations[0], object->key, bucket) || *find_link(generations[1], object->key, bucket)) return object;
    if (generations[0]->bytes + cost > generation_limit) {
        generation *fresh = calloc(1, sizeof(generation));
        if (!fresh) return object;
        *dropped = generations[1];
        generations[1] = generations[0];
        generations[0] = fresh;
    }
    link_newer(object, bucket);
    return NULL;
}

void cohort_keep_object(const unsigned char key[KEPT_KEY_BYTES], const unsigned char *data, size_t size, git_object_t type) {
    if (size > LARGEST_KEPT) return;
    kept_object *object = malloc(sizeof(kept_object) + size);
    if (!object) return;
    memcpy(object->key, key, KEPT_KEY_BYTES);
    memcpy(object->data, data, size);
    object->type = type;
    object->size = size;
    generation *dropped = NULL;
    pthread_mutex_lock(&lock);
    kept_object *refused = take_locked(object, &dropped);
    pthread_mutex_unlock(&lock);
    free(refused);
    free_generation(dropped);
}
