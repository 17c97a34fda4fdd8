/* cuda_nccl_shim: NCCL's collectives between the threads of one process, for the CPU tests of the
 * CUDA data-parallel path (tests/cuda_dp_host.c): each rank thread's call blocks until all ranks
 * of its communicator made the same call, like a real collective.  Host memory only. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

typedef struct shim_group {
    int n;
    pthread_barrier_t bar;
    float **bufs;   /* each rank's buffer of the collective in progress */
} shim_group;

int nccl_shim_allreduces;   /* calls so far (rank 0's), for tests that a path really used NCCL */
/* A peer that is gone (test hook): 1, collectives are queued and never complete (the streams hang,
 * cuda_host_shim.c) and the async error reports ncclRemoteError, as NCCL does when a peer's
 * connection drops; 2, the same without any error (a peer that hangs: only a deadline helps). */
int nccl_shim_dead_peer, nccl_shim_aborts;
void shim_stream_hang(cudaStream_t s, const void *comm);   /* cuda_host_shim.c */
void shim_comm_aborted(const void *comm);

struct ncclComm {
    shim_group *g;   /* NULL for a rank of a job across processes */
    int rank;
};

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int n, const int *devs)
{
    shim_group *g = calloc(1, sizeof *g);
    g->n = n;
    g->bufs = calloc((size_t)n, sizeof *g->bufs);
    pthread_barrier_init(&g->bar, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        comms[i] = calloc(1, sizeof **comms);
        comms[i]->g = g, comms[i]->rank = i;
    }
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    /* the group is shared: the last rank frees it (tests destroy every rank) */
    if (c->g && __atomic_sub_fetch(&c->g->n, 1, __ATOMIC_SEQ_CST) == 0) {
        pthread_barrier_destroy(&c->g->bar);
        free(c->g->bufs);
        free(c->g);
    }
    free(c);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                           ncclComm_t c, cudaStream_t s)
{
    shim_group *g = c->g;
    if (nccl_shim_dead_peer || !g) {   /* queued; the peer never joins */
        shim_stream_hang(s, c);
        return ncclSuccess;
    }
    const int n = g->n;
    if (c->rank == 0) nccl_shim_allreduces++;
    g->bufs[c->rank] = recv;
    if (send != recv) memcpy(recv, send, count * sizeof(float));
    pthread_barrier_wait(&g->bar);   /* every rank's buffer posted */
    float *tmp = malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) {
        float a = 0;
        for (int r = 0; r < n; r++) a += g->bufs[r][i];
        tmp[i] = op == ncclAvg ? a / n : a;
    }
    pthread_barrier_wait(&g->bar);   /* every rank has read every buffer */
    memcpy(recv, tmp, count * sizeof(float));
    free(tmp);
    pthread_barrier_wait(&g->bar);
    return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t c,
                           cudaStream_t s)
{
    shim_group *g = c->g;
    if (nccl_shim_dead_peer || !g) {
        shim_stream_hang(s, c);
        return ncclSuccess;
    }
    g->bufs[c->rank] = recv;
    if (send != recv) memcpy(recv, send, count * sizeof(float));
    pthread_barrier_wait(&g->bar);
    if (c->rank != root) memcpy(recv, g->bufs[root], count * sizeof(float));
    pthread_barrier_wait(&g->bar);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    *r = nccl_shim_dead_peer == 1 ? ncclRemoteError : ncclSuccess;
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c)
{
    __atomic_add_fetch(&nccl_shim_aborts, 1, __ATOMIC_SEQ_CST);
    shim_comm_aborted(c);   /* its queued work ends: what waited on it completes */
    return ncclCommDestroy(c);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) { memset(id, 7, sizeof *id); return ncclSuccess; }
/* A rank of a job spread over processes (tests/cuda_dp_procs.c): the shim cannot reach the other
 * processes, so its collectives are queued and never complete, as if the peers never joined; only
 * the liveness channel (src/cuda/dp.c) or the deadline ends a wait on them.  The id must be the
 * one ncclGetUniqueId made in rank 0's process: the rendezvous carried it. */
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int rank)
{
    for (size_t i = 0; i < sizeof id.internal; i++)
        if (id.internal[i] != 7) return ncclInvalidArgument;
    *c = calloc(1, sizeof **c);
    if (!*c) return ncclSystemError;
    (*c)->rank = rank;
    return ncclSuccess;
}
ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
ncclResult_t ncclGetVersion(int *v) { *v = 0; return ncclSuccess; }
const char *ncclGetErrorString(ncclResult_t r) { return "nccl shim error"; }
