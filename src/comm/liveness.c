/* comm/liveness: the rendezvous connections kept open for the whole job, so that the death of any
 * process is seen by all the others within about a second instead of NCCL's timeout (see comm.h
 * for the wire format and the API).  Rank 0's process holds one socket per peer process, each
 * peer its socket to rank 0; a connection that ends without a goodbye means that process died.
 * Rank 0's process passes on what it learns, so every process names the one that died.
 *
 * Every byte from the network is hostile: the handshake and the frames have fixed magics and
 * bounded lengths, text is escaped (util_term_escape) before it reaches a message, a peer that
 * breaks the framing is reported as failed, and nothing here waits without a deadline. */
#include "instbench/comm.h"
#include "comm/tcp.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MAGIC "IBRV0003"
#define HELLO_V1 "IBRV0001"
#define HELLO_V2 "IBRV0002"
#define MAGIC_LEN 8
#define HELLO_LEN (MAGIC_LEN + 20) /* magic, blob length, world size, first rank, rank count, workload length */
#define FRAME_MAGIC "IBL1"
#define FRAME_HDR 8 /* magic, type, 0, 16-bit payload length */
#define MAX_BLOB (1u << 20)
#define FRAMES_PER_CHECK 16 /* a peer flooding frames cannot keep one check busy */
#define SEND_BOUND_S 0.2    /* a frame is tiny: a peer that cannot take it is given up on */
#define PEER_HELLO_S 5.0    /* one peer may take at most this long, so a stuck one cannot block the rest */
/* How long a peer waits for rank 0's answer once connected, and how long rank 0 may keep closing
 * its connections unanswered: rank 0's process answers a connection within milliseconds of taking
 * it, and gives one at most PEER_HELLO_S, one at a time; 10 s leaves room for a stuck one ahead of
 * this one.  A listener silent for longer is not instbench's rank 0. */
#define ANSWER_WAIT_S 10.0
#define REFUSE_LINGER_S 0.5 /* a refused instbench process closes one round trip after the refusal */

enum { FRAME_GOODBYE = 'G', FRAME_FAIL = 'F', FRAME_RELAY = 'R' };

typedef struct conn {
    int fd;                 /* -1 once closed */
    int first_rank, nranks; /* the ranks of the process at the other end */
    char addr[64];          /* its numeric address */
    int said_goodbye;
    unsigned char buf[FRAME_HDR + LIVENESS_TEXT_MAX];
    size_t have; /* bytes of the frame being read */
} conn;

struct liveness {
    pthread_mutex_t mu; /* the watcher checks while a failing rank may send its reason */
    int is_root;        /* rank 0's process: conns are the peers; else conns[0] is rank 0's */
    int nconn;
    conn *conns;
    int done;    /* this process said goodbye or sent its failure: nothing more is sent */
    int tripped; /* another process died or failed: cause says which */
    char cause[LIVENESS_CAUSE_MAX];
};

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

typedef struct hello {
    uint32_t len, world, first, nranks, wlen;
} hello;

static void put_hello(unsigned char *h, const hello *v)
{
    memcpy(h, HELLO_MAGIC, MAGIC_LEN);
    put_u32(h + 8, v->len), put_u32(h + 12, v->world), put_u32(h + 16, v->first), put_u32(h + 20, v->nranks);
    put_u32(h + 24, v->wlen);
}

/* Parses a hello; NULL when it is one, else what is wrong with it (for the message). */
static const char *get_hello(const unsigned char *h, hello *v)
{
    if (!memcmp(h, HELLO_V1, MAGIC_LEN)) return "it runs an older instbench (rendezvous IBRV0001)";
    if (!memcmp(h, HELLO_V2, MAGIC_LEN)) return "it runs an older instbench (rendezvous IBRV0002)";
    if (memcmp(h, HELLO_MAGIC, MAGIC_LEN)) return "not an instbench rendezvous";
    v->len = get_u32(h + 8), v->world = get_u32(h + 12), v->first = get_u32(h + 16), v->nranks = get_u32(h + 20);
    v->wlen = get_u32(h + 24);
    if (v->wlen > LIVENESS_WORKLOAD_MAX) return "its workload description is too long";
    return NULL;
}

/* The first line where workloads MINE and THEIRS (THEIRS from the network, WLEN bytes) differ, as
 * a message in OUT; 0 when they are the same. */
static int workload_differs(const char *mine, const char *theirs, size_t wlen, const char *who, char *out, size_t cap)
{
    const size_t mlen = strlen(mine);
    if (mlen == wlen && !memcmp(mine, theirs, wlen)) return 0;
    size_t i = 0, line = 0; /* start of the first line that differs */
    while (i < mlen && i < wlen && mine[i] == theirs[i])
        if (mine[i++] == '\n') line = i;
    size_t me = line, te = line;
    while (me < mlen && mine[me] != '\n') me++;
    while (te < wlen && theirs[te] != '\n') te++;
    char a[256], b[256], ea[512], eb[512];
    snprintf(a, sizeof a, "%.*s", (int)(me - line), mine + line);
    snprintf(b, sizeof b, "%.*s", (int)(te - line), theirs + line);
    util_term_escape(a[0] ? a : "(nothing)", ea, sizeof ea);
    util_term_escape(b[0] ? b : "(nothing)", eb, sizeof eb);
    snprintf(out, cap,
             "rendezvous: the processes of the job were given different workloads: this process has %s, %s %s "
             "(give every process the same model, precision, optimizer, batch, data, steps, warm-up and seed "
             "flags)",
             ea, who, eb);
    return 1;
}

static void conn_close(conn *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

/* "the process of ranks 2-3 on 10.0.0.5" */
static void describe(const conn *c, char *out, size_t cap)
{
    if (c->nranks == 1) snprintf(out, cap, "the process of rank %d on %s", c->first_rank, c->addr);
    else snprintf(out, cap, "the process of ranks %d-%d on %s", c->first_rank, c->first_rank + c->nranks - 1, c->addr);
}

/* One frame to C, bounded in time; a peer that cannot take it is closed (it will see EOF). */
static void send_frame(conn *c, int type, const char *text)
{
    if (c->fd < 0 || c->said_goodbye) return;
    unsigned char f[FRAME_HDR + LIVENESS_TEXT_MAX];
    size_t n = text ? strlen(text) : 0;
    if (n > LIVENESS_TEXT_MAX) n = LIVENESS_TEXT_MAX;
    memcpy(f, FRAME_MAGIC, 4);
    f[4] = (unsigned char)type, f[5] = 0, f[6] = (unsigned char)(n >> 8), f[7] = (unsigned char)n;
    if (n) memcpy(f + FRAME_HDR, text, n);
    if (tcp_io_all(c->fd, f, FRAME_HDR + n, 1, util_now_seconds() + SEND_BOUND_S)) conn_close(c);
}

/* Refuses connection FD: an 'F' frame saying WHY in place of rank 0's hello (comm.h), so the
 * process at the other end fails at once instead of trying again until its deadline.  Then a
 * lingering close: the peer's hello, if unread, would turn the close into a reset, which may
 * discard the frame before the peer reads it.  The caller closes FD. */
static void refuse(int fd, const char *why, double until)
{
    conn c = {.fd = fd};
    char text[LIVENESS_TEXT_MAX];
    util_term_escape(why, text, sizeof text);
    send_frame(&c, FRAME_FAIL, text);
    if (c.fd < 0 || shutdown(fd, SHUT_WR) != 0) return;
    const double linger = util_now_seconds() + REFUSE_LINGER_S;
    char sink[512];
    size_t got;
    while (tcp_read_within(fd, sink, sizeof sink, linger < until ? linger : until, &got) == 0) {
    } /* to its EOF: it read the frame and closed */
}

/* Connections waiting in rank 0's backlog when the rendezvous fails: each is told WHY at once. */
static void refuse_waiting(int lfd, const char *why)
{
    char addr[64];
    const double until = util_now_seconds() + 2.0; /* the failing process does not linger for strangers */
    while (util_now_seconds() < until) {
        int fd = tcp_accept_pending(lfd, addr, sizeof addr);
        if (fd == -2) continue;
        if (fd < 0) return;
        const double t = util_now_seconds() + SEND_BOUND_S;
        refuse(fd, why, t < until ? t : until);
        close(fd);
    }
}

/* Network text made safe to print: bounded, cut at a NUL, control characters escaped. */
static void clean_text(const unsigned char *p, size_t n, char *out, size_t cap)
{
    char raw[LIVENESS_TEXT_MAX + 1];
    if (n > LIVENESS_TEXT_MAX) n = LIVENESS_TEXT_MAX;
    memcpy(raw, p, n);
    raw[n] = '\0';
    util_term_escape(raw[0] ? raw : "(no reason given)", out, cap);
}

static int trip(liveness *l, conn *c, const char *fmt, const char *detail)
{
    char who[128];
    describe(c, who, sizeof who);
    snprintf(l->cause, sizeof l->cause, fmt, who, detail);
    conn_close(c);
    return 1;
}

/* A complete frame from C: 1 when it reports a failure (l->cause set), 0 otherwise. */
static int on_frame(liveness *l, conn *c)
{
    const size_t n = c->have - FRAME_HDR;
    const int type = c->buf[4];
    c->have = 0;
    char text[LIVENESS_TEXT_MAX];
    if (type == FRAME_GOODBYE) {
        c->said_goodbye = 1;
        return 0;
    }
    clean_text(c->buf + FRAME_HDR, n, text, sizeof text);
    if (type == FRAME_FAIL) return trip(l, c, "%s failed: %s", text);
    /* a relay: rank 0's process names the culprit itself; only it may send one */
    if (l->is_root) return trip(l, c, "%s sent a malformed liveness message (%s); treating it as failed", "a relay");
    snprintf(l->cause, sizeof l->cause, "%s", text);
    conn_close(c);
    return 1;
}

/* What a frame header says is wrong with it; NULL when it is well formed. */
static const char *bad_header(const unsigned char *h)
{
    if (memcmp(h, FRAME_MAGIC, 4)) return "bad magic";
    if (h[4] != FRAME_GOODBYE && h[4] != FRAME_FAIL && h[4] != FRAME_RELAY) return "unknown type";
    if (h[5] != 0) return "bad header";
    if (((size_t)h[6] << 8 | h[7]) > LIVENESS_TEXT_MAX) return "text too long";
    if (h[4] == FRAME_GOODBYE && (h[6] || h[7])) return "bad goodbye";
    return NULL;
}

/* Why a connection ended without a goodbye. */
static const char *end_reason(ssize_t k, int e)
{
    if (k == 0) return "connection closed";
    if (e == ECONNRESET || e == EPIPE) return "connection reset";
    if (e == ETIMEDOUT) return "no answer to TCP keepalive: node down or network cut";
    return strerror(e);
}

/* Reads what C has sent, never blocking: 1 when it shows that process died or failed. */
static int drain(liveness *l, conn *c)
{
    for (int frames = 0; c->fd >= 0 && frames < FRAMES_PER_CHECK;) {
        size_t want = c->have < FRAME_HDR ? FRAME_HDR : FRAME_HDR + ((size_t)c->buf[6] << 8 | c->buf[7]);
        if (c->have == want) {
            frames++;
            if (on_frame(l, c)) return 1;
            continue;
        }
        ssize_t k = recv(c->fd, c->buf + c->have, want - c->have, MSG_DONTWAIT);
        if (k > 0) {
            c->have += (size_t)k;
            const char *bad = c->have == FRAME_HDR ? bad_header(c->buf) : NULL;
            if (bad) return trip(l, c, "%s sent a malformed liveness message (%s); treating it as failed", bad);
            continue;
        }
        int e = errno;
        if (k < 0 && e == EINTR) continue;
        if (k < 0 && (e == EAGAIN || e == EWOULDBLOCK)) return 0;
        if (c->said_goodbye) { /* it finished and left */
            conn_close(c);
            return 0;
        }
        return trip(l, c, "%s died (%s)", end_reason(k, e));
    }
    return 0;
}

/* Rank 0's process tells every other peer what happened, so each names the culprit. */
static void relay(liveness *l)
{
    for (int i = 0; i < l->nconn; i++) send_frame(&l->conns[i], FRAME_RELAY, l->cause);
}

static void poll_all(liveness *l)
{
    struct pollfd pf[l->nconn > 0 ? l->nconn : 1];
    int np = 0;
    for (int i = 0; i < l->nconn; i++)
        if (l->conns[i].fd >= 0) pf[np].fd = l->conns[i].fd, pf[np].events = POLLIN, pf[np].revents = 0, np++;
    if (np == 0 || poll(pf, (nfds_t)np, 0) <= 0) return;
    for (int i = 0, j = 0; i < l->nconn && !l->tripped; i++) {
        conn *c = &l->conns[i];
        if (c->fd < 0) continue;
        const short rev = pf[j++].revents;
        if (!rev || !drain(l, c)) continue;
        l->tripped = 1;
        if (l->is_root) relay(l);
    }
}

int liveness_check(liveness *l, char *why, size_t cap)
{
    if (!l) return 0;
    pthread_mutex_lock(&l->mu);
    if (!l->tripped && !l->done) poll_all(l);
    const int tripped = l->tripped;
    if (tripped && why && cap) snprintf(why, cap, "%s", l->cause);
    pthread_mutex_unlock(&l->mu);
    return tripped;
}

int liveness_fail(liveness *l, const char *reason)
{
    if (!l) return 0;
    pthread_mutex_lock(&l->mu);
    const int sent = !l->tripped && !l->done;
    if (sent) {
        char text[LIVENESS_TEXT_MAX];
        util_term_escape(reason && reason[0] ? reason : "(no reason given)", text, sizeof text);
        for (int i = 0; i < l->nconn; i++) send_frame(&l->conns[i], FRAME_FAIL, text);
        l->done = 1;
    }
    pthread_mutex_unlock(&l->mu);
    return sent;
}

void liveness_goodbye(liveness *l)
{
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    if (!l->done)
        for (int i = 0; i < l->nconn; i++) send_frame(&l->conns[i], FRAME_GOODBYE, NULL);
    l->done = 1;
    pthread_mutex_unlock(&l->mu);
}

void liveness_close(liveness *l)
{
    if (!l) return;
    for (int i = 0; i < l->nconn; i++) conn_close(&l->conns[i]);
    pthread_mutex_destroy(&l->mu);
    free(l->conns);
    free(l);
}

static liveness *liveness_new(int is_root, int nconn)
{
    liveness *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->conns = calloc((size_t)(nconn > 0 ? nconn : 1), sizeof *l->conns);
    if (!l->conns) {
        free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    l->is_root = is_root;
    for (int i = 0; i < nconn; i++) l->conns[i].fd = -1;
    return l;
}

/* Whether a peer's hello fits this job; NULL when it does, else why not. */
static const char *peer_misfit(const liveness *l, const hello *h, size_t len, int nlocal, int world, char *buf,
                               size_t cap)
{
    if (h->len != len) {
        snprintf(buf, cap, "it expects a %u-byte id, this build %zu: run the same instbench build everywhere", h->len,
                 len);
        return buf;
    }
    if (h->world != (uint32_t)world) {
        snprintf(buf, cap, "it counts %u ranks in the job, this process %d", h->world, world);
        return buf;
    }
    if (h->nranks < 1 || h->first < (uint32_t)nlocal || h->first >= (uint32_t)world ||
        h->nranks > (uint32_t)world - h->first) {
        snprintf(buf, cap, "its ranks (first %u, %u of them) are not in [%d, %d)", h->first, h->nranks, nlocal, world);
        return buf;
    }
    return NULL;
}

/* The joined peer that holds some of the ranks hello H claims, or NULL. */
static const conn *rank_holder(const liveness *l, const hello *h)
{
    for (int i = 0; i < l->nconn; i++) {
        const conn *c = &l->conns[i];
        if (c->fd >= 0 && (int)h->first < c->first_rank + c->nranks && c->first_rank < (int)(h->first + h->nranks))
            return c;
    }
    return NULL;
}

/* Two processes claim the same ranks: the launcher gave two of them one RANK (or node rank), and
 * a rank the job needs is missing, so no one may wait for it. */
static void say_duplicate(const conn *holder, const hello *h, const char *addr, char *out, size_t cap)
{
    const unsigned lo = h->first > (unsigned)holder->first_rank ? h->first : (unsigned)holder->first_rank;
    const unsigned hi_a = h->first + h->nranks - 1, hi_b = (unsigned)(holder->first_rank + holder->nranks - 1);
    const unsigned hi = hi_a < hi_b ? hi_a : hi_b;
    char ranks[32];
    if (lo == hi) snprintf(ranks, sizeof ranks, "rank %u", lo);
    else snprintf(ranks, sizeof ranks, "ranks %u-%u", lo, hi);
    snprintf(out, cap,
             "rendezvous: two processes claim %s of the job: the process on %s and the process on %s (give every "
             "process its own RANK / node rank)",
             ranks, holder->addr, addr);
}

/* One accepted connection: its hello checked, the blob sent; 0 when it joined as conns[slot], -1
 * when it was dropped, -2 when its workload differs from WORKLOAD (MISMATCH says how). */
static int admit(liveness *l, int slot, int fd, const char *addr, const unsigned char *reply, size_t rlen,
                 const char *workload, size_t len, int nlocal, int world, double deadline, char *mismatch, size_t mcap)
{
    double peer_deadline = util_now_seconds() + PEER_HELLO_S;
    if (peer_deadline > deadline) peer_deadline = deadline;
    unsigned char h[HELLO_LEN];
    hello v;
    char buf[160];
    /* the length of an older hello first, so an older peer or a stranger is named, not waited on */
    const char *why = tcp_io_all(fd, h, HELLO_LEN - 4, 0, peer_deadline)
                          ? "no complete hello (it closed, or said nothing for 5 s)"
                      : memcmp(h, HELLO_MAGIC, MAGIC_LEN) ? get_hello(h, &v)
                      : tcp_io_all(fd, h + HELLO_LEN - 4, 4, 0, peer_deadline)
                          ? "no complete hello (it closed, or said nothing for 5 s)"
                          : get_hello(h, &v);
    char theirs[LIVENESS_WORKLOAD_MAX];
    if (!why && v.wlen && tcp_io_all(fd, theirs, v.wlen, 0, peer_deadline))
        why = "no complete hello (it closed, or said nothing for 5 s)";
    if (!why && v.len == len && v.world != (uint32_t)world) {
        /* the same build told another job size: both ends fail now rather than wait out the deadline */
        tcp_io_all(fd, (void *)reply, rlen, 1, peer_deadline); /* it sees the size in the reply */
        snprintf(mismatch, mcap,
                 "rendezvous: the processes of the job were given different world sizes: this process %d, the "
                 "process of rank %u on %s %u (give every process the same WORLD_SIZE / node count)",
                 world, v.first, addr, v.world);
        return -2;
    }
    const conn *holder = why || v.len != len ? NULL : rank_holder(l, &v);
    if (holder) {
        say_duplicate(holder, &v, addr, mismatch, mcap);
        refuse(fd, mismatch, peer_deadline);
        return -2;
    }
    if (!why && (why = peer_misfit(l, &v, len, nlocal, world, buf, sizeof buf)) != NULL) {
        /* an instbench process that does not fit: told why, so it stops rather than tries again */
        char text[LIVENESS_TEXT_MAX];
        snprintf(text, sizeof text, "rank 0's process refused it: %s", why);
        refuse(fd, text, peer_deadline);
    }
    if (!why && tcp_io_all(fd, (void *)reply, rlen, 1, peer_deadline)) why = "it did not take the reply";
    if (why) {
        ib_warn("rendezvous: dropped a connection from %s: %s\n", addr, why);
        return -1;
    }
    char who[128];
    snprintf(who, sizeof who, "the process of rank %u on %s", v.first, addr);
    if (workload_differs(workload, theirs, v.wlen, who, mismatch, mcap)) return -2;
    conn *c = &l->conns[slot];
    c->fd = fd, c->first_rank = (int)v.first, c->nranks = (int)v.nranks;
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    tcp_keepalive(fd);
    return 0;
}

int liveness_serve(rendezvous_tcp_server *s, int nlocal, int world_size, int npeers, const void *blob, size_t len,
                   const char *workload, double timeout_s, liveness **out, ib_error *err)
{
    if (!workload) workload = "";
    const size_t wlen = strlen(workload);
    *out = NULL;
    if (s->fd < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: server not listening");
    if (len > MAX_BLOB) return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: blob of %zu bytes too large", len);
    if (wlen > LIVENESS_WORKLOAD_MAX)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: workload of %zu bytes too long", wlen);
    if (nlocal < 1 || world_size < nlocal || npeers < 0 || npeers > world_size - nlocal)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: %d peers for %d ranks beyond this process's %d", npeers,
                            world_size - nlocal, nlocal);
    const size_t rlen = HELLO_LEN + wlen + len;
    unsigned char *reply = malloc(rlen);
    liveness *l = liveness_new(1, npeers);
    if (!reply || !l) {
        free(reply);
        liveness_close(l);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    hello mine = {(uint32_t)len, (uint32_t)world_size, 0, (uint32_t)nlocal, (uint32_t)wlen};
    put_hello(reply, &mine);
    memcpy(reply + HELLO_LEN, workload, wlen);
    memcpy(reply + HELLO_LEN + wlen, blob, len);
    const double deadline = util_now_seconds() + timeout_s;
    l->nconn = npeers;
    int served = 0;
    char addr[64], mismatch[1400] = "";
    while (served < npeers) {
        int fd = tcp_accept(s->fd, deadline, addr, sizeof addr);
        if (fd < 0) break;
        int a = admit(l, served, fd, addr, reply, rlen, workload, len, nlocal, world_size, deadline, mismatch,
                      sizeof mismatch);
        if (a == 0) served++;
        else close(fd);
        if (a == -2) break;
    }
    free(reply);
    if (!mismatch[0] && served == npeers) {
        *out = l;
        return 0;
    }
    if (mismatch[0]) ib_error_set(err, IB_EXIT_USAGE, "%s", mismatch);
    else if (comm_stopped())
        ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: stopped by a signal (%d of %d peers connected)", served,
                     npeers);
    else
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "rendezvous: only %d of %d peers connected to port %d within %.0f s (are the other "
                     "nodes started with the same MASTER_ADDR/MASTER_PORT and world size?)",
                     served, npeers, s->port, timeout_s);
    /* the job will not form: the peers that joined, and those waiting to, learn why now */
    liveness_fail(l, err->msg);
    refuse_waiting(s->fd, err->msg);
    liveness_close(l);
    return -1;
}

typedef struct fetch_ctx {
    hello mine;
    const char *workload, *addr;
    int port;
    void *blob;
    double deadline;
    double unanswered_since; /* when a connection first closed without an answer; 0: none has */
    int root_nranks;
    int fatal_code;    /* with fatal set: no more attempts, the fetch fails with it */
    char fatal[1400];  /* (the handshake returns 0 then, to stop tcp_connect_until) */
    char problem[160]; /* why the last attempt failed */
} fetch_ctx;

/* The attempts end: the fetch fails with CODE and the message. */
static int give_up(fetch_ctx *f, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int give_up(fetch_ctx *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->fatal, sizeof f->fatal, fmt, ap);
    va_end(ap);
    f->fatal_code = code;
    return 0;
}

/* Whether the first N (< 8) bytes of an answer may begin one rank 0's process gives: a hello of
 * some version, or a refusal frame. */
static int could_be_rank0(const unsigned char *h, size_t n)
{
    return !memcmp(h, HELLO_MAGIC, n < 7 ? n : 7) || !memcmp(h, FRAME_MAGIC, n < 4 ? n : 4);
}

/* Something that is not instbench's rank 0 took the connection and answered H (N bytes). */
static int stranger(fetch_ctx *f, const unsigned char *h, size_t n)
{
    char raw[HELLO_LEN + 1], shown[4 * HELLO_LEN + 1];
    memcpy(raw, h, n);
    raw[n] = '\0'; /* a NUL ends what is shown */
    util_term_escape(raw, shown, sizeof shown);
    return give_up(f, IB_EXIT_USAGE,
                   "rendezvous: something other than instbench's rank 0 listens on %s:%d: it answered \"%s\" (check "
                   "MASTER_ADDR and MASTER_PORT: under torchrun's agent store the id takes MASTER_PORT + 1)",
                   f->addr, f->port, shown);
}

/* Rank 0's process refused this one with a frame (H, its header) saying why. */
static int refused(int fd, fetch_ctx *f, const unsigned char *h, double until)
{
    const char *bad = bad_header(h);
    if (bad || h[4] != FRAME_FAIL) return stranger(f, h, FRAME_HDR);
    unsigned char text[LIVENESS_TEXT_MAX];
    const size_t n = (size_t)h[6] << 8 | h[7];
    char why[LIVENESS_TEXT_MAX];
    if (tcp_io_all(fd, text, n, 0, until)) {
        snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection during its answer");
        return -1;
    }
    clean_text(text, n, why, sizeof why);
    const char *w = strncmp(why, "rendezvous: ", 12) ? why : why + 12;
    return give_up(f, IB_EXIT_USAGE, "rendezvous: rank 0's process at %s:%d refused this process: %s", f->addr, f->port,
                   w);
}

/* A connection that ended before any answer: another try, unless they have all ended so for
 * ANSWER_WAIT_S (rank 0 would have answered one by then). */
static int unanswered(fetch_ctx *f)
{
    const double now = util_now_seconds();
    if (!f->unanswered_since) f->unanswered_since = now;
    if (now - f->unanswered_since >= ANSWER_WAIT_S)
        return give_up(f, IB_EXIT_RUNTIME,
                       "rendezvous: %s:%d has closed every connection without an answer for %.0f s: something other "
                       "than instbench's rank 0 listens there, or rank 0 keeps stopping (check MASTER_ADDR and "
                       "MASTER_PORT)",
                       f->addr, f->port, ANSWER_WAIT_S);
    snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection without an answer");
    return -1;
}

/* Rank 0's hello V (BAD: what get_hello found wrong) against this job: 0 and f->fatal when it can
 * never fit, -1 to try again, 1 when it fits (then the rest of the answer is read). */
static int check_root_hello(fetch_ctx *f, const hello *v, const char *bad)
{
    if (bad) return give_up(f, IB_EXIT_USAGE, "rendezvous: rank 0 at %s:%d: %s", f->addr, f->port, bad);
    if (v->len != f->mine.len)
        return give_up(f, IB_EXIT_USAGE,
                       "rendezvous: rank 0's process at %s:%d runs another instbench build (a %u-byte id, this one "
                       "%u): run the same build on every node",
                       f->addr, f->port, v->len, f->mine.len);
    if (v->world != f->mine.world)
        return give_up(f, IB_EXIT_USAGE,
                       "rendezvous: the processes of the job were given different world sizes: this process %u, "
                       "rank 0's process %u (give every process the same WORLD_SIZE / node count)",
                       f->mine.world, v->world);
    if (v->first != 0 || v->nranks < 1 || v->nranks > f->mine.first)
        return give_up(f, IB_EXIT_USAGE,
                       "rendezvous: something other than rank 0's process answers on %s:%d (it says it holds ranks "
                       "from %u, %u of them; check MASTER_ADDR and MASTER_PORT)",
                       f->addr, f->port, v->first, v->nranks);
    return 1;
}

static int handshake(int fd, void *arg)
{
    fetch_ctx *f = arg;
    unsigned char h[HELLO_LEN];
    hello v;
    size_t got = 0;
    put_hello(h, &f->mine);
    const double now = util_now_seconds(),
                 answer_by = now + ANSWER_WAIT_S < f->deadline ? now + ANSWER_WAIT_S : f->deadline;
    int r = tcp_io_all(fd, h, HELLO_LEN, 1, f->deadline) ||
                    tcp_io_all(fd, (void *)f->workload, f->mine.wlen, 1, f->deadline)
                ? -1
                : tcp_read_within(fd, h, MAGIC_LEN, answer_by, &got);
    if (got && !could_be_rank0(h, got < 7 ? got : 7)) return stranger(f, h, got);
    if (r == -2 && !got && answer_by < f->deadline && !comm_stopped())
        return give_up(f, IB_EXIT_RUNTIME,
                       "rendezvous: %s:%d took the connection but answered nothing for %.0f s: something other than "
                       "instbench's rank 0 listens there? (check MASTER_ADDR and MASTER_PORT)",
                       f->addr, f->port, ANSWER_WAIT_S);
    if (r == -1 && !got) return unanswered(f);
    if (r) {
        snprintf(f->problem, sizeof f->problem, "%s",
                 !got      ? "the connection was taken, but nothing answered"
                 : r == -1 ? "rank 0 closed the connection during its answer"
                           : "rank 0 went silent during its answer");
        return -1;
    }
    if (!memcmp(h, FRAME_MAGIC, 4)) return refused(fd, f, h, answer_by);
    if (memcmp(h, HELLO_V1, MAGIC_LEN) && memcmp(h, HELLO_V2, MAGIC_LEN) && memcmp(h, HELLO_MAGIC, MAGIC_LEN))
        return stranger(f, h, MAGIC_LEN);
    if (!memcmp(h, HELLO_MAGIC, MAGIC_LEN) && tcp_io_all(fd, h + MAGIC_LEN, HELLO_LEN - MAGIC_LEN, 0, answer_by)) {
        snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection during its answer");
        return -1;
    }
    if ((r = check_root_hello(f, &v, get_hello(h, &v))) != 1) return r;
    char theirs[LIVENESS_WORKLOAD_MAX];
    if (tcp_io_all(fd, theirs, v.wlen, 0, f->deadline) || tcp_io_all(fd, f->blob, f->mine.len, 0, f->deadline)) {
        snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection during its answer");
        return -1;
    }
    if (workload_differs(f->workload, theirs, v.wlen, "rank 0's process", f->fatal, sizeof f->fatal))
        f->fatal_code = IB_EXIT_USAGE;
    f->root_nranks = (int)v.nranks;
    return 0;
}

int liveness_fetch(const char *addr, int port, int first_rank, int nlocal, int world_size, void *blob, size_t len,
                   const char *workload, double timeout_s, liveness **out, ib_error *err)
{
    if (!workload) workload = "";
    *out = NULL;
    if (!addr || !addr[0]) return ib_error_set(err, IB_EXIT_USAGE, "rendezvous: no master address");
    if (port < 1 || port > 65535)
        return ib_error_set(err, IB_EXIT_USAGE, "rendezvous port %d outside [1, 65535]", port);
    if (len > MAX_BLOB) return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: blob of %zu bytes too large", len);
    if (first_rank < 1 || nlocal < 1 || first_rank > world_size - nlocal)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: ranks %d..%d outside the job's %d", first_rank,
                            first_rank + nlocal - 1, world_size);
    if (strlen(workload) > LIVENESS_WORKLOAD_MAX)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: workload of %zu bytes too long", strlen(workload));
    fetch_ctx f = {
        .mine = {(uint32_t)len, (uint32_t)world_size, (uint32_t)first_rank, (uint32_t)nlocal,
                 (uint32_t)strlen(workload)},
        .workload = workload,
        .addr = addr,
        .port = port,
        .blob = blob,
        .deadline = util_now_seconds() + timeout_s,
    };
    int gai = 0, fd = tcp_connect_until(addr, port, f.deadline, handshake, &f, &gai);
    if (fd >= 0 && f.fatal[0]) {
        close(fd);
        return ib_error_set(err, f.fatal_code, "%s", f.fatal);
    }
    if (fd < 0 && comm_stopped())
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: stopped by a signal while fetching from %s:%d", addr,
                            port);
    if (fd == -2)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "rendezvous: rank 0's address '%s' does not resolve: %s (still so after %.0f s: is it "
                            "the name of rank 0's node?)",
                            addr, gai_strerror(gai), TCP_NAME_WAIT_S);
    if (fd < 0 && gai)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: cannot resolve rank 0's address '%s' within %.0f s: %s",
                            addr, timeout_s, gai_strerror(gai));
    if (fd < 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: no answer from rank 0 at %s:%d within %.0f s%s%s", addr,
                            port, timeout_s, f.problem[0] ? "; last attempt: " : "", f.problem);
    liveness *l = liveness_new(0, 1);
    if (!l) {
        close(fd);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    conn *c = &l->conns[0];
    c->fd = fd, c->first_rank = 0, c->nranks = f.root_nranks;
    tcp_peer_address(fd, c->addr, sizeof c->addr);
    tcp_keepalive(fd);
    l->nconn = 1;
    *out = l;
    return 0;
}
