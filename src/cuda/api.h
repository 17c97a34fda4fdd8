/* cuda/api: the CUDA module's own functions, which its table (src/cuda/module.c) points to.  Only
 * src/cuda/ and the host-shim tests (tests/cuda/cuda_dp_host.c, cuda_runner_host.c: they compile the
 * src/cuda sources directly) call them; the core reaches them through the module's
 * table (instbench/cuda.h). */
#ifndef INSTBENCH_CUDA_API_H
#define INSTBENCH_CUDA_API_H

#include "instbench/cuda.h"

/* The backend's table (instbench/backend.h); its unavailable_reason names a missing driver, no
 * GPU, or a driver older than the runtime; dp_unavailable_reason a module built without NCCL. */
extern const ib_backend_ops cuda_backend_ops;
int cuda_backend_create(const ib_train_config *cfg, ib_backend **out, ib_error *err);
size_t cuda_backend_memory_estimate(const ib_train_config *cfg);
const char *cuda_backend_attention(const ib_train_config *cfg); /* the table's attention_impl */
int cuda_device_count(void);                                    /* 0 when there is no driver or no GPU */
int cuda_device_info_get(int device, cuda_device_info *out, ib_error *err);
void cuda_versions_get(cuda_versions *out); /* never fails: unknown facts stay "" */

/* The cudaStream_t (as void *) and device ordinal of a backend made by cuda_backend_ops. */
void *cuda_backend_stream(ib_backend *b);
int cuda_backend_device(ib_backend *b);

/* ---- NCCL: ib_comm over GPUs ----
 * allreduce_mean runs on the comm's own stream, after the work queued so far on its compute
 * stream, and makes the compute stream wait for it: stream-ordered, the host never blocks.
 * broadcast likewise; barrier waits on the host for everything queued on both streams. */
int comm_nccl_available(void);
/* Rank 0 of the job makes the id; the other processes receive it (dp.c, share_id). */
int comm_nccl_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], ib_error *err);
/* Creates the comms of this process's `nlocal` ranks (devices[i], compute streams[i], global rank
 * first_rank + i) in a world of world_size ranks.  id NULL: single process (world_size must be
 * nlocal; ncclCommInitAll).  comms[i] receives rank first_rank + i.  Across processes the init is
 * non-blocking and waited for as comm_nccl_wait waits: at most comm_nccl_timeout_s() for every
 * rank to join, and no longer once *STOP (may be NULL) is set. */
int comm_nccl_create(int nlocal, const int *devices, void *const *streams, int world_size, int first_rank,
                     const unsigned char *id, const volatile int *stop, ib_comm **comms, ib_error *err);
/* Queue the mean of buf [count] (device memory) without making the compute stream wait. */
int comm_nccl_allreduce_async(ib_comm *c, float *buf, size_t count, ib_error *err);
/* The compute stream waits for every allreduce queued so far (before the optimizer step). */
int comm_nccl_join(ib_comm *c, ib_error *err);
/* Waits on the host for STREAM (a stream whose work may wait on c's collectives), never without
 * end: it polls the stream, c's asynchronous NCCL error (a rank that died or left shows there)
 * and *STOP (set when another rank of this process failed), and gives up after
 * comm_nccl_timeout_s() without progress.  On any of these c is aborted (ncclCommAbort: its
 * kernels end, nothing waits on it any more) and err names the rank and the cause. */
int comm_nccl_wait(ib_comm *c, void *stream, const volatile int *stop, ib_error *err);
/* ncclCommAbort, once; c stays a valid ib_comm to destroy.  NULL-safe. */
void comm_nccl_abort(ib_comm *c);
/* INSTBENCH_NCCL_TIMEOUT_S (seconds, > 0), else 300: the longest one host wait of a rank (a
 * step, an agreement) may take before the rank gives up on its peers. */
double comm_nccl_timeout_s(void);

/* ---- DDP buckets: the backend's on_grad_ready hook groups adjacent gradient ranges into
 * buckets of bucket_bytes (CUDA_DDP_BUCKET_BYTES, like DDP) and starts each bucket's allreduce as
 * soon as it is full, overlapping the rest of backward.
 * Use: forward_backward(b, &loss, cuda_ddp_on_grad_ready, ddp, err); cuda_ddp_finish(ddp, err). */
typedef struct cuda_ddp cuda_ddp;
int cuda_ddp_create(ib_comm *c, float *grad_block, size_t bucket_bytes, cuda_ddp **out, ib_error *err);
int cuda_ddp_on_grad_ready(void *ddp, size_t offset, size_t count); /* an ib_grad_ready_fn */
/* Flushes the last bucket, joins the compute stream to the comm stream, reports hook errors. */
int cuda_ddp_finish(cuda_ddp *d, ib_error *err);
/* Flushes the last bucket and reports hook errors, without the join (runner: to time exposed comm). */
int cuda_ddp_flush(cuda_ddp *d, ib_error *err);
size_t cuda_ddp_buckets(const cuda_ddp *d); /* allreduces started in the last step */
void cuda_ddp_destroy(cuda_ddp *d);

/* backends[i] ("cuda", created already) is local rank i. */
int cuda_dp_create(const ib_dp_config *c, ib_backend **backends, ib_dp **out, ib_error *err);
/* Local rank i's training step up to averaged gradients: forward_backward with the bucket hook,
 * then the rest of the allreduces.  *compute_end: when the compute stream finished (the time
 * after it until return is the exposed communication). */
int cuda_dp_step(ib_dp *dp, int i, ib_backend *b, float *loss, double *compute_end, ib_error *err);
/* Every rank calls it: *value becomes global rank 0's *value (a step-boundary decision). */
int cuda_dp_agree(ib_dp *dp, int i, int *value, ib_error *err);
ib_comm *cuda_dp_comm(ib_dp *dp, int i);
/* How this process's run ended, for the other processes (dp_finish in instbench/backend.h). */
void cuda_dp_finish(ib_dp *dp, const ib_error *failure);
/* Tells the other processes goodbye (after cuda_dp_finish(dp, NULL)) or why this one stops. */
void cuda_dp_destroy(ib_dp *dp);

#endif
