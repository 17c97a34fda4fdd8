/* cuda_host_runtime: a host-memory stand-in for the CUDA runtime calls the CUDA backend makes
 * (memory, streams, events, devices), for the tests that run src/cuda on a machine without a GPU:
 * with the kernel launchers of cuda_host_shim.c (plain loops), or with the real kernels of
 * kernels/ compiled for the CPU by tests/fakes/cudasim (cuda_vit_sim, cuda_dp_sim, the
 * simulated module).
 *
 * Stream order.  Every piece of work a call puts on a stream (a kernel from tests/fakes/cudasim, a GEMM
 * of the cuBLASLt stand-in, a copy, a memset, an event record or wait, a collective of the NCCL
 * stand-in) is an op queued on that stream (shim_enqueue).
 * - Ordered mode (turned on by tests/fakes/cudasim, where the real kernels run): an op runs only after
 *   every earlier op of its stream, and only once what it waits for has happened (the record of
 *   an event, every peer of a collective).  Among the ops that may run, a seeded adversarial
 *   scheduler picks which runs next, so a missing cudaStreamWaitEvent shows as wrong numbers
 *   instead of passing because everything ran in call order.  Seeds 1 and 2 are deterministic
 *   and opposite: nothing runs before a host wait needs it, and then the ready op of the stream
 *   made last (seed 1) or first (seed 2) always goes first, so for any two streams both orders
 *   occur over the two seeds; any other seed picks at random and runs some ops as soon as they
 *   are queued.  Ops of different streams may run at the same time on different host threads,
 *   as on a GPU.
 * - Immediate mode (the loop launchers of cuda_host_shim.c run at the call and ignore streams):
 *   every op runs before its call returns; a collective waits there for its peers.
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

/* ---------------------------------------------------------------- devices */

/* which devices were made current (a context on a real GPU): tests check a probe touches none */
int shim_touched_devices;
static __thread int shim_current;
#define SHIM_DEVICES 2
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

/* ---------------------------------------------------------------- streams and the scheduler */

/* A captured graph: the ops queued on the capturing stream, in order, not run.  A launch queues
 * them again on its stream (the graph keeps them: they run once per launch); the graph and every
 * exec made from it hold a reference, and the ops are released with the last. */
struct shim_graph {
    shim_work *ops;
    size_t n, cap;
    int refs;
    cudaError_t invalid; /* what invalidated the capture (cudaSuccess: nothing) */
};

typedef struct shim_op {
    struct shim_op *next;
    shim_work w;
    int device; /* its stream's (the default stream's: the caller's current): whose clock it advances */
    int replay; /* queued by cudaGraphLaunch */
} shim_op;

typedef struct shim_graph shim_graph;

typedef struct shim_stream {
    shim_op *head, *tail;
    shim_graph *capture; /* between cudaStreamBeginCapture and End: its ops are recorded here */
    int busy;            /* its head op is running on some thread: the next one waits */
    int device;          /* current when it was made: cudaFree and cudaDeviceSynchronize wait for its work */
    int made;            /* creation order: the priority under seeds 1 and 2 */
} shim_stream;

/* One lock over every queue; ops run without it (so they may take their own locks, and two
 * streams' ops may run at once on two threads). */
static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;
#define MAX_STREAMS 128
static shim_stream *streams[MAX_STREAMS];
static shim_stream default_stream; /* the NULL stream */
static int ordered;
static int strict; /* seeds 1 and 2: +1 the newest stream first, -1 the oldest; 0 at random */
static int streams_made;
static unsigned long long sched_seed = 0x9E3779B97F4A7C15ULL;
static cudaError_t async_error;

void shim_streams_ordered(unsigned long long seed)
{
    ordered = 1;
    strict = seed == 1 ? 1 : seed == 2 ? -1 : 0;
    sched_seed = seed > 2 ? seed : 0x9E3779B97F4A7C15ULL;
}
int shim_streams_are_ordered(void) { return ordered; }

static unsigned long long next_random(void) /* under sched_lock */
{
    sched_seed ^= sched_seed << 13, sched_seed ^= sched_seed >> 7, sched_seed ^= sched_seed << 17;
    return sched_seed;
}

static shim_stream *stream_of(cudaStream_t s) { return s ? (shim_stream *)s : &default_stream; }

static int registered(shim_stream *st)
{
    if (st == &default_stream) return 1;
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (streams[i] == st) return 1;
    return 0;
}

static int head_ready(shim_stream *st)
{
    if (!st->head || st->busy) return 0;
    return st->head->w.ready ? st->head->w.ready(st->head->w.arg) : 1;
}

static void finish(shim_op *op)
{
    if (op->w.release) op->w.release(op->w.arg);
    free(op);
}

/* the device of the op this host thread runs (-1: none), so the clock it reads or advances is its
 * own device's, whichever thread happens to drive the scheduler; and whether a graph launch queued it */
static __thread int op_device = -1, op_replay;
int shim_op_replayed(void) { return op_replay; }

/* Runs one op whose turn it is, of any stream, chosen at random: 1 if one ran.  *never (if not
 * NULL) is set when some stream is stuck behind a peer that never comes. */
static int step_one(int *never)
{
    shim_stream *cand[MAX_STREAMS + 1];
    size_t n = 0;
    pthread_mutex_lock(&sched_lock);
    for (size_t i = 0; i <= MAX_STREAMS; i++) {
        shim_stream *st = i < MAX_STREAMS ? streams[i] : &default_stream;
        if (!st) continue;
        int r = head_ready(st);
        if (r == 1) cand[n++] = st;
        else if (r < 0 && never) *never = 1;
    }
    if (!n) {
        pthread_mutex_unlock(&sched_lock);
        return 0;
    }
    size_t pick = n == 1 ? 0 : strict ? 0 : next_random() % n;
    for (size_t i = 1; strict && i < n; i++)
        if (strict * cand[i]->made > strict * cand[pick]->made) pick = i;
    shim_stream *st = cand[pick];
    shim_op *op = st->head;
    st->head = op->next;
    if (!st->head) st->tail = NULL;
    st->busy = 1;
    pthread_mutex_unlock(&sched_lock);
    const int outer = op_device, outer_replay = op_replay;
    op_device = op->device, op_replay = op->replay;
    op->w.run(op->w.arg);
    op_device = outer, op_replay = outer_replay;
    finish(op);
    pthread_mutex_lock(&sched_lock);
    st->busy = 0;
    pthread_mutex_unlock(&sched_lock);
    return 1;
}

/* Drives the scheduler until done(arg): 0, or -1 when it never will (a peer that is gone).  When
 * nothing may run, another thread is running an op or a peer has still to come: wait. */
static int drive_until(int (*done)(void *), void *arg)
{
    const struct timespec nap = {0, 20 * 1000};
    time_t t0 = time(NULL);
    for (;;) {
        if (done(arg)) return 0;
        int never = 0;
        if (step_one(&never)) continue;
        if (done(arg)) return 0;
        if (never) return -1;
        if (time(NULL) - t0 > 600) {
            fprintf(stderr, "cuda_host_runtime: no stream work could run for 600 s: a deadlock in the test\n");
            abort();
        }
        nanosleep(&nap, NULL);
    }
}

static int stream_idle(void *p)
{
    shim_stream *st = p;
    pthread_mutex_lock(&sched_lock);
    int idle = !st->head && !st->busy;
    pthread_mutex_unlock(&sched_lock);
    return idle;
}

/* every stream of device *(int *)dev (NULL: of every device) has drained */
static int device_idle(void *dev)
{
    int idle = 1;
    pthread_mutex_lock(&sched_lock);
    for (size_t i = 0; i <= MAX_STREAMS && idle; i++) {
        shim_stream *st = i < MAX_STREAMS ? streams[i] : &default_stream;
        if (st && (!dev || st == &default_stream || st->device == *(int *)dev) && (st->head || st->busy)) idle = 0;
    }
    pthread_mutex_unlock(&sched_lock);
    return idle;
}

static void enqueue(cudaStream_t s, const shim_work *w, int replay)
{
    shim_op *op = malloc(sizeof *op);
    if (!op) {
        fprintf(stderr, "cuda_host_runtime: out of memory\n");
        abort();
    }
    shim_stream *st = stream_of(s);
    op->next = NULL, op->w = *w, op->device = st == &default_stream ? shim_current : st->device;
    op->replay = replay;
    pthread_mutex_lock(&sched_lock);
    if (!registered(st)) {
        pthread_mutex_unlock(&sched_lock);
        fprintf(stderr, "cuda_host_runtime: work queued on a stream that was destroyed or never created\n");
        abort();
    }
    if (st->capture) { /* recorded, not run */
        shim_graph *g = st->capture;
        if (g->n == g->cap) {
            size_t cap = g->cap ? 2 * g->cap : 64;
            shim_work *ops = realloc(g->ops, cap * sizeof *ops);
            if (!ops) {
                fprintf(stderr, "cuda_host_runtime: out of memory\n");
                abort();
            }
            g->ops = ops, g->cap = cap;
        }
        g->ops[g->n++] = *w;
        pthread_mutex_unlock(&sched_lock);
        free(op);
        return;
    }
    if (st->tail) st->tail->next = op;
    else st->head = op;
    st->tail = op;
    /* ordered: about half the time, run a few ready ops now (any stream's); the rest waits */
    int early = ordered && !strict ? (next_random() % 2 ? (int)(next_random() % 4) + 1 : 0) : 0;
    pthread_mutex_unlock(&sched_lock);
    if (!ordered) {
        drive_until(stream_idle, st); /* -1: stuck behind a dead peer; it stays queued */
        return;
    }
    while (early-- > 0 && step_one(NULL)) {}
}
void shim_enqueue(cudaStream_t s, const shim_work *w) { enqueue(s, w, 0); }

void shim_drop_owner(const void *owner)
{
    shim_op *dropped = NULL;
    pthread_mutex_lock(&sched_lock);
    for (size_t i = 0; i <= MAX_STREAMS; i++) {
        shim_stream *st = i < MAX_STREAMS ? streams[i] : &default_stream;
        if (!st) continue;
        shim_op **pp = &st->head, *last = NULL;
        while (*pp) {
            shim_op *op = *pp;
            if (op->w.owner == owner) {
                *pp = op->next;
                op->next = dropped, dropped = op;
            } else {
                last = op;
                pp = &op->next;
            }
        }
        st->tail = last;
    }
    pthread_mutex_unlock(&sched_lock);
    while (dropped) {
        shim_op *next = dropped->next;
        finish(dropped);
        dropped = next;
    }
    if (!ordered) drive_until(device_idle, NULL); /* what waited behind them runs now */
}

void shim_report_async_error(cudaError_t e)
{
    pthread_mutex_lock(&sched_lock);
    if (async_error == cudaSuccess) async_error = e;
    pthread_mutex_unlock(&sched_lock);
}

/* the sticky error of work that ran (a GPU reports a kernel's fault at the next synchronisation) */
static cudaError_t sticky(void)
{
    pthread_mutex_lock(&sched_lock);
    cudaError_t e = async_error;
    pthread_mutex_unlock(&sched_lock);
    return e;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
    (void)f;
    shim_stream *n = calloc(1, sizeof *n);
    if (!n) return cudaErrorMemoryAllocation;
    n->device = shim_current;
    pthread_mutex_lock(&sched_lock);
    n->made = ++streams_made;
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (!streams[i]) {
            streams[i] = n;
            pthread_mutex_unlock(&sched_lock);
            *s = (cudaStream_t)n;
            return cudaSuccess;
        }
    pthread_mutex_unlock(&sched_lock);
    free(n);
    return cudaErrorMemoryAllocation;
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f, int prio)
{
    (void)prio;
    return cudaStreamCreateWithFlags(s, f);
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi)
{
    *lo = *hi = 0;
    return cudaSuccess;
}

/* The work queued before the destroy still runs (CUDA completes it); a stream stuck behind a
 * dead peer has its work dropped, as the abort that must come would. */
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s) return cudaErrorInvalidResourceHandle;
    shim_stream *st = (shim_stream *)s;
    if (drive_until(stream_idle, st) != 0) {
        pthread_mutex_lock(&sched_lock);
        shim_op *op = st->head;
        st->head = st->tail = NULL;
        pthread_mutex_unlock(&sched_lock);
        while (op) {
            shim_op *next = op->next;
            finish(op);
            op = next;
        }
    }
    pthread_mutex_lock(&sched_lock);
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (streams[i] == st) streams[i] = NULL;
    pthread_mutex_unlock(&sched_lock);
    free(st);
    return cudaSuccess;
}

/* A stream stuck behind a dead peer never drains: a blocking wait would block for ever on a GPU,
 * so here it is counted (a test asserts none happened) and fails at once. */
int shim_unbounded_waits;
/* Waiting on a capturing stream is an error in CUDA and invalidates the capture. */
static cudaError_t capture_refuses(shim_stream *st)
{
    if (!st->capture) return cudaSuccess;
    st->capture->invalid = cudaErrorStreamCaptureUnsupported;
    return cudaErrorStreamCaptureUnsupported;
}

/* CUDA's rule for the potentially unsafe calls during a capture begun in cudaStreamCaptureModeGlobal
 * or ThreadLocal mode (what vit.c uses): allocation and free (cudaMalloc, cudaFree, cudaMallocHost,
 * cudaFreeHost: they may synchronise), synchronisations and queries made by the capturing thread
 * fail with cudaErrorStreamCaptureUnsupported and invalidate its capture, whose
 * cudaStreamEndCapture then answers cudaErrorStreamCaptureInvalidated, as on a GPU.  Without this
 * a step that allocated inside its graph (cuBLAS creating its handle, a workspace) passed here and
 * failed at its first capture on a GPU.  (Relaxed mode captures are not checked: none is made.) */
static __thread shim_graph *thread_capture;
static cudaError_t unsafe_call(void)
{
    if (!thread_capture) return cudaSuccess;
    if (thread_capture->invalid == cudaSuccess) thread_capture->invalid = cudaErrorStreamCaptureUnsupported;
    return cudaErrorStreamCaptureUnsupported;
}

static int any_capture(void)
{
    int any = default_stream.capture != NULL;
    pthread_mutex_lock(&sched_lock);
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (streams[i] && streams[i]->capture) any = 1;
    pthread_mutex_unlock(&sched_lock);
    return any;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (capture_refuses(stream_of(s)) || unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (drive_until(stream_idle, stream_of(s)) == 0) return sticky();
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}

/* The GPU moves on by itself; here whoever asks moves it: everything that may run, runs. */
cudaError_t cudaStreamQuery(cudaStream_t s)
{
    if (unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    while (step_one(NULL)) {}
    if (sticky() != cudaSuccess) return sticky();
    return stream_idle(stream_of(s)) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (unsafe_call() || any_capture()) return cudaErrorStreamCaptureUnsupported;
    int dev = shim_current;
    if (drive_until(device_idle, &dev) == 0) return sticky();
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}

/* ---------------------------------------------------------------- events */

/* recorded counts cudaEventRecord calls, completed the records that have run; a wait waits for
 * the record that was last made before it (CUDA's rule).  Ops hold a reference, so an event may be
 * destroyed while a wait on it is queued. */
typedef struct shim_event {
    unsigned long recorded, completed;
    unsigned long long at_ps; /* its stream's device's clock when the last completed record ran */
    int refs, timing;         /* timing: not created with cudaEventDisableTiming */
} shim_event;

/* Each device's clock for cudaEventElapsedTime: virtual picoseconds (64 bits hold 5,000 hours),
 * advanced only by work that says what it costs
 * (shim_clock_advance: the cuBLASLt stand-in's algorithms of a set speed), so a test's timings are
 * the same on any machine, however loaded.  One per device, as GPUs run their work side by side:
 * with ranks as threads, one rank's GEMMs must not lengthen what another rank times. */
static unsigned long long shim_clock_ps[SHIM_DEVICES];
static unsigned long long *clock_here(void) { return &shim_clock_ps[op_device >= 0 ? op_device : shim_current]; }
void shim_clock_advance(unsigned long long ps) { __atomic_add_fetch(clock_here(), ps, __ATOMIC_ACQ_REL); }

static void event_unref(shim_event *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) free(e);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f)
{
    (void)f;
    shim_event *n = calloc(1, sizeof *n);
    if (!n) return cudaErrorMemoryAllocation;
    n->refs = 1;
    n->timing = !(f & cudaEventDisableTiming);
    *e = (cudaEvent_t)n;
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (e) event_unref((shim_event *)e);
    return cudaSuccess;
}

typedef struct event_op {
    shim_event *e;
    unsigned long gen;
} event_op;
static void event_op_release(void *p)
{
    event_unref(((event_op *)p)->e);
    free(p);
}
static void record_run(void *p)
{
    event_op *o = p;
    __atomic_store_n(&o->e->at_ps, __atomic_load_n(clock_here(), __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    unsigned long cur = __atomic_load_n(&o->e->completed, __ATOMIC_ACQUIRE);
    while (cur < o->gen &&
           !__atomic_compare_exchange_n(&o->e->completed, &cur, o->gen, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
}
static int wait_ready(void *p)
{
    event_op *o = p;
    return __atomic_load_n(&o->e->completed, __ATOMIC_ACQUIRE) >= o->gen;
}
static void nothing(void *p) { (void)p; }

static event_op *event_op_new(shim_event *e, unsigned long gen)
{
    event_op *o = malloc(sizeof *o);
    if (!o) abort();
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    o->e = e, o->gen = gen;
    return o;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    shim_event *e = (shim_event *)ev;
    if (!e) return cudaErrorInvalidResourceHandle;
    /* in a capture an event only orders the graph's own nodes (an external signal needs
     * cudaEventRecordExternal): the step records its events outside, and here one inside fails */
    if (capture_refuses(stream_of(s))) return cudaErrorStreamCaptureUnsupported;
    unsigned long gen = __atomic_add_fetch(&e->recorded, 1, __ATOMIC_ACQ_REL);
    shim_enqueue(s, &(shim_work){record_run, NULL, event_op_release, event_op_new(e, gen), NULL});
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned f)
{
    (void)f;
    shim_event *e = (shim_event *)ev;
    if (!e) return cudaErrorInvalidResourceHandle;
    if (capture_refuses(stream_of(s))) return cudaErrorStreamCaptureUnsupported;
    unsigned long gen = __atomic_load_n(&e->recorded, __ATOMIC_ACQUIRE);
    if (gen == 0) return cudaSuccess; /* never recorded: no wait (CUDA's rule) */
    shim_enqueue(s, &(shim_work){nothing, wait_ready, event_op_release, event_op_new(e, gen), NULL});
    return cudaSuccess;
}

static int event_done(void *p)
{
    shim_event *e = p;
    return __atomic_load_n(&e->completed, __ATOMIC_ACQUIRE) >= __atomic_load_n(&e->recorded, __ATOMIC_ACQUIRE);
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    if (unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (drive_until(event_done, ev) == 0) return sticky();
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}

/* CUDA's rules: both events recorded and done (else cudaErrorNotReady), neither made with
 * cudaEventDisableTiming (else cudaErrorInvalidResourceHandle). */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    shim_event *a = (shim_event *)start, *b = (shim_event *)end;
    if (!ms || !a || !b || !a->timing || !b->timing) return cudaErrorInvalidResourceHandle;
    if (!__atomic_load_n(&a->recorded, __ATOMIC_ACQUIRE) || !__atomic_load_n(&b->recorded, __ATOMIC_ACQUIRE))
        return cudaErrorInvalidResourceHandle;
    if (!event_done(a) || !event_done(b)) return cudaErrorNotReady;
    *ms = (float)(((double)__atomic_load_n(&b->at_ps, __ATOMIC_ACQUIRE) -
                   (double)__atomic_load_n(&a->at_ps, __ATOMIC_ACQUIRE)) /
                  1e9);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    if (unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    while (step_one(NULL)) {}
    return event_done(ev) ? sticky() : cudaErrorNotReady;
}

/* ---------------------------------------------------------------- allocation calls */

cudaError_t cudaMalloc(void **p, size_t n)
{
    return unsafe_call() ? cudaErrorStreamCaptureUnsupported : allocate(p, n, 0);
}
/* cudaFree waits for the device's queued work (CUDA synchronises), then unmaps: a later access
 * through the pointer traps. */
cudaError_t cudaFree(void *p)
{
    if (unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess;
    int dev = shim_current;
    drive_until(device_idle, &dev);
    return release_allocation(p, 0);
}
cudaError_t cudaMallocHost(void **p, size_t n)
{
    return unsafe_call() ? cudaErrorStreamCaptureUnsupported : allocate(p, n, 1);
}
cudaError_t cudaFreeHost(void *p)
{
    if (unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess;
    int dev = shim_current;
    drive_until(device_idle, &dev);
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
    if (((from_host && !is_pinned(src)) || (to_host && !is_pinned(d))) && capture_refuses(stream_of(s))) {
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

/* ---------------------------------------------------------------- graphs (stream capture) */

static void graph_unref(shim_graph *g)
{
    if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL)) return;
    for (size_t i = 0; i < g->n; i++)
        if (g->ops[i].release) g->ops[i].release(g->ops[i].arg);
    free(g->ops);
    free(g);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    shim_stream *st = stream_of(s);
    if (!s) return cudaErrorStreamCaptureUnsupported; /* the legacy stream cannot be captured */
    if (st->capture) return cudaErrorIllegalState;
    shim_graph *g = calloc(1, sizeof *g);
    if (!g) return cudaErrorMemoryAllocation;
    g->refs = 1;
    pthread_mutex_lock(&sched_lock);
    st->capture = g;
    pthread_mutex_unlock(&sched_lock);
    if (mode != cudaStreamCaptureModeRelaxed) thread_capture = g;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *out)
{
    shim_stream *st = stream_of(s);
    pthread_mutex_lock(&sched_lock);
    shim_graph *g = st->capture;
    st->capture = NULL;
    pthread_mutex_unlock(&sched_lock);
    if (thread_capture == g) thread_capture = NULL;
    *out = NULL;
    if (!g) return cudaErrorIllegalState;
    if (g->invalid != cudaSuccess) {
        graph_unref(g);
        return cudaErrorStreamCaptureInvalidated;
    }
    *out = (cudaGraph_t)g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    *status = stream_of(s)->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    shim_graph *g = (shim_graph *)graph;
    if (!g) return cudaErrorInvalidValue;
    __atomic_add_fetch(&g->refs, 1, __ATOMIC_ACQ_REL);
    *exec = (cudaGraphExec_t)g;
    return cudaSuccess;
}

/* The graph's ops queued again, in capture order, on S; they stay the graph's (no release). */
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    shim_graph *g = (shim_graph *)exec;
    if (!g) return cudaErrorInvalidValue;
    for (size_t i = 0; i < g->n; i++) {
        shim_work w = g->ops[i];
        w.release = NULL;
        enqueue(s, &w, 1);
    }
    return sticky();
}

/* Launched work may still be queued: it finishes first (CUDA frees an exec's resources after its
 * launches complete). */
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    int dev = shim_current;
    if (!exec) return cudaErrorInvalidValue;
    drive_until(device_idle, &dev);
    graph_unref((shim_graph *)exec);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (!graph) return cudaErrorInvalidValue;
    graph_unref((shim_graph *)graph);
    return cudaSuccess;
}

/* ---------------------------------------------------------------- errors and device facts */

/* a launch refused at the call (tests/fakes/cudasim), or work that failed as it ran: reported once */
cudaError_t shim_launch_error;
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = shim_launch_error;
    shim_launch_error = cudaSuccess;
    return e != cudaSuccess ? e : sticky();
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
/* two pretend GPUs, compute capability 9.0, so backend_create("cuda") and multi-rank paths run */
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 2;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d)
{
    *d = shim_current;
    return cudaSuccess;
}
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
