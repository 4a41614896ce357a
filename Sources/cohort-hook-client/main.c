// cohort-hook-client SOCKET VERSION PROGRAM [ARGUMENT ...]
//
// What the installed pre-receive runs when `cohort hook install --resident SOCKET` wrote it: hands the
// push (git's input, the working directory and git's object variables) to the resident verifier at
// SOCKET (`cohort hook serve`), prints its lines and exits with its verdict. A C program, so that a
// push does not pay for starting Swift's runtime and libgit2 twice.
//
// It never accepts a push on its own: when no verifier of this user and VERSION answers (none
// running, another version, too busy, silent for longer than REPLY_SECONDS, cut off before its whole
// reply), or git's environment holds what the verifier is not told (a namespace, a common folder …),
// it runs PROGRAM with its ARGUMENTS on the same input, the hook as it would run without a resident
// verifier.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define INPUT_LIMIT ((size_t)1 << 20)       // PreReceiveHook.maxInputBytes: past it, PROGRAM refuses the push
#define HANDED_LIMIT ((size_t)2 << 20)      // what PROGRAM is handed of a longer input (it reads 1 MiB + 1)
#define TEXT_LIMIT ((uint32_t)4 << 20)      // a reply's lines
#define PATH_LIMIT 4096
#define SEND_SECONDS 10                      // to connect and send (a verifier that stopped accepting)
#define REPLY_SECONDS 900                    // to answer: past the default cohort.maxSeconds (600)

typedef struct {
    char *data;
    size_t size, capacity;
} buffer;

static int append(buffer *b, const void *bytes, size_t size) {
    if (b->size + size > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (capacity < b->size + size) capacity *= 2;
        char *grown = realloc(b->data, capacity);
        if (!grown) return -1;
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, bytes, size);
    b->size += size;
    return 0;
}

static int append_field(buffer *b, const char *bytes, size_t size) {
    unsigned char length[4] = {(unsigned char)(size >> 24), (unsigned char)(size >> 16), (unsigned char)(size >> 8), (unsigned char)size};
    return append(b, length, 4) || append(b, bytes, size);
}

// Reads standard input into `input` up to `limit` bytes: 0 at its end, 1 when there is more, -1 when
// it cannot be read whole (a push whose input was not all read is never verified: some updates
// would go unchecked).
static int read_input(buffer *input, size_t limit) {
    char chunk[65536];
    while (input->size < limit) {
        size_t want = limit - input->size < sizeof chunk ? limit - input->size : sizeof chunk;
        ssize_t got = read(0, chunk, want);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) return 0;
        if (append(input, chunk, (size_t)got) != 0) return -1;
    }
    return 1;
}

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0   // macOS: SO_NOSIGPIPE on the socket instead
#endif

// The user of the process at the other end of `fd`, or -1.
static long long peer_user(int fd) {
#ifdef SO_PEERCRED
    struct ucred peer;
    socklen_t size = sizeof peer;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 ? (long long)peer.uid : -1;
#else
    uid_t user;
    gid_t group;
    return getpeereid(fd, &user, &group) == 0 ? (long long)user : -1;
#endif
}

// A file holding nothing yet, gone from every folder: where the program finds the push's input.
static int anonymous_file(void) {
#ifdef __linux__
    return memfd_create("cohort-pre-receive-input", MFD_CLOEXEC);
#else
    const char *folder = getenv("TMPDIR");
    char path[PATH_LIMIT];
    snprintf(path, sizeof path, "%s/cohort-pre-receive.XXXXXX", folder && *folder ? folder : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0) unlink(path);
    return fd;
#endif
}

static int send_all(int fd, const char *bytes, size_t size) {
    while (size > 0) {
        ssize_t sent = send(fd, bytes, size, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        bytes += sent;
        size -= (size_t)sent;
    }
    return 0;
}

static int receive_all(int fd, void *into, size_t size) {
    char *at = into;
    while (size > 0) {
        ssize_t got = recv(fd, at, size, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        at += got;
        size -= (size_t)got;
    }
    return 0;
}

// One reply field of at most `limit` bytes, NUL-terminated, in a new allocation (NULL on failure).
static char *receive_field(int fd, uint32_t limit, uint32_t *size) {
    unsigned char length[4];
    if (receive_all(fd, length, 4) != 0) return NULL;
    uint32_t count = (uint32_t)length[0] << 24 | (uint32_t)length[1] << 16 | (uint32_t)length[2] << 8 | length[3];
    if (count > limit) return NULL;
    char *field = malloc((size_t)count + 1);
    if (!field) return NULL;
    if (count && receive_all(fd, field, count) != 0) {
        free(field);
        return NULL;
    }
    field[count] = 0;
    *size = count;
    return field;
}

// Asks the verifier at `socket_path`. Returns the exit status (0 accept, 1 refuse) after writing its
// lines, or -1 when the push must be verified elsewhere.
static int ask(const char *socket_path, const char *version, const buffer *input) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path) return -1;
    strcpy(address.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    int status = -1;
    char *magic = NULL, *answer = NULL, *text = NULL;
    // A verifier that stopped accepting or reading (frozen, out of descriptors) is given up on.
    struct timeval limit = {.tv_sec = SEND_SECONDS};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0) goto done;
#ifdef SO_NOSIGPIPE
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) goto done;
    // Only a verifier of this user is asked: any other could answer what it liked.
    if (peer_user(fd) != (long long)geteuid()) {
        fprintf(stderr, "cohort: note: the resident verifier at %s runs as another user; the push is verified here\n", socket_path);
        goto done;
    }
    char directory[PATH_LIMIT];
    if (!getcwd(directory, sizeof directory)) goto done;
    const char *names[] = {"GIT_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "HOME", "XDG_CONFIG_HOME"};
    buffer request = {0};
    int failed = append_field(&request, "cohort-hook-request 1", strlen("cohort-hook-request 1")) ||
                 append_field(&request, version, strlen(version)) || append_field(&request, directory, strlen(directory));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = getenv(names[i]);
        failed = failed || append_field(&request, value ? value : "", value ? strlen(value) : 0);
    }
    failed = failed || append_field(&request, input->data ? input->data : "", input->size);
    failed = failed || send_all(fd, request.data, request.size) != 0;
    free(request.data);
    if (failed) goto done;
    limit.tv_sec = REPLY_SECONDS;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0) goto done;
    uint32_t size;
    if (!(magic = receive_field(fd, 64, &size)) || strcmp(magic, "cohort-hook-reply 1") != 0) goto done;
    if (!(answer = receive_field(fd, 64, &size))) goto done;
    if (!(text = receive_field(fd, TEXT_LIMIT, &size))) goto done;
    if (strcmp(answer, "accept") == 0) status = 0;
    else if (strcmp(answer, "refuse") == 0) status = 1;
    else goto done;  // "elsewhere", or anything else
    for (const char *at = text; size > 0;) {
        ssize_t written = write(2, at, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) break;
        at += written;
        size -= (uint32_t)written;
    }
done:
    free(magic);
    free(answer);
    free(text);
    close(fd);
    return status;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "error: E_USAGE: cohort-hook-client takes SOCKET VERSION PROGRAM [ARGUMENT ...] "
                        "(git's pre-receive runs it; install the hooks with `cohort hook install --resident SOCKET`)\n");
        return 64;
    }
    buffer input = {0};
    int more = read_input(&input, INPUT_LIMIT + 1);
    if (more < 0) {
        fprintf(stderr, "cohort: error: E_IO: cannot read the push's ref updates from git: %s (push again)\n", strerror(errno));
        return 1;
    }
    // Variables that change what libgit2 opens from the hook's environment (a namespace's refs, a
    // common folder, a work tree or index it refuses, how far it searches): the resident verifier is
    // not told them, so a push with any of them set, even empty, is verified by the program.
    const char *unsent[] = {"GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
                            "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"};
    int plain = 1;
    for (size_t i = 0; i < sizeof unsent / sizeof unsent[0]; i++) plain = plain && !getenv(unsent[i]);
    if (plain && more == 0 && input.size <= INPUT_LIMIT) {
        int status = ask(argv[1], argv[2], &input);
        if (status >= 0) return status;
    }
    // Verified elsewhere: PROGRAM gets the same input on its standard input (what is past 2 MiB of
    // a longer one is not needed: it refuses the push once past 1 MiB).
    if (more > 0) read_input(&input, HANDED_LIMIT);
    int fd = anonymous_file();
    if (fd < 0) {
        fprintf(stderr, "cohort: error: E_IO: cannot keep the push's input for the hook: %s (check the system's limits)\n", strerror(errno));
        return 1;
    }
    for (size_t done = 0; done < input.size;) {
        ssize_t written = write(fd, input.data + done, input.size - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            fprintf(stderr, "cohort: error: E_IO: cannot keep the push's input for the hook: %s (check the system's limits)\n", strerror(errno));
            return 1;
        }
        done += (size_t)written;
    }
    if (lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, 0) != 0) {
        fprintf(stderr, "cohort: error: E_IO: cannot hand the push's input to %s: %s (check the system's limits)\n", argv[3], strerror(errno));
        return 1;
    }
    execv(argv[3], argv + 3);
    fprintf(stderr, "cohort: error: E_IO: cannot run %s: %s (install cohort again, then run `cohort hook install` on the repository)\n", argv[3], strerror(errno));
    return 1;
}
