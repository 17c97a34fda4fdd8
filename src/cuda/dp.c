/* cuda/dp: data parallelism of the CUDA backend for bench/runner: one NCCL comm per local GPU
 * (ncclCommInitAll in one process; across processes a non-blocking ncclCommInitRankConfig with
 * the unique id that global rank 0 hands out over the TCP rendezvous), DDP buckets overlapped with
 * backward, and a per-step agreement so every process takes the same warm-up/timed/stop decision as
 * global rank 0 (otherwise one process could leave while the others wait in an allreduce).
 * No wait is unbounded: every host wait (the init's too) goes through comm_nccl_wait's bound, and
 * a rank of this process that fails aborts its own comm and raises the stop flag, on which each
 * sibling thread aborts its own and returns instead of waiting in a collective whose peer is gone
 * (the runner then exits non-zero with their messages).
 * Across processes the rendezvous connections stay open as a liveness channel (comm/liveness.c):
 * a process that dies is seen by every other within about a second, a process that fails tells
 * the others why, and each rank's error names the process that caused it. */
#include "cuda/api.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "cuda/check.h"

struct ib_dp {
    int nlocal;
    ib_comm **comms;      /* [nlocal] */
    cuda_ddp **ddp;       /* [nlocal] */
    float **flag;         /* [nlocal] one device float each, for cuda_dp_agree */
    float *flag_host;     /* [nlocal] pinned */
    int *device;          /* [nlocal] */
    cudaStream_t *stream; /* [nlocal] the backends' compute streams */
    /* The stop flag every host wait polls (comm_nccl_wait, and the init): FAILED_LOCAL when a rank
     * of this process failed (each rank then aborts its own comm as it sees the flag), FAILED_REMOTE when the watcher learnt that
     * another process died or failed (each rank aborts its own comm as it sees the flag). */
    volatile int failed;
    /* multi-process only */
    liveness *live; /* the connections to the other processes */
    pthread_t watcher;
    int watching; /* the watcher thread runs */
    volatile int stop_watching;
    char remote_why[LIVENESS_CAUSE_MAX];         /* written by the watcher before FAILED_REMOTE */
    int finished;                                /* cuda_dp_finish said every rank of this process finished the run */
    char finish_why[sizeof((ib_error *)0)->msg]; /* else why it stops early, for the others */
};

enum { FAILED_LOCAL = 1, FAILED_REMOTE = 2 };
#define WATCH_PERIOD_NS (100 * 1000 * 1000)
/* How long a rank whose NCCL wait failed waits for the liveness channel to explain it: a death
 * elsewhere reaches rank 0's watcher, its relay and this process's watcher within ~0.3 s. */
#define EXPLAIN_GRACE_S 1.0

/* The liveness watcher.  A thread rather than checks inside comm_nccl_wait: rank 0's process must
 * relay a death to the other peers promptly even while its own ranks are not waiting (queueing a
 * backward pass, in the data pipeline), and one thread polling every 100 ms costs nothing next to
 * the 0.2 ms polls of the waits, which stay free of sockets and locks. */
static void *watch(void *arg)
{
    ib_dp *dp = arg;
    const struct timespec tick = {0, WATCH_PERIOD_NS};
    while (!__atomic_load_n(&dp->stop_watching, __ATOMIC_ACQUIRE)) {
        if (liveness_check(dp->live, dp->remote_why, sizeof dp->remote_why)) {
            int idle = 0;
            __atomic_compare_exchange_n(&dp->failed, &idle, FAILED_REMOTE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            return NULL;
        }
        nanosleep(&tick, NULL);
    }
    return NULL;
}

static void stop_watcher(ib_dp *dp)
{
    if (!dp->watching) return;
    __atomic_store_n(&dp->stop_watching, 1, __ATOMIC_RELEASE);
    pthread_join(dp->watcher, NULL); /* within one period */
    dp->watching = 0;
}

/* Rank i failed with ERR: it aborts its own comm, and the first to fail raises the stop flag, on
 * which each sibling aborts its own comm in its next wait (comm_nccl_wait), so none waits on a peer
 * that will not come; and tells the other processes why (unless the cause came from one of them,
 * which then is what they have been told).  Never another rank's comm: NCCL forbids concurrent
 * calls on one communicator, and its owner may be inside ncclCommGetAsyncError on it. */
static int fail(ib_dp *dp, int i, const ib_error *err)
{
    comm_nccl_abort(dp->comms[i]);
    int idle = 0;
    if (__atomic_compare_exchange_n(&dp->failed, &idle, FAILED_LOCAL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        liveness_fail(dp->live, err->msg);
    return -1;
}

/* A failed wait of rank i: NCCL's error or the stop flag often only echo another process's death.
 * When the liveness channel knows (or learns within the grace) which process and why, ERR says
 * so instead: "NCCL: rank 3 of 4: the process of ranks 0-1 on 10.0.0.1 died (connection closed);
 * communicator aborted". */
static void explain(ib_dp *dp, int i, ib_error *err)
{
    if (!dp->live) return;
    const double until = util_now_seconds() + EXPLAIN_GRACE_S;
    const struct timespec nap = {0, 10 * 1000 * 1000};
    int f;
    /* a local failure was explained by the rank that failed first; it waited already */
    while ((f = __atomic_load_n(&dp->failed, __ATOMIC_ACQUIRE)) != FAILED_REMOTE && f != FAILED_LOCAL &&
           util_now_seconds() < until)
        nanosleep(&nap, NULL);
    /* a relayed failure often says "communicator aborted" itself: not twice */
    if (f == FAILED_REMOTE)
        ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: rank %d of %d: %s%s", dp->comms[i]->rank, dp->comms[i]->world_size,
                     dp->remote_why, strstr(dp->remote_why, "communicator aborted") ? "" : "; communicator aborted");
}

/* Rank i's compute stream drained, within the bound and watching the others. */
static int dp_wait(ib_dp *dp, int i, ib_error *err)
{
    if (!comm_nccl_wait(dp->comms[i], dp->stream[i], &dp->failed, err)) return 0;
    explain(dp, i, err);
    return fail(dp, i, err);
}

void cuda_dp_finish(ib_dp *dp, const ib_error *failure)
{
    if (!dp) return;
    dp->finished = !failure;
    if (failure) snprintf(dp->finish_why, sizeof dp->finish_why, "%s", failure->msg);
}

/* The other processes learn how this one ends: a goodbye after a finished run, else why not
 * (liveness_fail does nothing when a failure was told already, or came from them). */
static void say_farewell(ib_dp *dp)
{
    if (!dp->live) return;
    stop_watcher(dp);
    if (dp->finished && __atomic_load_n(&dp->failed, __ATOMIC_ACQUIRE) != FAILED_LOCAL) liveness_goodbye(dp->live);
    else liveness_fail(dp->live, dp->finish_why[0] ? dp->finish_why : "it stopped before the end of the run");
    liveness_close(dp->live);
    dp->live = NULL;
}

void cuda_dp_destroy(ib_dp *dp)
{
    if (!dp) return;
    say_farewell(dp);
    for (int i = 0; i < dp->nlocal; i++) {
        if (dp->device) cudaSetDevice(dp->device[i]);
        if (dp->ddp && dp->ddp[i]) cuda_ddp_destroy(dp->ddp[i]);
        if (dp->comms && dp->comms[i]) dp->comms[i]->destroy(dp->comms[i]);
        if (dp->flag && dp->flag[i]) cudaFree(dp->flag[i]);
    }
    if (dp->flag_host) cudaFreeHost(dp->flag_host);
    free(dp->comms);
    free(dp->ddp);
    free(dp->flag);
    free(dp->device);
    free(dp->stream);
    free(dp);
}

/* The NCCL unique id: made by global rank 0's process, fetched by the others; the connections
 * stay open as the liveness channel (*live). */
static int share_id(const ib_dp_config *c, unsigned char id[CUDA_NCCL_ID_BYTES], liveness **live, ib_error *err)
{
    const int nproc = c->world_size / c->nlocal;
    comm_set_stop(c->stop); /* this module's copy of src/comm: a signal ends its waits */
    if (c->first_rank == 0) {
        rendezvous_tcp_server srv;
        if (comm_nccl_unique_id(id, err) || rendezvous_tcp_listen(c->port, &srv, err)) return -1;
        ib_info("rendezvous: waiting for %d other process%s on port %d\n", nproc - 1, nproc - 1 == 1 ? "" : "es",
                srv.port);
        int rc = liveness_serve(&srv, c->nlocal, c->world_size, nproc - 1, id, CUDA_NCCL_ID_BYTES, c->workload,
                                c->timeout_s, live, err);
        rendezvous_tcp_close(&srv);
        return rc;
    }
    ib_info("rendezvous: fetching the NCCL id from %s:%d\n", c->master_addr, c->port);
    const int rc = liveness_fetch(c->master_addr, c->port, c->first_rank, c->nlocal, c->world_size, id,
                                  CUDA_NCCL_ID_BYTES, c->workload, c->timeout_s, live, err);
    /* -v: the moment this process is in the job (tests/cuda/cuda_sim_procs.py waits for it) */
    if (!rc) ib_debug("rendezvous: joined rank 0's process at %s:%d", c->master_addr, c->port);
    return rc;
}

/* The watcher runs from the rendezvous on, so a process that dies while the others create their
 * NCCL comms is seen too. */
static int start_watcher(ib_dp *dp, ib_error *err)
{
    if (pthread_create(&dp->watcher, NULL, watch, dp) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "data parallel: cannot start the liveness watcher thread");
    dp->watching = 1;
    return 0;
}

/* Creation failed after the rendezvous: the other processes are told why, then everything goes. */
static void fail_create(ib_dp *dp, const ib_error *err)
{
    cuda_dp_finish(dp, err);
    cuda_dp_destroy(dp);
}

int cuda_dp_create(const ib_dp_config *c, ib_backend **backends, ib_dp **out, ib_error *err)
{
    *out = NULL;
    if (c->nlocal < 1 || c->world_size < c->nlocal || c->world_size % c->nlocal || c->first_rank % c->nlocal)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "data parallel: %d ranks per process do not divide %d ranks (first %d)", c->nlocal,
                            c->world_size, c->first_rank);
    if (!comm_nccl_available()) {
        ib_comm *none = NULL;
        return comm_nccl_create(c->nlocal, NULL, NULL, c->world_size, c->first_rank, NULL, NULL, &none, err);
    }
    ib_dp *dp = calloc(1, sizeof *dp);
    if (!dp) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    dp->nlocal = c->nlocal;
    dp->comms = calloc((size_t)c->nlocal, sizeof *dp->comms);
    dp->ddp = calloc((size_t)c->nlocal, sizeof *dp->ddp);
    dp->flag = calloc((size_t)c->nlocal, sizeof *dp->flag);
    dp->device = calloc((size_t)c->nlocal, sizeof *dp->device);
    dp->stream = calloc((size_t)c->nlocal, sizeof *dp->stream);
    void **streams = calloc((size_t)c->nlocal, sizeof *streams);
    if (!dp->comms || !dp->ddp || !dp->flag || !dp->device || !dp->stream || !streams) {
        free(streams);
        cuda_dp_destroy(dp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    for (int i = 0; i < c->nlocal; i++) {
        if (!backends[i] || backends[i]->ops != &cuda_backend_ops) {
            free(streams);
            cuda_dp_destroy(dp);
            return ib_error_set(err, IB_EXIT_RUNTIME, "data parallel over NCCL needs cuda backends");
        }
        dp->device[i] = cuda_backend_device(backends[i]);
        dp->stream[i] = (cudaStream_t)cuda_backend_stream(backends[i]);
        streams[i] = dp->stream[i];
    }
    unsigned char id[CUDA_NCCL_ID_BYTES];
    const int multi = c->world_size > c->nlocal;
    int rc = (multi && (share_id(c, id, &dp->live, err) || start_watcher(dp, err))) ||
             comm_nccl_create(c->nlocal, dp->device, streams, c->world_size, c->first_rank, multi ? id : NULL,
                              &dp->failed, dp->comms, err);
    free(streams);
    if (rc && __atomic_load_n(&dp->failed, __ATOMIC_ACQUIRE) == FAILED_REMOTE)
        /* the init stopped because another process died or failed: which, and why (the watcher
         * wrote it before raising the flag) */
        ib_error_set(err, IB_EXIT_RUNTIME, "NCCL: initialising ranks %d-%d of %d: stopped: %s", c->first_rank,
                     c->first_rank + c->nlocal - 1, c->world_size, dp->remote_why);
    if (rc) {
        fail_create(dp, err);
        return -1;
    }
    const size_t bucket = c->bucket_bytes ? c->bucket_bytes : CUDA_DDP_BUCKET_BYTES;
    if (cuda_check(cudaMallocHost((void **)&dp->flag_host, (size_t)c->nlocal * sizeof(float)), "cudaMallocHost", err)) {
        fail_create(dp, err);
        return -1;
    }
    for (int i = 0; i < c->nlocal; i++) {
        if (cuda_check(cudaSetDevice(dp->device[i]), "cudaSetDevice", err) ||
            cuda_check(cudaMalloc((void **)&dp->flag[i], sizeof(float)), "cudaMalloc", err) ||
            cuda_ddp_create(dp->comms[i], backends[i]->ops->grad_block(backends[i]), bucket, &dp->ddp[i], err)) {
            fail_create(dp, err);
            return -1;
        }
    }
    *out = dp;
    return 0;
}

int cuda_dp_step(ib_dp *dp, int i, ib_backend *b, float *loss, double *compute_end, ib_error *err)
{
    /* backward queues each bucket's allreduce as soon as the bucket is complete */
    if (b->ops->forward_backward(b, loss, cuda_ddp_on_grad_ready, dp->ddp[i], err)) return fail(dp, i, err);
    if (cuda_ddp_flush(dp->ddp[i], err)) return fail(dp, i, err);
    /* the compute stream alone: when its work ends, the communication not yet done is exposed */
    if (dp_wait(dp, i, err)) return -1;
    if (compute_end) *compute_end = util_now_seconds();
    if (comm_nccl_join(dp->comms[i], err)) return fail(dp, i, err);
    return dp_wait(dp, i, err);
}

int cuda_dp_agree(ib_dp *dp, int i, int *value, ib_error *err)
{
    dp->flag_host[i] = (float)*value; /* small integers are exact in a float */
    ib_comm *c = dp->comms[i];
    if (cuda_check(cudaSetDevice(dp->device[i]), "cudaSetDevice", err) ||
        cuda_check(
            cudaMemcpyAsync(dp->flag[i], &dp->flag_host[i], sizeof(float), cudaMemcpyHostToDevice, dp->stream[i]),
            "cudaMemcpyAsync", err) ||
        c->broadcast(c, dp->flag[i], 1, 0, err) ||
        cuda_check(
            cudaMemcpyAsync(&dp->flag_host[i], dp->flag[i], sizeof(float), cudaMemcpyDeviceToHost, dp->stream[i]),
            "cudaMemcpyAsync", err))
        return fail(dp, i, err);
    if (dp_wait(dp, i, err)) return -1;
    *value = (int)dp->flag_host[i];
    return 0;
}

ib_comm *cuda_dp_comm(ib_dp *dp, int i) { return dp->comms[i]; }
