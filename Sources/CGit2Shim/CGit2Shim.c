#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <spawn.h>
#include "CGit2Shim.h"

int cohort_git_set_owner_validation(int enabled) {
    return git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, enabled);
}

int cohort_git_set_strict_object_creation(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, enabled);
}

int cohort_git_set_global_search_path(const char *path) {
    return git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, path);
}

int cohort_git_search_path(git_config_level_t level, git_buf *out) {
    return git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, out);
}

int cohort_git_set_strict_hash_verification(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, enabled);
}

int cohort_git_set_cache_max_size(ssize_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, bytes);
}

int cohort_git_set_mwindow_file_limit(size_t files) {
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_FILE_LIMIT, files);
}

int cohort_git_set_ssl_cert_locations(const char *file, const char *directory) {
    return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, directory);
}

/* libgit2 built with mbedTLS (Debian's) parses the whole system certificate bundle inside
 * git_libgit2_init: about 8 ms, in every process, whether or not it ever opens a connection. These
 * definitions take the place of mbedTLS's for libgit2 (the executable's symbols come first), so that
 * while `deferring` is set the bundle's file or folder is only remembered (the first of each; a folder
 * is never read file by file, since mbedTLS's own folder loader is not called); the chain stays empty,
 * so a TLS connection made before the bundle is loaded fails its certificate check rather than trusting
 * anything. Outside that window they call mbedTLS's own functions. With a libgit2 built on another TLS
 * library nothing calls them, and nothing is deferred. */
static int deferring = 0;
static char *deferred_file = NULL;
static char *deferred_directory = NULL;

static void remember(char **slot, const char *path) {
    if (*slot == NULL && path != NULL) *slot = strdup(path);
}

typedef int (*certificate_loader)(void *, const char *);

static int load_with(const char *name, void *chain, const char *path) {
    certificate_loader load = (certificate_loader)dlsym(RTLD_NEXT, name);
    return load ? load(chain, path) : -0x2900; /* MBEDTLS_ERR_X509_FILE_IO_ERROR */
}

int mbedtls_x509_crt_parse_file(void *chain, const char *path) {
    if (deferring) {
        remember(&deferred_file, path);
        return 0;
    }
    return load_with("mbedtls_x509_crt_parse_file", chain, path);
}

int mbedtls_x509_crt_parse_path(void *chain, const char *path) {
    if (deferring) {
        remember(&deferred_directory, path);
        return 0;
    }
    return load_with("mbedtls_x509_crt_parse_path", chain, path);
}

void cohort_git_defer_certificate_bundle(int enabled) {
    deferring = enabled;
}

const char *cohort_git_deferred_certificate_file(void) {
    return deferred_file;
}

const char *cohort_git_deferred_certificate_directory(void) {
    return deferred_directory;
}

int cohort_git_set_user_agent(const char *agent) {
    return git_libgit2_opts(GIT_OPT_SET_USER_AGENT, agent);
}

int cohort_spawn_chdir_and_close(void *actions, const char *directory) {
#if defined(__linux__)
    int result = posix_spawn_file_actions_addchdir_np(actions, directory);
    if (result != 0) return result;
    return posix_spawn_file_actions_addclosefrom_np(actions, 3);
#else
    /* Elsewhere every descriptor Cohort opens is close-on-exec already. */
    return posix_spawn_file_actions_addchdir_np(actions, directory);
#endif
}

int cohort_pipe_cloexec(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

size_t cohort_tree_differences(const git_tree *old, const git_tree *new, cohort_tree_pair *pairs, size_t capacity) {
    size_t old_count = old ? git_tree_entrycount(old) : 0;
    size_t new_count = new ? git_tree_entrycount(new) : 0;
    size_t i = 0, j = 0, found = 0;
    while (i < old_count || j < new_count) {
        const git_tree_entry *before = i < old_count ? git_tree_entry_byindex(old, i) : NULL;
        const git_tree_entry *after = j < new_count ? git_tree_entry_byindex(new, j) : NULL;
        int order = before == NULL ? 1 : after == NULL ? -1 : git_tree_entry_cmp(before, after);
        cohort_tree_pair pair = {-1, -1};
        if (order == 0) {
            if (memcmp(git_tree_entry_id(before)->id, git_tree_entry_id(after)->id, GIT_OID_RAWSZ) == 0 &&
                git_tree_entry_filemode(before) == git_tree_entry_filemode(after)) {
                i++;
                j++;
                continue;
            }
            pair.old_index = (int64_t)i++;
            pair.new_index = (int64_t)j++;
        } else if (order < 0) {
            pair.old_index = (int64_t)i++;
        } else {
            pair.new_index = (int64_t)j++;
        }
        if (found < capacity) pairs[found] = pair;
        found++;
    }
    return found;
}

/* git's order of two tree entries' names: bytewise, a folder's name as if it ended in '/'. */
static int entry_order(const char *a, size_t a_length, int a_tree, const char *b, size_t b_length, int b_tree) {
    size_t length = a_length < b_length ? a_length : b_length;
    int order = memcmp(a, b, length);
    if (order != 0) return order;
    unsigned char a_next = length < a_length ? (unsigned char)a[length] : (a_tree ? '/' : 0);
    unsigned char b_next = length < b_length ? (unsigned char)b[length] : (b_tree ? '/' : 0);
    return (int)a_next - (int)b_next;
}

static int is_tree(const git_tree_entry *entry) {
    return git_tree_entry_type(entry) == GIT_OBJECT_TREE;
}

/* Whether one of the first `count` entries of `tree`, strictly in order, is a file named `name`. */
static int names_file(const git_tree *tree, size_t count, const char *name, size_t length) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const git_tree_entry *entry = git_tree_entry_byindex(tree, middle);
        const char *other = git_tree_entry_name(entry);
        int order = entry_order(other, strlen(other), is_tree(entry), name, length, 0);
        if (order == 0) return 1;
        if (order < 0) low = middle + 1; else high = middle;
    }
    return 0;
}

int64_t cohort_tree_misordered_entry(const git_tree *tree) {
    size_t count = git_tree_entrycount(tree);
    if (count == 0) return -1;
    const git_tree_entry *first = git_tree_entry_byindex(tree, 0);
    const char *before_name = git_tree_entry_name(first);
    size_t before_length = strlen(before_name);
    int before_tree = is_tree(first);
    for (size_t index = 1; index < count; index++) {
        const git_tree_entry *after = git_tree_entry_byindex(tree, index);
        const char *after_name = git_tree_entry_name(after);
        size_t after_length = strlen(after_name);
        int after_tree = is_tree(after);
        if (entry_order(before_name, before_length, before_tree, after_name, after_length, after_tree) >= 0) return (int64_t)index;
        /* In that order a name comes twice only as a file before a folder, and every entry between
           them starts with the name: the earlier entries are searched only when the last one does. */
        if (after_tree && before_length >= after_length && memcmp(before_name, after_name, after_length) == 0 &&
            names_file(tree, index, after_name, after_length)) return (int64_t)index;
        before_name = after_name;
        before_length = after_length;
        before_tree = after_tree;
    }
    return -1;
}
