/* measure_ctx.h: private to src/bench: what measure_run.c resolves for one run, shared with
 * measure_dry_run.c, which reports it instead of running. */
#ifndef INSTBENCH_BENCH_MEASURE_CTX_H
#define INSTBENCH_BENCH_MEASURE_CTX_H

#include <signal.h>
#include <stddef.h>

#include "instbench/backend.h"
#include "instbench/bench.h"

/* What one run has resolved, handed from step to step. */
typedef struct measure_ctx {
    const bench_measure_options *o;
    const ib_backend_ops *backend;
    ib_train_config train; /* per rank: threads divided between the ranks */
    bench_sysinfo sys;
    int is_cpu;        /* ranks share the cores and host memory */
    int ranks;         /* in this process */
    int gpu_dp;        /* GPU ranks average over the backend's own comm (NCCL) */
    const char *no_dp; /* why they cannot */
    bench_rendezvous rdv;
    int workers;   /* data-pipeline threads per rank */
    int first_gpu; /* this process's first device */
    bench_identity id;
} measure_ctx;

/* --dry-run: what a run would do and how long it would take, on stdout; CHECKPOINT_DIR is where
 * its checkpoint would be timed.  -1 when *STOP was set during the probe step (nothing printed),
 * else 0. */
int measure_dry_run(const measure_ctx *c, const char *checkpoint_dir, const volatile sig_atomic_t *stop);

#endif
