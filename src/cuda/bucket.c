/* cuda/bucket: DDP's gradient bucketing bookkeeping (see bucket.h). */
#include "cuda/bucket.h"

void cuda_bucketer_init(cuda_bucketer *b, size_t cap, cuda_bucket_emit_fn emit, void *user)
{
    b->cap = cap ? cap : 1;
    b->lo = b->hi = 0;
    b->emit = emit;
    b->user = user;
}

int cuda_bucketer_flush(cuda_bucketer *b)
{
    if (b->hi == b->lo) return 0;
    const size_t lo = b->lo, n = b->hi - b->lo;
    b->lo = b->hi = 0;
    return b->emit(b->user, lo, n);
}

int cuda_bucketer_add(cuda_bucketer *b, size_t offset, size_t count)
{
    if (count == 0) return 0;
    if (b->hi > b->lo && offset + count != b->lo) { /* not just below the pending bucket */
        int rc = cuda_bucketer_flush(b);
        if (rc) return rc;
    }
    if (b->hi == b->lo) b->hi = offset + count;
    b->lo = offset;
    return b->hi - b->lo >= b->cap ? cuda_bucketer_flush(b) : 0;
}
