/* checkpoint: what one checkpoint of the training state costs on this machine (measure's
 * `checkpoint` object, rank's measured checkpoint cost delta).
 *
 * The state a real training job saves: the fp32 master weights and Adam's two fp32 moments
 * (12 bytes per parameter) plus the bf16 working copy where the precision has one (2 bytes), each
 * block fetched from the backend (get_state: the device-to-host copy on a GPU) and written to one
 * file in the chosen directory, then fsync'd: write_s runs from the first fetch to the end of
 * fsync.  Then the file's cached pages are dropped (posix_fadvise DONTNEED after fsync, when the
 * pages are clean: best effort, the kernel may keep them, and tmpfs has no disk to read from) and
 * the file is read back whole: read_s.  Then it is removed.
 *
 * It never fills a disk and never leaves a file behind: the free space is checked first (statvfs,
 * the state plus a margin), a failed or interrupted write removes the file, the stop flag
 * (SIGINT/SIGTERM) is looked at between chunks, and a second signal's handler removes the
 * pending file before the process dies (checkpoint_remove_pending, async-signal-safe).  Only a
 * SIGKILL can leave it: its name starts with ".instbench-checkpoint-" and the pid. */
#define _GNU_SOURCE
#include "instbench/bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum { CHUNK = 16 << 20 };                     /* bytes per write()/read(): the stop flag is looked at between chunks */
static const double MARGIN_SHARE = 0.10;       /* free space kept beyond the state: 10% of it ... */
static const uint64_t MARGIN_MIN = 1ull << 30; /* ... and at least 1 GiB */

/* The file being written, for checkpoint_remove_pending from a signal handler ("" when none). */
static char g_pending[4096];
static volatile sig_atomic_t g_have_pending;

void checkpoint_remove_pending(void)
{
    if (g_have_pending) unlink(g_pending); /* async-signal-safe */
}

uint64_t checkpoint_state_bytes(uint64_t params, ib_precision precision)
{
    return params * (12u + (precision == IB_PREC_BF16 ? 2u : 0u));
}

/* statfs f_type magic numbers (linux/magic.h) for the file systems a training job writes to. */
static const struct {
    unsigned long magic;
    const char *name;
} fs_names[] = {
    {0xEF53, "ext4"}, /* ext2, ext3 and ext4 share the magic; ext4 is what they are today */
    {0x58465342, "xfs"},       {0x9123683E, "btrfs"},    {0x01021994, "tmpfs"}, {0x858458F6, "ramfs"},
    {0x6969, "nfs"},        /* Amazon EFS mounts as NFS 4 */
    {0x0BD00BD0, "lustre"}, /* FSx for Lustre */
    {0x794C7630, "overlayfs"}, {0x65735546, "fuse"},     {0x2FC12FC1, "zfs"},   {0x00C36400, "ceph"},
    {0xFF534D42, "cifs"},      {0xFE534D42, "smb2"},     {0x4D44, "vfat"},      {0x2011BAB0, "exfat"},
    {0xF2F52010, "f2fs"},      {0x73717368, "squashfs"}, {0x47504653, "gpfs"},  {0x5346414F, "afs"},
};

void checkpoint_fs_name(const char *dir, char *out, size_t n)
{
    struct statfs st;
    if (statfs(dir, &st) != 0) {
        snprintf(out, n, "unknown");
        return;
    }
    unsigned long t = (unsigned long)st.f_type & 0xFFFFFFFFul;
    for (size_t i = 0; i < sizeof fs_names / sizeof fs_names[0]; i++)
        if (fs_names[i].magic == t) {
            snprintf(out, n, "%s", fs_names[i].name);
            return;
        }
    snprintf(out, n, "0x%lx", t); /* a file system this list lacks: its magic, as statfs gives it */
}

int checkpoint_check_dir(const char *dir, ib_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) return ib_error_set(err, IB_EXIT_USAGE, "--checkpoint-dir %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ib_error_set(err, IB_EXIT_USAGE, "--checkpoint-dir %s is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "--checkpoint-dir %s is not writable: %s", dir, strerror(errno));
    return 0;
}

/* Test hook (tests/measure/measure_cli_checkpoint.py): INSTBENCH_TEST_CHECKPOINT_PAUSE=S holds
 * the checkpoint for up to S seconds once the file is written and synced, before the read-back,
 * so a test can look at the file and interrupt the run inside the checkpoint.  Not for users. */
static void test_pause(volatile sig_atomic_t *stop)
{
    const char *s = getenv("INSTBENCH_TEST_CHECKPOINT_PAUSE");
    double left = s ? atof(s) : 0;
    for (; left > 0 && !(stop && *stop); left -= 0.01) nanosleep(&(struct timespec){0, 10000000}, NULL);
}

static int write_all(int fd, const char *p, size_t n, volatile sig_atomic_t *stop, ib_error *err)
{
    while (n > 0) {
        if (stop && *stop) return 1;
        ssize_t w = write(fd, p, n < CHUNK ? n : CHUNK);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return ib_error_set(err, IB_EXIT_RUNTIME, "write: %s", w < 0 ? strerror(errno) : "no progress");
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* Fetches every block of the run's state through BUF (P floats) and appends it to FD. */
static int write_state(ib_backend *b, int fd, float *buf, volatile sig_atomic_t *stop, uint64_t *written, ib_error *err)
{
    const ib_state_block blocks[] = {IB_STATE_PARAMS, IB_STATE_ADAM_M, IB_STATE_ADAM_V, IB_STATE_WEIGHTS_BF16};
    const size_t P = b->layout.total;
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        if (blocks[i] == IB_STATE_WEIGHTS_BF16 && b->cfg.precision != IB_PREC_BF16) continue;
        if (b->ops->get_state(b, blocks[i], buf, err)) return -1;
        size_t n = P * (blocks[i] == IB_STATE_WEIGHTS_BF16 ? 2 : 4);
        int rc = write_all(fd, (const char *)buf, n, stop, err);
        if (rc) return rc;
        *written += n;
    }
    return 0;
}

/* Reads the file back whole through BUF (CHUNK bytes at a time, into the first bytes of BUF). */
static int read_back(const char *path, char *buf, size_t buf_len, volatile sig_atomic_t *stop, ib_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "reopening it: %s", strerror(errno));
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    const size_t step = buf_len < CHUNK ? buf_len : CHUNK;
    int rc = 0;
    for (;;) {
        if (stop && *stop) {
            rc = 1;
            break;
        }
        ssize_t r = read(fd, buf, step);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "reading it back: %s", strerror(errno));
        if (r <= 0) break;
    }
    close(fd);
    return rc;
}

int checkpoint_measure(ib_backend *b, const char *dir, volatile sig_atomic_t *stop, bench_checkpoint *out,
                       ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (!b->ops->get_state)
        return ib_error_set(err, IB_EXIT_RUNTIME, "backend '%s' cannot hand over its optimizer state", b->ops->name);
    const uint64_t bytes = checkpoint_state_bytes(b->layout.total, b->cfg.precision);
    struct statvfs vs;
    if (statvfs(dir, &vs) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", dir, strerror(errno));
    const uint64_t free_bytes = (uint64_t)vs.f_bavail * vs.f_frsize;
    uint64_t margin = (uint64_t)(bytes * MARGIN_SHARE);
    if (margin < MARGIN_MIN) margin = MARGIN_MIN;
    if (free_bytes < bytes + margin)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "%s has %.2f GiB free; the state (%.2f GiB) would not fit with a %.2f GiB margin", dir,
                            free_bytes / 1073741824.0, bytes / 1073741824.0, margin / 1073741824.0);
    float *buf = malloc(b->layout.total * sizeof(float));
    if (!buf) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory for a %zu-float buffer", b->layout.total);

    unsigned rnd = (unsigned)(util_now_seconds() * 1e6) ^ (unsigned)getpid() * 2654435761u;
    if ((size_t)snprintf(g_pending, sizeof g_pending, "%s/.instbench-checkpoint-%ld-%08x.bin", dir, (long)getpid(),
                         rnd) >= sizeof g_pending) {
        free(buf);
        return ib_error_set(err, IB_EXIT_RUNTIME, "the directory's name is too long");
    }
    g_have_pending = 1; /* before the file exists: a signal right after open() still removes it */
    int fd = open(g_pending, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        g_have_pending = 0;
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", g_pending, strerror(errno));
        free(buf);
        return -1;
    }
    uint64_t written = 0;
    double t0 = util_now_seconds();
    int rc = write_state(b, fd, buf, stop, &written, err);
    if (rc == 0 && fsync(fd) != 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "fsync: %s", strerror(errno));
    double t1 = util_now_seconds();
    /* the pages are clean once fsync returned: ask the kernel to drop them, so the read-back
     * comes from the file system rather than memory (best effort) */
    if (rc == 0) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (close(fd) != 0 && rc == 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "close: %s", strerror(errno));
    if (rc == 0) test_pause(stop);
    double t2 = util_now_seconds(), t3 = t2;
    if (rc == 0 && !(stop && *stop)) {
        rc = read_back(g_pending, (char *)buf, b->layout.total * sizeof(float), stop, err);
        t3 = util_now_seconds();
    }
    if (rc == 0 && stop && *stop) rc = 1;
    g_have_pending = 0;
    if (unlink(g_pending) != 0 && rc == 0) ib_warn("checkpoint: could not remove %s: %s", g_pending, strerror(errno));
    free(buf);
    if (rc) return rc > 0 ? 1 : -1;
    out->measured = 1;
    out->bytes = written;
    out->write_s = t1 - t0;
    out->read_s = t3 - t2;
    checkpoint_fs_name(dir, out->dir_fs, sizeof out->dir_fs);
    return 0;
}
