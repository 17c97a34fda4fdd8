/* comm/liveness: the rendezvous connections kept open for the whole job, so that the death of any
 * process is seen by all the others within about a second instead of NCCL's timeout (see comm.h
 * for the wire format and the API).  Rank 0's process holds one socket per peer process, each
 * peer its socket to rank 0; a connection that ends without a goodbye means that process died.
 * Rank 0's process passes on what it learns, so every process names the one that died.  How the
 * connections are made: liveness_root.c (rank 0's process), liveness_peer.c (the others); what
 * the three share: liveness_wire.h.
 *
 * Every byte from the network is hostile: the handshake and the frames have fixed magics and
 * bounded lengths, text is escaped (util_term_escape) before it reaches a message, a peer that
 * breaks the framing is reported as failed, and nothing here waits without a deadline. */
#include "instbench/comm.h"
#include "comm/liveness_wire.h"
#include "comm/tcp.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void liveness_put_hello(unsigned char *h, const hello *v)
{
    memcpy(h, HELLO_MAGIC, MAGIC_LEN);
    put_u32(h + 8, v->len), put_u32(h + 12, v->world), put_u32(h + 16, v->first), put_u32(h + 20, v->nranks);
    put_u32(h + 24, v->wlen);
}

const char *liveness_get_hello(const unsigned char *h, hello *v)
{
    if (!memcmp(h, HELLO_V1, MAGIC_LEN)) return "it runs an older instbench (rendezvous IBRV0001)";
    if (!memcmp(h, HELLO_V2, MAGIC_LEN)) return "it runs an older instbench (rendezvous IBRV0002)";
    if (memcmp(h, HELLO_MAGIC, MAGIC_LEN)) return "not an instbench rendezvous";
    v->len = get_u32(h + 8), v->world = get_u32(h + 12), v->first = get_u32(h + 16), v->nranks = get_u32(h + 20);
    v->wlen = get_u32(h + 24);
    if (v->wlen > LIVENESS_WORKLOAD_MAX) return "its workload description is too long";
    return NULL;
}

int liveness_workload_differs(const char *mine, const char *theirs, size_t wlen, const char *who, char *out, size_t cap)
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

int liveness_send_frame_fd(int fd, int type, const char *text)
{
    unsigned char f[FRAME_HDR + LIVENESS_TEXT_MAX];
    size_t n = text ? strlen(text) : 0;
    if (n > LIVENESS_TEXT_MAX) n = LIVENESS_TEXT_MAX;
    memcpy(f, FRAME_MAGIC, 4);
    f[4] = (unsigned char)type, f[5] = 0, f[6] = (unsigned char)(n >> 8), f[7] = (unsigned char)n;
    if (n) memcpy(f + FRAME_HDR, text, n);
    /* sent even after a signal stopped this process: the others learn why it leaves */
    return tcp_send_final(fd, f, FRAME_HDR + n, util_now_seconds() + SEND_BOUND_S);
}

void liveness_send_frame(conn *c, int type, const char *text)
{
    if (c->fd < 0 || c->said_goodbye) return;
    if (liveness_send_frame_fd(c->fd, type, text)) conn_close(c);
}

void liveness_clean_text(const unsigned char *p, size_t n, char *out, size_t cap)
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
    liveness_clean_text(c->buf + FRAME_HDR, n, text, sizeof text);
    if (type == FRAME_FAIL) return trip(l, c, "%s failed: %s", text);
    /* a relay: rank 0's process names the culprit itself; only it may send one */
    if (l->is_root) return trip(l, c, "%s sent a malformed liveness message (%s); treating it as failed", "a relay");
    snprintf(l->cause, sizeof l->cause, "%s", text);
    conn_close(c);
    return 1;
}

const char *liveness_bad_header(const unsigned char *h)
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
            const char *bad = c->have == FRAME_HDR ? liveness_bad_header(c->buf) : NULL;
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
    for (int i = 0; i < l->nconn; i++) liveness_send_frame(&l->conns[i], FRAME_RELAY, l->cause);
}

static void poll_all(liveness *l)
{
    if (l->serve_late && l->lfd >= 0 && l->serve_late(l)) { /* a late duplicate: the job fails */
        l->tripped = 1;
        relay(l);
        return;
    }
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
        for (int i = 0; i < l->nconn; i++) liveness_send_frame(&l->conns[i], FRAME_FAIL, text);
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
        for (int i = 0; i < l->nconn; i++) liveness_send_frame(&l->conns[i], FRAME_GOODBYE, NULL);
    l->done = 1;
    pthread_mutex_unlock(&l->mu);
}

void liveness_close(liveness *l)
{
    if (!l) return;
    for (int i = 0; i < l->nconn; i++) conn_close(&l->conns[i]);
    for (int i = 0; i < LATE_MAX; i++)
        if (l->late[i].fd >= 0) close(l->late[i].fd);
    if (l->lfd >= 0) close(l->lfd);
    pthread_mutex_destroy(&l->mu);
    free(l->conns);
    free(l);
}

liveness *liveness_new_conns(int is_root, int nconn)
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
    for (int i = 0; i < LATE_MAX; i++) l->late[i].fd = -1;
    l->lfd = -1;
    return l;
}
