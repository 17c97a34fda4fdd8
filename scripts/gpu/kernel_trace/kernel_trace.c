/* kernel_trace: a CUDA injection library (CUDA_INJECTION64_PATH) that records every kernel, memcpy
 * and memset a process runs on the GPU, CUDA-graph replays included, through CUPTI's activity API:
 * the same source torch.profiler reads for PyTorch, so instbench's step and PyTorch's can be put
 * side by side per kernel class (scripts/gpu/kernel_classes.py).  Unlike ncu it leaves the clocks
 * alone and adds no serialisation between kernels.
 * Output: KERNEL_TRACE_OUT (a path), one line per activity: kind, start and end in ns, then the
 * (mangled) name; written when the process exits.
 * Build: cc -shared -fPIC -O2 kernel_trace.c -I$CUDA/include -L$CUDA/lib64 -lcupti -o libkernel_trace.so
 * (scripts/gpu/gpu_bundle.sh builds it into the bundle when CUPTI's headers are here). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUF_BYTES (8u << 20)

static FILE *out;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (out && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            fprintf(out, "kernel\t%llu\t%llu\t%s\n", (unsigned long long)k->start, (unsigned long long)k->end,
                    k->name ? k->name : "?");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            fprintf(out, "memcpy\t%llu\t%llu\tmemcpy kind %u, %llu bytes\n", (unsigned long long)m->start,
                    (unsigned long long)m->end, (unsigned)m->copyKind, (unsigned long long)m->bytes);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            fprintf(out, "memset\t%llu\t%llu\tmemset %llu bytes\n", (unsigned long long)m->start,
                    (unsigned long long)m->end, (unsigned long long)m->bytes);
            break;
        }
        default: break;
        }
    }
    free(buffer);
}

static void finish(void)
{
    cuptiActivityFlushAll(1);
    if (out) fclose(out);
    out = NULL;
}

int InitializeInjection(void)
{
    const char *path = getenv("KERNEL_TRACE_OUT");
    if (!path || !*path || !(out = fopen(path, "w"))) {
        fprintf(stderr, "kernel_trace: set KERNEL_TRACE_OUT to a writable path\n");
        return 0;
    }
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS) {
        fprintf(stderr, "kernel_trace: CUPTI refused the activity API\n");
        fclose(out);
        out = NULL;
        return 0;
    }
    atexit(finish);
    return 1;
}
