#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <string.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/mempack.h>
#include "CGit2Shim.h"
#include "PackEntry.h"

// libgit2's mempack keeps objects in memory but packs only what its commits reach; this backend
// wraps it and remembers every object written, so that all of them go into the pack.
typedef struct {
    git_odb_backend parent;
    git_odb_backend *memory;
    git_oid *ids;
    size_t count;
    size_t capacity;
    size_t bytes;
    char *pack_directory;
    int flush_failed;
} cohort_batch;

// Past this many bytes in memory, a batch is written out before it takes more (a first commit of a
// large folder must not hold all of it in memory).
#define BATCH_MEMORY_LIMIT ((size_t)64 << 20)
// A larger object is not batched: the folder's loose-object backend streams it to disk in constant
// memory, whatever its size.
#define BATCH_OBJECT_LIMIT ((size_t)16 << 20)

static int batch_keep(cohort_batch *batch, const git_oid *oid, const void *data, size_t len, git_object_t type);

static int batch_write(git_odb_backend *backend, const git_oid *oid, const void *data, size_t len, git_object_t type) {
    cohort_batch *batch = (cohort_batch *)backend;
    if (batch->memory->exists(batch->memory, oid)) return 0;
    // Too large, or the batch could not be written when it filled up: the next backend (loose files)
    // takes the object; the final flush reports the failure once.
    if (len > BATCH_OBJECT_LIMIT || batch->flush_failed) return GIT_PASSTHROUGH;
    if (batch->bytes + len > BATCH_MEMORY_LIMIT && batch->count > 0) {
        if (cohort_batch_flush(backend) < 0) {
            batch->flush_failed = 1;
            return GIT_PASSTHROUGH;
        }
    }
    return batch_keep(batch, oid, data, len, type);
}

// Keeps an object the batch does not hold yet in memory and remembers its id.
static int batch_keep(cohort_batch *batch, const git_oid *oid, const void *data, size_t len, git_object_t type) {
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
    batch->bytes += len;
    return 0;
}

// A stream into the batch for an object of a declared size (how libgit2 writes a file's blob);
// objects past BATCH_OBJECT_LIMIT are passed to the loose backend's own stream.
typedef struct {
    git_odb_stream parent;
    git_object_t type;
    unsigned char *data;
    size_t size;
    size_t used;
} batch_stream;

static int batch_stream_write(git_odb_stream *stream, const char *buffer, size_t len) {
    batch_stream *self = (batch_stream *)stream;
    if (len > self->size - self->used) {
        git_error_set_str(GIT_ERROR_ODB, "more bytes written than the object declared");
        return -1;
    }
    memcpy(self->data + self->used, buffer, len);
    self->used += len;
    return 0;
}

static int batch_stream_finalize(git_odb_stream *stream, const git_oid *oid) {
    batch_stream *self = (batch_stream *)stream;
    if (self->used != self->size) {
        git_error_set_str(GIT_ERROR_ODB, "fewer bytes written than the object declared");
        return -1;
    }
    int error = batch_write(stream->backend, oid, self->data, self->size, self->type);
    // The stream was opened here, so the object stays here even when the batch could not be written
    // out as it filled up; the final flush reports that.
    if (error == GIT_PASSTHROUGH) error = batch_keep((cohort_batch *)stream->backend, oid, self->data, self->size, self->type);
    return error;
}

static void batch_stream_free(git_odb_stream *stream) {
    batch_stream *self = (batch_stream *)stream;
    free(self->data);
    free(self);
}

static int batch_writestream(git_odb_stream **out, git_odb_backend *backend, git_object_size_t size, git_object_t type) {
    cohort_batch *batch = (cohort_batch *)backend;
    if (size > BATCH_OBJECT_LIMIT || batch->flush_failed) return GIT_PASSTHROUGH;
    batch_stream *stream = calloc(1, sizeof(batch_stream));
    unsigned char *data = malloc(size ? (size_t)size : 1);
    if (!stream || !data) {
        free(stream);
        free(data);
        git_error_set_oom();
        return -1;
    }
    stream->parent.backend = backend;
    stream->parent.mode = GIT_STREAM_WRONLY;
    stream->parent.write = batch_stream_write;
    stream->parent.finalize_write = batch_stream_finalize;
    stream->parent.free = batch_stream_free;
    stream->type = type;
    stream->data = data;
    stream->size = (size_t)size;
    *out = &stream->parent;
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
    free(batch->pack_directory);
    free(batch);
}

int cohort_batch_new(git_odb_backend **out, const char *pack_directory) {
    cohort_batch *batch = calloc(1, sizeof(cohort_batch));
    if (!batch || !(batch->pack_directory = strdup(pack_directory))) {
        free(batch);
        git_error_set_oom();
        return -1;
    }
    int error = git_odb_init_backend(&batch->parent, GIT_ODB_BACKEND_VERSION);
    if (error == 0) error = git_mempack_new(&batch->memory);
    if (error < 0) {
        free(batch->pack_directory);
        free(batch);
        return error;
    }
    batch->parent.write = batch_write;
    batch->parent.writestream = batch_writestream;
    batch->parent.read = batch_read;
    batch->parent.read_header = batch_read_header;
    batch->parent.exists = batch_exists;
    batch->parent.free = batch_free;
    *out = &batch->parent;
    return 0;
}

// A pack and its index, written here rather than through libgit2's pack builder (which searched
// for deltas longer than all the rest of a commit took) or its indexer (which inflates and hashes
// every object again): the objects and their ids are known. Each object is deflated fast, as git
// writes loose objects; `git gc` packs them properly later.




// Appends one object (git's type-and-size header, then the deflated bytes) to the pack at `fd`.
static int append_object(int fd, z_stream *zlib, EVP_MD_CTX *digest, cohort_pack_index_entry *entry, git_object_t type,
                         const unsigned char *data, size_t size, uint64_t *appended) {
    unsigned char header[16];
    size_t used = 0;
    size_t rest = size >> 4;
    header[used++] = (unsigned char)((type << 4) | (size & 0x0f) | (rest ? 0x80 : 0));
    while (rest) {
        header[used++] = (unsigned char)((rest & 0x7f) | (rest >> 7 ? 0x80 : 0));
        rest >>= 7;
    }
    size_t bound = deflateBound(zlib, (uLong)size);
    unsigned char *packed = malloc(bound + used);
    if (!packed) {
        git_error_set_oom();
        return -1;
    }
    memcpy(packed, header, used);
    // One deflate stream for the whole pack, reset for each object (setting one up costs more than
    // deflating a small file).
    zlib->next_in = (Bytef *)data;
    zlib->avail_in = (uInt)size;
    zlib->next_out = packed + used;
    zlib->avail_out = (uInt)bound;
    int error = size <= UINT_MAX && bound <= UINT_MAX && deflate(zlib, Z_FINISH) == Z_STREAM_END ? 0 : -1;
    size_t length = bound - zlib->avail_out;
    if (deflateReset(zlib) != Z_OK) error = -1;
    if (error < 0) git_error_set_str(GIT_ERROR_ZLIB, "cannot deflate an object");
    if (error == 0) {
        entry->crc = (uint32_t)crc32_z(0, packed, used + length);
        *appended = used + length;
        if (EVP_DigestUpdate(digest, packed, used + length) != 1) error = -1;
    }
    if (error == 0) error = cohort_write_all(fd, packed, used + length);
    free(packed);
    return error;
}


int cohort_batch_flush(git_odb_backend *backend) {
    cohort_batch *batch = (cohort_batch *)backend;
    const char *pack_directory = batch->pack_directory;
    if (batch->count == 0) return 0;
    char pack_path[4096], index_path[4096], final_path[4096];
    if (snprintf(pack_path, sizeof pack_path, "%s/tmp_pack_XXXXXX", pack_directory) >= (int)sizeof pack_path
        || snprintf(index_path, sizeof index_path, "%s/tmp_idx_XXXXXX", pack_directory) >= (int)sizeof index_path) {
        git_error_set_str(GIT_ERROR_OS, "the objects folder's path is too long");
        return -1;
    }
    cohort_pack_index_entry *entries = calloc(batch->count, sizeof(cohort_pack_index_entry));
    EVP_MD_CTX *digest = EVP_MD_CTX_new();
    int pack = -1, index = -1, error = 0;
    z_stream zlib = { 0 };
    int zlib_ready = deflateInit(&zlib, Z_BEST_SPEED) == Z_OK;
    unsigned char *index_bytes = NULL;
    if (!entries || !digest || !zlib_ready) {
        git_error_set_oom();
        error = -1;
    }
    if (error == 0 && EVP_DigestInit_ex(digest, EVP_sha1(), NULL) != 1) {
        git_error_set_str(GIT_ERROR_SSL, "cannot start a SHA-1 digest");
        error = -1;
    }
    if (error == 0 && (pack = mkostemp(pack_path, O_CLOEXEC)) < 0) {
        git_error_set_str(GIT_ERROR_OS, strerror(errno));
        error = -1;
    }
    unsigned char header[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2 };
    cohort_put32(header + 8, (uint32_t)batch->count);
    if (error == 0 && EVP_DigestUpdate(digest, header, sizeof header) != 1) error = -1;
    if (error == 0) error = cohort_write_all(pack, header, sizeof header);
    uint64_t offset = sizeof header;
    for (size_t i = 0; i < batch->count && error == 0; i++) {
        void *data = NULL;
        size_t size = 0;
        git_object_t type = GIT_OBJECT_INVALID;
        error = batch->memory->read(&data, &size, &type, batch->memory, &batch->ids[i]);
        if (error == 0) {
            entries[i].id = batch->ids[i];
            entries[i].offset = offset;
            uint64_t appended = 0;
            error = append_object(pack, &zlib, digest, &entries[i], type, data, size, &appended);
            offset += appended;
        }
        if (data) git_odb_backend_data_free(batch->memory, data);
    }
    unsigned char checksum[EVP_MAX_MD_SIZE];
    unsigned int checksum_size = 0;
    if (error == 0 && EVP_DigestFinal_ex(digest, checksum, &checksum_size) != 1) error = -1;
    if (error == 0) error = cohort_write_all(pack, checksum, checksum_size);
    if (error == 0) {
        qsort(entries, batch->count, sizeof(cohort_pack_index_entry), cohort_pack_index_entry_order);
        size_t index_size = 0;
        index_bytes = cohort_pack_index_bytes(entries, batch->count, checksum, &index_size);
        if (!index_bytes) error = -1;
        if (error == 0 && (index = mkostemp(index_path, O_CLOEXEC)) < 0) {
            git_error_set_str(GIT_ERROR_OS, strerror(errno));
            error = -1;
        }
        if (error == 0) error = cohort_write_all(index, index_bytes, index_size);
    }
    // Packs are read-only and on disk before anything names their objects (git flushes its packs
    // too); the pack goes into place before the index that makes it visible.
    for (int i = 0; i < 2; i++) {
        int fd = i == 0 ? pack : index;
        if (fd < 0) continue;
        if (error == 0 && (fchmod(fd, 0444) != 0 || fdatasync(fd) != 0)) {
            git_error_set_str(GIT_ERROR_OS, strerror(errno));
            error = -1;
        }
        if (close(fd) != 0 && error == 0) {
            git_error_set_str(GIT_ERROR_OS, strerror(errno));
            error = -1;
        }
    }
    if (error == 0) {
        char hex[GIT_OID_HEXSZ + 1] = { 0 };
        char index_final[4096];
        git_oid name;
        git_oid_fromraw(&name, checksum);
        git_oid_fmt(hex, &name);
        if (snprintf(final_path, sizeof final_path, "%s/pack-%s.pack", pack_directory, hex) >= (int)sizeof final_path
            || snprintf(index_final, sizeof index_final, "%s/pack-%s.idx", pack_directory, hex) >= (int)sizeof index_final) {
            git_error_set_str(GIT_ERROR_OS, "the objects folder's path is too long");
            error = -1;
        } else if (rename(pack_path, final_path) != 0 || rename(index_path, index_final) != 0) {
            git_error_set_str(GIT_ERROR_OS, strerror(errno));
            error = -1;
        }
    }
    if (error < 0) {
        if (pack >= 0) unlink(pack_path);
        if (index >= 0) unlink(index_path);
    }
    free(index_bytes);
    if (zlib_ready) deflateEnd(&zlib);
    EVP_MD_CTX_free(digest);
    free(entries);
    if (error < 0) return error;
    batch->count = 0;
    batch->bytes = 0;
    batch->flush_failed = 0;
    return git_mempack_reset(batch->memory);
}
