/* sweep/lock: the state file's lock (sweep_state_lock, instbench/sweep.h) and who holds it.
 *
 * The lock is flock(2) on <ID>.lock; its taker writes "WHO PID" into the file just after taking
 * it.  So for a moment after each take (and for good when the taker cannot write: a read-only
 * state directory) the file is empty or still names an earlier holder, and a reader that took it
 * at its word could take a cleanup for the run or the run for a cleanup.  A name read here counts
 * only once the process it names is alive and has the lock file open (no earlier holder has: the
 * lock goes when its descriptor is closed); until then the file is read again, for as long as the
 * lock stays held, up to a short bound, and a holder that never names itself is "unknown". */
#include "instbench/sweep.h"
#include "sweep/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "instbench/util.h"

/* How long a held lock's file may go without naming its holder: the taker writes its name
 * microseconds after its flock, so this is only for a taker the scheduler set aside. */
#define HOLDER_NAME_WAIT_S 2.0

/* ID's lock file's name, "<ID>.lock", for its path and for the name looked for among a process's
 * open files. */
static void lock_name(const char *id, char *out, size_t len) { snprintf(out, len, "%s.lock", id); }

static int lock_path(const char *id, char *out, size_t len, ib_error *err)
{
    char dir[1024], name[96];
    if (!sweep_id_valid(id))
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' is not a sweep id (like 20261125-213005-9f3a)", id);
    if (sweep_state_dir(dir, sizeof dir, err) != 0) return -1;
    lock_name(id, name, sizeof name);
    int n = snprintf(out, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) return ib_error_set(err, IB_EXIT_RUNTIME, "sweep: the lock file's path is too long");
    return 0;
}

int sweep_lock_open_by(long pid, const char *id, const struct stat *file, int *denied)
{
    char dir[64], path[384], link[4096], name[96];
    lock_name(id, name, sizeof name);
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    *denied = !d && (errno == EACCES || errno == EPERM);
    if (!d) return 0;
    struct dirent *e;
    struct stat sb;
    int found = 0;
    size_t nlen = strlen(name);
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1); /* the kernel's name: the file system is not asked */
        if (n <= (ssize_t)nlen || link[n - (ssize_t)nlen - 1] != '/' || memcmp(link + n - nlen, name, nlen)) continue;
        found = stat(path, &sb) == 0 && sb.st_dev == file->st_dev && sb.st_ino == file->st_ino;
    }
    closedir(d);
    return found;
}

/* What the holder wrote into the lock file ("sweep run 1234"): the name into WHO ("sweep run"), the
 * pid returned (0: none); only the letters, spaces and digits of its first line (the file is ours,
 * but read as any file is). */
static long holder_fields(int fd, char *who, size_t len)
{
    char buf[96] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    long pid = 0;
    size_t k = 0;
    for (ssize_t i = 0; i < (n > 0 ? n : 0) && buf[i] != '\n'; i++) {
        char ch = buf[i];
        if (ch >= '0' && ch <= '9') pid = pid < 100000000 ? pid * 10 + (ch - '0') : pid;
        else if (((ch >= 'a' && ch <= 'z') || ch == ' ' || ch == '-') && !pid && k + 1 < len) who[k++] = ch;
    }
    while (k && who[k - 1] == ' ') k--;
    if (len) who[k] = '\0';
    return pid;
}

/* Whether PID is a live process with ID's lock file (FILE) open: a process another user's, whose
 * open files cannot be read, is taken at its word. */
static int named_holds(long pid, const char *id, const struct stat *file)
{
    int denied = 0;
    /* Not this process: it may have held the lock before and still have the file open. */
    if (pid <= 0 || pid == (long)getpid() || (kill((pid_t)pid, 0) != 0 && errno != EPERM)) return 0;
    return sweep_lock_open_by(pid, id, file, &denied) || denied;
}

/* Whether the lock on F's file is still held by another (a shared lock cannot be had). */
static int still_held(int f)
{
    if (flock(f, LOCK_SH | LOCK_NB) != 0) return errno == EWOULDBLOCK || errno == EINTR;
    flock(f, LOCK_UN);
    return 0;
}

/* Read once: a command may look at many held locks, and a bad value is worth one warning. */
static double holder_wait_s(void)
{
    static double s = -1;
    if (s < 0) s = sweep_env_seconds("INSTBENCH_SWEEP_HOLDER_WAIT_S", HOLDER_NAME_WAIT_S);
    return s;
}

/* The held lock's holder as its file (F, ID's lock file) names it, once that name is the holder's
 * (above): WHO and the pid returned.  1 when it is; 0 when it never was while the lock was held
 * (WHO and the pid: what the file says, perhaps nothing, perhaps an earlier holder). */
static int holder_of(int f, const char *id, char *who, size_t len, long *pid)
{
    struct stat file;
    double end = util_now_seconds() + holder_wait_s();
    if (fstat(f, &file) != 0) return *pid = holder_fields(f, who, len), 0;
    for (;;) {
        *pid = holder_fields(f, who, len);
        if (who[0] && named_holds(*pid, id, &file)) return 1;
        if (util_now_seconds() >= end || !still_held(f)) return 0;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The holder as messages name it: "`instbench sweep run`, pid 1234". */
static void read_holder(int fd, const char *id, char *out, size_t len)
{
    char who[64];
    long pid = 0;
    if (holder_of(fd, id, who, sizeof who, &pid)) snprintf(out, len, "`instbench %s`, pid %ld", who, pid);
    else if (pid > 0)
        snprintf(out, len, "an unnamed process (holder unknown: its lock file names pid %ld, which does not hold it)",
                 pid);
    else snprintf(out, len, "a process that has not named itself in its lock file (holder unknown)");
}

int sweep_state_lock(const char *id, const char *who, double wait_s, int *fd, ib_error *err)
{
    char path[1200], dir[1024];
    *fd = -1;
    if (lock_path(id, path, sizeof path, err) != 0) return -1;
    if (sweep_state_dir(dir, sizeof dir, err) != 0) return -1;
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (f < 0 && errno == ENOENT && util_mkdir_p(dir, err) == 0)
        f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    int writable = f >= 0;
    if (f < 0) f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* a read-only directory: flock still works */
    if (f < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "the sweep's lock file %s: %s", path, strerror(errno));
    double end = util_now_seconds() + (wait_s > 0 ? wait_s : 0);
    for (;;) {
        if (flock(f, LOCK_EX | LOCK_NB) == 0) break;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int e = errno;
            close(f);
            return ib_error_set(err, IB_EXIT_RUNTIME, "the sweep's lock file %s: %s", path, strerror(e));
        }
        if (util_now_seconds() >= end) {
            char holder[160];
            read_holder(f, id, holder, sizeof holder);
            if (flock(f, LOCK_EX | LOCK_NB) == 0) break; /* let go while its name was read */
            close(f);
            ib_error_set(err, IB_EXIT_RUNTIME, "sweep %s is held by %s, which writes its state file", id, holder);
            return 1;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (writable && who) {
        char line[96];
        int n = snprintf(line, sizeof line, "%s %ld\n", who, (long)getpid());
        if (ftruncate(f, 0) == 0) { /* the name is only for messages: a failed write changes nothing */
            ssize_t w = pwrite(f, line, (size_t)n, 0);
            (void)w;
        }
    }
    *fd = f;
    return 0;
}

void sweep_state_unlock(int fd)
{
    if (fd >= 0) close(fd); /* the lock goes with the descriptor; the file stays (removing it would race) */
}

/* ID's lock file opened, when a live process holds its lock (else -1), its identity in *SB; the
 * shared lock taken to look goes when it is closed. */
static int open_held(const char *id, struct stat *sb)
{
    char path[1200];
    ib_error err = {0};
    if (lock_path(id, path, sizeof path, &err) != 0) return -1;
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (f < 0) return -1;
    int held = fstat(f, sb) == 0 && S_ISREG(sb->st_mode) && flock(f, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!held) close(f);
    return held ? f : -1;
}

int sweep_state_locked(const char *id, char *holder, size_t len)
{
    struct stat sb;
    int f = open_held(id, &sb);
    if (f >= 0 && holder) read_holder(f, id, holder, len);
    if (f >= 0) close(f);
    return f >= 0;
}

int sweep_state_lock_holder(const char *id, char *who, size_t len, long *pid, struct stat *file)
{
    int f = open_held(id, file);
    int named = f >= 0 && holder_of(f, id, who, len, pid);
    if (f < 0) *pid = 0;
    if (f < 0 && len) who[0] = '\0';
    if (f >= 0) close(f);
    return f < 0 ? -1 : named ? 0 : 1;
}

int sweep_state_held_by(const char *id, char *who, size_t len, long *pid)
{
    struct stat sb;
    int held = sweep_state_lock_holder(id, who, len, pid, &sb);
    if (held == 1) { /* what the file says is no holder's name */
        *pid = 0;
        if (len) who[0] = '\0';
    }
    return held >= 0;
}
