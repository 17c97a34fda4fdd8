/* cuda_host_runtime: a host-memory stand-in for the CUDA runtime calls the CUDA backend makes
 * (memory, streams, events, graphs, devices), for the tests that run src/cuda on a machine without a
 * GPU: with the kernel launchers of cuda_host_shim.c (plain loops), or with the real kernels of
 * kernels/ compiled for the CPU by tests/fakes/cudasim (cuda_vit_sim, cuda_dp_sim, the
 * simulated module).  Three files, one library (instbench_cudart_host): this one, devices, memory,
 * copies and device facts; cuda_host_streams.c, streams, their scheduler, events and the clocks;
 * cuda_host_graphs.c, stream capture and graphs.
 *
 * Host memory follows CUDA's rules: a copy from pageable memory is staged at the call (the caller
 * may reuse the buffer at once), a copy from or into pinned memory (cudaMallocHost) happens when
 * the op runs, a copy into pageable memory returns only once done.  cudaFree, cudaFreeHost and
 * cudaStreamDestroy wait for the work queued before them.
 *
 * Device memory is guarded: each allocation ends at a page boundary (rounded to 256 bytes, as
 * cudaMalloc's granularity) with an inaccessible page on each side, so a kernel that reads or
 * writes past it traps (the handler below names the allocation, the offset and, under tests/fakes/cudasim,
 * the kernel, block and thread), and fresh memory, device or pinned host, is filled with 0x7fa5
 * half words, a signalling NaN in fp32 and in bf16 (compute-sanitizer's initcheck assumes nothing
 * of it either), so a read of memory nobody wrote shows; cudaMemset and copies define it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* REG_ERR: whether a fault was a read or a write */
#endif
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cuda_host_runtime.h"
#include "cuda_host_runtime_internal.h"

/* ---------------------------------------------------------------- devices */

/* which devices were made current (a context on a real GPU): tests check a probe touches none */
int shim_touched_devices;
__thread int shim_current;
cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= SHIM_DEVICES) return cudaErrorInvalidDevice;
    shim_current = d;
    shim_touched_devices |= 1 << d;
    return cudaSuccess;
}

/* ---------------------------------------------------------------- memory */

/* Every cudaMalloc / cudaMallocHost allocation, registered with its exact size, so a stand-in
 * library can check an operand's extent (shim_device_allocation), a copy can tell pinned from
 * pageable host memory, and a test can count what was not freed. */
typedef struct allocation {
    char *base;  /* what the caller got */
    size_t size; /* what the caller asked for */
    char *map;   /* the mapping: guard page, data, guard page */
    size_t map_size;
    int pinned; /* cudaMallocHost (host memory), not device memory */
} allocation;
static allocation *allocs;
static size_t n_allocs, cap_allocs;
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
int shim_malloc_fails, shim_live_allocations;

static size_t page_size(void)
{
    static size_t pg;
    if (!pg) pg = (size_t)sysconf(_SC_PAGESIZE);
    return pg;
}

static int lookup(const void *p, allocation *out)
{
    const char *c = p;
    int found = 0;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < n_allocs && !found; i++)
        if (c >= allocs[i].base && c <= allocs[i].base + allocs[i].size) found = 1, *out = allocs[i];
    pthread_mutex_unlock(&allocs_lock);
    return found;
}

void (*shim_fault_where)(char *buf, size_t n);

/* fills fresh memory with 0x7fa5 half words (N is a multiple of 256) */
static void poison(char *p, size_t n)
{
    const uint16_t v = 0x7fa5;
    for (size_t i = 0; i + 1 < n; i += 2) memcpy(p + i, &v, 2);
}

/* An access through a guard page: name the allocation it ran off (its offset from the base, as an
 * index would give it) and what ran it, then die as the access would. */
static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    const char *a = si->si_addr;
    char msg[512];
    const char *kind = "access";
#if defined(__x86_64__) && defined(REG_ERR)
    kind = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR] & 2 ? "write" : "read";
#else
    (void)ctx;
#endif
    int len = snprintf(msg, sizeof msg, "cuda_host_runtime: out-of-bounds device memory %s at %p", kind, si->si_addr);
    for (size_t i = 0; i < n_allocs; i++) /* no lock: the process is about to die */
        if (a >= allocs[i].map && a < allocs[i].map + allocs[i].map_size && !allocs[i].pinned) {
            len += snprintf(msg + len, sizeof msg - (size_t)len,
                            ", byte offset %td of the %zu-byte allocation at %p (%td bytes %s)", a - allocs[i].base,
                            allocs[i].size, (void *)allocs[i].base,
                            a < allocs[i].base ? allocs[i].base - a : a - (allocs[i].base + allocs[i].size),
                            a < allocs[i].base ? "before it" : "past its end");
            break;
        }
    if (shim_fault_where && len < (int)sizeof msg - 2) shim_fault_where(msg + len, sizeof msg - (size_t)len);
    len = (int)strlen(msg);
    if (len > (int)sizeof msg - 2) len = (int)sizeof msg - 2;
    msg[len++] = '\n';
    if (write(2, msg, (size_t)len) < 0) _exit(128 + sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_fault_handler(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

static cudaError_t allocate(void **p, size_t n, int pinned)
{
    *p = NULL;
    if (!pinned && shim_malloc_fails) return cudaErrorMemoryAllocation;
    install_fault_handler();
    const size_t pg = page_size(), data = (n + 255) / 256 * 256 + (n == 0 ? 256 : 0);
    const size_t map_size = (data + pg - 1) / pg * pg + 2 * pg;
    char *m = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
    mprotect(m, pg, PROT_NONE);
    mprotect(m + map_size - pg, pg, PROT_NONE);
    char *base = m + map_size - pg - data; /* 256-byte aligned, its rounded end on the guard */
    poison(base, data);
    pthread_mutex_lock(&allocs_lock);
    if (n_allocs == cap_allocs) {
        size_t cap = cap_allocs ? 2 * cap_allocs : 64;
        allocation *a = realloc(allocs, cap * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&allocs_lock);
            munmap(m, map_size);
            return cudaErrorMemoryAllocation;
        }
        allocs = a, cap_allocs = cap;
    }
    allocs[n_allocs++] = (allocation){base, n, m, map_size, pinned};
    if (!pinned) shim_live_allocations++;
    pthread_mutex_unlock(&allocs_lock);
    *p = base;
    return cudaSuccess;
}

static cudaError_t release_allocation(void *p, int pinned)
{
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < n_allocs; i++)
        if (allocs[i].base == p && allocs[i].pinned == pinned) {
            allocation a = allocs[i];
            allocs[i] = allocs[--n_allocs];
            if (!pinned) shim_live_allocations--;
            pthread_mutex_unlock(&allocs_lock);
            munmap(a.map, a.map_size);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&allocs_lock);
    return cudaErrorInvalidValue; /* not a pointer this kind of allocation returned */
}

int shim_device_allocation(const void *p, const char **base, size_t *size)
{
    allocation a;
    if (!lookup(p, &a) || a.pinned) return 0;
    *base = a.base, *size = a.size;
    return 1;
}

static int is_pinned(const void *p)
{
    allocation a;
    return lookup(p, &a) && a.pinned;
}

/* ---------------------------------------------------------------- allocation calls */

cudaError_t cudaMalloc(void **p, size_t n)
{
    return shim_unsafe_call() ? cudaErrorStreamCaptureUnsupported : allocate(p, n, 0);
}
/* cudaFree waits for the device's queued work (CUDA synchronises), then unmaps: a later access
 * through the pointer traps. */
cudaError_t cudaFree(void *p)
{
    if (shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess;
    int dev = shim_current;
    shim_drive_until(shim_device_idle, &dev);
    return release_allocation(p, 0);
}
cudaError_t cudaMallocHost(void **p, size_t n)
{
    return shim_unsafe_call() ? cudaErrorStreamCaptureUnsupported : allocate(p, n, 1);
}
cudaError_t cudaFreeHost(void *p)
{
    if (shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess;
    int dev = shim_current;
    shim_drive_until(shim_device_idle, &dev);
    return release_allocation(p, 1);
}
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    (void)s;
    return allocate(p, n, 0);
}
static void free_run(void *p) { release_allocation(p, 0); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    if (!p) return cudaSuccess;
    allocation a;
    if (!lookup(p, &a) || a.pinned || a.base != p) return cudaErrorInvalidValue;
    shim_enqueue(s, &(shim_work){free_run, NULL, NULL, p, NULL});
    return cudaSuccess;
}

/* what CUDA 11+ answers: host (pinned), device, or unregistered (success, not an error) */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    memset(a, 0, sizeof *a);
    allocation al;
    if (lookup(p, &al)) {
        a->type = al.pinned ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
        a->device = shim_current;
        if (al.pinned) a->hostPointer = (void *)p;
        else a->devicePointer = (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
    }
    return cudaSuccess;
}

/* ---------------------------------------------------------------- copies */

typedef struct copy_op {
    void *dst;
    const void *src;
    size_t n;
    int value;    /* memset: the byte; copy: -1 */
    void *staged; /* the pageable source, copied at the call */
} copy_op;

static void copy_run(void *p)
{
    copy_op *c = p;
    if (c->value >= 0) memset(c->dst, c->value, c->n);
    else memcpy(c->dst, c->staged ? c->staged : c->src, c->n);
}
static void copy_release(void *p)
{
    free(((copy_op *)p)->staged);
    free(p);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    copy_op *c = calloc(1, sizeof *c);
    if (!c) return cudaErrorMemoryAllocation;
    c->dst = p, c->n = n, c->value = (unsigned char)v;
    shim_enqueue(s, &(shim_work){copy_run, NULL, copy_release, c, NULL});
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *d, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    copy_op *c = calloc(1, sizeof *c);
    if (!c) return cudaErrorMemoryAllocation;
    c->dst = d, c->src = src, c->n = n, c->value = -1;
    const int from_host = k == cudaMemcpyHostToDevice || k == cudaMemcpyHostToHost,
              to_host = k == cudaMemcpyDeviceToHost || k == cudaMemcpyHostToHost;
    /* a graph replays a copy: pageable memory (staged or waited for at the call) cannot be */
    if (((from_host && !is_pinned(src)) || (to_host && !is_pinned(d))) && shim_capture_refuses(s)) {
        free(c);
        return cudaErrorStreamCaptureUnsupported;
    }
    if (from_host && !is_pinned(src)) { /* pageable: staged now, the caller may reuse it */
        c->staged = malloc(n ? n : 1);
        if (!c->staged) {
            free(c);
            return cudaErrorMemoryAllocation;
        }
        memcpy(c->staged, src, n);
    }
    shim_enqueue(s, &(shim_work){copy_run, NULL, copy_release, c, NULL});
    if (to_host && !is_pinned(d)) /* into pageable memory: the call returns once it is done */
        return cudaStreamSynchronize(s);
    return cudaSuccess;
}

/* ---------------------------------------------------------------- errors and device facts */

/* a launch refused at the call (tests/fakes/cudasim), or work that failed as it ran: reported once */
cudaError_t shim_launch_error;
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = shim_launch_error;
    shim_launch_error = cudaSuccess;
    return e != cudaSuccess ? e : shim_sticky();
}
/* The GPU every device pretends to be: "host shim", compute capability 9.0, 16 GiB, unless
 * CUDASIM_DEVICE="NAME,MAJOR.MINOR,MIB" names another, as its driver would report it (e.g.
 * "NVIDIA A10G,8.6,23028"; the name may not hold a comma), so a test runs the module as the GPUs
 * users rent (tests/cuda/cuda_gpus.py).  cudaGetDeviceProperties, cudaDeviceGetAttribute and
 * cudaMemGetInfo all answer from it.  A malformed value aborts: a typo must not run as 9.0. */
typedef struct shim_gpu {
    char name[256];
    int major, minor;
    size_t total;
} shim_gpu;

static shim_gpu shim_gpu_get(void)
{
    shim_gpu g = {"host shim", 9, 0, (size_t)16 << 30};
    const char *e = getenv("CUDASIM_DEVICE");
    if (!e || !*e) return g;
    const char *c2 = strrchr(e, ','), *c1 = NULL;
    for (const char *p = e; c2 && p < c2; p++)
        if (*p == ',') c1 = p;
    long long mib = 0;
    int used = 0;
    if (!c1 || c1 == e || (size_t)(c1 - e) >= sizeof g.name ||
        sscanf(c1 + 1, "%d.%d,%lld%n", &g.major, &g.minor, &mib, &used) != 3 || c1[1 + used] || g.major < 1 ||
        g.minor < 0 || mib < 1) {
        fprintf(stderr, "cuda host shim: CUDASIM_DEVICE='%s': expected NAME,MAJOR.MINOR,MIB\n", e);
        abort();
    }
    memcpy(g.name, e, (size_t)(c1 - e));
    g.name[c1 - e] = '\0';
    g.total = (size_t)mib << 20;
    return g;
}

/* the device's total with three quarters free (12 of the default 16 GiB), or CUDASIM_FREE_MIB
 * free (tests of --batch-size auto, which sizes the batch from the free part) */
cudaError_t cudaMemGetInfo(size_t *f, size_t *t)
{
    const char *mib = getenv("CUDASIM_FREE_MIB");
    *t = shim_gpu_get().total;
    *f = mib && atol(mib) > 0 ? (size_t)atol(mib) << 20 : *t / 4 * 3;
    return cudaSuccess;
}
/* two pretend GPUs (both the CUDASIM_DEVICE above), so backend_create("cuda") and multi-rank
 * paths run */
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = SHIM_DEVICES;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d)
{
    *d = shim_current;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    const shim_gpu g = shim_gpu_get();
    *v = a == cudaDevAttrComputeCapabilityMajor   ? g.major
         : a == cudaDevAttrComputeCapabilityMinor ? g.minor
         : a == cudaDevAttrMultiProcessorCount    ? 1
                                                  : 0;
    return d >= 0 && d < SHIM_DEVICES ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    const shim_gpu g = shim_gpu_get();
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", g.name);
    p->major = g.major, p->minor = g.minor, p->totalGlobalMem = g.total, p->multiProcessorCount = 1;
    return d >= 0 && d < SHIM_DEVICES ? cudaSuccess : cudaErrorInvalidDevice;
}
/* what cudaFuncGetAttributes says every kernel was compiled for (x10), for every device */
int shim_code_version = 90;
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f)
{
    memset(a, 0, sizeof *a);
    a->ptxVersion = a->binaryVersion = shim_code_version, a->maxThreadsPerBlock = 1024;
    return f ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}
cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 0;
    return cudaSuccess;
}
/* 0 (unknown), or CUDASIM_RUNTIME_VERSION (12080 for 12.8: the tests of the CUDA 12.x gate on
 * cuDNN attention, src/cuda/attention_path.c) */
cudaError_t cudaRuntimeGetVersion(int *v)
{
    const char *e = getenv("CUDASIM_RUNTIME_VERSION");
    *v = e ? atoi(e) : 0;
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return "host shim error"; }
const char *cudaGetErrorName(cudaError_t e) { return "cudaErrorShim"; }

void shim_trace(const char *fmt, ...)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static FILE *f;
    static int opened;
    pthread_mutex_lock(&mu);
    if (!opened) { /* looked up until set: a test may set it after its setup */
        const char *path = getenv("CUDASIM_TRACE");
        f = path && *path ? fopen(path, "a") : NULL;
        opened = f != NULL;
    }
    if (f) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fputc('\n', f);
        fflush(f);
    }
    pthread_mutex_unlock(&mu);
}
