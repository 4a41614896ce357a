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
// (a pushed pack's deltas name their base by id): kept, neither is inflated again. An id names its
// content (git's index-pack computes the ids of every pack a push brings), so a kept tree is the tree
// whatever pack it came from; keys also carry the repository, so no repository is ever served another
// one's objects. Two generations bound the memory: when the newer is full the older is dropped and
// the newer takes its place; a tree found in the older moves to the newer. Buckets are chosen by a
// keyed hash with a random key, so that nobody can choose ids that pile up in one.

#define BUCKETS 4096
#define LARGEST_KEPT ((size_t)1 << 20)

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
static generation generations[2];   // [0] the newer
static size_t generation_limit;     // bytes of objects per generation; 0: nothing is kept
static uint64_t seed[2];
static size_t served;               // reads answered from kept trees

static void empty(generation *g);

void cohort_pack_objects_keep(size_t bytes) {
    pthread_mutex_lock(&lock);
    if (generation_limit == 0 && bytes > 0) {
#ifdef __APPLE__
        arc4random_buf(seed, sizeof(seed));
#else
        if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
            pthread_mutex_unlock(&lock);
            return;   // no key for the buckets: keep nothing rather than use a guessable one
        }
#endif
    }
    generation_limit = bytes / 2;
    // Smaller bounds apply from the next tree kept; none lets every tree go now.
    if (generation_limit == 0) {
        empty(&generations[0]);
        empty(&generations[1]);
    }
    pthread_mutex_unlock(&lock);
}

void cohort_pack_objects_kept(size_t *bytes, size_t *reads) {
    pthread_mutex_lock(&lock);
    *bytes = generations[0].bytes + generations[1].bytes;
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
    return (size_t)(hash >> 52) & (BUCKETS - 1);
}

// The entry for `key` in `g`, and the link that points at it (with `lock` held).
static kept_object **find_link(generation *g, const unsigned char *key, size_t bucket) {
    kept_object **link = &g->buckets[bucket];
    while (*link && memcmp((*link)->key, key, KEPT_KEY_BYTES) != 0) link = &(*link)->next;
    return link;
}

static void empty(generation *g) {
    for (size_t i = 0; i < BUCKETS; i++) {
        for (kept_object *object = g->buckets[i], *next; object; object = next) {
            next = object->next;
            free(object);
        }
        g->buckets[i] = NULL;
    }
    g->bytes = 0;
}

// Makes room in the newer generation for `size` bytes (with `lock` held).
static void make_room(size_t size) {
    if (generations[0].bytes + size <= generation_limit) return;
    empty(&generations[1]);
    generations[1] = generations[0];
    memset(&generations[0], 0, sizeof(generations[0]));
}

unsigned char *cohort_kept_object(const unsigned char key[KEPT_KEY_BYTES], size_t *size, git_object_t *type,
                                  unsigned char *(*allocate)(void *context, size_t size), void *context) {
    unsigned char *copy = NULL;
    pthread_mutex_lock(&lock);
    if (generation_limit > 0) {
        size_t bucket = bucket_of(key);
        kept_object **link = find_link(&generations[0], key, bucket);
        if (!*link) {
            kept_object **older = find_link(&generations[1], key, bucket);
            kept_object *found = *older;
            if (found) {
                // Used again: into the newer generation.
                *older = found->next;
                generations[1].bytes -= found->size;
                make_room(found->size);
                found->next = generations[0].buckets[bucket];
                generations[0].buckets[bucket] = found;
                generations[0].bytes += found->size;
                link = &generations[0].buckets[bucket];
            }
        }
        kept_object *object = *link;
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

void cohort_keep_object(const unsigned char key[KEPT_KEY_BYTES], const unsigned char *data, size_t size, git_object_t type) {
    pthread_mutex_lock(&lock);
    if (generation_limit > 0 && size <= LARGEST_KEPT && size <= generation_limit) {
        size_t bucket = bucket_of(key);
        if (!*find_link(&generations[0], key, bucket) && !*find_link(&generations[1], key, bucket)) {
            kept_object *object = malloc(sizeof(kept_object) + size);
            if (object) {
                memcpy(object->key, key, KEPT_KEY_BYTES);
                memcpy(object->data, data, size);
                object->type = type;
                object->size = size;
                make_room(size);
                object->next = generations[0].buckets[bucket];
                generations[0].buckets[bucket] = object;
                generations[0].bytes += size;
            }
        }
    }
    pthread_mutex_unlock(&lock);
}
