/* util/safewrite: every file instbench writes goes through here (results, --append, prices -o,
 * the price cache, rank --plot, safetensors).  See include/instbench/util.h for the rules:
 *  - a regular file (or an absent one) is replaced atomically: a temporary with a random name in
 *    the same directory, created O_EXCL|O_NOFOLLOW mode 0600, written in full, fsync'd, given the
 *    mode a new file gets (0666 & ~umask), renamed over the target, then the directory fsync'd;
 *  - a device, FIFO or socket is written through (open + write), every error reported;
 *  - a directory is refused;
 *  - "new" files are linked into place without ever replacing an existing one;
 *  - appends are one write(2) on an O_APPEND|O_NOFOLLOW descriptor. */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE */
#include "instbench/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void util_random_hex(char *out, size_t nchars)
{
    static const char hx[] = "0123456789abcdef";
    unsigned char b[64];
    size_t nb = (nchars + 1) / 2;
    if (nb > sizeof b) nb = sizeof b, nchars = 2 * sizeof b;
    ssize_t got = getrandom(b, nb, GRND_NONBLOCK);
    if (got != (ssize_t)nb) {
        /* no entropy yet (early boot): time and pid still separate concurrent runs */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^
                               (unsigned long long)getpid() << 32 ^ (unsigned long long)ts.tv_sec;
        for (size_t i = 0; i < nb; i++) {
            x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 29;
            b[i] = (unsigned char)x;
        }
    }
    for (size_t i = 0; i < nchars; i++) out[i] = hx[(b[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    out[nchars] = '\0';
}

/* write(2) until everything is out: EINTR retried, short writes continued. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len > (size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The mode open(..., 0666) would give a new file: 0666 & ~umask.  /proc/self/status says the
 * umask without umask(2)'s set-and-restore, which races with other threads creating files. */
static mode_t new_file_mode(void)
{
    mode_t mask = (mode_t)-1;
    FILE *f = fopen("/proc/self/status", "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "Umask:", 6)) {
                mask = (mode_t)strtoul(line + 6, NULL, 8);
                break;
            }
        fclose(f);
    }
    if (mask == (mode_t)-1) {
        mask = umask(022);
        umask(mask);
    }
    return 0666 & ~mask;
}

/* Opens an existing PATH for writing without waiting: a FIFO with no reader fails at once (ENXIO)
 * instead of blocking while the caller holds SIGINT/SIGTERM; the descriptor then blocks again. */
static int open_nowait(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags | O_NONBLOCK, mode);
    if (fd < 0) return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

static int open_error(const char *verb, const char *path, int e, ib_error *err)
{
    struct stat st;
    if (e == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot %s %s: it is a FIFO and nothing is reading it", verb, path);
    if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        return ib_error_set(err, IB_EXIT_USAGE, "cannot %s %s: it is a socket", verb, path);
    return ib_error_set(err, IB_EXIT_RUNTIME, "cannot %s %s: %s", verb, path, strerror(e));
}

/* DIR and BASE of PATH: "a/b/c.json" -> "a/b", "c.json"; "c.json" -> ".", "c.json"; "/c" -> "/", "c". */
static int split_path(const char *path, char *dir, size_t dlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dlen, ".");
        *base = path;
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= dlen) return -1;
        memcpy(dir, path, n);
        dir[n] = '\0';
        *base = slash + 1;
    }
    return **base ? 0 : -1;
}

/* Creates DIR/.BASE.<random>.tmp exclusively (never through a link), mode 0600; returns the fd. */
static int temp_create(const char *dir, const char *base, char *tmp, size_t tlen, ib_error *err)
{
    for (int attempt = 0; attempt < 64; attempt++) {
        char rnd[17];
        util_random_hex(rnd, 16);
        int w = snprintf(tmp, tlen, "%s/.%.200s.%s.tmp", dir, base, rnd);
        if (w < 0 || (size_t)w >= tlen) return ib_error_set(err, IB_EXIT_RUNTIME, "path too long: %s/%s", dir, base);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd >= 0) return fd;
        if (errno != EEXIST && errno != EINTR)
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot create a file in %s: %s", dir, strerror(errno));
    }
    return ib_error_set(err, IB_EXIT_RUNTIME, "cannot create a temporary file in %s: every name taken", dir);
}

/* The temporary fully written (and flushed to disk when DURABLE), with its final mode; removed on
 * failure. */
static int temp_write(const char *dir, const char *base, const char *shown, const void *data, size_t len, int durable,
                      char *tmp, size_t tlen, ib_error *err)
{
    int fd = temp_create(dir, base, tmp, tlen, err);
    if (fd < 0) return -1;
    int ok = write_all(fd, data, len) == 0 && (!durable || fsync(fd) == 0) && fchmod(fd, new_file_mode()) == 0;
    int e = errno;
    if (close(fd) != 0 && ok) ok = 0, e = errno;
    if (!ok) {
        unlink(tmp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", shown, strerror(e));
    }
    return 0;
}

/* After a rename or link: the directory entry itself reaches the disk. */
static int fsync_dir(const char *dir, ib_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0; /* a directory we may write but not read: the entry is there all the same */
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL && e != ENOTSUP && e != EROFS)
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot flush directory %s: %s", dir, strerror(e));
    return 0;
}

static int make_parent(const char *path, ib_error *err)
{
    char dir[PATH_MAX];
    const char *base;
    if (split_path(path, dir, sizeof dir, &base) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' does not name a file", path);
    return util_mkdir_p(dir, err);
}

/* A device, FIFO or socket: opened and written as it is, never replaced by a regular file. */
static int write_through(const char *path, const void *data, size_t len, ib_error *err)
{
    int fd = open_nowait(path, O_WRONLY | O_NOCTTY | O_CLOEXEC, 0);
    if (fd < 0) return open_error("write", path, errno, err);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        /* replaced by a regular file between stat and open: that one gets the atomic treatment */
        close(fd);
        return 1;
    }
    int ok = write_all(fd, data, len) == 0;
    int e = errno;
    if (close(fd) != 0 && ok) ok = 0, e = errno;
    if (!ok) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", path, strerror(e));
    return 0;
}

static int replace_atomically(const char *target, const char *shown, const void *data, size_t len, int durable,
                              ib_error *err)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 256];
    const char *base;
    if (split_path(target, dir, sizeof dir, &base) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' does not name a file", shown);
    if (temp_write(dir, base, shown, data, len, durable, tmp, sizeof tmp, err) != 0) return -1;
    if (rename(tmp, target) != 0) {
        int e = errno;
        unlink(tmp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", shown, strerror(e));
    }
    return durable ? fsync_dir(dir, err) : 0;
}

static int write_atomic(const char *path, const void *data, size_t len, int durable, ib_error *err)
{
    if (!path || !path[0]) return ib_error_set(err, IB_EXIT_USAGE, "no file name given");
    for (int tries = 0; tries < 3; tries++) {
        struct stat st;
        if (stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return ib_error_set(err, IB_EXIT_USAGE, "%s is a directory: name a file to write", path);
            if (!S_ISREG(st.st_mode)) {
                int r = write_through(path, data, len, err);
                if (r <= 0) return r;
                continue; /* it became a regular file: look again */
            }
            /* A symbolic link to a regular file: the file is replaced and the link stays. */
            struct stat lst;
            if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
                char real[PATH_MAX];
                if (!realpath(path, real))
                    return ib_error_set(err, IB_EXIT_RUNTIME, "cannot resolve %s: %s", path, strerror(errno));
                return replace_atomically(real, path, data, len, durable, err);
            }
        } else if (errno != ENOENT) {
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
        } else if (make_parent(path, err) != 0) {
            return -1;
        }
        /* absent (a dangling link included: the link itself is replaced) or a regular file */
        return replace_atomically(path, path, data, len, durable, err);
    }
    return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: it keeps changing type", path);
}

int util_write_file_atomic(const char *path, const void *data, size_t len, ib_error *err)
{
    return write_atomic(path, data, len, 1, err);
}

int util_write_file_replaceable(const char *path, const void *data, size_t len, ib_error *err)
{
    return write_atomic(path, data, len, 0, err);
}

int util_write_file_new(const char *path, const void *data, size_t len, ib_error *err)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 256];
    const char *base;
    if (!path || split_path(path, dir, sizeof dir, &base) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' does not name a file", path ? path : "");
    if (util_mkdir_p(dir, err) != 0) return -1;
    if (temp_write(dir, base, path, data, len, 1, tmp, sizeof tmp, err) != 0) return -1;
    /* link(2) fails with EEXIST rather than replace; a file system without hard links gets
     * renameat2(RENAME_NOREPLACE), which says the same. */
    int rc = link(tmp, path);
    int e = errno;
    if (rc != 0 && e != EEXIST) {
        rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
        if (rc == 0) return fsync_dir(dir, err);
        if (errno != EINVAL && errno != ENOSYS) e = errno; /* else link's reason is the better one */
    }
    unlink(tmp);
    if (rc == 0) return fsync_dir(dir, err);
    if (e == EEXIST) {
        ib_error_set(err, IB_EXIT_RUNTIME, "%s already exists", path);
        return 1;
    }
    return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", path, strerror(e));
}

/* PATH's directory resolved (symbolic links and "..") and its last name: one spelling per file
 * whether or not it exists yet; PATH as given when its directory does not exist. */
static void canonical(const char *path, char *out, size_t len)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? (slash == path ? "/" : path) : ".");
    char *real = realpath(dir, NULL);
    if (real) snprintf(out, len, "%s/%s", real, base);
    else snprintf(out, len, "%s", path);
    free(real);
}

int util_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[8192], cb[8192];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    return !strcmp(ca, cb);
}

int util_append_file(const char *path, const void *data, size_t len, ib_error *err)
{
    if (!path || !path[0]) return ib_error_set(err, IB_EXIT_USAGE, "no file name given");
    if (make_parent(path, err) != 0) return -1;
    /* read too, for the last byte (below), on a regular file only: a FIFO opened for reading and
     * writing never says that nothing reads it.  One we may only write is appended to as it is. */
    const int flags = O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int fd = open_nowait(path, O_RDWR | flags, 0666);
    struct stat st0;
    if (fd >= 0 && (fstat(fd, &st0) != 0 || !S_ISREG(st0.st_mode))) close(fd), fd = -1, errno = EACCES;
    if (fd < 0 && errno == EACCES) fd = open_nowait(path, O_WRONLY | flags, 0666);
    if (fd < 0) {
        if (errno == ELOOP)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s is a symbolic link: appends never follow links; name the "
                                "file itself",
                                path);
        if (errno == EISDIR) return ib_error_set(err, IB_EXIT_USAGE, "%s is a directory: name a file", path);
        return open_error("append to", path, errno, err);
    }
    /* A line appended to a file whose last line has no newline (written by hand, or by a tool
     * that leaves it off) would be glued onto it, and both lines lost to a JSON Lines reader:
     * then the newline goes first, in the same write. */
    char *joined = NULL;
    struct stat st;
    if (len && ((const char *)data)[len - 1] == '\n' && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        char last = '\n';
        if (pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n' && (joined = malloc(len + 1))) {
            joined[0] = '\n';
            memcpy(joined + 1, data, len);
            data = joined, len++;
        }
    }
    /* One write on an O_APPEND descriptor: lines of runs appending together never interleave.
     * EINTR before anything is written is retried; a short write is an error (the disk is full),
     * not continued, since another writer's line may already follow it. */
    ssize_t w;
    do w = write(fd, data, len);
    while (w < 0 && errno == EINTR);
    int e = w < 0 ? errno : ENOSPC;
    free(joined);
    int ok = w == (ssize_t)len;
    if (ok && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) != 0) ok = 0, e = errno;
    if (close(fd) != 0 && ok) ok = 0, e = errno;
    if (!ok) {
        if (w > 0 && w < (ssize_t)len)
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot append to %s: only %zd of %zu bytes written (%s)", path,
                                w, len, strerror(e));
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot append to %s: %s", path, strerror(e));
    }
    return 0;
}

/* The nearest directory at or above DIR that exists, into OUT ("a/b/c" with only "a" there: "a";
 * "x/y" with no "x": "."); what is there but not a directory is a usage error naming SHOWN. */
static int nearest_existing_dir(const char *dir, char *out, size_t cap, const char *shown, ib_error *err)
{
    if (snprintf(out, cap, "%s", dir) >= (int)cap) return ib_error_set(err, IB_EXIT_USAGE, "path too long: %s", shown);
    for (;;) {
        struct stat st;
        if (stat(out, &st) == 0) {
            if (S_ISDIR(st.st_mode)) return 0;
            return ib_error_set(err, IB_EXIT_USAGE, "cannot write %s: %s is not a directory", shown, out);
        }
        if (errno != ENOENT)
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s: %s", shown, out, strerror(errno));
        char *slash = strrchr(out, '/');
        while (slash && slash > out && slash[-1] == '/') slash--; /* "a//b" */
        if (!strcmp(out, ".") || !strcmp(out, "/")) /* nothing above (the working directory was removed) */
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s is gone", shown, out);
        if (!slash) snprintf(out, cap, ".");
        else slash[slash == out] = '\0'; /* "/x" -> "/" */
    }
}

/* Creating (and removing) a file in DIR is the only sure test: access(2) says yes to root on a
 * read-only mount's directory, and no to nothing that would fail at rename time. */
static int dir_writable(const char *dir, const char *shown, ib_error *err)
{
    char tmp[PATH_MAX + 256];
    int fd = temp_create(dir, "instbench-check", tmp, sizeof tmp, err);
    if (fd < 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err ? err->msg : "");
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", shown, why);
    }
    close(fd);
    unlink(tmp);
    return 0;
}

int util_check_writable(const char *path, int append, ib_error *err)
{
    if (!path || !path[0]) return ib_error_set(err, IB_EXIT_USAGE, "no file name given");
    struct stat st, lst;
    int have = stat(path, &st) == 0;
    int se = errno;
    int is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (append && is_link)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "%s is a symbolic link: appends never follow links; name the file "
                            "itself",
                            path);
    if (have && S_ISDIR(st.st_mode)) return ib_error_set(err, IB_EXIT_USAGE, "%s is a directory: name a file", path);
    if (have && S_ISSOCK(st.st_mode)) return ib_error_set(err, IB_EXIT_USAGE, "%s is a socket: name a file", path);
    if (have && !S_ISREG(st.st_mode)) {
        /* a device or FIFO is written through: opening a FIFO would wait for its reader */
        if (access(path, W_OK) != 0)
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", path, strerror(errno));
        return 0;
    }
    /* ENOTDIR: a file where a directory should be, said by nearest_existing_dir below */
    if (!have && se != ENOENT && se != ENOTDIR)
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write %s: %s", path, strerror(se));
    if (have && append) {
        int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot append to %s: %s", path, strerror(errno));
        close(fd);
        return 0;
    }
    char real[PATH_MAX], dir[PATH_MAX];
    const char *target = path, *base;
    if (have && is_link && realpath(path, real)) target = real;
    if (split_path(target, dir, sizeof dir, &base) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' does not name a file", path);
    /* Missing directories are made by the write itself, not here: a run stopped between this
     * check and its write must leave no empty directory behind.  Creating them needs write
     * permission in the nearest one that exists, so that one is tested. */
    char exists[PATH_MAX];
    if (nearest_existing_dir(dir, exists, sizeof exists, path, err) != 0) return -1;
    return dir_writable(exists, path, err);
}

int util_output_parent_check(const char *path, int create, ib_error *err)
{
    if (!path || !path[0] || !strcmp(path, "-")) return 0;
    char dir[PATH_MAX], exists[PATH_MAX];
    const char *base;
    if (split_path(path, dir, sizeof dir, &base) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' does not name a file", path);
    if (nearest_existing_dir(dir, exists, sizeof exists, path, err) != 0) return -1;
    if (!strcmp(exists, dir)) return 0;
    if (!create)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "cannot write %s: directory %s does not exist (--create-dirs "
                            "creates it)",
                            path, dir);
    return util_mkdir_p(dir, err);
}
