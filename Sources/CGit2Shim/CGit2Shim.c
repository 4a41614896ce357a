#define _GNU_SOURCE
#include <fcntl.h>
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

int cohort_git_set_strict_hash_verification(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, enabled);
}

int cohort_git_set_mwindow_mapped_limit(size_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, bytes);
}

int cohort_git_set_ssl_cert_file(const char *file) {
    return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, NULL);
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
