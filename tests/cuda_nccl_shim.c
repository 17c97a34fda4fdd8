/* cuda_nccl_shim: NCCL's collectives between the rank threads of one process, for the CPU tests
 * of the CUDA data-parallel path (tests/cuda_dp_host.c, cuda_runner_host.c, the simulated module).
 * Host memory only.  Like NCCL's, a collective is work on its stream (cuda_host_runtime.c's
 * shim_enqueue): the call returns at once; the op may start when it heads its stream (so after
 * whatever the stream was made to wait for) and every rank of the communicator has reached the
 * same collective (the k-th call of each rank); the first rank to run it reduces the posted
 * buffers, every rank copies the result into its own.  So a rank that starts a collective before
 * its data is ready reduces stale data, as on a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "cuda_host_runtime.h"

#define MAX_RANKS 8
#define SLOTS 16   /* collectives in flight per communicator: a rank runs ahead at most that far */

typedef struct slot {
    unsigned long seq;           /* which collective (0: free) */
    int arrived, ran;            /* ranks at it / that ran it */
    int posted[MAX_RANKS];
    const float *send[MAX_RANKS];
    float *result;               /* computed by the first rank to run it */
} slot;

typedef struct shim_group {
    int n, live;
    pthread_mutex_t lock;
    slot slots[SLOTS];
} shim_group;

struct ncclComm {
    shim_group *g;
    int rank;
    unsigned long issued;   /* collectives this rank has called */
};

int nccl_shim_allreduces;   /* calls so far (rank 0's), for tests that a path really used NCCL */
/* A peer that is gone (test hook): 1, collectives are queued and never complete (their streams
 * are stuck) and the async error reports ncclRemoteError, as NCCL does when a peer's connection
 * drops; 2, the same without any error (a peer that hangs: only a deadline helps). */
int nccl_shim_dead_peer, nccl_shim_aborts;

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int n, const int *devs)
{
    (void)devs;
    if (n < 1 || n > MAX_RANKS) return ncclInvalidArgument;
    shim_group *g = calloc(1, sizeof *g);
    if (!g) return ncclSystemError;
    g->n = g->live = n;
    pthread_mutex_init(&g->lock, NULL);
    for (int i = 0; i < n; i++) {
        comms[i] = calloc(1, sizeof **comms);
        comms[i]->g = g, comms[i]->rank = i;
    }
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    /* the group is shared: the last rank frees it (tests destroy every rank) */
    if (__atomic_sub_fetch(&c->g->live, 1, __ATOMIC_SEQ_CST) == 0) {
        for (int i = 0; i < SLOTS; i++) free(c->g->slots[i].result);
        pthread_mutex_destroy(&c->g->lock);
        free(c->g);
    }
    free(c);
    return ncclSuccess;
}

typedef enum { ALLREDUCE_SUM, ALLREDUCE_AVG, BROADCAST } coll_kind;
typedef struct coll_op {
    ncclComm_t c;
    unsigned long seq;   /* 1-based */
    coll_kind kind;
    int root;
    const float *send;
    float *recv;
    size_t count;
} coll_op;

/* the slot of collective SEQ, claimed by the first rank to get there; NULL while all are busy */
static slot *slot_of(shim_group *g, unsigned long seq)
{
    slot *s = &g->slots[seq % SLOTS];
    if (s->seq == seq) return s;
    if (s->seq != 0) return NULL;   /* collective seq - SLOTS has not ended on every rank yet */
    memset(s->posted, 0, sizeof s->posted);
    s->seq = seq, s->arrived = s->ran = 0;
    return s;
}

static int coll_ready(void *p)
{
    coll_op *o = p;
    if (nccl_shim_dead_peer) return -1;   /* the peer never joins */
    shim_group *g = o->c->g;
    pthread_mutex_lock(&g->lock);
    slot *s = slot_of(g, o->seq);
    int ready = 0;
    if (s) {
        if (!s->posted[o->c->rank]) {
            s->posted[o->c->rank] = 1;
            s->send[o->c->rank] = o->send;
            s->arrived++;
        }
        ready = s->arrived == g->n;
    }
    pthread_mutex_unlock(&g->lock);
    return ready;
}

static void coll_run(void *p)
{
    coll_op *o = p;
    shim_group *g = o->c->g;
    const int n = g->n;
    pthread_mutex_lock(&g->lock);
    slot *s = &g->slots[o->seq % SLOTS];
    if (!s->result) {   /* the first rank to run it: every buffer is as its stream left it */
        s->result = malloc((o->count ? o->count : 1) * sizeof(float));
        if (!s->result) abort();
        for (size_t i = 0; i < o->count; i++) {
            if (o->kind == BROADCAST) {
                s->result[i] = s->send[o->root][i];
                continue;
            }
            float a = 0;
            for (int r = 0; r < n; r++) a += s->send[r][i];
            s->result[i] = o->kind == ALLREDUCE_AVG ? a / n : a;
        }
    }
    memcpy(o->recv, s->result, o->count * sizeof(float));
    if (++s->ran == n) {
        free(s->result);
        s->result = NULL;
        s->seq = 0;
    }
    pthread_mutex_unlock(&g->lock);
}

static ncclResult_t collective(coll_kind kind, const void *send, void *recv, size_t count, ncclDataType_t dt, int root,
                               ncclComm_t c, cudaStream_t s)
{
    if (dt != ncclFloat32 || !c || (kind == BROADCAST && (root < 0 || root >= c->g->n))) return ncclInvalidArgument;
    coll_op *o = malloc(sizeof *o);
    if (!o) return ncclSystemError;
    *o = (coll_op){c, ++c->issued, kind, root, send, recv, count};
    shim_enqueue(s, &(shim_work){coll_run, coll_ready, free, o, c});
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                           ncclComm_t c, cudaStream_t s)
{
    if (op != ncclSum && op != ncclAvg) return ncclInvalidArgument;
    if (c && c->rank == 0) __atomic_add_fetch(&nccl_shim_allreduces, 1, __ATOMIC_SEQ_CST);
    return collective(op == ncclAvg ? ALLREDUCE_AVG : ALLREDUCE_SUM, send, recv, count, dt, 0, c, s);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t c,
                           cudaStream_t s)
{
    return collective(BROADCAST, send, recv, count, dt, root, c, s);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    (void)c;
    *r = nccl_shim_dead_peer == 1 ? ncclRemoteError : ncclSuccess;
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c)
{
    __atomic_add_fetch(&nccl_shim_aborts, 1, __ATOMIC_SEQ_CST);
    shim_drop_owner(c);   /* its queued collectives end: what waited on them runs */
    return ncclCommDestroy(c);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { memset(id, 7, sizeof *id); return ncclSuccess; }
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int rank) { return ncclInvalidUsage; }
ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
ncclResult_t ncclGetVersion(int *v) { *v = 0; return ncclSuccess; }
const char *ncclGetErrorString(ncclResult_t r) { return "nccl shim error"; }
