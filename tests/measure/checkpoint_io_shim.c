/* LD_PRELOAD shim for measure_cli_checkpoint.py: a slow file system and a full disk without root,
 * FUSE or a loop device.  Only measure's checkpoint file is touched (its name contains
 * ".instbench-checkpoint-"), so the result and everything else are written at full speed.
 *   CHECKPOINT_SHIM_WRITE_BPS=N   each write() to the checkpoint file first sleeps bytes / N
 *                                 seconds: a disk that takes N bytes per second
 *   CHECKPOINT_SHIM_FREE_BYTES=N  statvfs() reports N bytes available (f_bavail x f_frsize) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static int is_checkpoint(int fd)
{
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    return strstr(target, ".instbench-checkpoint-") != NULL;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *bps = getenv("CHECKPOINT_SHIM_WRITE_BPS");
    if (bps && is_checkpoint(fd)) {
        double s = (double)count / atof(bps);
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0) {}
    }
    return real(fd, buf, count);
}

static void fake_free(struct statvfs *st)
{
    const char *fb = getenv("CHECKPOINT_SHIM_FREE_BYTES");
    if (fb && st->f_frsize) st->f_bavail = st->f_bfree = strtoull(fb, NULL, 10) / st->f_frsize;
}

int statvfs(const char *path, struct statvfs *st)
{
    static int (*real)(const char *, struct statvfs *);
    if (!real) real = (int (*)(const char *, struct statvfs *))dlsym(RTLD_NEXT, "statvfs");
    int rc = real(path, st);
    if (rc == 0) fake_free(st);
    return rc;
}
