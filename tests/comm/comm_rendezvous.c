/* comm_rendezvous: the TCP rendezvous that carries the NCCL unique id (rendezvous_tcp_listen, then
 * liveness_serve and liveness_fetch), over 127.0.0.1 with threads: every peer gets the exact blob,
 * a peer started before rank 0 listens retries until it does, a client speaking something else
 * gets no reply, a peer of another build is refused at once and not counted, every wait ends at its
 * deadline with an error naming what was missing, and bad addresses and ports are usage errors. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "instbench/comm.h"

#include "check.h"

#define BLOB 128
#define WORLD 4 /* rank 0's process and up to three peers, one rank each */

typedef struct peer {
    int port, first;
    size_t len;
    double timeout;
    unsigned char got[BLOB];
    int rc;
    double took;
    ib_error err;
    liveness *live;
} peer;

static void *fetch_thread(void *arg)
{
    peer *p = arg;
    const double t0 = util_now_seconds();
    p->rc =
        liveness_fetch("127.0.0.1", p->port, p->first, 1, WORLD, p->got, p->len, NULL, p->timeout, &p->live, &p->err);
    p->took = util_now_seconds() - t0;
    return NULL;
}

static void start_peer(pthread_t *th, peer *p, int port, int first, size_t len, double timeout)
{
    memset(p, 0, sizeof *p);
    p->port = port, p->first = first, p->len = len, p->timeout = timeout;
    pthread_create(th, NULL, fetch_thread, p);
}

static void end_peer(pthread_t th, peer *p)
{
    pthread_join(th, NULL);
    liveness_close(p->live);
    p->live = NULL;
}

/* A client speaking another protocol: it must be dropped without getting the blob. */
static void *foreign_thread(void *arg)
{
    peer *p = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)p->port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    p->rc = -1;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        if (send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL) == (ssize_t)sizeof junk - 1) {
            char buf[16];
            ssize_t k = recv(fd, buf, sizeof buf, 0);
            p->rc = (int)k; /* expected 0 (or a reset): closed without a reply */
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

/* A port nothing listens on, and nobody else can take while *HOLD stays open: a bound socket that
 * does not listen, so connecting is refused, and SO_REUSEADDR lets rendezvous_tcp_listen bind it
 * too.  A port closed and bound again later could be taken in between by any other program. */
static int reserve_port(int *hold)
{
    const int one = 1, zero = 0;
    struct sockaddr_storage a;
    socklen_t al = sizeof a;
    memset(&a, 0, sizeof a);
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd >= 0) { /* dual-stack, as rendezvous_tcp_listen binds where the host allows it */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        ((struct sockaddr_in6 *)&a)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_any;
        al = sizeof(struct sockaddr_in6);
    } else {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        ((struct sockaddr_in *)&a)->sin_family = AF_INET;
        al = sizeof(struct sockaddr_in);
    }
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) || bind(fd, (struct sockaddr *)&a, al) ||
        getsockname(fd, (struct sockaddr *)&a, &al)) {
        CHECK(0, "cannot reserve a port");
        if (fd >= 0) close(fd);
        *hold = -1;
        return 0;
    }
    *hold = fd;
    return ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
                                         : ((struct sockaddr_in *)&a)->sin_port);
}

static void fill_blob(unsigned char *b)
{
    srand(12345);
    for (int i = 0; i < BLOB; i++) b[i] = (unsigned char)(rand() & 0xff);
}

static void test_three_peers_and_a_foreigner(void)
{
    unsigned char blob[BLOB];
    fill_blob(blob);
    rendezvous_tcp_server s;
    ib_error err;
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen on port 0: %s", err.msg);
    CHECK(s.port > 0, "bound port %d", s.port);
    peer p[3], bad = {.port = s.port};
    pthread_t th[3], tb;
    pthread_create(&tb, NULL, foreign_thread, &bad);
    for (int i = 0; i < 3; i++) start_peer(&th[i], &p[i], s.port, 1 + i, BLOB, 10);
    liveness *root = NULL;
    int rc = liveness_serve(&s, 1, WORLD, 3, blob, BLOB, NULL, 10, &root, &err);
    CHECK(rc == 0, "serve 3 peers: %s", err.msg);
    CHECK(s.fd < 0, "the port was not handed to the liveness channel");
    for (int i = 0; i < 3; i++) {
        end_peer(th[i], &p[i]);
        CHECK(p[i].rc == 0, "peer %d: %s", i, p[i].err.msg);
        CHECK(!memcmp(p[i].got, blob, BLOB), "peer %d received a different blob", i);
    }
    /* the job may have formed before the foreigner's turn: closing the port ends its wait */
    liveness_close(root);
    rendezvous_tcp_close(&s);
    pthread_join(tb, NULL);
    CHECK(bad.rc <= 0, "a foreign client got %d reply bytes", bad.rc);
}

static void test_peer_before_server(void)
{
    unsigned char blob[BLOB];
    fill_blob(blob);
    blob[0] ^= 0x5a;
    int hold;
    const int port = reserve_port(&hold);
    if (hold < 0) return;
    peer p;
    pthread_t th;
    start_peer(&th, &p, port, 1, BLOB, 10);
    usleep(500 * 1000); /* the peer's first attempts are refused */
    rendezvous_tcp_server s;
    ib_error err;
    CHECK(rendezvous_tcp_listen(port, &s, &err) == 0, "listen on the reserved port %d: %s", port, err.msg);
    close(hold);
    liveness *root = NULL;
    CHECK(liveness_serve(&s, 1, WORLD, 1, blob, BLOB, NULL, 10, &root, &err) == 0, "serve: %s", err.msg);
    end_peer(th, &p);
    liveness_close(root);
    rendezvous_tcp_close(&s);
    CHECK(p.rc == 0, "late server: %s", p.err.msg);
    CHECK(!memcmp(p.got, blob, BLOB), "late server: different blob");
}

/* A peer of another build (another id length): refused at once, not counted. */
static void test_length_mismatch(void)
{
    unsigned char blob[BLOB];
    fill_blob(blob);
    rendezvous_tcp_server s;
    ib_error err;
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen: %s", err.msg);
    peer p;
    pthread_t th;
    start_peer(&th, &p, s.port, 1, 64, 10);
    double t0 = util_now_seconds();
    liveness *root = NULL;
    int rc = liveness_serve(&s, 1, WORLD, 1, blob, BLOB, NULL, 1.0, &root, &err);
    double el = util_now_seconds() - t0;
    CHECK(rc != 0, "a peer expecting 64 bytes was counted");
    CHECK(strstr(err.msg, "only 0 of 1") != NULL, "message: %s", err.msg);
    CHECK(el < 4.0, "serve took %.1f s past a 1 s deadline", el);
    rendezvous_tcp_close(&s);
    end_peer(th, &p);
    CHECK(p.rc != 0 && p.err.code == IB_EXIT_USAGE, "a peer expecting 64 bytes was not refused: %s", p.err.msg);
    CHECK(strstr(p.err.msg, "64-byte id") != NULL, "the refusal does not say why: %s", p.err.msg);
    CHECK(p.took < 3.0, "the refused peer tried for %.1f s", p.took);
}

static void test_timeouts_and_bad_args(void)
{
    rendezvous_tcp_server s, other;
    ib_error err;
    liveness *l = NULL;
    unsigned char blob[BLOB] = {0};
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen: %s", err.msg);
    double t0 = util_now_seconds();
    CHECK(liveness_serve(&s, 1, WORLD, 2, blob, BLOB, NULL, 0.3, &l, &err) != 0, "serve with no peers succeeded");
    CHECK(strstr(err.msg, "only 0 of 2") != NULL, "message: %s", err.msg);
    CHECK(util_now_seconds() - t0 < 3.0, "serve ignored its deadline");
    /* the port is still held: listening there again names the likely cause */
    CHECK(rendezvous_tcp_listen(s.port, &other, &err) != 0 && err.code == IB_EXIT_RUNTIME &&
              strstr(err.msg, "another process holds it"),
          "a second listener on port %d: %s", s.port, err.msg);
    rendezvous_tcp_close(&s);

    int hold;
    const int port = reserve_port(&hold);
    char where[32];
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    t0 = util_now_seconds();
    CHECK(liveness_fetch("127.0.0.1", port, 1, 1, WORLD, blob, BLOB, NULL, 0.5, &l, &err) != 0,
          "fetch with no server succeeded");
    CHECK(strstr(err.msg, where) && strstr(err.msg, "connection refused"), "message: %s", err.msg);
    CHECK(util_now_seconds() - t0 < 3.0, "fetch ignored its deadline");
    if (hold >= 0) close(hold);

    CHECK(rendezvous_tcp_listen(70000, &s, &err) != 0 && err.code == IB_EXIT_USAGE, "port 70000 accepted");
    CHECK(rendezvous_tcp_listen(-1, &s, &err) != 0 && err.code == IB_EXIT_USAGE, "port -1 accepted");
    CHECK(liveness_fetch("127.0.0.1", 0, 1, 1, WORLD, blob, BLOB, NULL, 0.1, &l, &err) != 0 &&
              err.code == IB_EXIT_USAGE,
          "fetch from port 0 accepted");
    CHECK(liveness_fetch("", 1234, 1, 1, WORLD, blob, BLOB, NULL, 0.1, &l, &err) != 0 && err.code == IB_EXIT_USAGE,
          "empty address accepted");
    CHECK(liveness_fetch(NULL, 1234, 1, 1, WORLD, blob, BLOB, NULL, 0.1, &l, &err) != 0 && err.code == IB_EXIT_USAGE,
          "no address accepted");
    CHECK(liveness_fetch("no-such-host.invalid", 1234, 1, 1, WORLD, blob, BLOB, NULL, 0.3, &l, &err) != 0 &&
              strstr(err.msg, "no-such-host.invalid"),
          "unresolvable host: %s", err.msg);
}

int main(void)
{
    alarm(50); /* the whole test, whatever hangs */
    test_three_peers_and_a_foreigner();
    test_peer_before_server();
    test_length_mismatch();
    test_timeouts_and_bad_args();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("comm_rendezvous: all passed\n");
    return 0;
}
