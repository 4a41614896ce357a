#include <stdlib.h>
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

int cohort_batch_flush(git_odb_backend *backend, git_repository *repository, const char *pack_directory, size_t *written) {
    cohort_batch *batch = (cohort_batch *)backend;
    *written = 0;
    if (batch->count == 0) return 0;
    git_packbuilder *builder = NULL;
    int error = git_packbuilder_new(&builder, repository);
    if (error < 0) return error;
    git_packbuilder_set_threads(builder, 1);
    for (size_t i = 0; i < batch->count && error == 0; i++) {
        error = git_packbuilder_insert(builder, &batch->ids[i], NULL);
    }
    if (error == 0) error = git_packbuilder_write(builder, pack_directory, 0, NULL, NULL);
    git_packbuilder_free(builder);
    if (error < 0) return error;
    *written = batch->count;
    batch->count = 0;
    return git_mempack_reset(batch->memory);
}
