/* cuda/bucket: DDP's gradient bucketing as pure bookkeeping, free of CUDA so a CPU test can check
 * it (tests/cuda/cuda_bucket.c).  Backward reports finished ranges of the gradient block one after
 * another (model_grad_range order: each adjacent to and below the previous one); ranges are
 * merged into a bucket until it holds at least `cap` floats, then the bucket is emitted.  A range
 * that is not adjacent starts a new bucket (the pending one is emitted first), and flush emits
 * whatever is pending.  Every element of every range is emitted exactly once. */
#ifndef INSTBENCH_CUDA_BUCKET_H
#define INSTBENCH_CUDA_BUCKET_H

#include <stddef.h>

typedef int (*cuda_bucket_emit_fn)(void *user, size_t offset, size_t count);

typedef struct cuda_bucketer {
    size_t cap;    /* floats per bucket (>= 1) */
    size_t lo, hi; /* pending bucket [lo, hi); empty when lo == hi */
    cuda_bucket_emit_fn emit;
    void *user;
} cuda_bucketer;

void cuda_bucketer_init(cuda_bucketer *b, size_t cap, cuda_bucket_emit_fn emit, void *user);
/* 0, or the emit callback's non-zero result. */
int cuda_bucketer_add(cuda_bucketer *b, size_t offset, size_t count);
int cuda_bucketer_flush(cuda_bucketer *b);

#endif
