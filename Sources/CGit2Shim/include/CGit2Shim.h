#ifndef COHORT_CGIT2SHIM_H
#define COHORT_CGIT2SHIM_H

#include <git2.h>

/// git_libgit2_opts is variadic, which Swift cannot call; these wrap the options Cohort uses.
/// Each returns 0 on success or a negative libgit2 error code.

/// Turns libgit2's "repository owned by another user" check on or off.
int cohort_git_set_owner_validation(int enabled);

/// Turns strict object creation (every referenced object must exist) on or off.
int cohort_git_set_strict_object_creation(int enabled);

/// Sets the directory libgit2 searches for the global configuration (level GIT_CONFIG_LEVEL_GLOBAL).
int cohort_git_set_global_search_path(const char *path);

/// The folders libgit2 searches for configuration at `level`, colon-separated, into `out`.
int cohort_git_search_path(git_config_level_t level, git_buf *out);

/// Turns re-hashing of every object read from the object database on or off.
int cohort_git_set_strict_hash_verification(int enabled);

/// Limits the memory libgit2's object caches may hold.
int cohort_git_set_cache_max_size(ssize_t bytes);

/// Trusts the certificates in `file` (PEM) and in the folder `directory` (either may be NULL) for HTTPS
/// remotes, and none other.
int cohort_git_set_ssl_cert_locations(const char *file, const char *directory);
/* While enabled, libgit2's initialisation only remembers the certificate file or folder it would load
 * (mbedTLS builds); what it named, or NULL. Not thread-safe: around git_libgit2_init only. */
void cohort_git_defer_certificate_bundle(int enabled);
const char *cohort_git_deferred_certificate_file(void);
const char *cohort_git_deferred_certificate_directory(void);

/// Gives `repository` its own reader of the packs in `objects_directory` (`PackReader.c`: version 2
/// indexes, each pack mapped for this handle alone, with delta bases of its own; libgit2 reads packs
/// through one state per pack path for the whole process, behind a lock every reading thread takes),
/// tried before the packs it shares, at `priority` (above libgit2's own backends, 1 and 2). Whatever
/// the reader does not take as well-formed it passes on (GIT_PASSTHROUGH), so libgit2's own pack
/// reader still reads, or refuses, it. With `keep_trees` (and `cohort_pack_objects_keep` given a
/// size), the reader also reads and keeps trees kept between handles, by the repository's identity and
/// id. 0, or a negative libgit2 error code (the handle then reads as before).
int cohort_git_add_own_packs(git_repository *repository, const char *objects_directory, int priority, int keep_trees);

/// How many maps of pack and index files no reader uses the process keeps (0, the default: each is
/// unmapped when its last reader goes). For a process that verifies push after push.
void cohort_pack_maps_keep(int count);

/// Keeps, between repository handles, up to about `bytes` of the trees Cohort's pack readers read
/// (0, the default: none), for the next handles of a process that verifies push after push: each
/// push's parent is usually the commit the push before it brought. Keyed by repository and id.
void cohort_pack_objects_keep(size_t bytes);

/// The bytes of trees kept now, and how many reads kept trees have answered since the start.
void cohort_pack_objects_kept(size_t *bytes, size_t *reads);

/// The file system type (`statfs`'s magic number) of the file system holding `path`; -1 when it
/// cannot be read, or off Linux.
int cohort_file_system_type(const char *path, unsigned long long *type);

/// Tells glibc's allocator to keep freed memory for later allocations (buffers up to 16 MiB from its
/// heaps, no trimming below 16 MiB free, at most 4 arenas) rather than return it to the system;
/// nothing elsewhere.
void cohort_malloc_keep_freed(void);

/// A copy of the pack a clone fetches, indexed by Cohort's own indexer as it arrives, which hands on
/// the commits and the blobs that may be notices it names to a reader on another thread (`PackTee.c`).
typedef struct cohort_pack_tee cohort_pack_tee;

/// A new copy, empty, with one reference (the caller's); NULL when memory is refused.
cohort_pack_tee *cohort_pack_tee_new(void);

/// Lets go of one reference; the last frees the copy and every object waiting to be read.
void cohort_pack_tee_release(cohort_pack_tee *tee);

/// Copies the first pack a fetch into `repository` writes into `tee` as it arrives, and indexes it with
/// Cohort's own indexer (`PackIndexer.c`), or, where that declines it, with libgit2's. 0, or a
/// negative libgit2 error code.
int cohort_git_tee_fetched_pack(git_repository *repository, cohort_pack_tee *tee);

/// The next object the indexer named and handed on, waiting for one: 1 with a commit (`type` 1) or a
/// blob that starts with `{` (3), whole, its name in `id` and its bytes in `data` (valid until the
/// next call); 0 once nothing more will be handed on (the pack indexed, or declined), or once stopped.
/// Objects of at most 1 MiB, 64 MiB waiting at most (past it, objects are not handed on). One thread only.
int cohort_pack_tee_next(cohort_pack_tee *tee, int *type, unsigned char id[20], const unsigned char **data, size_t *size);

/// A copy fed by hand whose deltas will never be resolved (no `cohort_pack_tee_end`): the indexer keeps
/// nothing for a second pass, and declines a pack of more than `entries` entries. Call before the
/// first `cohort_pack_tee_append`.
void cohort_pack_tee_read_only_whole(cohort_pack_tee *tee, uint32_t entries);

/// Makes the reader stop at its next step; nothing more is handed on (the copy still takes the
/// fetch's bytes). Any thread.
void cohort_pack_tee_stop(cohort_pack_tee *tee);

/// Once the reader has stopped: frees what waits to be read and the copy's bytes (the copy itself
/// stays until its last reference goes; the bytes until a fetch's indexing ends).
void cohort_pack_tee_forget(cohort_pack_tee *tee);

/// Copies `size` more bytes of a pack in and names what arrived, as a fetch's writer does, without
/// writing anything (for packs that come otherwise: tests, fuzzing). Past the copy's room, or at a
/// pack the indexer declines, nothing more is handed on.
void cohort_pack_tee_append(cohort_pack_tee *tee, const void *data, size_t size);

/// No more bytes will come: for a copy fed by hand, the objects its deltas make are named and handed
/// on now; then the reader reads what waits, and ends.
void cohort_pack_tee_end(cohort_pack_tee *tee);

/// Indexes a whole pack with Cohort's own indexer of a clone's pack (`PackIndexer.c`), handed to it in
/// pieces of `piece` bytes (0: at once), writing the pack and its index into `pack_folder` as libgit2
/// names them. 0 written; 1 declined (nothing written: libgit2's indexer would take the pack).
int cohort_pack_index(const unsigned char *pack, size_t length, size_t piece, const char *pack_folder);

/// Limits how many pack files libgit2 keeps open at once (0: no limit, its default).
int cohort_git_set_mwindow_file_limit(size_t files);

/// Sets the User-Agent libgit2 sends over HTTP.
int cohort_git_set_user_agent(const char *agent);

/// Child-process set-up Swift cannot reach (glibc declares these only for _GNU_SOURCE): `actions`
/// change to `directory` and close every descriptor from 3 up before the program runs.
int cohort_spawn_chdir_and_close(void *actions, const char *directory);

/// pipe2(fds, O_CLOEXEC).
int cohort_pipe_cloexec(int fds[2]);

/// An object database backend that keeps new objects in memory and remembers each one, to be added
/// to an object database in front of its folders (`git_odb_add_backend`), which then owns it. Past
/// 64 MiB it writes what it holds to `pack_directory` before taking more.
int cohort_batch_new(git_odb_backend **out, const char *pack_directory);

/// Writes every object `batch` holds as one pack (without deltas) and its index into its pack
/// directory, then forgets them. Nothing is forgotten when writing fails.
int cohort_batch_flush(git_odb_backend *batch);

/// A tree read and parsed by Cohort (`TreeReader.c`): its entries in the tree's order.
typedef struct cohort_tree cohort_tree;

/// One entry of a `cohort_tree`, pointing into the tree's bytes (valid while the tree is).
typedef struct {
    /// The name, `name_length` bytes followed by a zero byte.
    const char *name;
    /// The id's 20 bytes.
    const unsigned char *id;
    uint16_t name_length;
    /// The mode as the tree spells it (libgit2's `git_tree_entry_filemode_raw`).
    uint16_t mode;
} cohort_tree_entry;

/// Reads tree `id`: in one pass over its bytes when it is in git's usual form, otherwise through
/// libgit2, which then reads it (or refuses it, with its error) as it always does. 0 or a libgit2 error.
int cohort_tree_read(cohort_tree **out, git_repository *repository, const git_oid *id);
void cohort_tree_free(cohort_tree *tree);
/// The number of entries (0 for NULL).
size_t cohort_tree_count(const cohort_tree *tree);
/// Entry `index`, or NULL past the end.
const cohort_tree_entry *cohort_tree_entry_at(const cohort_tree *tree, size_t index);

/// Whether the entry is a folder, as libgit2 tells (`git_tree_entry__is_tree`).
static inline int cohort_tree_entry_is_tree(const cohort_tree_entry *entry) {
    return (entry->mode & 0170000) == 0040000;
}

/// The entry's object type, as `git_tree_entry_type` gives it.
static inline git_object_t cohort_tree_entry_type(const cohort_tree_entry *entry) {
    if ((entry->mode & 0170000) == 0160000) return GIT_OBJECT_COMMIT;
    return cohort_tree_entry_is_tree(entry) ? GIT_OBJECT_TREE : GIT_OBJECT_BLOB;
}

/// The entry's mode as `git_tree_entry_filemode` gives it (one of git's six).
static inline git_filemode_t cohort_tree_entry_filemode(const cohort_tree_entry *entry) {
    uint32_t type = entry->mode & 0170000;
    if (type == 0040000) return GIT_FILEMODE_TREE;
    if (entry->mode & 0100) return GIT_FILEMODE_BLOB_EXECUTABLE;
    if (type == 0160000) return GIT_FILEMODE_COMMIT;
    if (type == 0120000) return GIT_FILEMODE_LINK;
    return GIT_FILEMODE_BLOB;
}

/// One place where two trees differ: the entry's index in the old tree and in the new one, -1 where
/// that tree has no entry of the name.
typedef struct {
    int64_t old_index;
    int64_t new_index;
} cohort_tree_pair;

/// Walks trees `old` and `new` (either may be NULL: empty) side by side in git's order and writes each
/// place they differ into `pairs`: an entry in one tree only, or in both with another id or mode.
/// Returns how many there are; only the first `capacity` are written (the sum of both trees' entry
/// counts is always enough).
size_t cohort_tree_differences(const cohort_tree *old, const cohort_tree *new, cohort_tree_pair *pairs, size_t capacity);

/// The index of the first entry of `tree` that does not come strictly after the one before it in
/// git's order (names compared bytewise, a folder's as if it ended in '/'), or that names a file
/// before it again as a folder; -1 when every entry is in order and named once. git's fsck refuses
/// such trees (`treeNotSorted`, `duplicateEntries`), and libgit2 reads them without complaint.
int64_t cohort_tree_misordered_entry(const cohort_tree *tree);

#endif
