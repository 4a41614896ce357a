#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <spawn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/vfs.h>
#endif
#include "CGit2Shim.h"

int cohort_file_system_type(const char *path, unsigned long long *type) {
#ifdef __linux__
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (unsigned long long)(unsigned int)info.f_type;
    return 0;
#else
    (void)path;
    (void)type;
    return -1;
#endif
}

void cohort_malloc_keep_freed(void) {
#ifdef __GLIBC__
    // Setting either bound also stops glibc from moving them as it goes. What stays unreturned is
    // bounded: at most 4 arenas (a push's few threads share them), each keeping at most 16 MiB free.
    mallopt(M_ARENA_MAX, 4);
    mallopt(M_MMAP_THRESHOLD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}

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
