/* comm_rendezvous_errors: a misconfigured job fails at once, with a message naming the cause,
 * instead of waiting out the rendezvous's limit (60 s here, 600 s in a real run).  Real processes
 * over 127.0.0.1:
 * - two processes given the same ranks (a duplicate RANK): rank 0's process, the duplicate and the
 *   process already joined all stop within a few seconds, exit 2 for the first two, naming the
 *   ranks and both addresses; and when the duplicate comes after the job formed (a process too
 *   many), it is refused at once and every process of the job hears of it;
 * - something else listening on the port, answering garbage: the peer stops within a few seconds,
 *   exit 2, naming the address and port;
 * - a listener that takes the connection and says nothing: the peer stops after the handshake's
 *   own bound (10 s), naming the address;
 * - a name the resolver says does not exist: the peer stops after the name's bound (30 s), exit 2,
 *   naming the host and the resolver's own message;
 * - rank 0's process interrupted (SIGINT) while the job forms: the peer already joined and the one
 *   waiting in its backlog both hear within a few seconds that rank 0's process was interrupted,
 *   instead of the first seeing a death and the second trying again until its limit.
 * Each process reports "ERR <exit code> <seconds> <message>" or "UP" on a pipe; every wait is
 * bounded (poll deadlines, alarm()). */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instbench/comm.h"

#include "check.h"
#include "procs.h"

#define BLOB 64
#define WORLD 6
#define NLOCAL 2
#define LIMIT_S 60.0 /* the rendezvous's limit: every failure here must come long before it */

static unsigned char blob[BLOB];
static volatile sig_atomic_t stop_flag; /* rank 0's process: set by SIGINT, as measure's is */
static void on_stop(int sig) { stop_flag = sig; }

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (write(fd, buf, (size_t)n) < 0) _exit(3);
}

/* A process of the job: rank 0's (SRV set) or a peer of ranks [first, first + NLOCAL) fetching
 * from ADDR:PORT.  It says ERR or UP; once up, it says what liveness_check reports. */
static proc start(rendezvous_tcp_server *srv, const char *addr, int port, int first)
{
    int out = -1;
    proc p = proc_fork(&out);
    if (p.pid < 0) CHECK(0, "pipe or fork: %s", strerror(errno));
    if (p.pid == 0) {
        alarm(90);
        if (srv) {
            signal(SIGINT, on_stop);
            comm_set_stop(&stop_flag);
        }
        ib_error err = {0};
        liveness *l = NULL;
        unsigned char got[BLOB];
        const double t0 = util_now_seconds();
        int rc = srv ? liveness_serve(srv, NLOCAL, WORLD, WORLD / NLOCAL - 1, blob, BLOB, NULL, LIMIT_S, &l, &err)
                     : liveness_fetch(addr, port, first, NLOCAL, WORLD, got, BLOB, NULL, LIMIT_S, &l, &err);
        if (rc) {
            say(out, "ERR %d %.1f %s", err.code, util_now_seconds() - t0, err.msg);
            _exit(1);
        }
        say(out, "UP");
        char why[LIVENESS_CAUSE_MAX];
        while (!liveness_check(l, why, sizeof why)) usleep(20 * 1000);
        say(out, "REPORT %s", why);
        liveness_close(l);
        _exit(0);
    }
    return p;
}

static void reap(proc *p)
{
    if (p->pid <= 0) return;
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    close(p->out);
    p->pid = -1;
}

/* P's line within MS is "ERR <code> <seconds> <message>" with code CODE and every word of WORDS
 * in the message (CODE 0: any non-zero code); the seconds it took, or -1. */
static double expect_err(proc *p, const char *who, int ms, int code, const char *const *words)
{
    const char *l = proc_next_line(p, ms);
    int c = 0;
    double took = -1;
    int off = 0;
    if (sscanf(l, "ERR %d %lf %n", &c, &took, &off) < 2 || !off) {
        CHECK(0, "%s: no error within %d ms ('%s')", who, ms, l);
        return -1;
    }
    CHECK(code ? c == code : c != 0, "%s: exit code %d, want %d: %s", who, c, code, l);
    for (; *words; words++) CHECK(strstr(l + off, *words), "%s: the message does not name '%s': %s", who, *words, l);
    printf("  %s (%.1f s): %s\n", who, took, l + off);
    return took;
}

/* Rank 0's listening socket on a port the kernel picks: 0, or -1 after a failed check. */
static int listen_free(rendezvous_tcp_server *srv)
{
    ib_error err;
    if (rendezvous_tcp_listen(0, srv, &err) == 0) return 0;
    CHECK(0, "listen: %s", err.msg);
    return -1;
}

/* A TCP connection from here to 127.0.0.1:PORT: the socket, or -1. */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* Ranks 2-3 claimed twice: the second claimant is refused, and rank 0's process fails the job,
 * which the process already joined hears at once (rank 4-5 never comes: nobody may wait for it). */
static void test_duplicate_rank(void)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    proc root = start(&srv, NULL, 0, 0);
    rendezvous_tcp_close(&srv);
    proc a = start(NULL, "127.0.0.1", srv.port, 2);
    CHECK(!strcmp(proc_next_line(&a, 5000), "UP"), "the first process of ranks 2-3 did not join: '%s'", a.line);
    proc b = start(NULL, "127.0.0.1", srv.port, 2);
    const char *w_root[] = {"ranks 2-3", "127.0.0.1 and", "RANK", NULL}, *w_dup[] = {"refused", "ranks 2-3", NULL};
    expect_err(&root, "rank 0's process", 3000, IB_EXIT_USAGE, w_root);
    expect_err(&b, "the duplicate", 3000, IB_EXIT_USAGE, w_dup);
    const char *l = proc_next_line(&a, 3000);
    CHECK(!strncmp(l, "REPORT ", 7) && strstr(l, "ranks 2-3") && strstr(l, "failed"),
          "the joined process did not hear why the job failed: '%s'", l);
    reap(&root), reap(&a), reap(&b);
}

/* The job formed (rank 0's process, ranks 2-3, ranks 4-5), then a process too many claims ranks
 * 2-3: it is refused at once, and the job fails everywhere, naming the ranks. */
static void test_late_duplicate(void)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    proc root = start(&srv, NULL, 0, 0);
    rendezvous_tcp_close(&srv);
    proc a = start(NULL, "127.0.0.1", srv.port, 2), b = start(NULL, "127.0.0.1", srv.port, 4);
    CHECK(!strcmp(proc_next_line(&root, 5000), "UP") && !strcmp(proc_next_line(&a, 5000), "UP") &&
              !strcmp(proc_next_line(&b, 5000), "UP"),
          "the job did not form");
    proc late = start(NULL, "127.0.0.1", srv.port, 2);
    const char *w[] = {"refused", "ranks 2-3", NULL};
    expect_err(&late, "a late duplicate", 3000, IB_EXIT_USAGE, w);
    proc *joined[] = {&root, &a, &b};
    for (int i = 0; i < 3; i++) {
        const char *l = proc_next_line(joined[i], 3000);
        CHECK(!strncmp(l, "REPORT ", 7) && strstr(l, "ranks 2-3"),
              "process %d of the job: no report naming the "
              "duplicate: '%s'",
              i, l);
    }
    reap(&root), reap(&a), reap(&b), reap(&late);
}

/* A listener (LFD) that reads what comes and answers REPLY, for up to three connections. */
static void serve_stranger(int lfd, const char *reply)
{
    struct pollfd pf = {lfd, POLLIN, 0};
    for (int served = 0; served < 3 && poll(&pf, 1, 1000) == 1; served++) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) continue;
        char buf[256];
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k > 0) k = send(fd, reply, strlen(reply), MSG_NOSIGNAL);
        close(fd);
    }
}

/* An HTTP server on the port: the peer is told at once that something else listens there. */
static void test_foreign_listener(void)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    char where[32];
    snprintf(where, sizeof where, "127.0.0.1:%d", srv.port);
    proc p = start(NULL, "127.0.0.1", srv.port, 2);
    serve_stranger(srv.fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    const char *w[] = {where, "HTTP/1.1", "MASTER_PORT", NULL};
    expect_err(&p, "a peer answered by an HTTP server", 3000, IB_EXIT_USAGE, w);
    rendezvous_tcp_close(&srv);
    reap(&p);
}

/* Side by side, as both wait out their own bounds: a listener that takes the connection (its
 * backlog does) and never answers, and a name the resolver says does not exist. */
static void test_silence_and_no_such_name(void)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    char where[32];
    snprintf(where, sizeof where, "127.0.0.1:%d", srv.port);
    proc silent = start(NULL, "127.0.0.1", srv.port, 2);
    /* the resolver's own verdict on the name, and its own words for it */
    const char *host = "no-such-node.invalid";
    struct addrinfo *res = NULL;
    const int gai = getaddrinfo(host, "80", NULL, &res);
    if (res) freeaddrinfo(res);
    const int no_name = gai == EAI_NONAME || gai == EAI_FAIL;
    proc nameless = {.pid = -1};
    if (no_name) nameless = start(NULL, host, 29500, 2);
    else
        printf("  (%s: the resolver says '%s' here, not that it does not exist: not tested)\n", host,
               gai ? gai_strerror(gai) : "an address");
    const char *w_silent[] = {where, "answered nothing", NULL};
    double took = expect_err(&silent, "a peer of a silent listener", 20000, 0, w_silent);
    CHECK(took >= 5 && took < 15, "a peer of a silent listener gave up after %.1f s, want about 10", took);
    if (no_name) {
        const char *w_name[] = {host, gai_strerror(gai), NULL};
        took = expect_err(&nameless, "a peer of a name that does not exist", 40000, IB_EXIT_USAGE, w_name);
        CHECK(took >= 20 && took < 40, "a name that does not exist: gave up after %.1f s, want about 30", took);
    }
    rendezvous_tcp_close(&srv);
    reap(&silent), reap(&nameless);
}

/* Connections waiting in listening socket LFD's backlog (Linux reports it as tcpi_unacked), or -1. */
static int backlog(int lfd)
{
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    return getsockopt(lfd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 ? (int)ti.tcpi_unacked : -1;
}

/* Waits up to MS for LFD's backlog to hold N connections. */
static int backlog_reaches(int lfd, int n, int ms)
{
    const double until = util_now_seconds() + ms / 1000.0;
    while (backlog(lfd) != n && util_now_seconds() < until) usleep(5 * 1000);
    return backlog(lfd) == n;
}

/* Whether this system shows a listening socket's backlog at all: a socket nobody accepts on, one
 * connection.  Linux does; qemu-user (the aarch64 check) does not translate TCP_INFO. */
static int backlog_visible(void)
{
    rendezvous_tcp_server probe;
    ib_error err;
    if (rendezvous_tcp_listen(0, &probe, &err)) return 0;
    int c = connect_loopback(probe.port);
    const int seen = c >= 0 && backlog_reaches(probe.fd, 1, 2000);
    if (c >= 0) close(c);
    rendezvous_tcp_close(&probe);
    return seen;
}

/* Rank 0's process interrupted while the job forms (ranks 2-3 joined; ranks 4-5 connected but
 * waiting in its backlog, while rank 0's process waits on a silent connection's hello): both peers
 * hear of the interruption within a few seconds. */
static void test_root_interrupted(void)
{
    if (!backlog_visible()) {
        printf("  (a listening socket's backlog cannot be watched here (TCP_INFO): rank 0 interrupted not tested)\n");
        return;
    }
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    proc root = start(&srv, NULL, 0, 0); /* srv.fd stays open here too: its backlog is watched */
    proc a = start(NULL, "127.0.0.1", srv.port, 2), b = {.pid = -1, .out = -1};
    CHECK(!strcmp(proc_next_line(&a, 5000), "UP"), "the process of ranks 2-3 did not join: '%s'", a.line);
    /* a connection that says nothing holds rank 0's process in its hello (for up to 5 s) */
    int silent = connect_loopback(srv.port);
    const int taken = silent >= 0 && backlog_reaches(srv.fd, 0, 3000);
    CHECK(taken, "rank 0's process did not take a silent connection (backlog %d)", backlog(srv.fd));
    if (!taken) goto out;
    b = start(NULL, "127.0.0.1", srv.port, 4);
    const int waiting = backlog_reaches(srv.fd, 1, 3000);
    CHECK(waiting, "ranks 4-5 never waited in rank 0's backlog (backlog %d)", backlog(srv.fd));
    if (!waiting) goto out;
    kill(root.pid, SIGINT);
    const double t0 = util_now_seconds();
    const char *w_root[] = {"stopped by a signal", NULL}, *w_b[] = {"rank 0's process was interrupted", "SIGINT", NULL};
    expect_err(&root, "rank 0's process", 3000, IB_EXIT_RUNTIME, w_root);
    const char *l = proc_next_line(&a, 3000);
    CHECK(!strncmp(l, "REPORT ", 7) && strstr(l, "rank 0's process was interrupted (SIGINT)"),
          "the joined process did not hear that rank 0's process was interrupted: '%s'", l);
    expect_err(&b, "the process in rank 0's backlog", 3000, IB_EXIT_RUNTIME, w_b);
    const double took = util_now_seconds() - t0;
    CHECK(took < 4, "the job took %.1f s to stop after rank 0's interruption", took);
out:
    if (silent >= 0) close(silent);
    rendezvous_tcp_close(&srv);
    reap(&root), reap(&a), reap(&b);
}

int main(void)
{
    alarm(100); /* the whole test, whatever hangs */
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < BLOB; i++) blob[i] = (unsigned char)(i * 29 + 7);
    const double t0 = util_now_seconds();
    test_duplicate_rank();
    test_late_duplicate();
    test_foreign_listener();
    test_root_interrupted();
    test_silence_and_no_such_name();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("comm_rendezvous_errors: all passed in %.1f s\n", util_now_seconds() - t0);
    return 0;
}
