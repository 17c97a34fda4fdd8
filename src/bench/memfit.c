/* memfit: will this batch fit?  Answered before anything is allocated, from the backend's own
 * estimate (parameters, gradients, optimizer state, activations).  On a host backend the input
 * buffers share that memory; a GPU backend's estimate is of device memory, which they do not use. */
#include "instbench/bench.h"

size_t memfit_rank_bytes(const ib_backend_ops *backend, const ib_train_config *t, bench_data_mode data)
{
    size_t est = backend->memory_estimate(t);
    if (backend->device != IB_DEVICE_HOST || est >= IB_MEMORY_REFUSED) return est;
    const vit_config *m = &t->model;
    /* images float32 [B,3,H,W] + labels int32 [B]; host data keeps two such batches (double buffer) */
    size_t batch_bytes = (size_t)t->batch_size * ((size_t)m->in_chans * m->img_size * m->img_size * 4 + 4);
    return est + (data == BENCH_DATA_HOST ? 2 : 1) * batch_bytes;
}

uint64_t memfit_device_available(const ib_backend_ops *backend, const bench_sysinfo *sys, int first, int n,
                                 int averaging)
{
    uint64_t least = 0;
    for (int d = first; d < first + n; d++) {
        uint64_t bytes = 0;
        ib_error err;
        if (!backend->device_memory_free || backend->device_memory_free(d, &bytes, &err)) {
            if (backend->device_memory_free) ib_debug("GPU %d: free memory unknown (%s): using its total", d, err.msg);
            bytes = d >= 0 && d < sys->gpu_count ? sys->gpus[d].memory_bytes : 0;
        }
        if (bytes == 0) return 0; /* one device unknown: the whole answer is */
        if (d == first || bytes < least) least = bytes;
    }
    if (averaging) least = least > MEMFIT_NCCL_BYTES ? least - MEMFIT_NCCL_BYTES : 0;
    return least;
}

int memfit_largest_batch(const ib_backend_ops *backend, ib_train_config t, bench_data_mode data, int ranks,
                         uint64_t avail, int max_batch)
{
    /* Memory grows with the batch, so the largest batch that fits is found by bisection. */
    int lo = 0, hi = max_batch;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        t.batch_size = mid;
        if ((uint64_t)memfit_rank_bytes(backend, &t, data) * (uint64_t)ranks <= avail) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}
