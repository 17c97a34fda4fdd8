/* cuda/ddp: DDP's gradient buckets over the backend's on_grad_ready hook.  Backward completes the
 * gradient block in reverse layer order, one adjacent range after another (model_grad_range:
 * head + final norm, blocks L-1 .. 0, embeddings), so a bucket grows downwards in memory; once it
 * holds bucket_bytes it is handed to NCCL on the comm stream while backward goes on.  The hook is
 * called right after the range's last kernel is queued, and the comm stream waits for it through
 * an event, so the allreduce reads final gradients. */
#include "instbench/cuda.h"

#include <stdlib.h>

struct cuda_ddp {
    ib_comm *comm;
    float *grads;          /* device gradient block */
    size_t cap;            /* floats per bucket */
    size_t lo, hi;         /* pending bucket [lo, hi) in floats; empty when lo == hi */
    size_t started;        /* allreduces started this step */
    size_t last;           /* ... and in the last finished step */
    int failed;
    ib_error err;          /* first hook failure, reported by finish */
};

int cuda_ddp_create(ib_comm *c, float *grad_block, size_t bucket_bytes, cuda_ddp **out, ib_error *err)
{
    *out = NULL;
    if (!c || !grad_block) return ib_error_set(err, IB_EXIT_RUNTIME, "ddp: needs a comm and a gradient block");
    cuda_ddp *d = calloc(1, sizeof *d);
    if (!d) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    d->comm = c;
    d->grads = grad_block;
    d->cap = bucket_bytes / sizeof(float);
    if (d->cap == 0) d->cap = 1;
    *out = d;
    return 0;
}

static int flush(cuda_ddp *d)
{
    if (d->hi > d->lo && !d->failed) {
        if (comm_nccl_allreduce_async(d->comm, d->grads + d->lo, d->hi - d->lo, &d->err)) d->failed = 1;
        d->started++;
    }
    d->lo = d->hi = 0;
    return d->failed ? -1 : 0;
}

int cuda_ddp_on_grad_ready(void *user, size_t offset, size_t count)
{
    cuda_ddp *d = user;
    if (d->failed) return -1;
    if (count == 0) return 0;
    /* a range that does not extend the pending bucket downwards starts a new one */
    if (d->hi > d->lo && offset + count != d->lo && flush(d)) return -1;
    if (d->hi == d->lo) d->lo = d->hi = offset + count;
    d->lo = offset;
    if (d->hi - d->lo >= d->cap) return flush(d);
    return 0;
}

int cuda_ddp_flush(cuda_ddp *d, ib_error *err)
{
    flush(d);
    size_t n = d->started;
    d->started = 0;
    if (d->failed) {
        *err = d->err;
        d->failed = 0;
        return -1;
    }
    d->last = n;
    return 0;
}

int cuda_ddp_finish(cuda_ddp *d, ib_error *err)
{
    if (cuda_ddp_flush(d, err)) return -1;
    return comm_nccl_join(d->comm, err);
}

size_t cuda_ddp_buckets(const cuda_ddp *d) { return d->last; }

void cuda_ddp_destroy(cuda_ddp *d) { free(d); }
