#include <stdlib.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <string.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/mempack.h>
#include "CGit2Shim.h"

// libgit2's mempack keeps objects in memory but packs only what its commits reach; this backend
// wraps it and remembers every object written, so that all of them go into the pack.
typedef struct {
    git_odb_backend parent;
    git_odb_backend *memory;
    git_oid *ids;
    size_t count;
    size_t capacity;
} cohort_batch;

static int batch_write(git_odb_backend *backend, const git_oid *oid, const void *data, size_t len, git_object_t type) {
    cohort_batch *batch = (cohort_batch *)backend;
    if (batch->memory->exists(batch->memory, oid)) return 0;
    if (batch->count == batch->capacity) {
        size_t capacity = batch->capacity ? batch->capacity * 2 : 256;
        git_oid *ids = realloc(batch->ids, capacity * sizeof(git_oid));
        if (!ids) {
            git_error_set_oom();
            return -1;
        }
        batch->ids = ids;
        batch->capacity = capacity;
    }
    int error = batch->memory->write(batch->memory, oid, data, len, type);
    if (error < 0) return error;
    git_oid_cpy(&batch->ids[batch->count++], oid);
    return 0;
}

static int batch_read(void **buffer, size_t *len, git_object_t *type, git_odb_backend *backend, const git_oid *oid) {
    cohort_batch *batch = (cohort_batch *)backend;
    return batch->memory->read(buffer, len, type, batch->memory, oid);
}

static int batch_read_header(size_t *len, git_object_t *type, git_odb_backend *backend, const git_oid *oid) {
    cohort_batch *batch = (cohort_batch *)backend;
    return batch->memory->read_header(len, type, batch->memory, oid);
}

static int batch_exists(git_odb_backend *backend, const git_oid *oid) {
    cohort_batch *batch = (cohort_batch *)backend;
    return batch->memory->exists(batch->memory, oid);
}

static void batch_free(git_odb_backend *backend) {
    cohort_batch *batch = (cohort_batch *)backend;
    batch->memory->free(batch->memory);
    free(batch->ids);
    free(batch);
}

int cohort_batch_new(git_odb_backend **out) {
    cohort_batch *batch = calloc(1, sizeof(cohort_batch));
    if (!batch) {
        git_error_set_oom();
        return -1;
    }
    int error = git_odb_init_backend(&batch->parent, GIT_ODB_BACKEND_VERSION);
    if (error == 0) error = git_mempack_new(&batch->memory);
    if (error < 0) {
        free(batch);
        return error;
    }
    batch->parent.write = batch_write;
    batch->parent.read = batch_read;
    batch->parent.read_header = batch_read_header;
    batch->parent.exists = batch_exists;
    batch->parent.free = batch_free;
    *out = &batch->parent;
    return 0;
}

// One object's entry in a pack: its type and size in git's variable-length header, then its bytes
// deflated (fast, as git writes loose objects). No deltas: searching for them took longer than all
// the rest of a commit, for objects that `git gc` packs properly later.
static int append_object(git_indexer *indexer, git_indexer_progress *progress, EVP_MD_CTX *digest, git_object_t type,
                         const unsigned char *data, size_t size) {
    unsigned char header[16];
    size_t used = 0;
    size_t rest = size >> 4;
    header[used++] = (unsigned char)((type << 4) | (size & 0x0f) | (rest ? 0x80 : 0));
    while (rest) {
        header[used++] = (unsigned char)((rest & 0x7f) | (rest >> 7 ? 0x80 : 0));
        rest >>= 7;
    }
    uLong bound = compressBound((uLong)size);
    unsigned char *deflated = malloc(bound + used);
    if (!deflated) {
        git_error_set_oom();
        return -1;
    }
    memcpy(deflated, header, used);
    uLongf length = bound;
    int error = compress2(deflated + used, &length, data, (uLong)size, Z_BEST_SPEED) == Z_OK ? 0 : -1;
    if (error < 0) git_error_set_str(GIT_ERROR_ZLIB, "cannot deflate an object");
    if (error == 0 && EVP_DigestUpdate(digest, deflated, used + length) != 1) error = -1;
    if (error == 0) error = git_indexer_append(indexer, deflated, used + length, progress);
    free(deflated);
    return error;
}

int cohort_batch_flush(git_odb_backend *backend, const char *pack_directory, size_t *written) {
    cohort_batch *batch = (cohort_batch *)backend;
    *written = 0;
    if (batch->count == 0) return 0;
    git_indexer *indexer = NULL;
    git_indexer_options options = GIT_INDEXER_OPTIONS_INIT;
    int error = git_indexer_new(&indexer, pack_directory, 0, NULL, &options);
    if (error < 0) return error;
    EVP_MD_CTX *digest = EVP_MD_CTX_new();
    if (!digest || EVP_DigestInit_ex(digest, EVP_sha1(), NULL) != 1) {
        git_error_set_str(GIT_ERROR_SSL, "cannot start a SHA-1 digest");
        error = -1;
    }
    unsigned char header[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2,
        (unsigned char)(batch->count >> 24), (unsigned char)(batch->count >> 16),
        (unsigned char)(batch->count >> 8), (unsigned char)batch->count };
    // The indexer counts in `progress` across calls.
    git_indexer_progress progress = { 0 };
    if (error == 0 && EVP_DigestUpdate(digest, header, sizeof header) != 1) error = -1;
    if (error == 0) error = git_indexer_append(indexer, header, sizeof header, &progress);
    for (size_t i = 0; i < batch->count && error == 0; i++) {
        void *data = NULL;
        size_t size = 0;
        git_object_t type = GIT_OBJECT_INVALID;
        error = batch->memory->read(&data, &size, &type, batch->memory, &batch->ids[i]);
        if (error == 0) error = append_object(indexer, &progress, digest, type, data, size);
        free(data);
    }
    unsigned char trailer[EVP_MAX_MD_SIZE];
    unsigned int trailer_size = 0;
    if (error == 0 && EVP_DigestFinal_ex(digest, trailer, &trailer_size) != 1) error = -1;
    if (error == 0) error = git_indexer_append(indexer, trailer, trailer_size, &progress);
    if (error == 0) error = git_indexer_commit(indexer, &progress);
    EVP_MD_CTX_free(digest);
    git_indexer_free(indexer);
    if (error < 0) return error;
    *written = batch->count;
    batch->count = 0;
    return git_mempack_reset(batch->memory);
}
