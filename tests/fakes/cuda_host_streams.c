/* cuda_host_streams: the CUDA runtime stand-in's streams, their scheduler, synchronisation, events
 * and the devices' virtual clocks (cuda_host_runtime.c says what the three files hold).
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
 *   every op runs before its call returns; a collective waits there for its peers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "cuda_host_runtime.h"
#include "cuda_host_runtime_internal.h"

/* ---------------------------------------------------------------- streams and the scheduler */

typedef struct shim_op {
    struct shim_op *next;
    shim_work w;
    int device; /* its stream's (the default stream's: the caller's current): whose clock it advances */
    int replay; /* queued by cudaGraphLaunch */
} shim_op;

pthread_mutex_t shim_sched_lock = PTHREAD_MUTEX_INITIALIZER;
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

static unsigned long long next_random(void) /* under shim_sched_lock */
{
    sched_seed ^= sched_seed << 13, sched_seed ^= sched_seed >> 7, sched_seed ^= sched_seed << 17;
    return sched_seed;
}

shim_stream *shim_stream_of(cudaStream_t s) { return s ? (shim_stream *)s : &default_stream; }

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
    pthread_mutex_lock(&shim_sched_lock);
    for (size_t i = 0; i <= MAX_STREAMS; i++) {
        shim_stream *st = i < MAX_STREAMS ? streams[i] : &default_stream;
        if (!st) continue;
        int r = head_ready(st);
        if (r == 1) cand[n++] = st;
        else if (r < 0 && never) *never = 1;
    }
    if (!n) {
        pthread_mutex_unlock(&shim_sched_lock);
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
    pthread_mutex_unlock(&shim_sched_lock);
    const int outer = op_device, outer_replay = op_replay;
    op_device = op->device, op_replay = op->replay;
    op->w.run(op->w.arg);
    op_device = outer, op_replay = outer_replay;
    finish(op);
    pthread_mutex_lock(&shim_sched_lock);
    st->busy = 0;
    pthread_mutex_unlock(&shim_sched_lock);
    return 1;
}

/* Drives the scheduler until done(arg): 0, or -1 when it never will (a peer that is gone).  When
 * nothing may run, another thread is running an op or a peer has still to come: wait. */
int shim_drive_until(int (*done)(void *), void *arg)
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
    pthread_mutex_lock(&shim_sched_lock);
    int idle = !st->head && !st->busy;
    pthread_mutex_unlock(&shim_sched_lock);
    return idle;
}

/* every stream of device *(int *)dev (NULL: of every device) has drained */
int shim_device_idle(void *dev)
{
    int idle = 1;
    pthread_mutex_lock(&shim_sched_lock);
    for (size_t i = 0; i <= MAX_STREAMS && idle; i++) {
        shim_stream *st = i < MAX_STREAMS ? streams[i] : &default_stream;
        if (st && (!dev || st == &default_stream || st->device == *(int *)dev) && (st->head || st->busy)) idle = 0;
    }
    pthread_mutex_unlock(&shim_sched_lock);
    return idle;
}

void shim_enqueue_op(cudaStream_t s, const shim_work *w, int replay)
{
    shim_op *op = malloc(sizeof *op);
    if (!op) {
        fprintf(stderr, "cuda_host_runtime: out of memory\n");
        abort();
    }
    shim_stream *st = shim_stream_of(s);
    op->next = NULL, op->w = *w, op->device = st == &default_stream ? shim_current : st->device;
    op->replay = replay;
    pthread_mutex_lock(&shim_sched_lock);
    if (!registered(st)) {
        pthread_mutex_unlock(&shim_sched_lock);
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
        pthread_mutex_unlock(&shim_sched_lock);
        free(op);
        return;
    }
    if (st->tail) st->tail->next = op;
    else st->head = op;
    st->tail = op;
    /* ordered: about half the time, run a few ready ops now (any stream's); the rest waits */
    int early = ordered && !strict ? (next_random() % 2 ? (int)(next_random() % 4) + 1 : 0) : 0;
    pthread_mutex_unlock(&shim_sched_lock);
    if (!ordered) {
        shim_drive_until(stream_idle, st); /* -1: stuck behind a dead peer; it stays queued */
        return;
    }
    while (early-- > 0 && step_one(NULL)) {}
}
void shim_enqueue(cudaStream_t s, const shim_work *w) { shim_enqueue_op(s, w, 0); }

void shim_drop_owner(const void *owner)
{
    shim_op *dropped = NULL;
    pthread_mutex_lock(&shim_sched_lock);
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
    pthread_mutex_unlock(&shim_sched_lock);
    while (dropped) {
        shim_op *next = dropped->next;
        finish(dropped);
        dropped = next;
    }
    if (!ordered) shim_drive_until(shim_device_idle, NULL); /* what waited behind them runs now */
}

void shim_report_async_error(cudaError_t e)
{
    pthread_mutex_lock(&shim_sched_lock);
    if (async_error == cudaSuccess) async_error = e;
    pthread_mutex_unlock(&shim_sched_lock);
}

/* the sticky error of work that ran (a GPU reports a kernel's fault at the next synchronisation) */
cudaError_t shim_sticky(void)
{
    pthread_mutex_lock(&shim_sched_lock);
    cudaError_t e = async_error;
    pthread_mutex_unlock(&shim_sched_lock);
    return e;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
    (void)f;
    shim_stream *n = calloc(1, sizeof *n);
    if (!n) return cudaErrorMemoryAllocation;
    n->device = shim_current;
    pthread_mutex_lock(&shim_sched_lock);
    n->made = ++streams_made;
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (!streams[i]) {
            streams[i] = n;
            pthread_mutex_unlock(&shim_sched_lock);
            *s = (cudaStream_t)n;
            return cudaSuccess;
        }
    pthread_mutex_unlock(&shim_sched_lock);
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
    if (shim_drive_until(stream_idle, st) != 0) {
        pthread_mutex_lock(&shim_sched_lock);
        shim_op *op = st->head;
        st->head = st->tail = NULL;
        pthread_mutex_unlock(&shim_sched_lock);
        while (op) {
            shim_op *next = op->next;
            finish(op);
            op = next;
        }
    }
    pthread_mutex_lock(&shim_sched_lock);
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (streams[i] == st) streams[i] = NULL;
    pthread_mutex_unlock(&shim_sched_lock);
    free(st);
    return cudaSuccess;
}

/* A stream stuck behind a dead peer never drains: a blocking wait would block for ever on a GPU,
 * so here it is counted (a test asserts none happened) and fails at once. */
int shim_unbounded_waits;
/* Waiting on a capturing stream is an error in CUDA and invalidates the capture. */
cudaError_t shim_capture_refuses(cudaStream_t s)
{
    shim_stream *st = shim_stream_of(s);
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
__thread shim_graph *shim_thread_capture;
cudaError_t shim_unsafe_call(void)
{
    if (!shim_thread_capture) return cudaSuccess;
    if (shim_thread_capture->invalid == cudaSuccess) shim_thread_capture->invalid = cudaErrorStreamCaptureUnsupported;
    return cudaErrorStreamCaptureUnsupported;
}

static int any_capture(void)
{
    int any = default_stream.capture != NULL;
    pthread_mutex_lock(&shim_sched_lock);
    for (size_t i = 0; i < MAX_STREAMS; i++)
        if (streams[i] && streams[i]->capture) any = 1;
    pthread_mutex_unlock(&shim_sched_lock);
    return any;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (shim_capture_refuses(s) || shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (shim_drive_until(stream_idle, shim_stream_of(s)) == 0) return shim_sticky();
    __atomic_add_fetch(&shim_unbounded_waits, 1, __ATOMIC_SEQ_CST);
    return cudaErrorLaunchTimeout;
}

/* The GPU moves on by itself; here whoever asks moves it: everything that may run, runs. */
cudaError_t cudaStreamQuery(cudaStream_t s)
{
    if (shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    while (step_one(NULL)) {}
    if (shim_sticky() != cudaSuccess) return shim_sticky();
    return stream_idle(shim_stream_of(s)) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (shim_unsafe_call() || any_capture()) return cudaErrorStreamCaptureUnsupported;
    int dev = shim_current;
    if (shim_drive_until(shim_device_idle, &dev) == 0) return shim_sticky();
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
    if (shim_capture_refuses(s)) return cudaErrorStreamCaptureUnsupported;
    unsigned long gen = __atomic_add_fetch(&e->recorded, 1, __ATOMIC_ACQ_REL);
    shim_enqueue(s, &(shim_work){record_run, NULL, event_op_release, event_op_new(e, gen), NULL});
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned f)
{
    (void)f;
    shim_event *e = (shim_event *)ev;
    if (!e) return cudaErrorInvalidResourceHandle;
    if (shim_capture_refuses(s)) return cudaErrorStreamCaptureUnsupported;
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
    if (shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    if (shim_drive_until(event_done, ev) == 0) return shim_sticky();
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
    if (shim_unsafe_call()) return cudaErrorStreamCaptureUnsupported;
    while (step_one(NULL)) {}
    return event_done(ev) ? shim_sticky() : cudaErrorNotReady;
}
