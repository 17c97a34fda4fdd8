/* comm/liveness_root: rank 0's process admitting the other processes of the job (comm.h, "Wire
 * format"): each hello checked against the job, a process that can never fit refused with the
 * reason, a duplicate of a joined peer's ranks failing the job at once, and, after the job has
 * formed, the port kept so that a process arriving then is refused instead of left to retry until
 * its deadline.  Every byte from the network is hostile (liveness.c says how). */
#include "comm/liveness_wire.h"
#include "comm/tcp.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An 'F' frame saying WHY in place of rank 0's hello (comm.h), so the process at the other end
 * fails at once instead of trying again until its deadline, then FD's write side shut: 0, or -1
 * when FD could not take it.  FD stays open either way (its owner closes it, once). */
static int send_refusal(int fd, const char *why)
{
    char text[LIVENESS_TEXT_MAX];
    util_term_escape(why, text, sizeof text);
    return liveness_send_frame_fd(fd, FRAME_FAIL, text) == 0 && shutdown(fd, SHUT_WR) == 0 ? 0 : -1;
}

/* Refuses connection FD (send_refusal), then a lingering close: the peer's hello, if unread,
 * would turn the close into a reset, which may discard the frame before the peer reads it.  The
 * caller closes FD. */
static void refuse(int fd, const char *why, double until)
{
    if (send_refusal(fd, why) != 0) return;
    const double linger = util_now_seconds() + REFUSE_LINGER_S;
    char sink[512];
    size_t got;
    /* to its EOF (it read the frame and closed), even once a signal has stopped this process */
    while (tcp_read_final(fd, sink, sizeof sink, linger < until ? linger : until, &got) == 0) {}
}

/* Connections waiting in rank 0's backlog when the rendezvous fails: each is told WHY at once,
 * for at most BOUND_S in all (the failing process does not linger for strangers). */
static void refuse_waiting(int lfd, const char *why, double bound_s)
{
    char addr[64];
    const double until = util_now_seconds() + bound_s;
    while (util_now_seconds() < until) {
        int fd = tcp_accept_pending(lfd, addr, sizeof addr);
        if (fd == -2) continue;
        if (fd < 0) return;
        const double t = util_now_seconds() + SEND_BOUND_S;
        refuse(fd, why, t < until ? t : until);
        close(fd);
    }
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

/* The joined peer that holds some of the ranks hello H claims, or NULL.  In 64 bits: a hello's
 * first rank and count are any two u32s, whose sum wrapped (or read as a negative int) would claim
 * a joined peer's ranks that the hello does not name, and fail the job for a stranger's bytes.  A
 * count of 0 claims no rank: the interval test below would still find [3, 3) inside a peer's 2-3. */
static const conn *rank_holder(const liveness *l, const hello *h)
{
    if (h->nranks == 0) return NULL;
    const uint64_t first = h->first, end = first + h->nranks;
    for (int i = 0; i < l->nconn; i++) {
        const conn *c = &l->conns[i];
        if (c->fd >= 0 && first < (uint64_t)c->first_rank + (uint64_t)c->nranks && (uint64_t)c->first_rank < end)
            return c;
    }
    return NULL;
}

/* Two processes claim the same ranks: the launcher gave two of them one RANK (or node rank), and
 * a rank the job needs is missing, so no one may wait for it. */
static void say_duplicate(const conn *holder, const hello *h, const char *addr, char *out, size_t cap)
{
    /* the ranks both claim, in 64 bits as rank_holder found them */
    const uint64_t lo = h->first > (uint64_t)holder->first_rank ? h->first : (uint64_t)holder->first_rank;
    const uint64_t hi_a = (uint64_t)h->first + h->nranks - 1, hi_b = (uint64_t)holder->first_rank + holder->nranks - 1;
    const uint64_t hi = hi_a < hi_b ? hi_a : hi_b;
    char ranks[48];
    if (lo == hi) snprintf(ranks, sizeof ranks, "rank %llu", (unsigned long long)lo);
    else snprintf(ranks, sizeof ranks, "ranks %llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
    snprintf(out, cap,
             "rendezvous: two processes claim %s of the job: the process on %s and the process on %s (give every "
             "process its own RANK / node rank)",
             ranks, holder->addr, addr);
}

/* One accepted connection: its hello checked, the blob sent; 0 when it joined as conns[slot], -1
 * when it was dropped, -2 when the job cannot form: its workload or world size differs from this
 * process's, or it claims ranks a joined peer holds (MISMATCH says how); -3 when a signal stopped
 * this process during it (the caller tells the peer so). */
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
                      : memcmp(h, HELLO_MAGIC, MAGIC_LEN) ? liveness_get_hello(h, &v)
                      : tcp_io_all(fd, h + HELLO_LEN - 4, 4, 0, peer_deadline)
                          ? "no complete hello (it closed, or said nothing for 5 s)"
                          : liveness_get_hello(h, &v);
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
    /* an instbench process that does not fit: told why, so it stops rather than tries again */
    if (!why && (why = peer_misfit(l, &v, len, nlocal, world, buf, sizeof buf)) != NULL) refuse(fd, why, peer_deadline);
    if (!why && tcp_io_all(fd, (void *)reply, rlen, 1, peer_deadline)) why = "it did not take the reply";
    if (why && comm_stopped()) return -3;
    if (why) {
        ib_warn("rendezvous: dropped a connection from %s: %s\n", addr, why);
        return -1;
    }
    char who[128];
    snprintf(who, sizeof who, "the process of rank %u on %s", v.first, addr);
    if (liveness_workload_differs(workload, theirs, v.wlen, who, mismatch, mcap)) return -2;
    conn *c = &l->conns[slot];
    c->fd = fd, c->first_rank = (int)v.first, c->nranks = (int)v.nranks;
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    tcp_keepalive(fd);
    return 0;
}

static void late_close(late_conn *s)
{
    close(s->fd);
    s->fd = -1;
}

/* Refuses S with WHY without waiting: the frame, then S is drained to its end on later checks. */
static void late_refuse(late_conn *s, const char *why, double now)
{
    if (send_refusal(s->fd, why) != 0) {
        late_close(s);
        return;
    }
    s->refused = 1, s->until = now + 2.0;
}

/* One late connection's next bytes, never waiting: 1 when it claims ranks a joined peer holds. */
static int late_step(liveness *l, late_conn *s, double now)
{
    unsigned char sink[512];
    unsigned char *to = s->refused ? sink : s->buf + s->have;
    const size_t want = s->refused ? sizeof sink : HELLO_LEN - s->have;
    ssize_t k = recv(s->fd, to, want, MSG_DONTWAIT);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) k = -2;
    if (k == 0 || k == -1 || (k == -2 && now > s->until)) { /* it left, or took too long */
        if (!s->refused)
            ib_warn("rendezvous: dropped a connection from %s after the job formed: no complete hello\n", s->addr);
        late_close(s);
        return 0;
    }
    if (s->refused || k == -2 || (s->have += (size_t)k) < MAGIC_LEN) return 0;
    hello v;
    if (memcmp(s->buf, HELLO_MAGIC, MAGIC_LEN) || s->have == HELLO_LEN) {
        const char *bad = liveness_get_hello(s->buf, &v);
        if (bad) {
            ib_warn("rendezvous: dropped a connection from %s after the job formed: %s\n", s->addr, bad);
            late_close(s);
            return 0;
        }
        const conn *holder = v.len == l->blob_len ? rank_holder(l, &v) : NULL;
        if (holder) {
            say_duplicate(holder, &v, s->addr, l->cause, sizeof l->cause);
            late_refuse(s, l->cause, now);
            return 1;
        }
        char why[LIVENESS_TEXT_MAX];
        snprintf(why, sizeof why,
                 "the job has formed without it: rank 0's process has all of its peers (a process too many, or one "
                 "of another job on this port)");
        ib_warn("rendezvous: refused a connection from %s after the job formed\n", s->addr);
        late_refuse(s, why, now);
    }
    return 0;
}

/* After the job formed nothing should knock any more.  A process that does is told at once
 * instead of trying again until its deadline: one claiming ranks a joined peer holds (a duplicate
 * RANK come late, as a process too many) fails the job as it would have during the rendezvous;
 * any other process speaking this rendezvous is refused (the job formed without it); anything else
 * is closed.  Hellos are read as they come and refused connections drained to their end on later
 * calls, so a check never waits. */
static int serve_late(liveness *l)
{
    const double now = util_now_seconds();
    char addr[64];
    for (int n = 0, fd; n < 64 && (fd = tcp_accept_pending(l->lfd, addr, sizeof addr)) != -1; n++) {
        if (fd == -2) continue;
        late_conn *s = NULL;
        for (int i = 0; i < LATE_MAX && !s; i++)
            if (l->late[i].fd < 0) s = &l->late[i];
        if (!s) { /* a flood: those being served go first */
            close(fd);
            continue;
        }
        memset(s, 0, sizeof *s);
        s->fd = fd, s->until = now + PEER_HELLO_S;
        snprintf(s->addr, sizeof s->addr, "%s", addr);
    }
    for (int i = 0; i < LATE_MAX; i++)
        if (l->late[i].fd >= 0 && late_step(l, &l->late[i], now)) return 1;
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
    liveness *l = liveness_new_conns(1, npeers);
    if (!reply || !l) {
        free(reply);
        liveness_close(l);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    hello mine = {(uint32_t)len, (uint32_t)world_size, 0, (uint32_t)nlocal, (uint32_t)wlen};
    liveness_put_hello(reply, &mine);
    memcpy(reply + HELLO_LEN, workload, wlen);
    memcpy(reply + HELLO_LEN + wlen, blob, len);
    const double deadline = util_now_seconds() + timeout_s;
    l->nconn = npeers;
    int served = 0, admitting = -1; /* the connection a signal interrupted */
    char addr[64], mismatch[1400] = "";
    const double started = util_now_seconds(), every = liveness_progress_every(timeout_s);
    double next_progress = started + every;
    while (served < npeers) {
        /* woken once in a while to say it still waits: a peer started wrong shows nothing else */
        const double until = next_progress < deadline ? next_progress : deadline;
        int fd = tcp_accept(s->fd, until, addr, sizeof addr);
        if (fd < 0 && until < deadline && !comm_stopped() && util_now_seconds() >= until) {
            ib_info("rendezvous: still waiting on port %d after %.0f s of %.0f: %d of %d peer process%s connected\n",
                    s->port, util_now_seconds() - started, timeout_s, served, npeers, npeers == 1 ? "" : "es");
            next_progress += every;
            continue;
        }
        if (fd < 0) break;
        int a = admit(l, served, fd, addr, reply, rlen, workload, len, nlocal, world_size, deadline, mismatch,
                      sizeof mismatch);
        if (a == 0) served++;
        else if (a == -3) admitting = fd;
        else close(fd);
        if (a == -2 || a == -3) break;
    }
    free(reply);
    if (!mismatch[0] && served == npeers) {
        /* the port stays rank 0's for the job's life: who comes later is told (liveness_serve_late) */
        l->lfd = s->fd, s->fd = -1;
        l->blob_len = len;
        l->serve_late = serve_late;
        *out = l;
        return 0;
    }
    /* the job will not form: the peers that joined, and those waiting to, learn why now (told
     * even after a signal, within about a second, so the whole job stops within seconds) */
    const int stopped = !mismatch[0] && comm_stopped();
    char told[160] = "";
    if (mismatch[0]) ib_error_set(err, IB_EXIT_USAGE, "%s", mismatch);
    else if (stopped) {
        ib_error_set(err, IB_EXIT_RUNTIME, "rendezvous: stopped by a signal (%d of %d peers connected)", served,
                     npeers);
        snprintf(told, sizeof told, "%s (%s) at the rendezvous, %d of %d peers connected", LIVENESS_ROOT_INTERRUPTED,
                 comm_stopped() == SIGTERM  ? "SIGTERM"
                 : comm_stopped() == SIGINT ? "SIGINT"
                                            : "a signal",
                 served, npeers);
    } else
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "rendezvous: only %d of %d peers connected to port %d within %.0f s (are the other "
                     "nodes started with the same MASTER_ADDR/MASTER_PORT and world size?)",
                     served, npeers, s->port, timeout_s);
    liveness_fail(l, told[0] ? told : err->msg);
    if (admitting >= 0) {
        refuse(admitting, told, util_now_seconds() + SEND_BOUND_S);
        close(admitting);
    }
    refuse_waiting(s->fd, told[0] ? told : err->msg, stopped ? 1.0 : 2.0);
    liveness_close(l);
    return -1;
}
