/* cuda_host_runtime: a host-memory stand-in for the CUDA runtime calls the CUDA backend makes
 * (memory, streams, events, devices), for the tests that run src/cuda on a machine without a GPU:
 * with the kernel launchers of cuda_host_shim.c (plain loops), or with the real kernels of
 * src/cuda/kernels compiled for the CPU by tests/cudasim (cuda_vit_sim).  All work runs at the
 * call; streams and events only carry whether their work can ever complete (see below). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_host_runtime.h"

/* Streams and events are objects that carry one fact, whether their work can ever complete, as
 * the communicator that hangs them: a collective whose peer is gone hangs its stream
 * (cuda_nccl_shim.c), an event recorded there hangs, a stream made to wait on that event hangs
 * from then on; ncclCommAbort ends that communicator's work, so what it hung completes again.
 * Every other stream runs (all work is executed synchronously at the call). */
typedef struct shim_stream { const void *hung; } shim_stream;
typedef struct shim_event { const void *hung; } shim_event;
static shim_stream *live_streams[64];
/* which devices were made current (a context on a real GPU): tests check a probe touches none */
int shim_touched_devices;
static __thread int shim_current;
cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= 2) return cudaErrorInvalidDevice;
    shim_current = d;
    shim_touched_devices |= 1 << d;
    return cudaSuccess;
}
/* Device memory: host memory, 256-byte aligned like cudaMalloc's, each allocation registered with
 * its exact size, so a stand-in library can check an operand's extent against it
 * (shim_device_allocation) and a test can count what was not freed. */
typedef struct { const char *base; size_t size; } allocation;
static allocation *allocs;
static size_t n_allocs, cap_allocs;
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
int shim_malloc_fails, shim_live_allocations;

cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = NULL;
    if (shim_malloc_fails) return cudaErrorMemoryAllocation;
    char *m = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
    if (!m) return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&allocs_lock);
    if (n_allocs == cap_allocs) {
        size_t cap = cap_allocs ? 2 * cap_allocs : 64;
        allocation *a = realloc(allocs, cap * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&allocs_lock);
            free(m);
            return cudaErrorMemoryAllocation;
        }
        allocs = a, cap_allocs = cap;
    }
    allocs[n_allocs++] = (allocation){m, n};
    shim_live_allocations++;
    pthread_mutex_unlock(&allocs_lock);
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < n_allocs; i++)
        if (allocs[i].base == p) {
            allocs[i] = allocs[--n_allocs];
            shim_live_allocations--;
            pthread_mutex_unlock(&allocs_lock);
            free(p);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&allocs_lock);
    return cudaErrorInvalidValue;   /* not a pointer cudaMalloc returned */
}

int shim_device_allocation(const void *p, const char **base, size_t *size)
{
    const char *c = p;
    int found = 0;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < n_allocs && !found; i++)
        if (c >= allocs[i].base && c <= allocs[i].base + allocs[i].size)
            found = 1, *base = allocs[i].base, *size = allocs[i].size;
    pthread_mutex_unlock(&allocs_lock);
    return found;
}

/* pinned host memory: plain host memory, not device memory */
cudaError_t cudaMallocHost(void **p, size_t n)
{
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { memset(p, v, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *d, const void *s_, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    memcpy(d, s_, n);
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
    shim_stream *n = calloc(1, sizeof *n);
    for (size_t i = 0; n && i < sizeof live_streams / sizeof *live_streams; i++)
        if (__atomic_compare_exchange_n(&live_streams[i], &(shim_stream *){NULL}, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            *s = (cudaStream_t)n;
            return cudaSuccess;
        }
    free(n);
    return cudaErrorMemoryAllocation;
}
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    for (size_t i = 0; i < sizeof live_streams / sizeof *live_streams; i++)
        if (live_streams[i] == (shim_stream *)s) live_streams[i] = NULL;
    free(s);
    return cudaSuccess;
}
static int stream_hung(cudaStream_t s) { return s && ((shim_stream *)s)->hung; }
void shim_stream_hang(cudaStream_t s, const void *comm)
{
    if (s) ((shim_stream *)s)->hung = comm;
}
void shim_comm_aborted(const void *comm)
{
    for (size_t i = 0; i < sizeof live_streams / sizeof *live_streams; i++)
        if (live_streams[i] && live_streams[i]->hung == comm) live_streams[i]->hung = NULL;
}
/* A hung stream's work never completes: cudaStreamQuery says not ready; a blocking wait would
 * block for ever on a GPU, so here it is counted (a test asserts none happened) and fails at once. */
int shim_unbounded_waits;
cudaError_t cudaStreamQuery(cudaStream_t s) { return stream_hung(s) ? cudaErrorNotReady : cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!stream_hung(s)) return cudaSuccess;
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f)
{
    *e = (cudaEvent_t)calloc(1, sizeof(shim_event));
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    ((shim_event *)e)->hung = s ? ((shim_stream *)s)->hung : NULL;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!((shim_event *)e)->hung) return cudaSuccess;
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}
/* a launch the kernel simulator refused (tests/cudasim): reported once, as CUDA does */
cudaError_t shim_launch_error;
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = shim_launch_error;
    shim_launch_error = cudaSuccess;
    return e;
}
/* a 16 GiB device with 12 GiB free, or CUDASIM_FREE_MIB (tests of --batch-size auto, which
 * sizes the batch from the free part) */
cudaError_t cudaMemGetInfo(size_t *f, size_t *t)
{
    const char *mib = getenv("CUDASIM_FREE_MIB");
    *t = (size_t)16 << 30;
    *f = mib && atol(mib) > 0 ? (size_t)atol(mib) << 20 : (size_t)12 << 30;
    return cudaSuccess;
}
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) { return cudaMalloc(p, n); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { return cudaFree(p); }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    if (((shim_event *)e)->hung && s) ((shim_stream *)s)->hung = ((shim_event *)e)->hung;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi) { *lo = *hi = 0; return cudaSuccess; }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f, int prio) { return cudaStreamCreateWithFlags(s, f); }
/* two pretend GPUs, compute capability 9.0, so backend_create("cuda") and multi-rank paths run */
cudaError_t cudaGetDeviceCount(int *n) { *n = 2; return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = shim_current; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : a == cudaDevAttrMultiProcessorCount ? 1 : 0;
    return d >= 0 && d < 2 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "host shim");
    p->major = 9, p->minor = 0, p->totalGlobalMem = (size_t)1 << 34, p->multiProcessorCount = 1;
    return d >= 0 && d < 2 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaDriverGetVersion(int *v) { *v = 0; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 0; return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { return "host shim error"; }
const char *cudaGetErrorName(cudaError_t e) { return "cudaErrorShim"; }

