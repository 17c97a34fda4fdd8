/* runner: warm-up, then the timed window, over `ranks` data-parallel ranks in this process (one
 * thread each, gradients averaged through comm/).  Every step is timed from the host after the
 * backend's synchronize, so asynchronous backends are measured by when their work really ends:
 *   data    = wait for the pipeline + set_inputs      (input preparation exposed to the step)
 *   compute = forward_backward + optimizer_step
 *   comm    = allreduce of the gradient block after backward (exposed communication)
 * Rank 0 decides at every step boundary whether to go on (warm-up settled, steps or duration
 * reached, stop requested), and all ranks follow, so no rank is left waiting in an allreduce. */
#include "instbench/bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PHASE_WARMUP, PHASE_TIMED, PHASE_DONE };
enum { WARMUP_MIN = BENCH_WARMUP_MIN, WARMUP_MAX = BENCH_WARMUP_MAX };

typedef struct rank_state {
    int rank;
    ib_backend *backend;
    ib_comm *comm;
    bench_datapipe *pipe;
    float *dev_images; /* --data device: one batch, set once */
    int32_t *dev_labels;
    ib_error err;
    int failed;
} rank_state;

typedef struct shared_state {
    const bench_run_config *cfg;
    rank_state *ranks;
    pthread_barrier_t boundary;
    /* Written by rank 0 before the boundary barrier, read by all after it. */
    int phase;
    atomic_int abort; /* any rank failed: set mid-step, so atomic rather than barrier-fenced */
    /* Rank 0's record. */
    double *step_s, *data_s, *compute_s, *comm_s; /* timed steps */
    size_t n_allreduce;                           /* allreduce_sweep's, rank 0's figures */
    struct {
        double bytes, time_s;
    } allreduce[BENCH_ALLREDUCE_SIZES];
    size_t n_timed, cap;
    double warm_times[WARMUP_MAX + 1]; /* the latest warm-up step times (a fixed --warmup may be longer) */
    int n_stored, n_warm;
    double window_start, window_end;
    bench_cpu_sample load_start, load_end; /* the machine's CPU at the window's ends (host load) */
    double first_loss, last_loss;
    double last_progress;
    int progress_ended;        /* the progress line already ended by the window's end marker */
    int world;                 /* ranks of the whole job (this process's ranks unless rdv says more) */
    const ib_backend_ops *dpo; /* the backend, when its ranks average through it (cuda: NCCL) */
    ib_dp *dp;                 /* its comms, buckets overlapped with backward */
    int dp_global;             /* ranks in other processes too: phases follow global rank 0 */
} shared_state;

int bench_warmup_settled(const double *t, size_t n)
{
    if (n < 3) return 0;
    double a = t[n - 3], b = t[n - 2], c = t[n - 1];
    double med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    if (med <= 0) return 1;
    return fabs(a - med) <= 0.1 * med && fabs(b - med) <= 0.1 * med && fabs(c - med) <= 0.1 * med;
}

static void progress_line(shared_state *S, double now)
{
    const bench_run_config *c = S->cfg;
    if (!c->progress || now - S->last_progress < 0.25) return;
    S->last_progress = now;
    int gb = c->train.batch_size * c->ranks;
    const char *on = c->color ? "\033[1m" : "", *off = c->color ? "\033[0m" : "";
    if (S->phase == PHASE_WARMUP) {
        /* no rate before a step has been timed: "0.0 samples/s" would read as a measurement */
        double last = S->n_stored ? S->warm_times[S->n_stored - 1] : 0;
        char rate[48] = "";
        if (last > 0) snprintf(rate, sizeof rate, "  %.1f samples/s", gb / last);
        fprintf(stderr, "\r%swarm-up%s step %d%s   \033[K", on, off, S->n_warm, rate);
    } else if (S->n_timed == 0) {
        /* the warm-up just ended and the window has not started: its length, not a count of
         * nothing and a time left from a clock that is not running yet */
        if (c->steps > 0) fprintf(stderr, "\r%stimed%s window starting: %d steps   \033[K", on, off, c->steps);
        else
            fprintf(stderr, "\r%stimed%s window starting: %.*f s   \033[K", on, off, c->duration_s < 10 ? 1 : 0,
                    c->duration_s);
    } else {
        double el = now - S->window_start;
        double sps = el > 0 ? S->n_timed * (double)gb / el : 0;
        double left;
        char total[32];
        if (c->steps > 0) {
            left = el / S->n_timed * (c->steps - (int)S->n_timed);
            snprintf(total, sizeof total, "/%d", c->steps);
        } else {
            left = c->duration_s - el;
            total[0] = '\0';
        }
        if (left < 0) left = 0;
        /* tenths in the last ten seconds: a window still running never reads "0 s left" */
        fprintf(stderr, "\r%stimed%s step %zu%s  %.1f samples/s  %.*f s left   \033[K", on, off, S->n_timed, total, sps,
                left < 10 ? 1 : 0, left);
    }
    fflush(stderr);
}

/* Rank 0 at a step boundary: record the step, choose the next phase. */
static void rank0_boundary(shared_state *S, double step, double data, double compute, double comm, float loss,
                           double t_end)
{
    const bench_run_config *c = S->cfg;
    if (S->phase == PHASE_WARMUP) {
        if (S->n_warm == 0) S->first_loss = loss;
        const int cap = (int)(sizeof S->warm_times / sizeof S->warm_times[0]);
        if (S->n_stored == cap) {
            memmove(S->warm_times, S->warm_times + 1, (size_t)(cap - 1) * sizeof S->warm_times[0]);
            S->n_stored--;
        }
        S->warm_times[S->n_stored++] = step;
        S->n_warm++;
        int done;
        if (c->warmup >= 0) done = S->n_warm >= c->warmup;
        else
            done = (S->n_warm >= WARMUP_MIN && bench_warmup_settled(S->warm_times, S->n_stored)) ||
                   S->n_warm >= WARMUP_MAX;
        if (done) {
            if (c->warmup < 0 && !bench_warmup_settled(S->warm_times, S->n_stored)) {
                if (c->progress) fputs("\r\033[K", stderr); /* the warning replaces the progress line */
                ib_warn("step time did not settle in %d warm-up steps; the machine may be shared or throttled",
                        S->n_warm);
            }
            S->phase = PHASE_TIMED;
        }
    } else {
        if (S->n_timed == S->cap) {
            size_t cap = S->cap ? S->cap * 2 : 256;
            double *a = realloc(S->step_s, cap * sizeof *a), *b = NULL, *d = NULL, *e = NULL;
            if (a) S->step_s = a;
            if (a) b = realloc(S->data_s, cap * sizeof *b);
            if (b) S->data_s = b;
            if (b) d = realloc(S->compute_s, cap * sizeof *d);
            if (d) S->compute_s = d;
            if (d) e = realloc(S->comm_s, cap * sizeof *e);
            if (e) S->comm_s = e;
            if (!e) {
                S->abort = 1;
                return;
            }
            S->cap = cap;
        }
        S->step_s[S->n_timed] = step;
        S->data_s[S->n_timed] = data;
        S->compute_s[S->n_timed] = compute;
        S->comm_s[S->n_timed] = comm;
        S->n_timed++;
        if (isnan(S->first_loss)) S->first_loss = loss; /* no warm-up: the first timed step's */
        S->last_loss = loss;
        S->window_end = t_end;
        if ((c->steps > 0 && (int)S->n_timed >= c->steps) ||
            (c->steps <= 0 && t_end - S->window_start >= c->duration_s &&
             (int)S->n_timed >= (c->min_steps > 0 ? c->min_steps : 1)))
            S->phase = PHASE_DONE;
    }
    if (c->stop && *c->stop) S->phase = PHASE_DONE;
    progress_line(S, t_end);
}

static int one_step(shared_state *S, rank_state *R, double *data, double *compute, double *comm, float *loss)
{
    const bench_run_config *c = S->cfg;
    ib_backend *b = R->backend;
    double t0 = util_now_seconds(), wait = 0;
    if (c->data == BENCH_DATA_HOST) {
        const float *img;
        const int32_t *lab;
        if (datapipe_acquire(R->pipe, &img, &lab, &wait, &R->err) || b->ops->set_inputs(b, img, lab, &R->err))
            return -1;
    }
    double t1 = util_now_seconds();
    if (S->dp) { /* allreduces overlap backward; comm = what remains after the compute stream ends */
        double t_compute = 0;
        if (S->dpo->dp_step(S->dp, R->rank, b, loss, &t_compute, &R->err)) return -1;
        if (c->data == BENCH_DATA_HOST) datapipe_release(R->pipe);
        double t3 = util_now_seconds();
        if (b->ops->optimizer_step(b, &R->err) || b->ops->synchronize(b, &R->err)) return -1;
        double t4 = util_now_seconds();
        *data = t1 - t0;
        *compute = (t_compute - t1) + (t4 - t3);
        *comm = t3 - t_compute;
        return 0;
    }
    if (b->ops->forward_backward(b, loss, NULL, NULL, &R->err) || b->ops->synchronize(b, &R->err)) return -1;
    /* The batch stays held until backward is done, in case the backend reads it in place. */
    if (c->data == BENCH_DATA_HOST) datapipe_release(R->pipe);
    double t2 = util_now_seconds();
    if (R->comm && R->comm->world_size > 1) {
        size_t n = b->layout.total;
        if (R->comm->allreduce_mean(R->comm, b->ops->grad_block(b), n, &R->err)) return -1;
    }
    double t3 = util_now_seconds();
    if (b->ops->optimizer_step(b, &R->err) || b->ops->synchronize(b, &R->err)) return -1;
    double t4 = util_now_seconds();
    *data = t1 - t0;
    *compute = (t2 - t1) + (t4 - t3);
    *comm = t3 - t2;
    return 0;
}

typedef struct rank_arg {
    shared_state *S;
    rank_state *R;
} rank_arg;

double bench_algbw_gbps(double bytes, double time_s) { return time_s > 0 ? bytes / time_s / 1e9 : 0; }

double bench_allreduce_busbw_gbps(double bytes, double time_s, int world_size)
{
    return world_size > 0 ? bench_algbw_gbps(bytes, time_s) * 2.0 * (world_size - 1) / world_size : 0;
}

/* The sizes the sweep times, ascending, none above the gradient: 256 KiB to 16 MiB by fours, DDP's
 * 25 MiB bucket, the whole gradient. */
static size_t allreduce_sizes(size_t grad_bytes, double *out)
{
    static const double cand[] = {256 << 10, 1 << 20, 4 << 20, 16 << 20, 25 << 20};
    size_t n = 0;
    for (size_t i = 0; i < sizeof cand / sizeof *cand && n + 1 < BENCH_ALLREDUCE_SIZES; i++)
        if (cand[i] < (double)grad_bytes) out[n++] = cand[i];
    out[n++] = (double)grad_bytes;
    return n;
}

/* nccl-tests' BenchTime (NVIDIA/nccl-tests a0b82b22, src/common.cu): warm-up, one synchronised
 * operation and a Barrier, then `iters` (its -n, 20) operations launched back to back and one
 * completeColl; deltaSec = elapsed / iters.  Timing each operation from the host to its completion
 * instead adds a launch and a host wake-up to every one, which at 256 KiB-1 MiB is most of it. */
int bench_time_allreduce(ib_comm *comm, int (*sync)(void *ctx, ib_error *err), void *ctx, float *buf, size_t count,
                         double *time_s, ib_error *err)
{
    for (int it = 0; it < BENCH_ALLREDUCE_WARMUP; it++)
        if (comm->allreduce_mean(comm, buf, count, err) || sync(ctx, err)) return -1;
    if (comm->barrier(comm, err)) return -1;
    const double t0 = util_now_seconds();
    for (int it = 0; it < BENCH_ALLREDUCE_ITERS; it++)
        if (comm->allreduce_mean(comm, buf, count, err)) return -1;
    if (sync(ctx, err)) return -1;
    *time_s = (util_now_seconds() - t0) / BENCH_ALLREDUCE_ITERS;
    return 0;
}

static int backend_sync(void *b, ib_error *err) { return ((ib_backend *)b)->ops->synchronize((ib_backend *)b, err); }

/* Every rank of the job calls it together after the window (a collective).  The gradient block is
 * the buffer: the step that needed it is over, and a checkpoint takes weights and moments only.
 * Each size's time is the mean over the ranks (nccl-tests' Allreduce(&deltaSec, average)). */
static int allreduce_sweep(shared_state *S, rank_state *R)
{
    ib_backend *b = R->backend;
    float *buf = b->ops->grad_block(b);
    double sizes[BENCH_ALLREDUCE_SIZES], t[BENCH_ALLREDUCE_SIZES];
    size_t n = allreduce_sizes(b->layout.total * sizeof(float), sizes);
    for (size_t k = 0; k < n; k++)
        if (bench_time_allreduce(R->comm, backend_sync, b, buf, (size_t)(sizes[k] / sizeof(float)), &t[k], &R->err))
            return -1;
    if (R->comm->mean_host(R->comm, t, n, &R->err)) return -1;
    if (R->rank == 0) {
        for (size_t k = 0; k < n; k++) {
            S->allreduce[k].bytes = (double)(size_t)(sizes[k] / sizeof(float)) * sizeof(float);
            S->allreduce[k].time_s = t[k];
        }
        S->n_allreduce = n;
    }
    return 0;
}

static void *rank_loop(void *arg)
{
    rank_arg *A = arg;
    shared_state *S = A->S;
    rank_state *R = A->R;
    const bench_run_config *c = S->cfg;
    int multi = c->ranks > 1;
    for (;;) {
        if (R->rank == 0 && S->phase == PHASE_TIMED && S->n_timed == 0) {
            if (c->markers) {
                fprintf(stderr, "instbench: timed window start\n");
                fflush(stderr);
            }
            sysinfo_cpu_sample_job(&S->load_start, c->rdv, NULL); /* finding the peers: before the clock */
            if (c->data == BENCH_DATA_HOST)
                for (int r = 0; r < c->ranks; r++)
                    if (S->ranks[r].pipe) datapipe_mark(S->ranks[r].pipe);
            S->window_start = util_now_seconds();
        }
        double t0 = util_now_seconds(), data = 0, compute = 0, comm = 0;
        float loss = NAN;
        if (!S->abort && one_step(S, R, &data, &compute, &comm, &loss) != 0) {
            R->failed = 1;
            S->abort = 1;
        }
        double t_end = util_now_seconds();
        if (R->rank == 0 && !S->abort) rank0_boundary(S, t_end - t0, data, compute, comm, loss, t_end);
        if (multi) pthread_barrier_wait(&S->boundary);
        int phase = S->phase;
        /* Other processes' ranks must take global rank 0's decision, or one process would leave
         * while the others wait in an allreduce.  abort is settled here (after the barrier). */
        if (S->dp_global && !S->abort && S->dpo->dp_agree(S->dp, R->rank, &phase, &R->err)) {
            R->failed = 1;
            S->abort = 1;
        }
        int stop = S->abort || phase == PHASE_DONE;
        /* Second barrier: nobody starts the next step (and rank 0 rewrites `phase`) before every
         * rank has read this boundary's decision. */
        if (multi) pthread_barrier_wait(&S->boundary);
        if (R->rank == 0) S->phase = phase;
        if (stop) {
            /* the host load's end, while every process of the job is still here (they leave at
             * different times after the window) */
            if (R->rank == 0 && !S->abort && S->n_timed > 0)
                sysinfo_cpu_sample_job(&S->load_end, c->rdv, &S->load_start);
            /* the window ended with this step: the marker goes out now, before the communicator's
             * own timing below, so it brackets what samples/s divides by (after the sweep it came
             * about 10 ms late at 2 CPU ranks, 7% of a 0.16-s window) */
            if (R->rank == 0 && c->markers && !S->abort && S->n_timed > 0) {
                if (c->progress) fputc('\n', stderr), S->progress_ended = 1; /* the marker on a line of its own */
                fprintf(stderr, "instbench: timed window end\n");
                fflush(stderr);
            }
            break;
        }
    }
    /* every rank left on the same agreed step, so all of them enter the collectives below */
    if (!S->abort && S->world > 1 && R->comm && allreduce_sweep(S, R) != 0) {
        R->failed = 1;
        S->abort = 1;
    }
    return NULL;
}

/* Each rank's backend (rank r on local device r, or the job's local rank + r) and its input: a
 * host pipeline, or one batch made once and left on the device.  0; 1 when *c->stop was set
 * between two of them; -1 with err. */
static int create_ranks(const bench_run_config *c, rank_state *ranks, ib_comm **comms, int R_n, int own_dp,
                        ib_error *err)
{
    const vit_config *m = &c->train.model;
    size_t pixels = (size_t)m->in_chans * m->img_size * m->img_size;
    for (int r = 0; r < R_n; r++) {
        rank_state *R = &ranks[r];
        R->rank = r;
        R->comm = R_n > 1 ? comms[r] : NULL;
        ib_train_config tc = c->train;
        tc.device = r; /* GPU backends: rank r drives local device r (tests' mock backends: rank r) */
        /* in a multi-process job this process's ranks start at its local rank (torchrun's
         * LOCAL_RANK), unless the GPUs it sees are already narrowed to its own */
        if (own_dp && c->rdv && c->rdv->local_rank + R_n <= c->backend->device_count())
            tc.device = c->rdv->local_rank + r;
        if (c->backend->create(&tc, &R->backend, err)) return -1;
        if (c->stop && *c->stop) return 1;
        if (c->data == BENCH_DATA_HOST) {
            if (datapipe_create(c->train.batch_size, m->in_chans, m->img_size, m->num_classes, c->workers,
                                c->train.seed + 1000003ull * (uint64_t)(r + 1), R->backend, &R->pipe, err) != 0)
                return -1;
            if (c->stop && *c->stop) return 1;
        } else {
            R->dev_images = malloc((size_t)c->train.batch_size * pixels * sizeof(float));
            R->dev_labels = malloc((size_t)c->train.batch_size * sizeof(int32_t));
            if (!R->dev_images || !R->dev_labels) {
                ib_error_set(err, IB_EXIT_RUNTIME, "out of memory for the input batch");
                return -1;
            }
            datapipe_fill(R->dev_images, R->dev_labels, pixels, c->train.batch_size, m->num_classes,
                          c->train.seed + 7919ull * (uint64_t)(r + 1));
            if (R->backend->ops->set_inputs(R->backend, R->dev_images, R->dev_labels, err) ||
                R->backend->ops->synchronize(R->backend, err))
                return -1;
        }
    }
    return 0;
}

/* The timed window's figures, from what the ranks recorded into S (lockstep: every rank of the
 * job did S->n_timed steps of batch_size). */
static void fill_result(const shared_state *S, const bench_run_config *c, const rank_state *ranks, int R_n,
                        bench_result *out)
{
    out->warmup_steps = S->n_warm;
    out->steps = (int)S->n_timed;
    out->load_start = S->load_start;
    out->load_end = S->load_end;
    out->duration_s = S->window_end - S->window_start;
    int gb = c->train.batch_size * S->world; /* every rank of the job steps in lockstep */
    out->samples_per_second = out->duration_s > 0 ? S->n_timed * (double)gb / out->duration_s : 0;
    out->samples_per_second_per_device = out->samples_per_second / S->world;
    stats_compute(S->step_s, S->n_timed, &out->step_time);
    out->data_s = stats_median(S->data_s, S->n_timed);
    out->compute_s = stats_median(S->compute_s, S->n_timed);
    out->comm_s = stats_median(S->comm_s, S->n_timed);
    out->n_allreduce = S->n_allreduce;
    for (size_t k = 0; k < S->n_allreduce; k++) {
        out->allreduce[k].bytes = S->allreduce[k].bytes;
        out->allreduce[k].time_s = S->allreduce[k].time_s;
    }
    out->first_loss = S->first_loss;
    out->last_loss = S->last_loss;
    if (c->data == BENCH_DATA_HOST)
        for (int r = 0; r < R_n; r++) out->pipeline_sps += datapipe_throughput(ranks[r].pipe);
    if (S->n_timed >= 6) {
        size_t h = S->n_timed / 2;
        double m1 = stats_median(S->step_s, h), m2 = stats_median(S->step_s + (S->n_timed - h), h);
        out->drift = m2 > 1.10 * m1;
    }
    ib_backend *b0 = ranks[0].backend;
    out->have_gemm_paths = b0 && b0->ops->gemm_paths && b0->ops->gemm_paths(b0, &out->gemm_paths) == 0;
}

/* The backend's own data parallelism (cuda: NCCL) across this process's ranks and the job's
 * others, once every rank's backend exists (they own the streams): each rank's comm becomes the
 * backend's.  0, or -1 with err. */
static int device_dp_create(shared_state *S, const bench_run_config *c, rank_state *ranks, int R_n, bench_result *out,
                            ib_error *err)
{
    ib_backend **bs = calloc((size_t)R_n, sizeof *bs);
    if (!bs) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (int r = 0; r < R_n; r++) bs[r] = ranks[r].backend;
    S->dpo = bs[0]->ops; /* the created backends' own table (a loader entry only forwards) */
    ib_dp_config dc = {.nlocal = R_n,
                       .world_size = S->world,
                       .first_rank = c->rdv ? c->rdv->rank : 0,
                       .master_addr = c->rdv ? c->rdv->master_addr : "127.0.0.1",
                       .port = c->rdv ? c->rdv->id_port : 0,
                       .timeout_s = c->rdv && c->rdv->timeout_s > 0 ? c->rdv->timeout_s : BENCH_RENDEZVOUS_TIMEOUT_S,
                       .stop = c->stop,
                       .workload = c->workload_id};
    /* between nodes, which network NCCL takes is part of the result: its own log says */
    const int multi_node = c->rdv && c->rdv->nnodes > 1;
    bench_nccl_log nlog;
    if (multi_node) nccl_log_begin(&nlog);
    int drc = S->dpo->dp_create(&dc, bs, &S->dp, err);
    free(bs);
    if (multi_node) nccl_log_end(&nlog, out->nccl_net, sizeof out->nccl_net, out->network, sizeof out->network);
    if (drc) return -1;
    S->dp_global = S->world > R_n;
    for (int r = 0; r < R_n; r++) ranks[r].comm = S->dpo->dp_comm(S->dp, r);
    return 0;
}

int bench_run(const bench_run_config *c, bench_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->ranks < 1) return ib_error_set(err, IB_EXIT_USAGE, "ranks must be >= 1");
    if (c->steps <= 0 && !(c->duration_s > 0))
        return ib_error_set(err, IB_EXIT_USAGE, "either steps or a duration is needed");
    shared_state S;
    memset(&S, 0, sizeof S);
    S.cfg = c;
    S.phase = c->warmup == 0 ? PHASE_TIMED : PHASE_WARMUP;
    S.first_loss = NAN;
    S.last_loss = NAN;
    int R_n = c->ranks, rc = -1;
    S.world = c->rdv && c->rdv->world_size > R_n ? c->rdv->world_size : R_n;
    /* A backend with its own data parallelism (cuda: NCCL) averages on its devices, set up once the
     * backends exist (they own the streams); any other averages host memory through src/comm. */
    const int own_dp = c->backend->dp_unavailable_reason && S.world > 1;
    if (own_dp) {
        const char *why = c->backend->dp_unavailable_reason();
        if (why) return ib_error_set(err, IB_EXIT_RUNTIME, "backend '%s': %s", c->backend->name, why);
    }
    if (!own_dp && S.world > R_n)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "ranks in other processes need a backend that averages across "
                            "processes itself (cuda: NCCL)");
    rank_state *ranks = calloc((size_t)R_n, sizeof *ranks);
    ib_comm **comms = calloc((size_t)R_n, sizeof *comms);
    if (!ranks || !comms) {
        free(ranks);
        free(comms);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    S.ranks = ranks;
    if (R_n > 1 && !own_dp && comm_local_create(R_n, comms, err) != 0) goto done;
    int made = create_ranks(c, ranks, comms, R_n, own_dp, err);
    if (made < 0) goto done;
    if (made > 0) goto interrupted;
    if (own_dp && device_dp_create(&S, c, ranks, R_n, out, err) != 0) goto done;
    if (R_n > 1) pthread_barrier_init(&S.boundary, NULL, (unsigned)R_n);

    rank_arg *args = calloc((size_t)R_n, sizeof *args);
    pthread_t *th = calloc((size_t)R_n, sizeof *th);
    if (!args || !th) {
        free(args);
        free(th);
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto done_barrier;
    }
    int started = 0;
    for (int r = 0; r < R_n; r++) {
        args[r].S = &S;
        args[r].R = &ranks[r];
    }
    if (R_n == 1) {
        rank_loop(&args[0]);
    } else {
        for (int r = 0; r < R_n; r++) {
            if (pthread_create(&th[r], NULL, rank_loop, &args[r]) != 0) break;
            started++;
        }
        if (started < R_n) {
            /* The threads that did start wait at a barrier that can never fill; the process is
             * about to exit with this error, so they are left behind rather than joined. */
            return ib_error_set(err, IB_EXIT_RUNTIME, "cannot start %d rank threads", R_n);
        }
        for (int r = 0; r < started; r++) pthread_join(th[r], NULL);
    }
    free(args);
    free(th);
    if (c->progress && !S.progress_ended) {
        fputc('\n', stderr);
        fflush(stderr);
    }
    if (S.abort) {
        for (int r = 0; r < R_n; r++)
            if (ranks[r].failed) {
                *err = ranks[r].err;
                if (!err->code) err->code = IB_EXIT_RUNTIME;
                break;
            }
        if (!err->msg[0]) ib_error_set(err, IB_EXIT_RUNTIME, "benchmark aborted");
        goto done_barrier;
    }
    if (c->stop && *c->stop) {
        out->interrupted = 1;
        rc = 0;
        goto done_barrier;
    }
    if (S.n_timed == 0) {
        ib_error_set(err, IB_EXIT_RUNTIME, "no timed step completed");
        goto done_barrier;
    }
    fill_result(&S, c, ranks, R_n, out);
    rc = 0;
done_barrier:
    if (R_n > 1) pthread_barrier_destroy(&S.boundary);
    goto done;
interrupted:
    out->interrupted = 1;
    rc = 0;
done:
    if (S.dp) {
        /* the other processes of the job learn whether this one finished or why it stops */
        if (S.dpo->dp_finish) S.dpo->dp_finish(S.dp, rc == 0 ? NULL : err);
        S.dpo->dp_destroy(S.dp); /* its comms first: they reference the backends' streams */
        for (int r = 0; r < R_n; r++) ranks[r].comm = NULL;
    }
    /* after the goodbye: a slow checkpoint here must not look like a dead rank to the others */
    if (rc == 0 && !out->interrupted && c->after_window && ranks && ranks[0].backend)
        c->after_window(c->after_user, ranks[0].backend);
    for (int r = 0; r < R_n; r++) {
        datapipe_destroy(ranks[r].pipe);
        if (ranks[r].backend) ranks[r].backend->ops->destroy(ranks[r].backend);
        free(ranks[r].dev_images);
        free(ranks[r].dev_labels);
    }
    if (R_n > 1 && comms[0] && comms[0]->destroy)
        for (int r = 0; r < R_n; r++)
            if (comms[r]) comms[r]->destroy(comms[r]);
    free(ranks);
    free(comms);
    free(S.step_s);
    free(S.data_s);
    free(S.compute_s);
    free(S.comm_s);
    return rc;
}
