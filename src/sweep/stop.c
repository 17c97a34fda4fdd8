/* sweep/stop: `sweep cleanup --force` stopping a live `sweep run` (sweep_run_stop, instbench/sweep.h).
 *
 * Ending the run's instances under it is not enough: the run would go on launching the candidates
 * it has not reached.  So the run is asked to stop as Ctrl-C asks it, and takes its own end.  The
 * pid comes from its lock file, which is only a name (a file anyone here can write, and a pid the
 * kernel may have given to another process since), so nothing is signalled unless the process is
 * that run: its command line is `instbench [options] sweep run ...` and it has this sweep's lock
 * file open, which no other `sweep run` has (each sweep has its own ID).  The pidfd is taken
 * before those checks and the signal sent through it: a process that ended in between (its pid
 * free for another) is not the one signalled, the send fails instead.  Without pidfd (Linux before
 * 5.3) sigqueue() after the checks leaves a window of microseconds. */
#include "sweep/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Whether /proc/PID/cmdline is `instbench [instbench's own options] sweep run ...`, read as
 * src/main.c and cmd_sweep.c read their argv (options before the command, the subcommand's name
 * in any case).  SEEN gets the start of the command line, for the message. */
static int is_sweep_run(long pid, char *seen, size_t len)
{
    char buf[4096];
    long n = util_proc_read(pid, "cmdline", buf, sizeof buf);
    snprintf(seen, len, "%s", n > 0 ? "" : "no command line");
    if (n <= 0) return 0;
    const char *end = buf + n, *a = util_cmdline_command(buf, (size_t)n);
    const char *sub = a ? a + strlen(a) + 1 : end;
    int yes = sub < end && !strcasecmp(a, "sweep") && !strcasecmp(sub, "run");
    for (long i = 0; i < n - 1; i++)
        if (!buf[i]) buf[i] = ' '; /* the arguments as a shell would show them, for the message */
    snprintf(seen, len, "%.60s%s", buf, strlen(buf) > 60 ? "..." : "");
    return yes;
}

static int pidfd_of(long pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* SIGINT with SWEEP_STOP_BY_CLEANUP as its value (SI_QUEUE, as sigqueue sends it), through PIDFD
 * when there is one. */
static int send_stop(int pidfd, long pid)
{
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGINT;
        si.si_code = SI_QUEUE;
        si.si_pid = getpid();
        si.si_uid = getuid();
        si.si_value.sival_int = SWEEP_STOP_BY_CLEANUP;
        return (int)syscall(SYS_pidfd_send_signal, pidfd, SIGINT, &si, 0);
    }
#endif
    return sigqueue((pid_t)pid, SIGINT, (union sigval){.sival_int = SWEEP_STOP_BY_CLEANUP});
}

int sweep_run_stop(const char *id, long *pid, ib_error *err)
{
    char who[64], seen[80];
    struct stat file;
    int named = sweep_state_lock_holder(id, who, sizeof who, pid, &file);
    if (named < 0) {
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "sweep %s: its lock is no longer held, or its lock file cannot be read: not "
                     "signalled",
                     id);
        return 1;
    }
    if (named == 1 && (!who[0] || *pid <= 0)) {
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "sweep %s is held by a process that has not named itself in its lock file (holder unknown: "
                     "a read-only state directory?): not signalled",
                     id);
        return 1;
    }
    /* *pid > 0 from here: a named holder is a live process (lock.c), one not named without a pid
       was refused above */
    if (strcmp(who, "sweep run")) {
        if (named == 1)
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "sweep %s: its lock file names `instbench %s` (pid %ld), which does not hold it (holder "
                         "unknown: a read-only state directory?): not signalled",
                         id, who, *pid);
        else
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "sweep %s is held by `instbench %s`, not by its `sweep run`: not signalled", id, who);
        return 1;
    }
    int pidfd = pidfd_of(*pid);
    if (pidfd < 0 && errno == ESRCH) {
        ib_error_set(err, IB_EXIT_RUNTIME, "sweep %s: its lock file names pid %ld, which is no process: not signalled",
                     id, *pid);
        return 1;
    }
    int denied = 0, rc = 1;
    if (!is_sweep_run(*pid, seen, sizeof seen))
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "sweep %s: its lock file names pid %ld, which is not an `instbench sweep run` (%s): not "
                     "signalled",
                     id, *pid, seen);
    else if (!sweep_lock_open_by(*pid, id, &file, &denied))
        ib_error_set(err, IB_EXIT_RUNTIME, "sweep %s: its lock file names pid %ld (%s), which %s: not signalled", id,
                     *pid, seen,
                     denied ? "is another user's (its open files cannot be read)"
                            : "does not have the sweep's lock file open, so it is not this sweep's run");
    else if (send_stop(pidfd, *pid) != 0)
        ib_error_set(err, IB_EXIT_RUNTIME, "sweep %s: `instbench sweep run`, pid %ld, cannot be signalled: %s", id,
                     *pid, errno == ESRCH ? "it has ended" : strerror(errno));
    else rc = 0;
    if (pidfd >= 0) close(pidfd);
    return rc;
}
