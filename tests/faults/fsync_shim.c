/*
 * fsync_shim.c: an LD_PRELOAD library that makes fsync-family calls fail with EIO on command.
 *
 * What it is: wrappers around fsync, fdatasync, sync_file_range and syncfs (the calls through
 * which a process asks for durability on Linux; `quince` uses only fsync and fdatasync, through
 * glibc, which is what makes interposition work). Each call resolves its descriptor's path
 * through /proc/self/fd, logs one line, and either calls the real function or fails with EIO
 * without calling it (so the kernel never wrote the data the call was to cover: the "unknown
 * state" of docs/safety.md's fault model).
 *
 * What it is not: a model of page-cache loss. The data stays in the page cache, so a restart of
 * the process (not of the machine) reads it back; the tests check acknowledgements, not power
 * loss (tests/powercut does that).
 *
 * Control, read on every call:
 *   QUINCE_FSYNC_TRIGGER  a path. While no file exists there, every call passes through. While
 *                         one exists, the shim is armed and its contents configure it: tokens
 *                         separated by white space,
 *                           match=SUBSTR   only calls on paths containing SUBSTR count (default:
 *                                          every path)
 *                           fn=NAME        only calls of NAME count: fsync, fdatasync,
 *                                          sync_file_range, syncfs (default: all of them)
 *                           thread=SUBSTR  only calls from threads whose name (prctl
 *                                          PR_GET_NAME, at most 15 bytes) contains SUBSTR count
 *                           after=N        the first N counting calls still pass (default 0)
 *                           mode=sticky    every later counting call fails (default)
 *                           mode=once      only the first one fails, later ones pass again: what
 *                                          Linux does (a failed writeback is reported once), so
 *                                          a caller that retries would be told "success"
 *                         The counters restart whenever the trigger file is absent, so removing
 *                         and re-creating it re-arms.
 *   QUINCE_FSYNC_LOG      a path (optional): one line per call, appended with one write(2):
 *                           <call> fd=<fd> path=<path> thread=<name> armed=<0|1> result=<ok|EIO|errno N>
 *
 * Invariants: thread-safe (atomics for the counters, one write per log line, no locks); a
 * failing call returns -1 with errno EIO and calls nothing below; a passing call returns exactly
 * what the real function returned, with its errno.
 *
 * Build: gcc -shared -fPIC -O2 -o libfsyncfail.so fsync_shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#define PATH_CAP 4096
#define CONFIG_CAP 4096

static long armed_calls;  /* counting calls seen since the trigger file appeared */
static int failed_once;   /* for mode=once: whether the one failure was handed out */

struct config {
    int armed;
    char match[CONFIG_CAP];
    char fn[64];
    char thread[64];
    long after;
    int once;
};

static void read_config(struct config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    const char *trigger = getenv("QUINCE_FSYNC_TRIGGER");
    if (trigger == NULL || trigger[0] == '\0') {
        return;
    }
    int fd = open(trigger, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        /* Disarmed: the next arming starts from zero. */
        __atomic_store_n(&armed_calls, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&failed_once, 0, __ATOMIC_SEQ_CST);
        return;
    }
    char text[CONFIG_CAP];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n < 0) {
        n = 0;
    }
    text[n] = '\0';
    cfg->armed = 1;
    char *save = NULL;
    for (char *tok = strtok_r(text, " \t\r\n", &save); tok != NULL; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (strncmp(tok, "match=", 6) == 0) {
            snprintf(cfg->match, sizeof cfg->match, "%s", tok + 6);
        } else if (strncmp(tok, "fn=", 3) == 0) {
            snprintf(cfg->fn, sizeof cfg->fn, "%s", tok + 3);
        } else if (strncmp(tok, "thread=", 7) == 0) {
            snprintf(cfg->thread, sizeof cfg->thread, "%s", tok + 7);
        } else if (strncmp(tok, "after=", 6) == 0) {
            cfg->after = strtol(tok + 6, NULL, 10);
        } else if (strcmp(tok, "mode=once") == 0) {
            cfg->once = 1;
        } else if (strcmp(tok, "mode=sticky") == 0) {
            cfg->once = 0;
        }
    }
}

static void fd_path(int fd, char *out, size_t cap) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, cap - 1);
    if (n < 0) {
        snprintf(out, cap, "?");
        return;
    }
    out[n] = '\0';
}

static void thread_name(char *out, size_t cap) {
    char name[17] = {0};
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0) {
        snprintf(out, cap, "?");
        return;
    }
    for (char *c = name; *c != '\0'; c++) {
        if (*c == ' ' || *c == '\n') {
            *c = '_';
        }
    }
    snprintf(out, cap, "%s", name);
}

static void log_call(const char *call, int fd, const char *path, int armed, const char *result) {
    const char *log_path = getenv("QUINCE_FSYNC_LOG");
    if (log_path == NULL || log_path[0] == '\0') {
        return;
    }
    char thread[32];
    thread_name(thread, sizeof thread);
    char line[PATH_CAP + 256];
    int len = snprintf(line, sizeof line, "%s fd=%d path=%s thread=%s armed=%d result=%s\n", call, fd, path, thread,
                       armed, result);
    if (len < 0) {
        return;
    }
    if ((size_t)len >= sizeof line) {
        len = sizeof line - 1;
        line[len - 1] = '\n';
    }
    int saved = errno;
    int log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log_fd >= 0) {
        ssize_t ignored = write(log_fd, line, (size_t)len);
        (void)ignored;
        close(log_fd);
    }
    errno = saved;
}

/* Decides whether this call fails; logs it either way when it fails. */
static int should_fail(const char *call, int fd, char *path, size_t cap, int *armed) {
    int saved = errno;
    struct config cfg;
    read_config(&cfg);
    fd_path(fd, path, cap);
    errno = saved;
    *armed = cfg.armed;
    if (!cfg.armed) {
        return 0;
    }
    if (cfg.fn[0] != '\0' && strcmp(cfg.fn, call) != 0) {
        return 0;
    }
    if (cfg.match[0] != '\0' && strstr(path, cfg.match) == NULL) {
        return 0;
    }
    if (cfg.thread[0] != '\0') {
        char name[32];
        thread_name(name, sizeof name);
        if (strstr(name, cfg.thread) == NULL) {
            return 0;
        }
    }
    long seen = __atomic_add_fetch(&armed_calls, 1, __ATOMIC_SEQ_CST);
    if (seen <= cfg.after) {
        return 0;
    }
    if (cfg.once) {
        int expected = 0;
        return __atomic_compare_exchange_n(&failed_once, &expected, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    return 1;
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        fprintf(stderr, "fsync_shim: dlsym(%s) failed: %s\n", name, dlerror());
        abort();
    }
    return f;
}

static const char *describe(int rc, int err, char *buf, size_t cap) {
    if (rc == 0) {
        return "ok";
    }
    snprintf(buf, cap, "errno %d", err);
    return buf;
}

#define WRAP_RESULT(call, fd, path, armed, rc)                          \
    do {                                                                \
        int err_ = errno;                                               \
        char buf_[32];                                                  \
        log_call(call, fd, path, armed, describe(rc, err_, buf_, sizeof buf_)); \
        errno = err_;                                                   \
    } while (0)

int fsync(int fd) {
    static int (*next)(int);
    if (next == NULL) {
        next = (int (*)(int))real("fsync");
    }
    char path[PATH_CAP];
    int armed;
    if (should_fail("fsync", fd, path, sizeof path, &armed)) {
        log_call("fsync", fd, path, armed, "EIO");
        errno = EIO;
        return -1;
    }
    int rc = next(fd);
    WRAP_RESULT("fsync", fd, path, armed, rc);
    return rc;
}

int fdatasync(int fd) {
    static int (*next)(int);
    if (next == NULL) {
        next = (int (*)(int))real("fdatasync");
    }
    char path[PATH_CAP];
    int armed;
    if (should_fail("fdatasync", fd, path, sizeof path, &armed)) {
        log_call("fdatasync", fd, path, armed, "EIO");
        errno = EIO;
        return -1;
    }
    int rc = next(fd);
    WRAP_RESULT("fdatasync", fd, path, armed, rc);
    return rc;
}

int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned int flags) {
    static int (*next)(int, off64_t, off64_t, unsigned int);
    if (next == NULL) {
        next = (int (*)(int, off64_t, off64_t, unsigned int))real("sync_file_range");
    }
    char path[PATH_CAP];
    int armed;
    if (should_fail("sync_file_range", fd, path, sizeof path, &armed)) {
        log_call("sync_file_range", fd, path, armed, "EIO");
        errno = EIO;
        return -1;
    }
    int rc = next(fd, offset, nbytes, flags);
    WRAP_RESULT("sync_file_range", fd, path, armed, rc);
    return rc;
}

int syncfs(int fd) {
    static int (*next)(int);
    if (next == NULL) {
        next = (int (*)(int))real("syncfs");
    }
    char path[PATH_CAP];
    int armed;
    if (should_fail("syncfs", fd, path, sizeof path, &armed)) {
        log_call("syncfs", fd, path, armed, "EIO");
        errno = EIO;
        return -1;
    }
    int rc = next(fd);
    WRAP_RESULT("syncfs", fd, path, armed, rc);
    return rc;
}
