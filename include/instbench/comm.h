/* comm: averaging gradients between data-parallel ranks.  local (in-process threads) now, NCCL later. */
#ifndef INSTBENCH_COMM_H
#define INSTBENCH_COMM_H

#include <signal.h>
#include <stddef.h>
#include "instbench/util.h"

typedef struct ib_comm ib_comm;
#define COMM_MEAN_HOST_MAX 64
struct ib_comm {
    const char *name; /* "local", "nccl" */
    int rank, world_size;
    void *impl;
    /* In place: buf[i] = mean over ranks of buf[i].  Every rank calls it with the same count. */
    int (*allreduce_mean)(ib_comm *c, float *buf, size_t count, ib_error *err);
    int (*broadcast)(ib_comm *c, float *buf, size_t count, int root, ib_error *err);
    int (*barrier)(ib_comm *c, ib_error *err);
    /* Host values, at most COMM_MEAN_HOST_MAX: vals[i] = mean over ranks of vals[i] (measure's
     * per-rank allreduce times, averaged as nccl-tests averages its own).  Every rank calls it. */
    int (*mean_host)(ib_comm *c, double *vals, size_t n, ib_error *err);
    void (*destroy)(ib_comm *c);
};

/* N ranks in one process (one thread each): returns world_size handles, comms[r] for rank r. */
int comm_local_create(int world_size, ib_comm **comms, ib_error *err);

/* TCP rendezvous (comm/rendezvous_tcp.c): the port on which the job's rank-0 process hands a
 * fixed-size blob (the NCCL unique id) to the other processes, which connect to
 * MASTER_ADDR:MASTER_PORT, retrying until the deadline (rank 0 may start later).  The handshake
 * and what the connections carry afterwards: "Liveness" below. */
typedef struct rendezvous_tcp_server {
    int fd;
    int port; /* the bound port (the one asked for, or the kernel's pick for 0) */
} rendezvous_tcp_server;
/* Listens on PORT (0: the kernel picks) on all interfaces, IPv4 and IPv6 where the host has both.
 * IB_EXIT_USAGE for a port outside [0, 65535]; a port held by another process names the likely
 * cause. */
int rendezvous_tcp_listen(int port, rendezvous_tcp_server *s, ib_error *err);
void rendezvous_tcp_close(rendezvous_tcp_server *s);
/* Once *STOP is set (SIGINT/SIGTERM), every rendezvous wait of this copy of src/comm (accept,
 * connect, reads and writes of the handshake) ends within about a quarter of a second as if its
 * deadline had passed; comm_stopped() says why: *STOP's value (measure sets the signal's number),
 * 0 while unset.  What a stopping process still sends is bounded by its own short limits: its 'F'
 * frames (0.2 s each) and, for rank 0's process stopped during the rendezvous, the refusal of the
 * connections in its backlog (1 s in all), so every other process of the job hears that rank 0's
 * process was interrupted instead of waiting until its own limit.  NULL: no stop flag. */
void comm_set_stop(const volatile sig_atomic_t *stop);
int comm_stopped(void);

/* Liveness (comm/liveness.c): the rendezvous, whose connections stay open for the whole job, so
 * the death of any process is seen by all the others within about a second: rank 0's process
 * holds one socket per peer process, each peer its socket to rank 0.
 *
 * Wire format (version 3; a version-1 or -2 peer is dropped with a message naming it), big-endian:
 *   hello, both directions: "IBRV0003", u32 blob length, u32 world size, u32 first rank, u32 rank
 *     count (the sender's ranks: [first, first + count)), u32 workload length (<=
 *     LIVENESS_WORKLOAD_MAX), then the workload: the sender's "key=value" lines of everything the
 *     processes of one job must agree on.  Rank 0's process answers a peer whose hello fits the
 *     job (same length and world size, ranks inside [its count, world) and not overlapping another
 *     peer's) with its own hello (first rank 0), its workload and the blob.  A hello of this
 *     version that does not fit is answered with an 'F' frame (below) in place of rank 0's hello,
 *     saying why, so that process stops at once (IB_EXIT_USAGE); any other connection is closed.
 *     Both are named in a warning and not counted.  When the two workloads differ, or the world
 *     sizes (the same blob length, another world size: the same build, misconfigured), or two
 *     peers claim the same ranks (a duplicate RANK: a rank the job needs is missing), every
 *     process fails at once (IB_EXIT_USAGE) naming the difference: rank 0's process sends its
 *     failure to the peers already joined and refuses those waiting in its backlog.  Once the job
 *     has formed, rank 0's process keeps the port: a process connecting then (a process too
 *     many, one of another job) is refused the same way, and one claiming ranks a peer holds
 *     fails the job as during the rendezvous (liveness_check reports it).  A peer stops
 *     as soon as what answers cannot be rank 0's process (garbage, an older or other build:
 *     IB_EXIT_USAGE, naming the address), after 10 s of silence or of connections closed
 *     unanswered, and after 30 s of the resolver saying rank 0's name does not exist
 *     (IB_EXIT_USAGE; a temporary failure is asked again until the deadline).
 *   then frames, either direction: "IBL1", u8 type, u8 0, u16 text length (<= LIVENESS_TEXT_MAX),
 *     the text (UTF-8, not NUL-terminated).  'G' goodbye (no text): the sender finished normally
 *     and is about to close.  'F' fail: the sender stops because of the error in the text.
 *     'R' relay, rank 0's process to its peers only: what happened to another process, the text
 *     naming it ("the process of ranks 2-3 on 10.0.0.5 died (connection closed)").
 * A connection that ends (EOF, reset, or TCP keepalive giving up: TCP_DEAD_AFTER_S in
 * comm/tcp.h, 13 s, for a node that vanished without closing it) without a goodbye means that
 * process died.  A frame with another magic, type or a longer text is a failure of its sender.
 * Received text is escaped (util_term_escape) before it is shown. */
#define LIVENESS_TEXT_MAX 480      /* bytes of a frame's text */
#define LIVENESS_WORKLOAD_MAX 4096 /* bytes of a hello's workload */
#define LIVENESS_CAUSE_MAX 640     /* enough for any cause liveness_check reports */
typedef struct liveness liveness;
/* Rank 0's process (ranks [0, nlocal) of world_size): serves BLOB to npeers peer processes on S
 * within timeout_s and keeps their connections in *out, and on success the listening socket too
 * (s->fd becomes -1: rendezvous_tcp_close then does nothing). */
int liveness_serve(rendezvous_tcp_server *s, int nlocal, int world_size, int npeers, const void *blob, size_t len,
                   const char *workload, double timeout_s, liveness **out, ib_error *err);
/* A peer process (ranks [first_rank, first_rank + nlocal)): fetches BLOB from ADDR:PORT within
 * timeout_s, retrying while nothing answers, and keeps the connection to rank 0's process in *out.
 * IB_EXIT_USAGE for an empty ADDR or a PORT outside [1, 65535]. */
int liveness_fetch(const char *addr, int port, int first_rank, int nlocal, int world_size, void *blob, size_t len,
                   const char *workload, double timeout_s, liveness **out, ib_error *err);
/* Never blocks (poll with no timeout).  0: every other process is alive (or finished with a
 * goodbye).  1: one died, failed or broke the protocol; WHY (CAP bytes, LIVENESS_CAUSE_MAX is
 * enough) says which, terminal-safe: "the process of ranks 2-3 on 10.0.0.5 died (connection
 * closed)", "... failed: <its reason>".  The answer is latched: later calls repeat it.  Rank 0's
 * process relays the cause to every other peer as it learns it.  Thread-safe; NULL-safe (0). */
int liveness_check(liveness *l, char *why, size_t cap);
/* This process stops because of REASON (an error, not a crash): tells the others ('F') unless it
 * already said goodbye or failed, or a cause from another process is known (then it is that
 * process's failure, not this one's, and the others have been told).  1 when sent.  Thread-safe. */
int liveness_fail(liveness *l, const char *reason);
/* This process finished normally: a goodbye to the others, so its leaving is not a death. */
void liveness_goodbye(liveness *l);
/* Closes every connection without a message (the others see a death unless goodbye or fail came
 * first) and frees L.  NULL-safe. */
void liveness_close(liveness *l);

#endif
