/* comm_rendezvous: the TCP rendezvous that carries the NCCL unique id, over 127.0.0.1 with
 * threads: every peer gets the exact blob, peers started before the server retry until it
 * listens, foreign or mismatched peers are dropped and not counted, and every wait ends at its
 * deadline with an error instead of hanging. */
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

typedef struct peer {
    int port;
    size_t len;
    double timeout;
    unsigned char got[BLOB];
    int rc;
    ib_error err;
} peer;

static void *fetch_thread(void *arg)
{
    peer *p = arg;
    p->rc = rendezvous_tcp_fetch("127.0.0.1", p->port, p->got, p->len, p->timeout, &p->err);
    return NULL;
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
        const char junk[12] = "GET / HTTP/1";
        if (send(fd, junk, sizeof junk, 0) == (ssize_t)sizeof junk) {
            char buf[16];
            ssize_t k = recv(fd, buf, sizeof buf, 0);
            p->rc = (int)k; /* expected 0: closed without a reply */
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
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
    for (int i = 0; i < 3; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].port = s.port, p[i].len = BLOB, p[i].timeout = 10;
        pthread_create(&th[i], NULL, fetch_thread, &p[i]);
    }
    int rc = rendezvous_tcp_serve(&s, 3, blob, BLOB, 10, &err);
    CHECK(rc == 0, "serve 3 peers: %s", err.msg);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(p[i].rc == 0, "peer %d: %s", i, p[i].err.msg);
        CHECK(!memcmp(p[i].got, blob, BLOB), "peer %d received a different blob", i);
    }
    /* the server may have finished before the foreigner's turn: close so it is not left waiting */
    rendezvous_tcp_close(&s);
    pthread_join(tb, NULL);
    CHECK(bad.rc <= 0, "a foreign client got %d reply bytes", bad.rc);
}

static void test_peer_before_server(void)
{
    unsigned char blob[BLOB];
    fill_blob(blob);
    blob[0] ^= 0x5a;
    rendezvous_tcp_server s;
    ib_error err;
    /* learn a free port, release it, and start the peer while nobody listens there */
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen: %s", err.msg);
    int port = s.port;
    rendezvous_tcp_close(&s);
    peer p = {.port = port, .len = BLOB, .timeout = 10};
    pthread_t th;
    pthread_create(&th, NULL, fetch_thread, &p);
    usleep(500 * 1000); /* the peer's first attempts are refused */
    CHECK(rendezvous_tcp_listen(port, &s, &err) == 0, "listen again on %d: %s", port, err.msg);
    CHECK(rendezvous_tcp_serve(&s, 1, blob, BLOB, 10, &err) == 0, "serve: %s", err.msg);
    rendezvous_tcp_close(&s);
    pthread_join(th, NULL);
    CHECK(p.rc == 0, "late server: %s", p.err.msg);
    CHECK(!memcmp(p.got, blob, BLOB), "late server: different blob");
}

static void test_length_mismatch(void)
{
    unsigned char blob[BLOB];
    fill_blob(blob);
    rendezvous_tcp_server s;
    ib_error err;
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen: %s", err.msg);
    peer p = {.port = s.port, .len = 64, .timeout = 1.0};
    pthread_t th;
    pthread_create(&th, NULL, fetch_thread, &p);
    double t0 = util_now_seconds();
    int rc = rendezvous_tcp_serve(&s, 1, blob, BLOB, 1.0, &err);
    double el = util_now_seconds() - t0;
    CHECK(rc != 0, "a peer expecting 64 bytes was counted");
    CHECK(strstr(err.msg, "only 0 of 1") != NULL, "message: %s", err.msg);
    CHECK(el < 4.0, "serve took %.1f s past a 1 s deadline", el);
    rendezvous_tcp_close(&s);
    pthread_join(th, NULL);
    CHECK(p.rc != 0, "a peer expecting 64 bytes accepted a 128-byte blob");
}

static void test_timeouts_and_bad_args(void)
{
    rendezvous_tcp_server s;
    ib_error err;
    CHECK(rendezvous_tcp_listen(0, &s, &err) == 0, "listen: %s", err.msg);
    int port = s.port;
    double t0 = util_now_seconds();
    unsigned char blob[BLOB] = {0};
    CHECK(rendezvous_tcp_serve(&s, 2, blob, BLOB, 0.3, &err) != 0, "serve with no peers succeeded");
    CHECK(strstr(err.msg, "only 0 of 2") != NULL, "message: %s", err.msg);
    CHECK(util_now_seconds() - t0 < 3.0, "serve ignored its deadline");
    rendezvous_tcp_close(&s);
    t0 = util_now_seconds();
    CHECK(rendezvous_tcp_fetch("127.0.0.1", port, blob, BLOB, 0.5, &err) != 0, "fetch with no server succeeded");
    CHECK(strstr(err.msg, "127.0.0.1") != NULL, "message names the address: %s", err.msg);
    CHECK(util_now_seconds() - t0 < 3.0, "fetch ignored its deadline");
    CHECK(rendezvous_tcp_listen(70000, &s, &err) != 0 && err.code == IB_EXIT_USAGE, "port 70000 accepted");
    CHECK(rendezvous_tcp_fetch("127.0.0.1", 0, blob, BLOB, 0.1, &err) != 0 && err.code == IB_EXIT_USAGE,
          "fetch from port 0 accepted");
    CHECK(rendezvous_tcp_fetch("", 1234, blob, BLOB, 0.1, &err) != 0 && err.code == IB_EXIT_USAGE,
          "empty address accepted");
    CHECK(rendezvous_tcp_fetch("no-such-host.invalid", 1234, blob, BLOB, 0.3, &err) != 0, "unresolvable host");
}

int main(void)
{
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
