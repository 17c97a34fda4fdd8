/* comm_liveness: the liveness channel between real processes over 127.0.0.1 (one rank-0 process
 * serving two peers, each process holding two ranks of six).  A SIGKILLed peer is reported by
 * rank 0 and by the other peer within 2 s, naming the dead one; a SIGKILLed rank 0 is reported by
 * both peers; a peer's failure reason reaches the others, escaped; clean goodbyes are never
 * reported, whoever leaves first; hostile clients (garbage, huge lengths, an older protocol,
 * a broken frame after a valid handshake, a hostile rank 0) neither crash nor hang anything and
 * are named in a message; those that speak this protocol are refused with a frame saying why.  Every wait is bounded (poll deadlines, alarm()). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instbench/comm.h"

#include "check.h"
#include "procs.h"

#define BLOB 128
#define WORLD 6
#define NLOCAL 2

typedef struct child {
    pid_t pid;
    int cmd; /* parent -> child: one command byte */
    int out; /* child -> parent: lines */
    int err; /* the child's stderr (-1 when not captured) */
    char line[1024];
} child;

static unsigned char blob[BLOB];

static void say(int fd, const char *a, const char *b)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s%s\n", a, b ? b : "");
    if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
    if (write(fd, buf, (size_t)n) < 0) _exit(3);
}

/* The child's side: join, then report what liveness_check says while obeying commands:
 * 'g' goodbye and leave, 'f' fail with a reason (and stay), 'x' or EOF leave without a word. */
static void child_loop(liveness *l, int cmd, int out)
{
    say(out, "UP", NULL);
    int reported = 0;
    for (;;) {
        struct pollfd pf = {cmd, POLLIN, 0};
        if (poll(&pf, 1, 20) == 1) {
            char c = 'x';
            if (read(cmd, &c, 1) != 1) c = 'x';
            if (c == 'g') {
                liveness_goodbye(l);
                liveness_close(l);
                say(out, "BYE", NULL);
                _exit(0);
            }
            if (c == 'f') {
                say(out, liveness_fail(l, "disk full \x1b[31mred\x1b[0m\nsecond line") ? "FAILED" : "NOTSENT", NULL);
                continue;
            }
            liveness_close(l);
            _exit(0);
        }
        char why[LIVENESS_CAUSE_MAX];
        if (!reported && liveness_check(l, why, sizeof why)) {
            say(out, "REPORT ", why);
            reported = 1;
        }
    }
}

static child start(int is_root, rendezvous_tcp_server *srv, int port, int first_rank, int npeers, int capture_err)
{
    child ch = {.pid = -1, .cmd = -1, .out = -1, .err = -1};
    int c[2], o[2], e[2] = {-1, -1};
    if (pipe(c) || pipe(o) || (capture_err && pipe(e))) {
        CHECK(0, "pipe: %s", strerror(errno));
        return ch;
    }
    fflush(stdout), fflush(stderr);
    ch.pid = fork();
    if (ch.pid == 0) {
        alarm(15); /* a child that somehow hangs dies */
        close(c[1]), close(o[0]);
        if (capture_err) dup2(e[1], 2), close(e[0]), close(e[1]);
        ib_error err;
        liveness *l = NULL;
        unsigned char got[BLOB] = {0};
        int rc = is_root ? liveness_serve(srv, NLOCAL, WORLD, npeers, blob, BLOB, NULL, 5, &l, &err)
                         : liveness_fetch("127.0.0.1", port, first_rank, NLOCAL, WORLD, got, BLOB, NULL, 5, &l, &err);
        if (is_root) rendezvous_tcp_close(srv);
        if (rc) {
            say(o[1], "ERR ", err.msg);
            _exit(1);
        }
        if (!is_root && memcmp(got, blob, BLOB)) {
            say(o[1], "ERR the blob differs", NULL);
            _exit(1);
        }
        child_loop(l, c[0], o[1]);
    }
    close(c[0]), close(o[1]);
    if (capture_err) close(e[1]);
    ch.cmd = c[1], ch.out = o[0], ch.err = e[0];
    return ch;
}

/* The child's next line within MS milliseconds (without the newline), or "" when none came. */
static const char *next_line(child *ch, int ms) { return read_line_within(ch->out, ch->line, sizeof ch->line, ms); }

static void command(child *ch, char c)
{
    if (write(ch->cmd, &c, 1) != 1) CHECK(0, "command %c: %s", c, strerror(errno));
}

/* Ends the child (SIGKILL if it has not left) and says how it ended: its exit status, or -signal. */
static int reap(child *ch)
{
    if (ch->pid <= 0) return -100;
    int st = 0;
    char x = 'x';
    if (write(ch->cmd, &x, 1) < 0) { /* it has left already */
    }
    for (int i = 0; i < 50 && waitpid(ch->pid, &st, WNOHANG) == 0; i++) usleep(10 * 1000);
    if (waitpid(ch->pid, &st, WNOHANG) == 0) {
        kill(ch->pid, SIGKILL);
        waitpid(ch->pid, &st, 0);
        st = -1000;
    }
    close(ch->cmd), close(ch->out);
    if (ch->err >= 0) close(ch->err);
    ch->pid = -1;
    return st == -1000 ? -1000 : WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

/* A job: rank 0's process (ranks 0-1) and two peers (ranks 2-3, 4-5), all joined. */
static int job(child *root, child *a, child *b, int capture_root_err)
{
    rendezvous_tcp_server srv;
    ib_error err;
    if (rendezvous_tcp_listen(0, &srv, &err)) {
        CHECK(0, "listen: %s", err.msg);
        return -1;
    }
    *root = start(1, &srv, 0, 0, 2, capture_root_err);
    rendezvous_tcp_close(&srv);
    *a = start(0, NULL, srv.port, 2, 0, 0);
    *b = start(0, NULL, srv.port, 4, 0, 0);
    int ok = 1;
    child *all[3] = {root, a, b};
    for (int i = 0; i < 3; i++) {
        const char *l = next_line(all[i], 5000);
        CHECK(!strcmp(l, "UP"), "process %d did not join: '%s'", i, l);
        ok = ok && !strcmp(l, "UP");
    }
    return ok ? 0 : -1;
}

/* CH reports, within MS, a cause containing every one of the NULL-terminated words. */
static void expect_report(child *ch, const char *who, int ms, const char *const *words)
{
    const double t0 = util_now_seconds();
    const char *l = next_line(ch, ms);
    const double took = util_now_seconds() - t0;
    CHECK(!strncmp(l, "REPORT ", 7), "%s reported nothing within %d ms ('%s')", who, ms, l);
    for (const char *const *w = words; *w; w++) CHECK(strstr(l, *w), "%s: '%s' lacks '%s'", who, l, *w);
    CHECK(!strchr(l, '\x1b'), "%s: a raw escape character reached the message: '%s'", who, l);
    printf("  %s (%.2f s): %s\n", who, took, l);
}

static void expect_silence(child *ch, const char *who, int ms)
{
    const char *l = next_line(ch, ms);
    CHECK(!l[0], "%s reported '%s' though everyone left cleanly", who, l);
}

/* Child VICTIM of the job (0: rank 0's process, ranks 0-1; 1: the first peer, ranks 2-3) is
 * SIGKILLed: both others report it, naming its ranks, within 2 s. */
static void test_killed(int victim)
{
    child c[3]; /* rank 0's process, peer 1, peer 2 */
    if (job(&c[0], &c[1], &c[2], 0)) goto out;
    kill(c[victim].pid, SIGKILL);
    const char *w[] = {victim == 0 ? "ranks 0-1" : "ranks 2-3", "127.0.0.1", "died", NULL};
    static const char *const names[] = {"rank 0", "peer 1", "peer 2"};
    for (int i = 0; i < 3; i++) {
        if (i == victim) continue;
        char who[80];
        snprintf(who, sizeof who, "%s after %s's SIGKILL", names[i], names[victim]);
        expect_report(&c[i], who, 2000, w);
    }
out:
    reap(&c[0]), reap(&c[1]), reap(&c[2]);
}

static void test_peer_fails(void)
{
    child r, a, b;
    if (job(&r, &a, &b, 0)) goto out;
    command(&b, 'f');
    CHECK(!strcmp(next_line(&b, 2000), "FAILED"), "the failing peer did not send its reason: '%s'", b.line);
    const char *w[] = {"ranks 4-5", "failed: disk full", "\\x1b[31mred", "second line", NULL};
    expect_report(&r, "rank 0 after a peer's failure", 2000, w);
    expect_report(&a, "the other peer after a peer's failure", 2000, w);
    /* a process that already knows of another's failure does not blame itself */
    command(&a, 'f');
    CHECK(!strcmp(next_line(&a, 2000), "NOTSENT"), "a second failure was sent: '%s'", a.line);
out:
    reap(&r), reap(&a), reap(&b);
}

static void test_clean_goodbyes(void)
{
    child r, a, b;
    if (job(&r, &a, &b, 0)) goto out;
    /* a peer leaves first, then rank 0 while the other peer is still running */
    command(&a, 'g');
    CHECK(!strcmp(next_line(&a, 2000), "BYE"), "peer 1 goodbye: '%s'", a.line);
    expect_silence(&r, "rank 0 after a peer's goodbye", 500);
    expect_silence(&b, "peer 2 after a peer's goodbye", 10);
    command(&r, 'g');
    CHECK(!strcmp(next_line(&r, 2000), "BYE"), "rank 0 goodbye: '%s'", r.line);
    expect_silence(&b, "peer 2 after rank 0's goodbye", 500);
    command(&b, 'g');
    CHECK(!strcmp(next_line(&b, 2000), "BYE"), "peer 2 goodbye: '%s'", b.line);
out:
    CHECK(reap(&r) == 0 && reap(&a) == 0 && reap(&b) == 0, "a process did not exit cleanly");
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    CHECK(fd >= 0, "connect to %d: %s", port, strerror(errno));
    return fd;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void hello(unsigned char h[28], const char *magic, uint32_t len, uint32_t world, uint32_t first, uint32_t n)
{
    memcpy(h, magic, 8);
    put_u32(h + 8, len), put_u32(h + 12, world), put_u32(h + 16, first), put_u32(h + 20, n);
    put_u32(h + 24, 0); /* no workload text */
}

static void send_all(int fd, const void *p, size_t n)
{
    CHECK(fd >= 0 && send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n, "send %zu bytes", n);
}

/* Strangers knock before the real peers: each is dropped with a warning, the job still forms. */
static void test_hostile_handshakes(void)
{
    rendezvous_tcp_server srv;
    ib_error err;
    if (rendezvous_tcp_listen(0, &srv, &err)) {
        CHECK(0, "listen: %s", err.msg);
        return;
    }
    const int port = srv.port;
    int fds[5];
    unsigned char h[28];
    fds[0] = dial(port);
    send_all(fds[0], "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
    fds[1] = dial(port);
    hello(h, "IBRV0003", 0xffffffffu, WORLD, 2, 2); /* a 4 GiB blob */
    send_all(fds[1], h, sizeof h);
    fds[2] = dial(port);
    hello(h, "IBRV0001", BLOB, 0, 0, 0);
    send_all(fds[2], h, sizeof h);
    fds[3] = dial(port);
    hello(h, "IBRV0003", BLOB, WORLD, 0, 0x7fffffff); /* claims rank 0's ranks and more */
    send_all(fds[3], h, sizeof h);
    fds[4] = dial(port); /* says nothing and leaves */
    if (fds[4] >= 0) close(fds[4]);
    child r = start(1, &srv, 0, 0, 2, 1);
    rendezvous_tcp_close(&srv);
    child a = start(0, NULL, port, 2, 0, 0), b = start(0, NULL, port, 4, 0, 0);
    CHECK(!strcmp(next_line(&r, 5000), "UP"), "rank 0 did not serve its peers past the strangers: '%s'", r.line);
    CHECK(!strcmp(next_line(&a, 5000), "UP") && !strcmp(next_line(&b, 5000), "UP"), "the peers did not join");
    for (int i = 0; i < 4; i++) {
        /* the two that speak this rendezvous (1, 3) are refused with a fail frame, so such a
         * process stops at once; none gets rank 0's hello or the blob */
        unsigned char got[8];
        ssize_t k = fds[i] < 0 ? 0 : recv(fds[i], got, sizeof got, MSG_WAITALL);
        if (i == 1 || i == 3) CHECK(k == 8 && !memcmp(got, "IBL1F", 5), "stranger %d: not a refusal (%zd bytes)", i, k);
        else CHECK(k <= 0, "stranger %d got a reply", i);
        if (fds[i] >= 0) close(fds[i]);
    }
    expect_silence(&r, "rank 0 after dropping strangers", 200);
    command(&a, 'g'), command(&b, 'g'), command(&r, 'g');
    char warn[8192];
    size_t n = 0;
    for (ssize_t k; r.err >= 0 && n + 1 < sizeof warn && (k = read(r.err, warn + n, sizeof warn - 1 - n)) > 0;)
        n += (size_t)k; /* ends at EOF: rank 0 exits after its goodbye */
    warn[n] = '\0';
    CHECK(reap(&r) == 0, "rank 0 did not exit cleanly");
    reap(&a), reap(&b);
    CHECK(strstr(warn, "not an instbench rendezvous"), "garbage not named:\n%s", warn);
    CHECK(strstr(warn, "4294967295-byte id"), "the huge length not named:\n%s", warn);
    CHECK(strstr(warn, "older instbench"), "the old protocol not named:\n%s", warn);
    CHECK(strstr(warn, "are not in [2, 6)"), "the bad ranks not named:\n%s", warn);
    CHECK(strstr(warn, "no complete hello"), "the silent client not named:\n%s", warn);
}

/* A peer that shook hands properly, then sends a frame with a 64 KiB text: rank 0 reports it
 * (and survives to leave cleanly). */
static void test_hostile_frame(void)
{
    rendezvous_tcp_server srv;
    ib_error err;
    if (rendezvous_tcp_listen(0, &srv, &err)) {
        CHECK(0, "listen: %s", err.msg);
        return;
    }
    const int port = srv.port;
    child r = start(1, &srv, 0, 0, 1, 0);
    rendezvous_tcp_close(&srv);
    int fd = dial(port);
    unsigned char h[28], reply[28 + BLOB];
    hello(h, "IBRV0003", BLOB, WORLD, 2, 4);
    send_all(fd, h, sizeof h);
    size_t got = 0;
    for (ssize_t k; fd >= 0 && got < sizeof reply && (k = recv(fd, reply + got, sizeof reply - got, 0)) > 0;)
        got += (size_t)k;
    CHECK(got == sizeof reply && !memcmp(reply + 28, blob, BLOB), "handshake: %zu bytes", got);
    CHECK(!strcmp(next_line(&r, 5000), "UP"), "rank 0 did not start: '%s'", r.line);
    const unsigned char frame[] = {'I', 'B', 'L', '1', 'F', 0, 0xff, 0xff, 'x', 'x'};
    send_all(fd, frame, sizeof frame);
    const char *w[] = {"ranks 2-5", "malformed", "too long", NULL};
    expect_report(&r, "rank 0 after a huge frame", 2000, w);
    command(&r, 'g');
    CHECK(!strcmp(next_line(&r, 2000), "BYE"), "rank 0 did not survive the frame: '%s'", r.line);
    CHECK(reap(&r) == 0, "rank 0 did not exit cleanly");
    if (fd >= 0) close(fd);
}

/* A rank-0 impostor answers the handshake, then sends garbage: the peer reports it. */
static void test_hostile_root(void)
{
    rendezvous_tcp_server srv;
    ib_error err;
    if (rendezvous_tcp_listen(0, &srv, &err)) {
        CHECK(0, "listen: %s", err.msg);
        return;
    }
    child a = start(0, NULL, srv.port, 2, 0, 0);
    struct pollfd pf = {srv.fd, POLLIN, 0};
    int fd = poll(&pf, 1, 5000) == 1 ? accept(srv.fd, NULL, NULL) : -1;
    rendezvous_tcp_close(&srv);
    CHECK(fd >= 0, "the peer never connected");
    unsigned char h[28], reply[28 + BLOB];
    size_t got = 0;
    for (ssize_t k; fd >= 0 && got < sizeof h && (k = recv(fd, h + got, sizeof h - got, 0)) > 0;) got += (size_t)k;
    hello(reply, "IBRV0003", BLOB, WORLD, 0, 2);
    memcpy(reply + 28, blob, BLOB);
    send_all(fd, reply, sizeof reply);
    CHECK(!strcmp(next_line(&a, 5000), "UP"), "the peer did not join: '%s'", a.line);
    send_all(fd, "\xff\xfe\x1b]52;c;AAAA\x07garbage", 20);
    const char *w[] = {"ranks 0-1", "127.0.0.1", "malformed", "bad magic", NULL};
    expect_report(&a, "a peer after garbage from rank 0", 2000, w);
    if (fd >= 0) close(fd);
    reap(&a);
}

int main(void)
{
    alarm(60); /* the whole test, whatever hangs */
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < BLOB; i++) blob[i] = (unsigned char)(i * 37 + 11);
    const double t0 = util_now_seconds();
    test_killed(1);
    test_killed(0);
    test_peer_fails();
    test_clean_goodbyes();
    test_hostile_handshakes();
    test_hostile_frame();
    test_hostile_root();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("comm_liveness: all passed in %.1f s\n", util_now_seconds() - t0);
    return 0;
}
