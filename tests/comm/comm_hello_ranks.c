/* comm_hello_ranks: the ranks a hello claims are two u32s (first rank, count) from the network,
 * and rank 0's process compares them with its peers' ranks as the numbers they are, never as a sum
 * that wraps past 2^32 or a first rank read as a negative int.  Rank 0's process (ranks 0-1 of 6)
 * with peers written here byte by byte as comm.h's wire format spells a hello, over 127.0.0.1:
 * - at the rendezvous, a hello from rank 4294967295, 4 ranks ([2^32 - 1, 2^32 + 3), not one rank
 *   of the job) after ranks 2-3 joined is refused as not fitting, and the job still forms;
 * - a hello from rank 2 claiming 2^32 - 1 ranks after ranks 2-3 joined fails the job as a
 *   duplicate, naming ranks 2-3, the ranks both claim;
 * - after the job formed, the same hello from rank 4294967295 is refused, and the job goes on;
 * - a hello from rank 3 that claims no rank at all ([3, 3): inside ranks 2-3 that a peer holds, yet
 *   none of them) is refused as not fitting, at the rendezvous and after the job formed: an empty
 *   claim overlaps nothing, so it neither fails the job as a duplicate nor names "ranks 3-2". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "instbench/comm.h"

#include "check.h"

#define BLOB 16
#define WORLD 6
#define NLOCAL 2
#define LIMIT_S 20.0 /* nothing here waits for it: every hello is in its socket before rank 0 reads */

static const unsigned char blob[BLOB] = "0123456789abcde";

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A connection to 127.0.0.1:PORT that has sent a hello of this build for ranks [first, first +
 * n) of WORLD with no workload (and its end, with SHUT): the socket, or -1. */
static int hello_from(int port, uint32_t first, uint32_t n, int shut)
{
    unsigned char h[28];
    memcpy(h, "IBRV0003", 8);
    put_u32(h + 8, BLOB), put_u32(h + 12, WORLD), put_u32(h + 16, first), put_u32(h + 20, n), put_u32(h + 24, 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0 || send(fd, h, sizeof h, MSG_NOSIGNAL) != 28) {
        CHECK(0, "connecting to port %d", port);
        if (fd >= 0) close(fd);
        return -1;
    }
    if (shut) shutdown(fd, SHUT_WR);
    return fd;
}

/* The text of the 'F' frame FD received first (a refusal), "" when none came within 5 s. */
static void refusal(int fd, char *text, size_t cap)
{
    unsigned char buf[8 + LIVENESS_TEXT_MAX];
    size_t have = 0;
    text[0] = '\0';
    struct pollfd pf = {fd, POLLIN, 0};
    while (have < sizeof buf && poll(&pf, 1, 5000) == 1) {
        ssize_t k = recv(fd, buf + have, sizeof buf - have, 0);
        if (k <= 0) break;
        have += (size_t)k;
        if (have >= 8 && have >= 8 + (size_t)(buf[6] << 8 | buf[7])) break;
    }
    if (have < 8 || memcmp(buf, "IBL1F", 5)) return;
    size_t n = (size_t)(buf[6] << 8 | buf[7]);
    if (n > have - 8) n = have - 8;
    snprintf(text, cap, "%.*s", (int)n, (const char *)buf + 8);
}

/* Rank 0's process with a listening port: 0, or -1 after a failed check. */
static int listen_free(rendezvous_tcp_server *srv)
{
    ib_error err;
    if (rendezvous_tcp_listen(0, srv, &err) == 0) return 0;
    CHECK(0, "listen: %s", err.msg);
    return -1;
}

/* A stranger's hello for ranks [FIRST, FIRST + N) after ranks 2-3 joined, none of them a rank of
 * the job: refused with a message holding WANT, and the job still forms. */
static void test_stranger_at_rendezvous(uint32_t first, uint32_t n, const char *want)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    int a = hello_from(srv.port, 2, 2, 0), w = hello_from(srv.port, first, n, 1), b = hello_from(srv.port, 4, 2, 0);
    liveness *l = NULL;
    ib_error err = {0};
    int rc = liveness_serve(&srv, NLOCAL, WORLD, 2, blob, BLOB, NULL, LIMIT_S, &l, &err);
    CHECK(rc == 0, "a hello from rank %u claiming %u ranks failed the job: %s", first, n, err.msg);
    char why[LIVENESS_TEXT_MAX + 1];
    refusal(w, why, sizeof why);
    CHECK(strstr(why, want) && strstr(why, "not in [2, 6)"),
          "the hello from rank %u claiming %u ranks was not refused as outside the job: '%s'", first, n, why);
    liveness_close(l);
    rendezvous_tcp_close(&srv);
    close(a), close(w), close(b);
}

static void test_huge_count_names_common_ranks(void)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    int a = hello_from(srv.port, 2, 2, 0), d = hello_from(srv.port, 2, 0xffffffffu, 1);
    liveness *l = NULL;
    ib_error err = {0};
    int rc = liveness_serve(&srv, NLOCAL, WORLD, 2, blob, BLOB, NULL, LIMIT_S, &l, &err);
    CHECK(rc != 0 && err.code == IB_EXIT_USAGE && strstr(err.msg, "two processes claim ranks 2-3 of the job"),
          "a hello from rank 2 claiming 4294967295 ranks: rc %d, code %d: %s", rc, err.code, err.msg);
    liveness_close(l);
    rendezvous_tcp_close(&srv);
    close(a), close(d);
}

/* After the job formed, a stranger's hello for ranks [FIRST, FIRST + N), none of them a rank of
 * the job: refused, and the job goes on. */
static void test_stranger_after_forming(uint32_t first, uint32_t n)
{
    rendezvous_tcp_server srv;
    if (listen_free(&srv)) return;
    int a = hello_from(srv.port, 2, 2, 0), b = hello_from(srv.port, 4, 2, 0);
    liveness *l = NULL;
    ib_error err = {0};
    if (liveness_serve(&srv, NLOCAL, WORLD, 2, blob, BLOB, NULL, LIMIT_S, &l, &err) != 0) {
        CHECK(0, "the job did not form: %s", err.msg);
        close(a), close(b);
        rendezvous_tcp_close(&srv);
        return;
    }
    int w = hello_from(srv.port, first, n, 1);
    char cause[LIVENESS_CAUSE_MAX] = "", why[LIVENESS_TEXT_MAX + 1] = "";
    /* rank 0's process takes late connections in its checks: check until W hears its answer */
    int tripped = 0;
    struct pollfd pf = {w, POLLIN, 0};
    for (int i = 0; i < 500 && !tripped && poll(&pf, 1, 10) == 0; i++) tripped = liveness_check(l, cause, sizeof cause);
    if (!tripped) {
        refusal(w, why, sizeof why);
        tripped = liveness_check(l, cause, sizeof cause);
    }
    CHECK(!tripped, "a late hello from rank %u claiming %u ranks failed the job: %s", first, n, cause);
    CHECK(strstr(why, "the job has formed without it"), "the late hello was not refused: '%s'", why);
    liveness_close(l);
    close(a), close(b), close(w);
}

int main(void)
{
    test_stranger_at_rendezvous(0xffffffffu, 4, "first 4294967295, 4 of them");
    test_huge_count_names_common_ranks();
    test_stranger_after_forming(0xffffffffu, 4);
    test_stranger_at_rendezvous(3, 0, "first 3, 0 of them");
    test_stranger_after_forming(3, 0);
    if (failures) {
        fprintf(stderr, "comm_hello_ranks: %d failure(s)\n", failures);
        return 1;
    }
    printf("comm_hello_ranks: all passed\n");
    return 0;
}
