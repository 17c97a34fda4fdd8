/* cuda/dp: data parallelism of the CUDA backend for bench/runner: one NCCL comm per local GPU
 * (ncclCommInitAll in one process; across processes ncclCommInitRank with the unique id that
 * global rank 0 hands out over the TCP rendezvous), DDP buckets overlapped with backward, and a
 * per-step agreement so every process takes the same warm-up/timed/stop decision as global rank 0
 * (otherwise one process could leave while the others wait in an allreduce).
 * No wait is unbounded: every host wait goes through comm_nccl_wait, and the first rank of this
 * process to fail aborts every local comm, so its sibling threads return too instead of waiting in
 * a collective whose peer is gone (the runner then exits non-zero with their messages). */
#include "cuda/api.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/check.h"

struct ib_dp {
    int nlocal;
    ib_comm **comms;       /* [nlocal] */
    cuda_ddp **ddp;        /* [nlocal] */
    float **flag;          /* [nlocal] one device float each, for cuda_dp_agree */
    float *flag_host;      /* [nlocal] pinned */
    int *device;           /* [nlocal] */
    cudaStream_t *stream;  /* [nlocal] the backends' compute streams */
    volatile int failed;   /* set once by the first local rank to fail (then every local comm is aborted) */
};

/* Rank i failed: the first to say so aborts every local comm, so no sibling waits on a peer that
 * will not come. */
static int fail(ib_dp *dp, int i)
{
    (void)i;
    if (!__atomic_exchange_n(&dp->failed, 1, __ATOMIC_ACQ_REL))
        for (int k = 0; k < dp->nlocal; k++) comm_nccl_abort(dp->comms[k]);
    return -1;
}

/* Rank i's compute stream drained, within the bound and watching the others. */
static int dp_wait(ib_dp *dp, int i, ib_error *err)
{
    return comm_nccl_wait(dp->comms[i], dp->stream[i], &dp->failed, err) ? fail(dp, i) : 0;
}

void cuda_dp_destroy(ib_dp *dp)
{
    if (!dp) return;
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

/* The NCCL unique id: made by global rank 0's process, fetched by the others. */
static int share_id(const ib_dp_config *c, unsigned char id[CUDA_NCCL_ID_BYTES], ib_error *err)
{
    const int nproc = c->world_size / c->nlocal;
    if (c->first_rank == 0) {
        rendezvous_tcp_server srv;
        if (comm_nccl_unique_id(id, err) || rendezvous_tcp_listen(c->port, &srv, err)) return -1;
        ib_info("rendezvous: waiting for %d other process%s on port %d\n", nproc - 1, nproc - 1 == 1 ? "" : "es",
                srv.port);
        int rc = rendezvous_tcp_serve(&srv, nproc - 1, id, CUDA_NCCL_ID_BYTES, c->timeout_s, err);
        rendezvous_tcp_close(&srv);
        return rc;
    }
    ib_info("rendezvous: fetching the NCCL id from %s:%d\n", c->master_addr, c->port);
    return rendezvous_tcp_fetch(c->master_addr, c->port, id, CUDA_NCCL_ID_BYTES, c->timeout_s, err);
}

int cuda_dp_create(const ib_dp_config *c, ib_backend **backends, ib_dp **out, ib_error *err)
{
    *out = NULL;
    if (c->nlocal < 1 || c->world_size < c->nlocal || c->world_size % c->nlocal || c->first_rank % c->nlocal)
        return ib_error_set(err, IB_EXIT_RUNTIME, "data parallel: %d ranks per process do not divide %d ranks (first %d)",
                            c->nlocal, c->world_size, c->first_rank);
    if (!comm_nccl_available()) {
        ib_comm *none = NULL;
        return comm_nccl_create(c->nlocal, NULL, NULL, c->world_size, c->first_rank, NULL, &none, err);
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
    int rc = (multi && share_id(c, id, err)) ||
             comm_nccl_create(c->nlocal, dp->device, streams, c->world_size, c->first_rank, multi ? id : NULL,
                              dp->comms, err);
    free(streams);
    if (rc) {
        cuda_dp_destroy(dp);
        return -1;
    }
    const size_t bucket = c->bucket_bytes ? c->bucket_bytes : CUDA_DDP_BUCKET_BYTES;
    if (cuda_check(cudaMallocHost((void **)&dp->flag_host, (size_t)c->nlocal * sizeof(float)), "cudaMallocHost", err)) {
        cuda_dp_destroy(dp);
        return -1;
    }
    for (int i = 0; i < c->nlocal; i++) {
        if (cuda_check(cudaSetDevice(dp->device[i]), "cudaSetDevice", err) ||
            cuda_check(cudaMalloc((void **)&dp->flag[i], sizeof(float)), "cudaMalloc", err) ||
            cuda_ddp_create(dp->comms[i], backends[i]->ops->grad_block(backends[i]), bucket, &dp->ddp[i], err)) {
            cuda_dp_destroy(dp);
            return -1;
        }
    }
    *out = dp;
    return 0;
}

int cuda_dp_step(ib_dp *dp, int i, ib_backend *b, float *loss, double *compute_end, ib_error *err)
{
    /* backward queues each bucket's allreduce as soon as the bucket is complete */
    if (b->ops->forward_backward(b, loss, cuda_ddp_on_grad_ready, dp->ddp[i], err)) return fail(dp, i);
    if (cuda_ddp_flush(dp->ddp[i], err)) return fail(dp, i);
    /* the compute stream alone: when its work ends, the communication not yet done is exposed */
    if (dp_wait(dp, i, err)) return -1;
    if (compute_end) *compute_end = util_now_seconds();
    if (comm_nccl_join(dp->comms[i], err)) return fail(dp, i);
    return dp_wait(dp, i, err);
}

int cuda_dp_agree(ib_dp *dp, int i, int *value, ib_error *err)
{
    dp->flag_host[i] = (float)*value;   /* small integers are exact in a float */
    ib_comm *c = dp->comms[i];
    if (cuda_check(cudaSetDevice(dp->device[i]), "cudaSetDevice", err) ||
        cuda_check(cudaMemcpyAsync(dp->flag[i], &dp->flag_host[i], sizeof(float), cudaMemcpyHostToDevice, dp->stream[i]),
                   "cudaMemcpyAsync", err) ||
        c->broadcast(c, dp->flag[i], 1, 0, err) ||
        cuda_check(cudaMemcpyAsync(&dp->flag_host[i], dp->flag[i], sizeof(float), cudaMemcpyDeviceToHost, dp->stream[i]),
                   "cudaMemcpyAsync", err))
        return fail(dp, i);
    if (dp_wait(dp, i, err)) return -1;
    *value = (int)dp->flag_host[i];
    return 0;
}

ib_comm *cuda_dp_comm(ib_dp *dp, int i) { return dp->comms[i]; }
