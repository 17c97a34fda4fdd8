/* libFuzzer target: the rendezvous and liveness wire (src/comm/liveness*.c), what anything that
 * reaches rank 0's port sends, and what rank 0 sends its peers.  The first byte picks where the
 * rest goes, the others being instbench processes of a job of 4 ranks (rank 0's process holds
 * rank 0; peers G1, G2, G3 ranks 1, 2 and 3):
 *   0: a connection's hello at the rendezvous, between G1's and G2's;
 *   1: a connection's hello after the job formed;
 *   2: frames from peer G1 to rank 0's process;
 *   3: frames from rank 0's process to a peer;
 *   4: rank 0's process answering peer G3's hello (rank 0 may hold ranks 0-2), then, G3 admitted,
 *      its frames to G3 on the same connection.
 * Every connection is a Unix socket holding all its bytes (and its end) before rank 0's process
 * reads, so nothing here waits on a clock and a run is the same on every machine.  No input may
 * crash, hang or leak, every message must be terminal-safe, and the outcome must be the one the
 * wire format of instbench/comm.h gives, computed here on its own (model_*): the job fails at the
 * rendezvous only for a hello of this build that claims a joined peer's rank (naming ranks both
 * claim), another world size or another workload; after it formed, only for a hello that claims a
 * peer's rank; a frame stream ends in a goodbye, a failure, a relay, a death or a broken frame as
 * it says; a peer takes rank 0's answer only when it is a hello of this build that fits the job,
 * stops at once for an answer that never could (a refusal, another build, a stranger's bytes) and
 * tries again when the answer was cut short. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "comm/liveness_wire.h"
#include "instbench/comm.h"

#define WORLD 4
#define BLOB 16
static const char WORKLOAD[] = "model=vit_tiny_patch16_224\nbatch=8\n";
static const unsigned char blob[BLOB] = "instbench-nccl!";
static struct sockaddr_un addr;
static socklen_t addr_len;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* A listening socket in the abstract namespace, non-blocking as rendezvous_tcp_listen's is. */
static int listener(void)
{
    if (!addr_len) {
        addr.sun_family = AF_UNIX;
        int n = snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "instbench-fuzz-liveness-%ld", (long)getpid());
        addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, addr_len) != 0 || listen(fd, 16) != 0) abort();
    return fd;
}

/* A connection to the listener that has sent BYTES (and its end, with SHUT). */
static int client(const void *bytes, size_t n, int shut)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, addr_len) != 0) abort();
    if (n && send(fd, bytes, n, MSG_NOSIGNAL) != (ssize_t)n) abort();
    if (shut) shutdown(fd, SHUT_WR);
    return fd;
}

/* A peer's hello as comm.h spells it, its workload after it. */
static int good_peer(int first, int shut)
{
    unsigned char h[HELLO_LEN + sizeof WORKLOAD];
    const size_t wlen = strlen(WORKLOAD);
    memcpy(h, "IBRV0003", 8);
    put_be32(h + 8, BLOB), put_be32(h + 12, WORLD), put_be32(h + 16, (uint32_t)first), put_be32(h + 20, 1);
    put_be32(h + 24, (uint32_t)wlen);
    memcpy(h + HELLO_LEN, WORKLOAD, wlen);
    return client(h, HELLO_LEN + wlen, shut);
}

static void terminal_safe(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) abort();
}

/* Whether ranks [first, first + n) meet [lo, hi), in exact arithmetic. */
static int overlaps(uint32_t first, uint32_t n, uint64_t lo, uint64_t hi)
{
    return n > 0 && (uint64_t)first < hi && lo < (uint64_t)first + n;
}

typedef struct model_hello {
    int complete; /* this version's magic, a workload length within bounds, all of it there */
    uint32_t len, world, first, nranks, wlen;
    const uint8_t *workload;
} model_hello;

static model_hello model_read_hello(const uint8_t *d, size_t n)
{
    model_hello h = {0};
    if (n < HELLO_LEN || memcmp(d, "IBRV0003", 8)) return h;
    h.len = be32(d + 8), h.world = be32(d + 12), h.first = be32(d + 16), h.nranks = be32(d + 20);
    h.wlen = be32(d + 24);
    h.workload = d + HELLO_LEN;
    h.complete = h.wlen <= LIVENESS_WORKLOAD_MAX && n - HELLO_LEN >= h.wlen;
    return h;
}

/* At the rendezvous, G1 (rank 1) joined, G2 and G3 waiting behind: whether the job forms, or
 * fails because of which rank two processes claim (CLAIMED_1, _2), or fails otherwise. */
enum { FORMS, CLAIMED_1, CLAIMED_2, FAILS };
static int model_rendezvous(const uint8_t *d, size_t n)
{
    model_hello h = model_read_hello(d, n);
    if (!h.complete || h.len != BLOB) return FORMS; /* dropped or refused: G2 and G3 complete the job */
    if (h.world != WORLD) return FAILS;
    if (overlaps(h.first, h.nranks, 1, 2)) return CLAIMED_1;
    if (h.nranks < 1 || h.first < 1 || (uint64_t)h.first + h.nranks > WORLD) return FORMS; /* refused */
    if (h.wlen != strlen(WORKLOAD) || memcmp(h.workload, WORKLOAD, h.wlen)) return FAILS;
    return overlaps(h.first, h.nranks, 2, 3) ? CLAIMED_2 : FORMS; /* it joined; G2 comes next */
}

/* A duplicate's message names the ranks both claim: within [LO, HI], the first no later than the
 * last. */
static void claimed_within(const char *msg, unsigned long long lo, unsigned long long hi)
{
    const char *p = strstr(msg, "two processes claim rank");
    unsigned long long a, b;
    if (!p) abort();
    if (sscanf(p, "two processes claim ranks %llu-%llu", &a, &b) != 2) {
        if (sscanf(p, "two processes claim rank %llu", &a) != 1) abort();
        b = a;
    }
    if (a < lo || b > hi || a > b) abort();
}

/* After the job formed: whether a late hello fails it (it claims a rank G1, G2 or G3 holds). */
static int model_late_fails(const uint8_t *d, size_t n)
{
    if (n < HELLO_LEN || memcmp(d, "IBRV0003", 8)) return 0;
    model_hello h = model_read_hello(d, n);
    return h.wlen <= LIVENESS_WORKLOAD_MAX && h.len == BLOB && overlaps(h.first, h.nranks, 1, WORLD);
}

enum { QUIET, DIED, FAILED, RELAYED, MALFORMED };

/* How a stream of frames ends, then its end of file, read by rank 0's process (ROOT) or a peer. */
static int model_frames(const uint8_t *d, size_t n, int root)
{
    int goodbye = 0;
    for (size_t pos = 0;;) {
        if (n - pos < FRAME_HDR) return goodbye ? QUIET : DIED;
        const uint8_t *h = d + pos;
        const size_t len = (size_t)h[6] << 8 | h[7];
        if (memcmp(h, "IBL1", 4) || !strchr("GFR", h[4]) || !h[4] || h[5] || len > LIVENESS_TEXT_MAX ||
            (h[4] == 'G' && len))
            return MALFORMED;
        if (n - pos - FRAME_HDR < len) return goodbye ? QUIET : DIED;
        if (h[4] == 'F') return FAILED;
        if (h[4] == 'R') return root ? MALFORMED : RELAYED;
        goodbye = 1;
        pos += FRAME_HDR;
    }
}

/* Rank 0's process with G1, G2 and G3 joined; *G their connections. */
static liveness *formed(int g[3])
{
    int lfd = listener();
    for (int i = 0; i < 3; i++) g[i] = good_peer(i + 1, 0);
    rendezvous_tcp_server s = {lfd, 0};
    liveness *l = NULL;
    ib_error err = {0};
    if (liveness_serve(&s, 1, WORLD, 3, blob, BLOB, WORKLOAD, 10.0, &l, &err) != 0) abort();
    return l;
}

static void at_rendezvous(const uint8_t *d, size_t n)
{
    int lfd = listener();
    int g1 = good_peer(1, 0), f = client(d, n, 1), g2 = good_peer(2, 1), g3 = good_peer(3, 1);
    rendezvous_tcp_server s = {lfd, 0};
    liveness *l = NULL;
    ib_error err = {0};
    const int rc = liveness_serve(&s, 1, WORLD, 3, blob, BLOB, WORKLOAD, 10.0, &l, &err);
    const int want = model_rendezvous(d, n);
    if ((rc == 0) != (want == FORMS)) abort();
    if (rc != 0) {
        terminal_safe(err.msg);
        if (err.code != IB_EXIT_USAGE) abort(); /* it is the job's configuration, not a failure of the run */
        if (want == CLAIMED_1) claimed_within(err.msg, 1, 1);
        if (want == CLAIMED_2) claimed_within(err.msg, 2, 2);
    }
    liveness_close(l);
    rendezvous_tcp_close(&s);
    close(g1), close(f), close(g2), close(g3);
}

static void after_forming(const uint8_t *d, size_t n)
{
    int g[3];
    liveness *l = formed(g);
    int f = client(d, n, 1);
    char why[LIVENESS_CAUSE_MAX];
    const int tripped = liveness_check(l, why, sizeof why);
    if (tripped != model_late_fails(d, n)) abort();
    if (tripped) {
        terminal_safe(why);
        claimed_within(why, 1, WORLD - 1);
    }
    for (int i = 0; i < 3; i++) (void)liveness_check(l, why, sizeof why); /* the refused one drained */
    liveness_close(l);
    close(f);
    for (int i = 0; i < 3; i++) close(g[i]);
}

/* Checks L until it reports (at most enough checks for every frame of N bytes) and compares the
 * outcome with the model's. */
static void check_frames(liveness *l, const uint8_t *d, size_t n, int root)
{
    char why[LIVENESS_CAUSE_MAX] = "";
    int tripped = 0;
    for (size_t i = 0; i < n / FRAME_HDR / FRAMES_PER_CHECK + 2 && !tripped; i++)
        tripped = liveness_check(l, why, sizeof why);
    const int want = model_frames(d, n, root);
    if (tripped != (want != QUIET)) abort();
    if (!tripped) return;
    terminal_safe(why);
    const char *says = want == DIED ? "died (" : want == FAILED ? "failed: " : want == MALFORMED ? "malformed" : NULL;
    if (says ? !strstr(why, says) : !why[0]) abort(); /* a relay: its text, never empty */
}

static void frames_to_root(const uint8_t *d, size_t n)
{
    int g[3];
    liveness *l = formed(g);
    if (n && send(g[0], d, n, MSG_NOSIGNAL) != (ssize_t)n) abort();
    shutdown(g[0], SHUT_WR);
    check_frames(l, d, n, 1);
    liveness_close(l);
    for (int i = 0; i < 3; i++) close(g[i]);
}

/* A socket pair whose first end has D (N bytes) waiting to be read, then its end: SV[1] has sent them. */
static void filled_pair(int sv[2], const uint8_t *d, size_t n)
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
    if (n && send(sv[1], d, n, MSG_NOSIGNAL) != (ssize_t)n) abort();
    shutdown(sv[1], SHUT_WR);
}

/* A peer's channel to rank 0's process (holding ranks [0, NRANKS)) on FD, as liveness_fetch keeps
 * it, reading frames D (N bytes). */
static void peer_reads_frames(int fd, int nranks, const uint8_t *d, size_t n)
{
    liveness *l = liveness_new_conns(0, 1);
    if (!l) abort();
    l->nconn = 1;
    l->conns[0] = (conn){.fd = fd, .first_rank = 0, .nranks = nranks, .addr = "rank0"};
    check_frames(l, d, n, 0);
    liveness_close(l); /* closes FD */
}

static void frames_to_peer(const uint8_t *d, size_t n)
{
    int sv[2];
    filled_pair(sv, d, n);
    peer_reads_frames(sv[0], 1, d, n);
    close(sv[1]);
}

#define PEER_FIRST 3 /* G3: rank 0's process may hold ranks 0, 0-1 or 0-2 */
enum { JOINS, AGAIN, STRANGER, REFUSED, INTERRUPTED, MISFITS };

/* Whether the first N bytes of what answered are the start of a version's hello or of a frame. */
static int model_could_be_rank0(const uint8_t *d, size_t n)
{
    static const char hello_stem[] = "IBRV000"; /* "IBRV0003" and its older versions */
    return !memcmp(d, hello_stem, n < 7 ? n : 7) || !memcmp(d, "IBL1", n < 4 ? n : 4);
}

/* What G3 makes of rank 0's answer D (N bytes, then its end), comm.h's wire format read on its
 * own; *REST: where rank 0's frames begin once G3 joined. */
static int model_answer(const uint8_t *d, size_t n, size_t *rest)
{
    if (n == 0) return AGAIN;
    if (!model_could_be_rank0(d, n < MAGIC_LEN ? n : MAGIC_LEN)) return STRANGER;
    if (n < MAGIC_LEN) return AGAIN;
    if (!memcmp(d, "IBL1", 4)) { /* refused: an 'F' frame in place of the hello */
        const size_t len = (size_t)d[6] << 8 | d[7];
        if (d[4] != 'F' || d[5] || len > LIVENESS_TEXT_MAX) return STRANGER;
        if (n - FRAME_HDR < len) return AGAIN;
        static const char interrupted[] = "rank 0's process was interrupted";
        const size_t k = sizeof interrupted - 1;
        return len >= k && !memcmp(d + FRAME_HDR, interrupted, k) ? INTERRUPTED : REFUSED;
    }
    if (!memcmp(d, "IBRV0001", 8) || !memcmp(d, "IBRV0002", 8)) return MISFITS;
    if (memcmp(d, "IBRV0003", 8)) return STRANGER;
    if (n < HELLO_LEN) return AGAIN;
    const uint32_t len = be32(d + 8), world = be32(d + 12), first = be32(d + 16), nranks = be32(d + 20);
    const uint32_t wlen = be32(d + 24);
    if (wlen > LIVENESS_WORKLOAD_MAX || len != BLOB || world != WORLD || first != 0 || nranks < 1 ||
        nranks > PEER_FIRST)
        return MISFITS;
    if (n - HELLO_LEN < (size_t)wlen + BLOB) return AGAIN;
    if (wlen != strlen(WORKLOAD) || memcmp(d + HELLO_LEN, WORKLOAD, wlen)) return MISFITS;
    *rest = HELLO_LEN + wlen + BLOB;
    return JOINS;
}

/* What a refusal's text shows once escaped: printable ASCII as it came, "(no reason given)" when
 * empty, "rendezvous: " dropped from its start; 0 when it holds other bytes (not compared). */
static int model_refusal_text(const uint8_t *t, size_t len, char *out, size_t cap)
{
    for (size_t i = 0; i < len; i++)
        if (t[i] < 0x20 || t[i] >= 0x7f) return 0;
    if (!len) t = (const uint8_t *)"(no reason given)", len = strlen((const char *)t);
    if (len > LIVENESS_TEXT_MAX - 1) len = LIVENESS_TEXT_MAX - 1; /* the escaped text's buffer */
    const size_t skip = len >= 12 && !memcmp(t, "rendezvous: ", 12) ? 12 : 0;
    snprintf(out, cap, "%.*s", (int)(len - skip), (const char *)t + skip);
    return 1;
}

static void peer_handshake(const uint8_t *d, size_t n)
{
    int sv[2];
    filled_pair(sv, d, n);
    unsigned char got[BLOB];
    fetch_ctx f = {.mine = {BLOB, WORLD, PEER_FIRST, 1, (uint32_t)strlen(WORKLOAD)},
                   .workload = WORKLOAD,
                   .addr = "rank0",
                   .port = 29500,
                   .blob = got,
                   .timeout_s = 10.0};
    f.started = util_now_seconds(), f.deadline = f.started + f.timeout_s, f.next_progress = f.deadline;
    const int rc = liveness_peer_handshake(sv[0], &f);

    /* G3 said who it is first, whatever came back */
    unsigned char said[HELLO_LEN + sizeof WORKLOAD], want[HELLO_LEN + sizeof WORKLOAD];
    const size_t wlen = strlen(WORKLOAD);
    memcpy(want, "IBRV0003", 8);
    put_be32(want + 8, BLOB), put_be32(want + 12, WORLD), put_be32(want + 16, PEER_FIRST), put_be32(want + 20, 1);
    put_be32(want + 24, (uint32_t)wlen);
    memcpy(want + HELLO_LEN, WORKLOAD, wlen);
    if (recv(sv[1], said, sizeof said, MSG_DONTWAIT) != (ssize_t)(HELLO_LEN + wlen) ||
        memcmp(said, want, HELLO_LEN + wlen))
        abort();

    size_t rest = 0;
    const int outcome = model_answer(d, n, &rest);
    terminal_safe(f.fatal), terminal_safe(f.problem);
    if ((rc == -1) != (outcome == AGAIN) || (rc == -1 && (f.fatal[0] || !f.problem[0]))) abort();
    if (outcome != AGAIN && (outcome == JOINS) == (f.fatal[0] != 0)) abort(); /* a reason exactly when it stops */
    if (f.fatal[0] && f.fatal_code != (outcome == INTERRUPTED ? IB_EXIT_RUNTIME : IB_EXIT_USAGE)) abort();
    if (outcome == STRANGER && !strstr(f.fatal, "something other than instbench's rank 0")) abort();
    char text[LIVENESS_TEXT_MAX];
    const size_t tlen = n >= FRAME_HDR ? (size_t)d[6] << 8 | d[7] : 0;
    if (outcome == REFUSED &&
        (!strstr(f.fatal, "refused this process: ") || (model_refusal_text(d + FRAME_HDR, tlen, text, sizeof text) &&
                                                        strcmp(strstr(f.fatal, "refused this process: ") + 22, text))))
        abort();
    if (outcome == INTERRUPTED && !strstr(f.fatal, "rank 0's process was interrupted")) abort();
    if (outcome == JOINS) {
        if (f.root_nranks != (int)be32(d + 20) || memcmp(got, d + rest - BLOB, BLOB)) abort();
        peer_reads_frames(sv[0], f.root_nranks, d + rest, n - rest);
    } else {
        close(sv[0]);
    }
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 32768) return 0; /* every byte fits in a socket's buffer: no send waits */
    ib_log_level = 0;                       /* the dropped connections' warnings, tens of thousands */
    switch (data[0] % 5) {
    case 0: at_rendezvous(data + 1, size - 1); break;
    case 1: after_forming(data + 1, size - 1); break;
    case 2: frames_to_root(data + 1, size - 1); break;
    case 3: frames_to_peer(data + 1, size - 1); break;
    default: peer_handshake(data + 1, size - 1); break;
    }
    return 0;
}
