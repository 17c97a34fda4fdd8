/* cuda/ddp: DDP's gradient buckets over the backend's on_grad_ready hook.  Backward completes the
 * gradient block in reverse layer order, one adjacent range after another, so a bucket grows
 * downwards in memory (cuda/bucket.c); once it holds bucket_bytes it is handed to NCCL on the comm
 * stream while backward goes on.  The hook is called right after the range's last kernel is
 * queued, and the comm stream waits for it through an event, so the allreduce reads final
 * gradients. */
#include "cuda/api.h"

#include <stdlib.h>

#include "cuda/bucket.h"

struct cuda_ddp {
    ib_comm *comm;
    float *grads; /* device gradient block */
    cuda_bucketer bucket;
    size_t started; /* allreduces started this step */
    size_t last;    /* ... and in the last finished step */
    int failed;
    ib_error err; /* first failure, reported by flush/finish */
};

static int start_allreduce(void *user, size_t offset, size_t count)
{
    cuda_ddp *d = user;
    if (comm_nccl_allreduce_async(d->comm, d->grads + offset, count, &d->err)) {
        d->failed = 1;
        return -1;
    }
    d->started++;
    return 0;
}

int cuda_ddp_create(ib_comm *c, float *grad_block, size_t bucket_bytes, cuda_ddp **out, ib_error *err)
{
    *out = NULL;
    if (!c || !grad_block) return ib_error_set(err, IB_EXIT_RUNTIME, "ddp: needs a comm and a gradient block");
    cuda_ddp *d = calloc(1, sizeof *d);
    if (!d) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    d->comm = c;
    d->grads = grad_block;
    cuda_bucketer_init(&d->bucket, bucket_bytes / sizeof(float), start_allreduce, d);
    *out = d;
    return 0;
}

int cuda_ddp_on_grad_ready(void *user, size_t offset, size_t count)
{
    cuda_ddp *d = user;
    if (d->failed) return -1;
    return cuda_bucketer_add(&d->bucket, offset, count) ? -1 : 0;
}

int cuda_ddp_flush(cuda_ddp *d, ib_error *err)
{
    if (!d->failed) cuda_bucketer_flush(&d->bucket);
    d->last = d->started;
    d->started = 0;
    if (d->failed) {
        *err = d->err;
        d->failed = 0;
        cuda_bucketer_init(&d->bucket, d->bucket.cap, start_allreduce, d);
        return -1;
    }
    return 0;
}

int cuda_ddp_finish(cuda_ddp *d, ib_error *err)
{
    if (cuda_ddp_flush(d, err)) return -1;
    return comm_nccl_join(d->comm, err);
}

size_t cuda_ddp_buckets(const cuda_ddp *d) { return d->last; }

void cuda_ddp_destroy(cuda_ddp *d) { free(d); }
