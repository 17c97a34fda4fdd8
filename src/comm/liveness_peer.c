/* comm/liveness_peer: a process of the job other than rank 0's fetching the blob from rank 0's
 * process (comm.h, "Wire format") and keeping the connection as its liveness channel.  It tries
 * again while rank 0 may still come (nothing listens yet, a name DNS does not know yet), and stops
 * at once when what answers can never be rank 0's process or rank 0 refuses it. */
#include "comm/liveness_wire.h"
#include "comm/tcp.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    const char *bad = liveness_bad_header(h);
    if (bad || h[4] != FRAME_FAIL) return stranger(f, h, FRAME_HDR);
    unsigned char text[LIVENESS_TEXT_MAX];
    const size_t n = (size_t)h[6] << 8 | h[7];
    char why[LIVENESS_TEXT_MAX];
    if (tcp_io_all(fd, text, n, 0, until)) {
        snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection during its answer");
        return -1;
    }
    liveness_clean_text(text, n, why, sizeof why);
    if (!strncmp(why, LIVENESS_ROOT_INTERRUPTED, strlen(LIVENESS_ROOT_INTERRUPTED)))
        return give_up(f, IB_EXIT_RUNTIME, "rendezvous: %s (%s:%d)", why, f->addr, f->port);
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

int liveness_peer_handshake(int fd, fetch_ctx *f)
{
    unsigned char h[HELLO_LEN];
    hello v;
    size_t got = 0;
    liveness_put_hello(h, &f->mine);
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
    if ((r = check_root_hello(f, &v, liveness_get_hello(h, &v))) != 1) return r;
    char theirs[LIVENESS_WORKLOAD_MAX];
    if (tcp_io_all(fd, theirs, v.wlen, 0, f->deadline) || tcp_io_all(fd, f->blob, f->mine.len, 0, f->deadline)) {
        snprintf(f->problem, sizeof f->problem, "rank 0 closed the connection during its answer");
        return -1;
    }
    if (liveness_workload_differs(f->workload, theirs, v.wlen, "rank 0's process", f->fatal, sizeof f->fatal))
        f->fatal_code = IB_EXIT_USAGE;
    f->root_nranks = (int)v.nranks;
    return 0;
}

static int handshake(int fd, void *arg) { return liveness_peer_handshake(fd, arg); }

/* Between attempts: once in a while, that this process still waits for rank 0, and what the
 * attempts meet (GAI: the resolver's last error, REFUSED_S: for how long connections were refused). */
static void waiting(void *arg, int gai, double refused_s)
{
    fetch_ctx *f = arg;
    const double now = util_now_seconds();
    if (now < f->next_progress) return;
    f->next_progress = now + liveness_progress_every(f->timeout_s);
    char what[200];
    if (gai) snprintf(what, sizeof what, "its address does not resolve yet: %s", gai_strerror(gai));
    else if (refused_s > 0)
        snprintf(what, sizeof what, "connection refused for %.0f s: nothing listens there yet", refused_s);
    else if (f->problem[0]) snprintf(what, sizeof what, "last attempt: %s", f->problem);
    else snprintf(what, sizeof what, "no connection yet");
    ib_info("rendezvous: still waiting for rank 0 at %s:%d after %.0f s of %.0f (%s)\n", f->addr, f->port,
            now - f->started, f->timeout_s, what);
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
        .started = util_now_seconds(),
        .timeout_s = timeout_s,
    };
    f.next_progress = f.started + liveness_progress_every(timeout_s);
    double refused_s;
    int gai = 0, fd = tcp_connect_until(addr, port, f.deadline, handshake, waiting, &f, &gai, &refused_s);
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
    /* nothing listens there (rank 0's process not started, or gone): the attempts cannot tell which */
    if (fd < 0 && refused_s > 0)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "rendezvous: no answer from rank 0 at %s:%d within %.0f s: connection refused there for "
                            "the last %.*f s (is rank 0's process running, and did it start with the same "
                            "MASTER_ADDR and MASTER_PORT?)",
                            addr, port, timeout_s, refused_s < 10 ? 1 : 0, refused_s);
    if (fd < 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: no answer from rank 0 at %s:%d within %.0f s%s%s", addr,
                            port, timeout_s, f.problem[0] ? "; last attempt: " : "", f.problem);
    liveness *l = liveness_new_conns(0, 1);
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
