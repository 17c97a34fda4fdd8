/* comm/liveness_wire: what the three parts of the liveness channel share (private to src/comm):
 * the wire format of comm.h (hellos, frames), the connection state, and the helpers each part
 * uses.  liveness.c: the channel once the job has formed (frames, deaths, relays); liveness_root.c:
 * rank 0's process admitting its peers, during the rendezvous and after; liveness_peer.c: a peer
 * fetching the blob from rank 0's process. */
#ifndef INSTBENCH_COMM_LIVENESS_WIRE_H
#define INSTBENCH_COMM_LIVENESS_WIRE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "instbench/comm.h"

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
/* How the 'F' frame of rank 0's process stopped by a signal at the rendezvous begins: a peer
 * refused with it reports the interruption (a runtime failure), not a refusal of itself. */
#define LIVENESS_ROOT_INTERRUPTED "rank 0's process was interrupted"
#define REFUSE_LINGER_S 0.5 /* a refused instbench process closes one round trip after the refusal */
/* How often a process waiting at the rendezvous says it still waits: a node started wrong would
 * otherwise show nothing for the whole limit (600 s by default): once a minute, or about four
 * times in a shorter limit, at most once a second. */
static inline double liveness_progress_every(double timeout_s)
{
    const double q = timeout_s / 4;
    return q < 1 ? 1 : q > 60 ? 60 : q;
}

enum { FRAME_GOODBYE = 'G', FRAME_FAIL = 'F', FRAME_RELAY = 'R' };

typedef struct conn {
    int fd;                 /* -1 once closed */
    int first_rank, nranks; /* the ranks of the process at the other end */
    char addr[64];          /* its numeric address */
    int said_goodbye;
    unsigned char buf[FRAME_HDR + LIVENESS_TEXT_MAX];
    size_t have; /* bytes of the frame being read */
} conn;

/* A connection to rank 0's port after the job formed (liveness_root.c): its hello read as it
 * comes, then, refused, drained to its end so the refusal is not lost to a reset. */
typedef struct late_conn {
    int fd; /* -1: a free slot */
    int refused;
    double until; /* its hello, or its end after the refusal, by then */
    char addr[64];
    unsigned char buf[HELLO_LEN];
    size_t have;
} late_conn;
#define LATE_MAX 8 /* connections after the job formed, served at once; more are closed */

struct liveness {
    pthread_mutex_t mu; /* the watcher checks while a failing rank may send its reason */
    int is_root;        /* rank 0's process: conns are the peers; else conns[0] is rank 0's */
    int nconn;
    conn *conns;
    int done;    /* this process said goodbye or sent its failure: nothing more is sent */
    int tripped; /* another process died or failed: cause says which */
    char cause[LIVENESS_CAUSE_MAX];
    /* rank 0's process: the rendezvous port, kept for the job's life, and who knocks on it */
    int lfd; /* -1: none */
    /* what comes to it after the job formed, taken and refused without waiting (liveness_root.c
     * sets it, so the channel does not depend on rank 0's side): 1 when a process claims ranks a
     * peer holds (cause says so: the job fails), else 0 */
    int (*serve_late)(liveness *l);
    size_t blob_len;
    late_conn late[LATE_MAX];
};


typedef struct hello {
    uint32_t len, world, first, nranks, wlen;
} hello;

void liveness_put_hello(unsigned char *h, const hello *v);
/* Parses a hello; NULL when it is one, else what is wrong with it (for the message). */
const char *liveness_get_hello(const unsigned char *h, hello *v);
/* The first line where workloads MINE and THEIRS (THEIRS from the network, WLEN bytes) differ, as
 * a message in OUT; 0 when they are the same. */
int liveness_workload_differs(const char *mine, const char *theirs, size_t wlen, const char *who, char *out,
                              size_t cap);
/* One frame to C, bounded in time; a peer that cannot take it is closed (it will see EOF). */
void liveness_send_frame(conn *c, int type, const char *text);
/* The same to a bare FD, which stays open either way: 0 sent, -1 it could not take it. */
int liveness_send_frame_fd(int fd, int type, const char *text);
/* Network text made safe to print: bounded, cut at a NUL, control characters escaped. */
void liveness_clean_text(const unsigned char *p, size_t n, char *out, size_t cap);
/* What a frame header says is wrong with it; NULL when it is well formed. */
const char *liveness_bad_header(const unsigned char *h);
/* A liveness with NCONN closed connections (and no port). */
liveness *liveness_new_conns(int is_root, int nconn);

/* A peer's fetch from rank 0's process (liveness_peer.c): what its attempts share. */
typedef struct fetch_ctx {
    hello mine;
    const char *workload, *addr;
    int port;
    void *blob;
    double deadline;
    double started, timeout_s, next_progress; /* when it began, its limit, when it next says it waits */
    double unanswered_since;                  /* when a connection first closed without an answer; 0: none has */
    int root_nranks;
    int fatal_code;    /* with fatal set: no more attempts, the fetch fails with it */
    char fatal[1400];  /* (the handshake returns 0 then, to stop tcp_connect_until) */
    char problem[160]; /* why the last attempt failed */
} fetch_ctx;
/* One attempt of the fetch on FD, connected to where rank 0's process should listen: this
 * process's hello sent, the answer read.  0: rank 0's process took it (f->root_nranks, the blob in
 * f->blob), or, with f->fatal set, no attempt ever will; -1: another attempt may (f->problem says
 * why this one failed).  Apart from liveness_fetch, whose connections it runs on, so that the
 * fuzzer drives every byte rank 0 answers over a socket filled before it reads. */
int liveness_peer_handshake(int fd, fetch_ctx *f);

#endif
