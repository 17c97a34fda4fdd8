/* util_safewrite: the rules of src/util/safewrite.c, each checked on the file system.
 * Device targets are reached through symbolic links (or nodes made here when root may mknod), so
 * that even a broken build can only ever replace a link in the scratch directory, never a node
 * under /dev. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "scratch.h"
#include "instbench/util.h"

static char D[256];

static char *P(const char *name)
{
    static char buf[8][512];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 512, "%s/%s", D, name);
    return b;
}

static char *slurp(const char *path)
{
    char *d = NULL;
    ib_error e;
    return util_read_file(path, 1 << 20, &d, NULL, &e) == 0 ? d : NULL;
}

static int same(const char *path, const char *want)
{
    char *d = slurp(path);
    int ok = d && !strcmp(d, want);
    free(d);
    return ok;
}

static mode_t kind(const char *path, int follow)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0) return 0;
    return st.st_mode & S_IFMT;
}

/* Entries of DIR besides the ones named: temporaries left behind show up here. */
static int stray_entries(const char *dir, const char *const *keep)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int kept = 0;
        for (const char *const *k = keep; *k && !kept; k++) kept = !strcmp(e->d_name, *k);
        if (!kept) {
            fprintf(stderr, "  stray entry: %s/%s\n", dir, e->d_name);
            n++;
        }
    }
    if (d) closedir(d);
    return n;
}

static void regular_files(void)
{
    ib_error err = {0};
    umask(027);
    const char *f = P("r/sub/result.json");
    CHECK(util_write_file_atomic(f, "one", 3, &err) == 0, "new file: %s", err.msg);
    CHECK(same(f, "one"), "new file content");
    struct stat st;
    CHECK(stat(f, &st) == 0 && (st.st_mode & 07777) == 0640, "mode %o, want 0640 (0666 & ~027)",
          (unsigned)(st.st_mode & 07777));
    CHECK(util_write_file_atomic(f, "two!", 4, &err) == 0, "replace: %s", err.msg);
    CHECK(same(f, "two!"), "replaced content");
    const char *keep[] = {"result.json", NULL};
    CHECK(stray_entries(P("r/sub"), keep) == 0, "temporaries left in the directory");
    umask(022);

    /* A link to a regular file: the file gets the new content, the link stays a link. */
    CHECK(util_write_file_atomic(P("r/real.json"), "old", 3, &err) == 0, "%s", err.msg);
    CHECK(symlink("real.json", P("r/link.json")) == 0, "symlink: %s", strerror(errno));
    CHECK(util_write_file_atomic(P("r/link.json"), "new", 3, &err) == 0, "through a link: %s", err.msg);
    CHECK(kind(P("r/link.json"), 0) == S_IFLNK, "the link was replaced by a file");
    CHECK(same(P("r/real.json"), "new"), "the linked file was not rewritten");
}

/* The cache's writer: the same temporary and rename without the fsyncs (nothing to see of those
 * here), so the same outcome: the content, the mode, no temporary left, a directory refused. */
static void replaceable_files(void)
{
    ib_error err = {0};
    const char *f = P("r/cache/us-east-1/g5.xlarge.json");
    CHECK(util_write_file_replaceable(f, "one", 3, &err) == 0, "replaceable, new file: %s", err.msg);
    CHECK(util_write_file_replaceable(f, "two!", 4, &err) == 0, "replaceable, replace: %s", err.msg);
    CHECK(same(f, "two!"), "replaceable: replaced content");
    struct stat st;
    CHECK(stat(f, &st) == 0 && (st.st_mode & 07777) == 0644, "replaceable: mode %o, want 0644",
          (unsigned)(st.st_mode & 07777));
    const char *keep[] = {"g5.xlarge.json", NULL};
    CHECK(stray_entries(P("r/cache/us-east-1"), keep) == 0, "replaceable: temporaries left in the directory");
    ib_error_clear(&err);
    CHECK(util_write_file_replaceable(P("r/cache"), "x", 1, &err) != 0 && err.code == IB_EXIT_USAGE,
          "replaceable: a directory was written");
}

/* The old temporary, PATH.tmp.PID, was opened with fopen: a link planted there was followed. */
static void planted_link(void)
{
    ib_error err = {0};
    CHECK(util_write_file_atomic(P("victim"), "precious", 8, &err) == 0, "%s", err.msg);
    mkdir(P("p"), 0777);
    char planted[600];
    snprintf(planted, sizeof planted, "%s.tmp.%ld", P("p/out.json"), (long)getpid());
    CHECK(symlink(P("victim"), planted) == 0, "symlink: %s", strerror(errno));
    CHECK(util_write_file_atomic(P("p/out.json"), "result", 6, &err) == 0, "%s", err.msg);
    CHECK(same(P("victim"), "precious"), "the file behind a planted link was overwritten");
    CHECK(kind(P("p/out.json"), 0) == S_IFREG && same(P("p/out.json"), "result"), "result not written");
}

static void directories(void)
{
    ib_error err = {0};
    mkdir(P("adir"), 0777);
    CHECK(util_write_file_atomic(P("adir"), "x", 1, &err) != 0, "a directory was written");
    CHECK(err.code == IB_EXIT_USAGE && strstr(err.msg, "directory"), "message '%s' (code %d)", err.msg, err.code);
    CHECK(kind(P("adir"), 0) == S_IFDIR, "the directory is gone");
    const char *none[] = {NULL};
    CHECK(stray_entries(P("adir"), none) == 0, "files left in the directory");
    CHECK(stray_entries(D, (const char *[]){"r", "victim", "p", "adir", NULL}) == 0, "temporaries left beside it");
    ib_error_clear(&err);
    CHECK(util_check_writable(P("adir"), 0, &err) != 0 && err.code == IB_EXIT_USAGE, "check: directory accepted");
    ib_error_clear(&err);
    CHECK(util_append_file(P("adir"), "x\n", 2, &err) != 0 && strstr(err.msg, "directory"), "append: %s", err.msg);
}

static void devices(void)
{
    ib_error err = {0};
    /* /dev/full through a link: the error is seen, the link (and /dev/full) stay. */
    CHECK(symlink("/dev/full", P("full")) == 0, "symlink: %s", strerror(errno));
    int rc = util_write_file_atomic(P("full"), "data", 4, &err);
    CHECK(rc != 0, "writing /dev/full reported success");
    CHECK(strstr(err.msg, strerror(ENOSPC)) != NULL, "message '%s' lacks '%s'", err.msg, strerror(ENOSPC));
    CHECK(kind(P("full"), 0) == S_IFLNK && kind(P("full"), 1) == S_IFCHR, "the link to /dev/full was replaced");
    /* /dev/null through a link: success, nothing replaced. */
    CHECK(symlink("/dev/null", P("null")) == 0, "symlink: %s", strerror(errno));
    ib_error_clear(&err);
    CHECK(util_write_file_atomic(P("null"), "data", 4, &err) == 0, "/dev/null: %s", err.msg);
    CHECK(kind(P("null"), 0) == S_IFLNK && kind("/dev/null", 0) == S_IFCHR, "the link to /dev/null was replaced");
    CHECK(util_check_writable(P("null"), 0, &err) == 0, "check /dev/null: %s", err.msg);

    /* A device node itself (as root, where mknod is allowed): written through, never replaced. */
    if (mknod(P("fullnode"), S_IFCHR | 0666, makedev(1, 7)) == 0) {
        ib_error_clear(&err);
        CHECK(util_write_file_atomic(P("fullnode"), "data", 4, &err) != 0, "device node: success reported");
        CHECK(kind(P("fullnode"), 0) == S_IFCHR, "the device node was replaced by a file");
    } else {
        fprintf(stderr, "note: mknod not permitted (%s): device nodes checked through links only\n", strerror(errno));
    }

    /* A FIFO: the reader gets the bytes, the FIFO stays a FIFO.  The reader opens it O_RDWR (so it
     * is open before the write starts and read() waits for data) and says so through a pipe. */
    CHECK(mkfifo(P("fifo"), 0666) == 0, "mkfifo: %s", strerror(errno));
    int sync[2];
    CHECK(pipe(sync) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        alarm(10); /* a writer that never opens the FIFO (it replaced it) must not hang the test */
        char buf[64] = "";
        int fd = open(P("fifo"), O_RDWR);
        if (write(sync[1], "r", 1) != 1) _exit(2);
        size_t got = 0;
        while (fd >= 0 && got < 9) {
            ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        _exit(got == 9 && !memcmp(buf, "via fifo\n", 9) ? 0 : 1);
    }
    char ready;
    CHECK(read(sync[0], &ready, 1) == 1, "the FIFO's reader did not start");
    ib_error_clear(&err);
    CHECK(util_write_file_atomic(P("fifo"), "via fifo\n", 9, &err) == 0, "fifo: %s", err.msg);
    int st = -1;
    waitpid(child, &st, 0);
    close(sync[0]);
    close(sync[1]);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the FIFO's reader did not get the data");
    /* No reader: an error at once (not a write that waits forever), the FIFO left alone. */
    ib_error_clear(&err);
    double t0 = util_now_seconds();
    CHECK(util_write_file_atomic(P("fifo"), "x", 1, &err) != 0, "a FIFO without a reader reported success");
    CHECK(util_now_seconds() - t0 < 5, "a FIFO without a reader blocked the write");
    CHECK(strstr(err.msg, "reading") != NULL, "message '%s'", err.msg);
    CHECK(kind(P("fifo"), 0) == S_IFIFO, "the FIFO was replaced by a file");
}

static void new_files(void)
{
    ib_error err = {0};
    CHECK(util_write_file_new(P("n/a.json"), "first", 5, &err) == 0, "%s", err.msg);
    CHECK(util_write_file_new(P("n/a.json"), "second", 6, &err) == 1, "an existing file was not reported");
    CHECK(same(P("n/a.json"), "first"), "an existing file was overwritten");
    CHECK(symlink(P("victim"), P("n/b.json")) == 0, "symlink");
    CHECK(util_write_file_new(P("n/b.json"), "second", 6, &err) == 1, "a dangling or live link was replaced");
    CHECK(same(P("victim"), "precious"), "written through a link");
    const char *keep[] = {"a.json", "b.json", NULL};
    CHECK(stray_entries(P("n"), keep) == 0, "temporaries left");
}

static void appends(void)
{
    ib_error err = {0};
    const char *f = P("a/log.jsonl");
    CHECK(util_append_file(f, "{\"a\":1}\n", 8, &err) == 0, "%s", err.msg);
    CHECK(util_append_file(f, "{\"a\":2}\n", 8, &err) == 0, "%s", err.msg);
    CHECK(same(f, "{\"a\":1}\n{\"a\":2}\n"), "appended lines");
    CHECK(symlink(P("victim"), P("a/link.jsonl")) == 0, "symlink");
    ib_error_clear(&err);
    CHECK(util_append_file(P("a/link.jsonl"), "x\n", 2, &err) != 0, "appended through a link");
    CHECK(strstr(err.msg, "link") != NULL, "message '%s'", err.msg);
    CHECK(same(P("victim"), "precious"), "the linked file changed");
    ib_error_clear(&err);
    CHECK(util_check_writable(P("a/link.jsonl"), 1, &err) != 0, "check: append through a link accepted");
    CHECK(util_check_writable(f, 1, &err) == 0, "check: existing append target: %s", err.msg);
    CHECK(same(f, "{\"a\":1}\n{\"a\":2}\n"), "the check changed the file");
    /* a file whose last line lacks its newline: the appended line starts on a line of its own */
    const char *g = P("a/bare.jsonl");
    CHECK(util_write_file_atomic(g, "{\"a\":1}", 7, &err) == 0, "%s", err.msg);
    CHECK(util_append_file(g, "{\"a\":2}\n", 8, &err) == 0, "%s", err.msg);
    CHECK(same(g, "{\"a\":1}\n{\"a\":2}\n"), "a line glued onto a last line without a newline");
    CHECK(util_append_file(g, "tail", 4, &err) == 0 && same(g, "{\"a\":1}\n{\"a\":2}\ntail"), "bytes, not a line");
}

static void checks(void)
{
    ib_error err = {0};
    /* missing directories: writable when the nearest existing one is, and none made by the check
     * (a run stopped before its write must leave nothing; the write makes them) */
    CHECK(util_check_writable(P("c/d/e/r.json"), 0, &err) == 0, "new directories: %s", err.msg);
    CHECK(kind(P("c"), 0) == 0, "the check made a directory");
    CHECK(util_write_file_atomic(P("c/d/e/r.json"), "{}", 2, &err) == 0, "write into new directories: %s", err.msg);
    CHECK(kind(P("c/d/e"), 0) == S_IFDIR, "directory not made by the write");
    CHECK(util_check_writable(P("c/d/e/s.json"), 0, &err) == 0, "existing directory: %s", err.msg);
    const char *written[] = {"r.json", NULL};
    CHECK(stray_entries(P("c/d/e"), written) == 0, "the check left a file");
    ib_error_clear(&err);
    CHECK(util_check_writable("/proc/instbench-nope/r.json", 0, &err) != 0, "unwritable path accepted");
    CHECK(strstr(err.msg, "/proc/instbench-nope") != NULL, "message '%s'", err.msg);
    ib_error_clear(&err);
    CHECK(util_check_writable(P("victim/x.json"), 0, &err) != 0, "a path below a file accepted");
    CHECK(err.code == IB_EXIT_USAGE && strstr(err.msg, "not a directory"), "below a file: %d '%s'", err.code, err.msg);
}

/* -o FILE as cp and curl -o take it: its directory must exist unless the caller creates it. */
static void output_parents(void)
{
    ib_error err = {0};
    CHECK(util_output_parent_check("-", 0, &err) == 0 && util_output_parent_check(NULL, 0, &err) == 0, "stdout");
    CHECK(util_output_parent_check(P("victim"), 0, &err) == 0, "a file in an existing directory: %s", err.msg);
    CHECK(util_output_parent_check("relative.json", 0, &err) == 0, "the working directory: %s", err.msg);
    ib_error_clear(&err);
    CHECK(util_output_parent_check(P("out-x/q/r.json"), 0, &err) != 0, "a missing directory accepted");
    CHECK(err.code == IB_EXIT_USAGE && strstr(err.msg, "out-x/q does not exist") && strstr(err.msg, "--create-dirs"),
          "missing: %d '%s'", err.code, err.msg);
    CHECK(kind(P("out-x"), 0) == 0, "refused, yet a directory was made");
    CHECK(util_output_parent_check(P("out-x/q/r.json"), 1, &err) == 0, "create: %s", err.msg);
    CHECK(kind(P("out-x/q"), 0) == S_IFDIR, "create: directory not made");
    ib_error_clear(&err);
    CHECK(util_output_parent_check(P("victim/x.json"), 1, &err) != 0 && err.code == IB_EXIT_USAGE,
          "a file as the directory: %d '%s'", err.code, err.msg);
}

int main(void)
{
    if (!scratch_template(D, sizeof D, "instbench-safewrite") || !mkdtemp(D)) {
        fprintf(stderr, "util_safewrite: no scratch folder %s: %s\n", D, strerror(errno));
        return 1;
    }
    regular_files();
    replaceable_files();
    planted_link();
    directories();
    devices();
    new_files();
    appends();
    checks();
    output_parents();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", D);
    if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", D);
    if (failures) fprintf(stderr, "util_safewrite: %d failure(s)\n", failures);
    else printf("util_safewrite: ok\n");
    return failures != 0;
}
