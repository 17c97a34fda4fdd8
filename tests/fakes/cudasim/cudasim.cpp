// cudasim: the block scheduler behind cudasim.h.  One launch: validate the configuration as the
// GPU would (a refused launch runs nothing and leaves its error for cudaGetLastError), then run
// the blocks one by one in a seeded order; within a block every thread is a fiber with its own
// stack, run round-robin (the order seeded too) until it ends or waits at a barrier.  A barrier
// opens when every live thread it concerns waits at it; when nothing can run and no barrier can
// open, the kernel has a divergent barrier: reported, the launch's block abandoned.
// Two schedules (CUDASIM_SCHEDULE): "barrier", each thread runs to its next barrier, the most
// forgiving order there is; "switch" (the default), which also switches to another thread at
// shared-memory accesses, at random from CUDASIM_SEED, so a missing barrier's stale read
// actually happens.  Shared memory itself is checked by shared.cpp.
#include "cudasim.h"
#include "cuda_host_runtime.h"
#include "shared.h"

#include <pthread.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" cudaError_t shim_launch_error; // cuda_host_runtime.c: what cudaGetLastError returns

// Counters and the first problem seen, for the tests.
extern "C" {
long cudasim_launches, cudasim_threads_run;
char cudasim_problem[256];
/* test hook: launches are checked against the limits and then dropped, never run (sweeps of
 * launch geometry at sizes no simulation could execute) */
int cudasim_validate_only;
}

namespace {

// Fiber switches.  swapcontext saves and restores the signal mask, a system call each way; on
// x86-64 the switch below saves only what the ABI says a call preserves (rbx, rbp, r12-r15, the
// SSE and x87 control words) and the stack pointer, about 50 times cheaper, which is what lets
// the switching schedule run in CI's time.  Elsewhere: ucontext.
#if defined(__x86_64__)
#define CUDASIM_FAST_SWITCH 1
extern "C" void cudasim_switch(void **from_sp, void *to_sp);
asm(".text\n"
    ".globl cudasim_switch\n"
    ".type cudasim_switch,@function\n"
    "cudasim_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size cudasim_switch, .-cudasim_switch\n");
struct context {
    void *sp;
};
#else
struct context {
    ucontext_t uc;
};
#endif

enum wait_kind { RUNNING, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };

struct fiber {
    context ctx;
    cudasim_dim tid;
    unsigned linear; // threadIdx flattened: lane = linear % 32, warp = linear / 32
    wait_kind state;
    float posted; // the value a shuffle posted
};

struct block_run {
    std::vector<fiber> fibers;
    std::vector<char *> stacks;
    context scheduler;
    cudasim_dim block_idx, block_dim, grid_dim;
    cudasim_block_fn fn;
    void *closure;
    const char *kernel;
    unsigned current;
    bool broken;
};

thread_local block_run *run_now; // the block this OS thread is running
const size_t kStack = 64 * 1024;
const cudasim_dim kZero = {0, 0, 0};
// per host thread: ranks of a data-parallel test launch from threads of their own, and one
// shared state would be a data race (and make each rank's block order depend on the others')
thread_local uint64_t seed = 0x2545F4914F6CDD1DULL;

uint64_t next_random()
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
}

void problem(const char *fmt, const char *what, unsigned a, unsigned b)
{
    char line[256];
    snprintf(line, sizeof line, fmt, what, a, b);
    cudasim_report(line);
}

// CUDASIM_SCHEDULE=switch: at a shared-memory access, one time in kSwitchOdds the running thread
// gives way to the next (a fiber switch costs about what 50 accesses do).
const unsigned kSwitchOdds = 4;
struct schedule {
    bool switching = true;
    uint64_t start = 1;
    schedule()
    {
        const char *m = getenv("CUDASIM_SCHEDULE"), *s = getenv("CUDASIM_SEED");
        if (m && !strcmp(m, "barrier")) switching = false;
        if (s) start = strtoull(s, nullptr, 0) | 1;
    }
} sched;
thread_local uint64_t switch_rng;

void switch_to(context &from, context &to)
{
#ifdef CUDASIM_FAST_SWITCH
    cudasim_switch(&from.sp, to.sp);
#else
    swapcontext(&from.uc, &to.uc);
#endif
}

void fiber_main()
{
    block_run *r = run_now;
    r->fn(r->closure);
    r->fibers[r->current].state = DONE;
    switch_to(r->fibers[r->current].ctx, r->scheduler); // never resumed
}

// A fiber about to run fiber_main on STACK from its first switch_to.
void start_context(context &c, char *stack)
{
#ifdef CUDASIM_FAST_SWITCH
    // what cudasim_switch pops, from the top: a null return address for fiber_main (it never
    // returns; the call ABI's alignment), fiber_main as the return address, six registers, the
    // control words (this thread's)
    void **top = reinterpret_cast<void **>((reinterpret_cast<uintptr_t>(stack) + kStack) & ~(uintptr_t)15);
    *--top = nullptr;
    *--top = reinterpret_cast<void *>(&fiber_main);
    for (int i = 0; i < 6; i++) *--top = nullptr;
    uint32_t cw[2];
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(cw[0]), "=m"(cw[1]));
    *--top = nullptr;
    memcpy(top, cw, sizeof cw);
    c.sp = top;
#else
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = kStack;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, (void (*)())fiber_main, 0);
#endif
}

// Back to the scheduler with STATE; returns when the barrier opened.
void wait_at(wait_kind state)
{
    block_run *r = run_now;
    fiber &f = r->fibers[r->current];
    f.state = state;
    switch_to(f.ctx, r->scheduler);
}

// Opens the barriers every live thread concerned has reached; false when none can open.
bool open_barriers(block_run &r)
{
    bool opened = false;
    size_t live = 0, at_block = 0;
    for (const fiber &f : r.fibers) live += f.state != DONE, at_block += f.state == AT_BLOCK_BARRIER;
    if (live && at_block == live) {
        for (fiber &f : r.fibers) f.state = RUNNING;
        cudasim_shared::block_barrier();
        return true;
    }
    const size_t warps = (r.fibers.size() + 31) / 32;
    for (size_t w = 0; w < warps; w++) {
        size_t lo = w * 32, hi = lo + 32 < r.fibers.size() ? lo + 32 : r.fibers.size(), lv = 0, at = 0;
        for (size_t i = lo; i < hi; i++) lv += r.fibers[i].state != DONE, at += r.fibers[i].state == AT_WARP_BARRIER;
        if (lv && at == lv) {
            for (size_t i = lo; i < hi; i++)
                if (r.fibers[i].state == AT_WARP_BARRIER) r.fibers[i].state = RUNNING;
            cudasim_shared::warp_barrier((unsigned)w);
            opened = true;
        }
    }
    return opened;
}

void run_block(block_run &r)
{
    const size_t n = r.fibers.size();
    std::vector<unsigned> order(n);
    for (unsigned i = 0; i < n; i++) order[i] = i;
    for (size_t i = n; i > 1; i--) std::swap(order[i - 1], order[next_random() % i]); // seeded order
    for (unsigned i = 0; i < n; i++) {
        fiber &f = r.fibers[i];
        f.state = RUNNING;
        start_context(f.ctx, r.stacks[i]);
    }
    for (;;) {
        bool ran = false;
        for (unsigned k = 0; k < n; k++) {
            unsigned i = order[k];
            if (r.fibers[i].state != RUNNING) continue;
            r.current = i;
            switch_to(r.scheduler, r.fibers[i].ctx);
            ran = true;
            cudasim_threads_run++;
        }
        if (ran) continue;
        size_t live = 0;
        for (const fiber &f : r.fibers) live += f.state != DONE;
        if (!live) return;
        if (!open_barriers(r)) {
            unsigned blk = r.block_idx.x, thr = 0;
            for (const fiber &f : r.fibers)
                if (f.state == DONE) thr++;
            problem("%s: block %u: threads wait at a barrier that %u exited threads never reach (or a block and a "
                    "warp barrier diverge)",
                    "__syncthreads/__shfl_xor_sync", blk, thr);
            r.broken = true;
            return; // the fibers' stacks are reused; their contexts are simply dropped
        }
    }
}

} // namespace

void cudasim_report(const char *line)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    if (!cudasim_problem[0]) snprintf(cudasim_problem, sizeof cudasim_problem, "%s", line);
    fprintf(stderr, "cudasim: %s\n", line);
    pthread_mutex_unlock(&m);
}

// For the guard-page handler of tests/fakes/cuda_host_runtime.c (a signal handler: no allocation).
static void where_now(char *buf, size_t n)
{
    const block_run *r = run_now;
    if (!r) return;
    const fiber &f = r->fibers[r->current];
    snprintf(buf, n, ", in kernel %s, block (%u,%u,%u), thread (%u,%u,%u)", r->kernel, r->block_idx.x, r->block_idx.y,
             r->block_idx.z, f.tid.x, f.tid.y, f.tid.z);
}

unsigned cudasim_running_thread() { return run_now->fibers[run_now->current].linear; }

void cudasim_maybe_switch()
{
    if (!sched.switching) return;
    switch_rng ^= switch_rng << 13, switch_rng ^= switch_rng >> 7, switch_rng ^= switch_rng << 17;
    if (switch_rng % kSwitchOdds) return;
    block_run *r = run_now;
    switch_to(r->fibers[r->current].ctx, r->scheduler); // still RUNNING: resumed in its turn
}

const cudasim_dim &cudasim_thread_idx() { return run_now ? run_now->fibers[run_now->current].tid : kZero; }
const cudasim_dim &cudasim_block_idx() { return run_now ? run_now->block_idx : kZero; }
const cudasim_dim &cudasim_block_dim() { return run_now ? run_now->block_dim : kZero; }
const cudasim_dim &cudasim_grid_dim() { return run_now ? run_now->grid_dim : kZero; }

void cudasim_syncthreads() { wait_at(AT_BLOCK_BARRIER); }

float cudasim_shfl_xor(unsigned mask, float v, int lane_mask)
{
    block_run *r = run_now;
    fiber &me = r->fibers[r->current];
    const unsigned lane = me.linear % 32, base = me.linear - lane, src = lane ^ (unsigned)lane_mask;
    if (!(mask >> lane & 1u)) problem("%s: lane %u is not in its own mask (0x%x)", "__shfl_xor_sync", lane, mask);
    me.posted = v;
    wait_at(AT_WARP_BARRIER); // every live lane has posted
    float got = v;
    if (base + src < r->fibers.size() && (mask >> src & 1u)) {
        const fiber &other = r->fibers[base + src];
        if (other.state == DONE) problem("%s: lane %u reads lane %u, which has exited", "__shfl_xor_sync", lane, src);
        else got = other.posted;
    }
    wait_at(AT_WARP_BARRIER); // every lane has read before any posts again
    return got;
}

void cudasim_syncwarp(unsigned mask)
{
    block_run *r = run_now;
    const unsigned lane = r->fibers[r->current].linear % 32;
    if (!(mask >> lane & 1u)) problem("%s: lane %u is not in its own mask (0x%x)", "__syncwarp", lane, mask);
    wait_at(AT_WARP_BARRIER);
}

namespace {

struct launch {
    const char *kernel;
    dim3 grid, block;
    cudasim_block_fn fn;
    void *closure;
    void (*release)(void *);
};

// One launch's grid, on whichever host thread the stream scheduler runs it.
void execute(void *p)
{
    const launch &l = *static_cast<launch *>(p);
    const unsigned long long threads = (unsigned long long)l.block.x * l.block.y * l.block.z;
    block_run r;
    r.fibers.resize(threads);
    r.stacks.resize(threads);
    for (auto &st : r.stacks) st = static_cast<char *>(malloc(kStack));
    r.block_dim = {l.block.x, l.block.y, l.block.z};
    r.grid_dim = {l.grid.x, l.grid.y, l.grid.z};
    r.fn = l.fn, r.closure = l.closure, r.kernel = l.kernel, r.broken = false;
    for (unsigned i = 0; i < threads; i++) {
        r.fibers[i].linear = i;
        r.fibers[i].tid = {i % l.block.x, i / l.block.x % l.block.y, i / (l.block.x * l.block.y)};
    }
    block_run *outer = run_now;
    run_now = &r;
    cudasim_shared::thread_begin();
    shim_fault_where = where_now;
    if (!switch_rng) { // this host thread's first launch: its schedule and block order from the seed
        switch_rng = sched.start * 0x9E3779B97F4A7C15ULL;
        seed ^= sched.start * 0xBF58476D1CE4E5B9ULL;
    }
    const unsigned long long blocks = (unsigned long long)l.grid.x * l.grid.y * l.grid.z;
    bool failed = false;
    for (unsigned long long b = 0; b < blocks && !r.broken; b++) {
        r.block_idx = {(unsigned)(b % l.grid.x), (unsigned)(b / l.grid.x % l.grid.y),
                       (unsigned)(b / l.grid.x / l.grid.y)};
        cudasim_shared::block_begin(l.kernel, r.block_idx, (unsigned)threads);
        run_block(r);
        cudasim_shared::block_end();
        failed |= cudasim_shared::block_failed();
    }
    run_now = outer;
    if (failed) r.broken = true; // a race or an undefined read: the launch fails, as under compute-sanitizer
    for (auto st : r.stacks) free(st);
    if (r.broken) shim_report_async_error(cudaErrorLaunchFailure); // seen at the next synchronisation
}

void release_launch(void *p)
{
    launch *l = static_cast<launch *>(p);
    l->release(l->closure);
    delete l;
}

// The real kernels run in stream order, scheduled adversarially (tests/fakes/cuda_host_runtime.c);
// CUDASIM_STREAMS=immediate runs each launch at its call, CUDASIM_SEED reseeds the scheduler.
struct ordered_streams {
    ordered_streams()
    {
        const char *mode = getenv("CUDASIM_STREAMS"), *s = getenv("CUDASIM_SEED");
        if (mode && !strcmp(mode, "immediate")) return;
        shim_streams_ordered(s ? strtoull(s, nullptr, 0) : 1);
    }
} turn_on;

} // namespace

void cudasim_trace_launch(const char *spelled)
{
    char name[128];
    size_t n = 0;
    for (const char *p = spelled; *p && *p != '<' && n + 1 < sizeof name; p++)
        if (*p != '(' && *p != ' ') name[n++] = *p;
    name[n] = 0;
    shim_trace("launch %s", name);
}

cudaError_t cudasim_run(const char *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, cudasim_block_fn fn,
                        void *closure, void (*release)(void *))
{
    cudasim_launches++;
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    cudaError_t e = cudaSuccess;
    if (!threads || !grid.x || !grid.y || !grid.z || threads > 1024 || block.z > 64 || grid.y > 65535 ||
        grid.z > 65535 || grid.x > 0x7fffffffu)
        e = cudaErrorInvalidConfiguration;
    else if (smem > 48 * 1024) e = cudaErrorInvalidValue;
    if (e != cudaSuccess) {
        problem("%s: grid %u x block %u refused", "launch", grid.x, (unsigned)threads);
        shim_launch_error = e;
        release(closure);
        return e;
    }
    if (cudasim_validate_only) {
        release(closure);
        return cudaSuccess;
    }
    shim_work w = {execute, nullptr, release_launch, new launch{kernel, grid, block, fn, closure, release}, nullptr};
    shim_enqueue(s, &w);
    return cudaSuccess;
}
