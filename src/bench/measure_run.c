/* measure_run: the measure command's run, from its parsed options (src/cmd/cmd_measure.c) to the result
 * file (schemas/result-v1.json): resolves the backend, topology and batch size, checks the output
 * and the identity before anything is measured, measures the peak, runs bench_run (runner.c),
 * then writes the result atomically.  --dry-run stops after the checks with a time estimate
 * (measure_dry_run.c, probe.c).  Ctrl-C / SIGTERM stop at the next step boundary and leave no file: exit 130 / 143. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "instbench/backend.h"
#include "instbench/bench.h"
#include "instbench/instance_type.h"
#include "instbench/model.h"
#include "instbench/output.h"
#include "instbench/prices.h" /* the catalogue the identity is checked against */
#include "instbench/util.h"
#include "measure_ctx.h"

enum { AUTO_BATCH_MAX = 8192 };

static volatile sig_atomic_t g_stop;
/* Held by the result writes; the watcher takes it before it kills the process. */
static pthread_mutex_t g_write_mu = PTHREAD_MUTEX_INITIALIZER;

/* Ctrl-C and SIGTERM are taken by one thread waiting in sigwait(), never by a handler that
 * interrupts whatever a thread is running.  With a handler, a signal landing on an
 * OpenMP thread inside a oneDNN kernel was followed, in about one interrupted run in 30 here, by a
 * corrupted heap (glibc's "corrupted size vs. prev_size while consolidating", or SIGSEGV in
 * oneDNN's exit handlers) where a clean exit 143 was due; runs that were not interrupted never
 * showed it.  First signal: stop at the next step boundary.  Second: the user insists, die now,
 * after any result write in progress (g_write_mu), so nothing is half-written. */
static void *signal_watch(void *arg)
{
    const sigset_t *set = arg;
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0) continue;
        if (!g_stop) {
            g_stop = sig;
            /* At once, not at the step's end: a ViT-L step on a CPU takes seconds, and a user who
             * sees nothing presses again, which ends the run without its clean exit. */
            fprintf(stderr,
                    "instbench measure: %s: stopping at the next step boundary, writing nothing "
                    "(send it again to stop at once)\n",
                    sig == SIGTERM ? "SIGTERM" : "Ctrl-C");
            continue;
        }
        pthread_mutex_lock(&g_write_mu);
        checkpoint_remove_pending(); /* a checkpoint file being written goes with the process */
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        _exit(128 + sig); /* not reached: the default action ends the process */
    }
    return NULL;
}

/* SIGINT and SIGTERM blocked in this thread, and so in every thread created after (OpenMP's pool,
 * the data pipeline's workers, the rank threads inherit the mask), then the watcher started.
 * Before any other thread exists: a thread that does not block them would take them with the
 * default action.  Once per process (measure runs once); -1 when the watcher cannot start (the
 * signals then keep their default action: Ctrl-C still stops the run, without the clean exit). */
static int watch_signals(void)
{
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigset_t old;
    if (pthread_sigmask(SIG_BLOCK, &set, &old) != 0) return -1;
    pthread_t th;
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
    ok = ok && pthread_attr_setstacksize(&attr, 64 * 1024) == 0;
    ok = ok && pthread_create(&th, &attr, signal_watch, &set) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    return 0;
}

/* An exit 2 of measure: in the usage form when TYPED (the command line is what is wrong), else plain. */
static int exit2(int typed, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int exit2(int typed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (typed) {
        util_usage_verror("measure", fmt, ap);
    } else {
        fputs("instbench measure: ", stderr);
        util_term_vprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
    return IB_EXIT_USAGE;
}

int bench_measure_model(const model_cli *cli, vit_config *model)
{
    ib_error err = {0};
    if (model_cli_resolve(cli, model, &err) || model_validate(model, &err)) {
        util_usage_error("measure", "%s", err.msg); /* the model is the flags' alone */
        return -1;
    }
    return 0;
}

/* Where the checkpoint goes: --checkpoint-dir, else the result file's directory (the result's
 * file system): ./instbench-results/ for the default result, made for the checkpoint when it is
 * missing (take_checkpoint); a directory --create-dirs is yet to make, its nearest existing
 * ancestor (the file system it will be made on; nothing is made before the result is written);
 * for stdout or S3, ./instbench-results/ when it exists, else the current directory.
 * *MADE_ON_DEMAND: 1 when the directory is the default one and may be missing. */
static void checkpoint_dir_choose(const bench_measure_options *o, char *out, size_t n, int *made_on_demand)
{
    struct stat st;
    *made_on_demand = 0;
    if (o->checkpoint_dir) snprintf(out, n, "%s", o->checkpoint_dir);
    else if (!o->output) {
        snprintf(out, n, "instbench-results");
        *made_on_demand = 1;
    } else if (strcmp(o->output, "-") != 0 && !result_output_is_remote(o->output)) {
        const char *slash = strrchr(o->output, '/');
        if (!slash) snprintf(out, n, ".");
        else snprintf(out, n, "%.*s", slash == o->output ? 1 : (int)(slash - o->output), o->output);
        while (stat(out, &st) != 0 && (slash = strrchr(out, '/')) != NULL) out[slash == out ? 1 : slash - out] = '\0';
        if (stat(out, &st) != 0) snprintf(out, n, ".");
    } else if (stat("instbench-results", &st) == 0 && S_ISDIR(st.st_mode)) snprintf(out, n, "instbench-results");
    else snprintf(out, n, ".");
}

typedef struct checkpoint_job {
    char dir[4096];
    int make_dir; /* dir is the default result directory: made if missing, removed after if it was */
    bench_checkpoint result;
} checkpoint_job;

/* bench_run's after_window: one checkpoint of the state the run trained, on global rank 0 (the
 * rank a data-parallel job saves from).  Not measured: a warning, and the result says null. */
static void take_checkpoint(void *user, ib_backend *b)
{
    checkpoint_job *job = user;
    ib_error err = {0};
    /* The default result's folder may not exist yet (the result makes it when it is written, and
     * removes it again when that write fails): made here for the checkpoint and removed after, so
     * the result's own rule decides whether it stays.  Failing that, the checkpoint is not timed. */
    int made = job->make_dir && mkdir(job->dir, 0777) == 0;
    if (job->make_dir && !made && errno != EEXIST) {
        ib_warn("checkpoint not timed: cannot create %s: %s (the result's checkpoint is null)", job->dir,
                strerror(errno));
        return;
    }
    ib_info("checkpoint: timing one save of the training state in %s", job->dir);
    int rc = checkpoint_measure(b, job->dir, &g_stop, &job->result, &err);
    if (made) rmdir(job->dir); /* empty again: the checkpoint file is removed */
    if (rc < 0) ib_warn("checkpoint not timed: %s (the result's checkpoint is null)", err.msg);
    else if (rc == 0)
        ib_info("checkpoint: %.1f MiB written in %.3f s, read back in %.3f s (%s)", job->result.bytes / 1048576.0,
                job->result.write_s, job->result.read_s, job->result.dir_fs);
}

static int interrupted_exit(void)
{
    fprintf(stderr, "instbench measure: interrupted; nothing written\n");
    return g_stop == SIGTERM ? 143 : 130;
}

/* BYTES as "1.5 GiB", or in MiB below a GiB (where GiB with one decimal would say 0.1 of each). */
static const char *memory_text(double bytes, char *buf, size_t n)
{
    if (bytes >= 1073741824.0) snprintf(buf, n, "%.1f GiB", bytes / 1073741824.0);
    else snprintf(buf, n, "%.0f MiB", bytes / 1048576.0);
    return buf;
}

/* Not even batch 1 fits: say why in terms of the flags (a tiny --patch-size makes the sequence
 * long; unfused attention's memory grows with its square), not "the largest batch is 0". */
static int too_big_for_memory(const ib_backend_ops *backend, const ib_train_config *train, bench_data_mode data,
                              int ranks, uint64_t avail)
{
    ib_train_config one = *train;
    one.batch_size = 1;
    const vit_config *m = &train->model;
    /* fused kernels and cuDNN keep no T x T matrix; only the unfused path's memory is quadratic */
    const int linear = strcmp(backend_attention(backend, &one), "unfused") != 0;
    char need[32], have[32];
    return util_usage_error(
        "measure",
        "%s does not fit at any batch size: batch 1 needs about %s but %s is available "
        "(--image-size %d with --patch-size %d makes %d tokens per image; %s: a larger --patch-size or a "
        "smaller --image-size needs less)",
        m->name, memory_text((double)memfit_rank_bytes(backend, &one, data) * ranks, need, sizeof need),
        memory_text((double)avail, have, sizeof have), m->img_size, m->patch_size, model_seq_len(m),
        linear ? "activation memory grows with them" : "attention memory grows with their square");
}

/* Said before the run, not found by rank afterwards: what the recorded identity will make of the result. */
static void warn_identity(const measure_ctx *c)
{
    const bench_identity *id = &c->id;
    const int nnodes = c->rdv.nnodes;
    if (id->type[0] && !id->region[0] && c->o->hourly_cost <= 0)
        ib_warn("--instance-type %s without --region (and no instance metadata here): rank can price this result "
                "only when given --region R, or a price with --price %s=USD; add --region now to record it",
                id->type, id->type);
    if (!id->type[0] && c->o->hourly_cost <= 0)
        ib_warn("this result names no instance type (no instance metadata here, no --instance-type): rank can "
                "price it only at a price you give (--hourly-cost now, or rank --price %s=USD)",
                c->sys.hostname);
    if (id->count > nnodes)
        ib_warn("--count %d with %d node%s running: rank will price the result as %d nodes (cost x %d) with "
                "the throughput measured on %d scaled linearly to them (throughput x %.4g), marked extrapolated "
                "('^'); start the run on every node (--nnodes) to measure theirs",
                id->count, nnodes, nnodes == 1 ? "" : "s", id->count, id->count, nnodes, (double)id->count / nnodes);
}

/* A SageMaker job's node: the result stands for all of its hosts (as --count would say) unless
 * --count was given; a lone run on one of several hosts is told how to measure them together. */
static void sagemaker_topology(measure_ctx *c)
{
    bench_identity *id = &c->id;
    const bench_rendezvous *rdv = &c->rdv;
    const bench_sagemaker *sm = &id->sagemaker;
    if (sm->nodes <= 0) return;
    ib_info("identity: SageMaker training job (%s), %s, node %d of %d", sagemaker_resource_config_path(),
            sm->instance_type, sm->node_rank, sm->nodes);
    if (c->o->count == 0 && sm->nodes > rdv->nnodes) id->count = sm->nodes;
    if (rdv->nnodes == 1 && sm->nodes > 1)
        ib_warn("SageMaker runs %d hosts but this run measures one node (priced as %d: --count %d); to measure "
                "them together start it on every host with --nnodes %d --node-rank %d --master-addr %s",
                sm->nodes, id->count, id->count, sm->nodes, sm->node_rank, sm->master_host);
}

/* A type given by flag must be the machine that runs: the price snapshot's accelerators and
 * vCPUs for it against this run's (identity_check says how they compare), for the GPUs the job
 * drives on this node from this process's first.  A contradiction is refused unless
 * --identity-mismatch ok, which records it. */
static int check_identity_hardware(measure_ctx *c)
{
    bench_identity *id = &c->id;
    const price_record *rec = prices_catalogue_hardware(id->type);
    const char *const *known = NULL;
    const size_t n_known = prices_catalogue_accelerators(&known);
    const bench_type_hardware hw = {rec ? rec->hw.vcpus : 0, rec ? rec->hw.accelerator : NULL,
                                    rec ? rec->hw.accelerator_count : 0, known, n_known};
    const bench_run_hardware run = {
        c->backend->name, c->is_cpu ? 0 : c->rdv.local_world_size,
        !c->is_cpu && c->first_gpu < c->sys.gpu_count ? c->sys.gpus[c->first_gpu].name : NULL, c->sys.vcpus};
    const int m = identity_check(id, rec ? &hw : NULL, &run);
    if (m < 0 && id->type[0])
        ib_debug("identity: the price snapshot has no hardware for %s: recorded as given, not checked", id->type);
    if (m <= 0) return 0;
    char diff[sizeof id->differences + 16];
    identity_differences_text(id, diff, sizeof diff);
    if (!c->o->identity_mismatch_ok) {
        /* a type from instance metadata is no flag --help could fix */
        return exit2(c->o->instance_type != NULL,
                     "--instance-type %s is not this machine: %s (--identity-mismatch ok "
                     "records the result under %s anyway, marked as a mismatch)",
                     id->type, diff, id->type);
    }
    ib_warn("--instance-type %s is not this machine (%s); the result records it as a mismatch", id->type, diff);
    return 0;
}

/* On stderr when the run ends: each of the result's warnings (result_warnings), with what it means
 * for the figures.  The shared-machine one was said before the run started. */
static void say_warning(const result_warning *w, const bench_result *res, const char *peak_source)
{
    const bench_stats *t = &res->step_time;
    if (!strcmp(w->code, "cv_high"))
        ib_warn("step time varies: CV %.1f%% > 5%% (median %.4f s, p10 %.4f, p90 %.4f); the machine may be shared "
                "or throttled",
                100 * t->cv, t->median, t->p10, t->p90);
    else if (!strcmp(w->code, "drift"))
        ib_warn("step time drifted up by more than 10%% during the timed window (throttling?)");
    else if (!strcmp(w->code, "mfu_over_100"))
        ib_warn("MFU above 100%%: the peak figure (%s) is too low; measured while the machine was busy?", peak_source);
    else if (!strcmp(w->code, "other_processes")) ib_warn("%s: the machine is shared; figures may be low", w->text);
    else if (strcmp(w->code, "shared_machine") != 0) ib_warn("%s", w->text);
}

/* The backend (a GPU one when usable, else cpu, unless named), the per-rank training config and
 * the ranks in this process, each checked against this machine. */
static int resolve_workload(measure_ctx *c)
{
    const bench_measure_options *o = c->o;
    const ib_backend_ops *backend = o->backend;
    if (!backend) {
        /* default: a GPU backend when one is usable (cuda: its module loads and sees a GPU), else
         * cpu, and -v says why */
        const ib_backend_ops *skipped = NULL;
        const char *why = NULL;
        backend = backend_auto(&skipped, &why);
        if (skipped) ib_debug("backend auto: %s (%s is not usable: %s)", backend->name, skipped->name, why);
    } else {
        const char *why = backend->unavailable_reason();
        if (why) return util_usage_error("measure", "backend '%s' is not available: %s", backend->name, why);
    }
    c->backend = backend;
    ib_train_config *train = &c->train;
    if (bench_measure_model(&o->model, &train->model) != 0) return IB_EXIT_USAGE;
    train->precision = o->precision;
    backend_default_optim(o->optimizer, &train->optim);
    if (o->lr > 0) train->optim.lr = (float)o->lr;
    train->seed = o->seed;

    bench_sysinfo *sys = &c->sys;
    sysinfo_collect(sys);
    if (g_stop) return interrupted_exit();
    const int is_cpu = c->is_cpu = backend->device == IB_DEVICE_HOST;
    if (!is_cpu) sysinfo_gpus_from_backend(sys, backend); /* the devices it will use, not NVML's list */
    c->ranks = o->ranks;
    if (c->ranks == 0) {
        /* docs/design.md: data-parallel over every local GPU.  One process drives them all unless a launcher
         * (torchrun --nproc-per-node, srun --ntasks-per-node) already starts one process per GPU. */
        const char *lws = getenv("LOCAL_WORLD_SIZE"), *tpn = getenv("SLURM_NTASKS_PER_NODE");
        int launcher_per_gpu = (lws && atoi(lws) > 1) || (tpn && atoi(tpn) > 1);
        c->ranks = (!is_cpu && !launcher_per_gpu && sys->gpu_count > 1) ? sys->gpu_count : 1;
    }
    if (is_cpu && c->ranks > sys->vcpus)
        return util_usage_error("measure", "--ranks %d is more than the %d vCPUs here (each rank needs a core)",
                                c->ranks, sys->vcpus);
    c->gpu_dp = backend_dp_usable(backend, &c->no_dp); /* GPU ranks average over NCCL */
    if (!is_cpu && c->ranks > 1 && !c->gpu_dp) {
        /* The in-process comm averages host memory; GPU gradients need the backend's own. */
        return util_usage_error("measure", "--ranks %d with --backend %s: %s", c->ranks, backend->name, c->no_dp);
    }
    if (!is_cpu && c->ranks > sys->gpu_count && sys->gpu_count > 0)
        return util_usage_error("measure", "--ranks %d is more than the %d GPUs here", c->ranks, sys->gpu_count);
    train->threads = is_cpu ? (sys->vcpus / c->ranks > 0 ? sys->vcpus / c->ranks : 1) : 0;
    return 0;
}

/* The rendezvous (flags or a launcher's environment), the data workers and CUDA graphs. */
static int resolve_topology(measure_ctx *c)
{
    const bench_measure_options *o = c->o;
    bench_rendezvous *rdv = &c->rdv;
    ib_error err = {0};
    /* the flags' rendezvous is what was typed; a launcher's variables are no flag --help could fix */
    if (rendezvous_resolve(&o->rdv, c->ranks, rdv, &err))
        return exit2(!strcmp(rdv->kind, "flags") && err.code == IB_EXIT_USAGE, "%s", err.msg);
    if (rdv->note[0]) ib_info("note: %s", rdv->note);
    if (rdv->world_size > c->ranks && !c->gpu_dp) {
        /* Only the backend's own comm reaches other processes; src/comm averages within this one. */
        return exit2(!strcmp(rdv->kind, "flags"),
                     "the %s rendezvous asks for %d ranks over %d node%s, but backend '%s' can only "
                     "average gradients between ranks of one process (--ranks N): %s; cross-process data parallelism "
                     "needs the NCCL comm of the cuda backend",
                     rdv->kind, rdv->world_size, rdv->nnodes, rdv->nnodes == 1 ? "" : "s", c->backend->name, c->no_dp);
    }
    rendezvous_check_master(rdv, c->ranks);
    const int vcpus = c->sys.vcpus;
    c->workers = o->workers > 0 ? o->workers : (vcpus / rdv->local_world_size > 0 ? vcpus / rdv->local_world_size : 1);
    /* graphs where nothing runs between forward and backward: one rank in the whole job */
    c->train.cuda_graphs = !c->is_cpu && o->cuda_graphs && rdv->world_size == 1;
    return 0;
}

/* The devices this process drives (the runner's choice: from its local rank when the backend
 * averages across processes, else from 0), each asked whether it can run this precision at all:
 * a T4 told to run bf16 is refused here, by a dry run too, before any start-up work. */
static int resolve_devices(measure_ctx *c)
{
    c->first_gpu = c->gpu_dp && c->rdv.local_rank + c->ranks <= c->sys.gpu_count ? c->rdv.local_rank : 0;
    for (int d = c->first_gpu; !c->is_cpu && c->backend->device_check && d < c->first_gpu + c->ranks; d++) {
        ib_train_config t = c->train;
        ib_error err = {0};
        t.device = d;
        if (c->backend->device_check(&t, &err) == 0) continue;
        if (err.code == IB_EXIT_USAGE) return exit2(1, "%s", err.msg);
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    return 0;
}

/* The batch size, estimated before anything is allocated: --batch-size auto's largest that fits,
 * or the given one refused when it does not. */
static int resolve_batch(measure_ctx *c)
{
    const bench_measure_options *o = c->o;
    const ib_backend_ops *backend = c->backend;
    ib_train_config *train = &c->train;
    const bench_data_mode data = o->data;
    const int is_cpu = c->is_cpu, host_ranks = is_cpu ? c->ranks : 1;
    /* GPU: free memory after set-up of the devices resolve_devices chose, NCCL's buffers set aside */
    uint64_t avail = is_cpu ? c->sys.memory_available_bytes
                            : memfit_device_available(backend, &c->sys, c->first_gpu, c->ranks, c->rdv.world_size > 1);
    if (avail > 0) avail = avail / 10 * 9; /* headroom for the OS, allocator slack, the driver */
    if (o->batch == 0) {
        if (avail == 0) {
            fprintf(stderr, "instbench measure: --batch-size auto: cannot tell how much memory the device has\n");
            return IB_EXIT_RUNTIME;
        }
        train->batch_size = memfit_largest_batch(backend, *train, data, host_ranks, avail, AUTO_BATCH_MAX);
        if (train->batch_size < 1) return too_big_for_memory(backend, train, data, host_ranks, avail);
        ib_info("batch size auto: %d per device (largest that fits in %.1f GiB%s)", train->batch_size,
                avail / 1073741824.0, train->batch_size == AUTO_BATCH_MAX ? ", capped" : "");
        return 0;
    }
    train->batch_size = o->batch;
    if (avail > 0 && (uint64_t)memfit_rank_bytes(backend, train, data) * (uint64_t)host_ranks > avail) {
        int fit = memfit_largest_batch(backend, *train, data, host_ranks, avail, AUTO_BATCH_MAX);
        if (fit < 1) return too_big_for_memory(backend, train, data, host_ranks, avail);
        return util_usage_error("measure",
                                "--batch-size %d needs about %.1f GiB but %.1f GiB is available; the largest "
                                "batch that fits is %d (or use --batch-size auto)",
                                o->batch, (double)memfit_rank_bytes(backend, train, data) * host_ranks / 1073741824.0,
                                avail / 1073741824.0, fit);
    }
    return 0;
}

/* What could fail after the run, checked before it: the output files (a typo in --output must not
 * cost a whole measurement), and the identity the result will carry. */
static int check_before_run(measure_ctx *c)
{
    const bench_measure_options *o = c->o;
    ib_error err = {0};
    if (c->rdv.rank == 0 && result_check_output(o->output, o->append, o->create_dirs, &err) != 0) {
        if (err.code == IB_EXIT_USAGE) return exit2(o->output || o->append, "%s", err.msg);
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }

    if (g_stop) return interrupted_exit();

    bench_identity *id = &c->id;
    if (identity_resolve(o->instance_type, o->region, o->market, o->count > 0 ? o->count : c->rdv.nnodes, id, &err) !=
        0) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    if (g_stop) return interrupted_exit();
    /* Trainium and Inferentia (and other non-NVIDIA accelerators) are priced, but a result measured
     * on their host CPU would be ranked as if it were the type's training speed */
    const char *not_ours = id->type[0] ? instance_type_not_measurable(id->type) : NULL;
    if (not_ours) return exit2(o->instance_type != NULL, "%s: instbench does not measure it: %s", id->type, not_ours);
    sagemaker_topology(c);
    int rc = check_identity_hardware(c);
    if (rc != 0) return rc;
    warn_identity(c);
    return 0;
}

/* The MFU denominator and the GEMM yardstick, measured (or looked up) before the run. */
typedef struct measure_peaks {
    double peak; /* TFLOP/s of the whole job; 0: MFU not computed */
    char source[512];
    const char *cpu_bf16; /* "native" / "emulated" on a bf16 CPU run, else NULL */
    double gemm;          /* the GEMM library's rate on this model's shapes, per device */
    int gemm_devices;
    ib_attention_library att_lib;
    int have_att_lib;
} measure_peaks;

static void measure_peak(const measure_ctx *c, measure_peaks *pk)
{
    const ib_backend_ops *backend = c->backend;
    const ib_train_config *train = &c->train;
    const bench_rendezvous *rdv = &c->rdv;
    const int is_cpu = c->is_cpu;
    memset(pk, 0, sizeof *pk);
    pk->cpu_bf16 = train->precision == IB_PREC_BF16 && backend->bf16_mode ? backend->bf16_mode() : NULL;
    const int bf16_emulated = pk->cpu_bf16 && !strcmp(pk->cpu_bf16, "emulated");
    if (pk->cpu_bf16)
        ib_info("bf16 on this CPU: %s",
                !bf16_emulated ? "native (oneDNN bf16 matmuls)"
                               : "emulated (no bf16 matmul in oneDNN on this CPU: bf16 operands widened to "
                                 "fp32 for fp32 GEMMs, fp32 accumulation, autocast's rounding)");
    pk->have_att_lib = !is_cpu && backend_attention_library(backend, train, &pk->att_lib) == 0;
    if (!is_cpu) {
        const char *a = backend_attention(backend, train);
        if (!strcmp(a, "cudnn")) ib_info("attention: cuDNN %s fused SDPA (%s)", pk->att_lib.version, pk->att_lib.path);
        else ib_info("attention: unfused (cuBLASLt matmuls around a softmax kernel)");
    }
    /* the GEMM library's own rate on this model's shapes, measured here: the CPU's peak is that
     * already; a GPU measures cuBLASLt's on its first device (backend.h gemm_rate) */
    if (backend->peak_measure) {
        double t = 0;
        ib_error perr = {0};
        if (backend->peak_measure(train, &g_stop, &t, pk->source, sizeof pk->source, &perr) == 0 && t > 0)
            pk->peak = t * rdv->nnodes, pk->gemm = t, pk->gemm_devices = rdv->nnodes;
        else if (!g_stop) ib_warn("no %s peak (%s): MFU not computed", backend->name, perr.msg);
    } else if (c->sys.gpu_count > 0) {
        double t = 0;
        if (peak_gpu_lookup(c->sys.gpus[0].name, train->precision, &t, pk->source, sizeof pk->source) == 0)
            pk->peak = t * rdv->world_size;
        else
            ib_warn("no %s peak known for '%s' in configs/gpu-peak-flops.json: MFU not computed",
                    backend_precision_name(train->precision), c->sys.gpus[0].name);
    }
    if (!is_cpu && backend->gemm_rate && !g_stop) {
        double t = 0;
        ib_error gerr = {0};
        ib_train_config probe = *train; /* this process's first GPU, as the runner assigns them */
        probe.device = rdv->local_rank > 0 && rdv->local_rank < backend->device_count() ? rdv->local_rank : 0;
        if (backend->gemm_rate(&probe, &g_stop, &t, &gerr) == 0 && t > 0) {
            pk->gemm = t, pk->gemm_devices = rdv->world_size;
            ib_info("cuBLASLt on this model's GEMM shapes: %.1f TFLOP/s on GPU %d", t, probe.device);
        } else if (!g_stop) {
            ib_warn("cuBLASLt's GEMM rate not measured (%s): the result carries no gemm_share", gerr.msg);
        }
    }
}

/* Rank 0's result: the file (or S3, or stdout) and --append, under g_write_mu so that a second
 * Ctrl-C cannot leave half of them done; then the summary or the JSON on stdout. */
static int write_result(const measure_ctx *c, const bench_report *rep, const struct timespec *now)
{
    const bench_measure_options *o = c->o;
    ib_error err = {0};
    char *pretty = result_to_json(rep, 1);
    char *line = result_to_json(rep, 0);
    if (!pretty || !line) {
        free(pretty);
        free(line);
        fprintf(stderr, "instbench measure: out of memory\n");
        return IB_EXIT_RUNTIME;
    }
    /* A second Ctrl-C during the writes must not leave half of them done: the watcher waits for this. */
    pthread_mutex_lock(&g_write_mu);
    int exit_code = IB_EXIT_OK;
    char path[4096] = "";
    int to_stdout = o->output && !strcmp(o->output, "-");
    int saved =
        to_stdout ? 0 : result_save(o->output, c->id.type, c->sys.hostname, now, pretty, path, sizeof path, &err);
    if (saved != 0) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        exit_code = IB_EXIT_RUNTIME;
        if (saved > 0) fprintf(stderr, "instbench measure: the result was saved to %s instead\n", path);
    }
    if (o->append && result_append_line(o->append, line, &err)) {
        fprintf(stderr, "instbench measure: %s%s%s\n", err.msg, saved == 0 && !to_stdout ? "; the result is in " : "",
                saved == 0 && !to_stdout ? path : "");
        exit_code = IB_EXIT_RUNTIME;
    }
    pthread_mutex_unlock(&g_write_mu);
    int json = o->format >= 0 ? o->format == 1 : !util_isatty_stdout();
    if (to_stdout || json || saved < 0) {
        /* saved nowhere: stdout is the last place the measurement can go */
        fputs(pretty, stdout);
    } else {
        const char *nc = getenv("NO_COLOR");
        output_fit_set(output_terminal_width(stdout), NULL, 0);
        result_print_summary(stdout, rep, util_isatty_stdout() && !(nc && nc[0]));
    }
    fflush(stdout);
    if (saved == 0 && !to_stdout) ib_info("result written to %s", path);
    free(pretty);
    free(line);
    return exit_code;
}

/* The run itself (bench_run, the checkpoint after its window) and its result. */
static int run_and_record(const measure_ctx *c, const measure_peaks *pk)
{
    const bench_measure_options *o = c->o;
    const ib_train_config *train = &c->train;
    const bench_rendezvous *rdv = &c->rdv;
    const bench_data_mode data = o->data;
    ib_error err = {0};
    /* what every process of the job must agree on: the result's workload (its fingerprint's
     * fields) and everything else one step or the window depends on */
    const bench_workload wl = {.model = train->model,
                               .precision = train->precision,
                               .optim = train->optim,
                               .batch_size_per_device = train->batch_size,
                               .data = data};
    char workload_id[2048];
    fingerprint_canonical(&wl, workload_id, sizeof workload_id);
    const size_t wn = strlen(workload_id);
    snprintf(workload_id + wn, sizeof workload_id - wn,
             "seed=%llu\nwarmup=%d\nsteps=%d\nduration_s=%.9g\nmin_steps=%d\n", (unsigned long long)train->seed,
             o->warmup, o->steps, o->duration_s, o->min_steps);
    /* cuda ranks: NCCL across this process's GPUs and, with a rendezvous, other processes (rdv) */
    bench_run_config rc = {.train = *train,
                           .backend = c->backend,
                           .ranks = c->ranks,
                           .data = data,
                           .workers = c->workers,
                           .warmup = o->warmup,
                           .steps = o->steps,
                           .duration_s = o->duration_s,
                           .min_steps = o->min_steps,
                           .progress = ib_log_level >= 1 && util_isatty_stderr(),
                           .color = util_stderr_color(),
                           .markers = ib_log_level >= 2,
                           .stop = &g_stop,
                           .workload_id = workload_id,
                           .rdv = rdv};
    checkpoint_job ck;
    memset(&ck, 0, sizeof ck);
    if (rdv->rank == 0 && o->checkpoint) {
        checkpoint_dir_choose(o, ck.dir, sizeof ck.dir, &ck.make_dir);
        rc.after_window = take_checkpoint, rc.after_user = &ck;
    }
    if (data == BENCH_DATA_HOST)
        ib_info("measuring %s (%s, batch %d x %d rank%s, host data from %d worker%s per rank) on %s", train->model.name,
                backend_precision_name(train->precision), train->batch_size, c->ranks, c->ranks == 1 ? "" : "s",
                c->workers, c->workers == 1 ? "" : "s", c->backend->name);
    else
        ib_info("measuring %s (%s, batch %d x %d rank%s, device data) on %s", train->model.name,
                backend_precision_name(train->precision), train->batch_size, c->ranks, c->ranks == 1 ? "" : "s",
                c->backend->name);
    bench_result res;
    int run_rc = bench_run(&rc, &res, &err);
    if (run_rc && g_stop) return interrupted_exit(); /* e.g. a signal during the rendezvous */
    if (run_rc) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
    }
    if (res.interrupted || g_stop) return interrupted_exit();

    double others = -1, steal = -1;
    sysinfo_host_load(&res.load_start, &res.load_end, c->sys.vcpus, &others, &steal);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char ts[32];
    util_utc_iso8601(now.tv_sec, ts);
    const int is_cpu = c->is_cpu;
    bench_report rep = {.timestamp = ts,
                        .identity = c->id,
                        .sys = &c->sys,
                        .backend = c->backend->name,
                        .accelerator_count = is_cpu ? 0 : c->ranks,
                        .workload = {.model = train->model,
                                     .precision = train->precision,
                                     .optim = train->optim,
                                     .batch_size_per_device = train->batch_size,
                                     .data = data},
                        .params = model_param_count(&train->model),
                        .train_flops_per_sample = model_train_flops_per_sample(&train->model),
                        .global_batch_size = train->batch_size * rdv->world_size,
                        .topology = *rdv,
                        .m = &res,
                        .others_share = others,
                        .steal_share = steal,
                        .peak_tflops = pk->peak,
                        .peak_source = pk->peak > 0 ? pk->source : NULL,
                        .cpu_bf16 = pk->cpu_bf16,
                        .gemm_tflops = pk->gemm,
                        .gemm_devices = pk->gemm_devices,
                        .attention = backend_attention(c->backend, train),
                        .attention_library = pk->have_att_lib ? &pk->att_lib : NULL,
                        .cuda_graphs = is_cpu ? -1 : train->cuda_graphs,
                        .hourly_cost_usd = o->hourly_cost,
                        .checkpoint = &ck.result};
    result_warning warnings[RESULT_MAX_WARNINGS];
    for (size_t i = 0, n = result_warnings(&rep, warnings); i < n; i++) say_warning(&warnings[i], &res, pk->source);

    if (rdv->rank != 0) return IB_EXIT_OK; /* only rank 0 writes */
    return write_result(c, &rep, &now);
}

int bench_measure(const bench_measure_options *o)
{
    /* From here on, Ctrl-C means "stop and write nothing".  Start-up (the peak probe, the model
     * build) looks at the flag as often as the run does. */
    if (watch_signals() != 0)
        ib_warn("cannot start the signal watcher: Ctrl-C will stop the run without its clean exit");

    measure_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    int rc;
    if ((rc = resolve_workload(&c)) != 0 || (rc = resolve_topology(&c)) != 0 || (rc = resolve_devices(&c)) != 0 ||
        (rc = resolve_batch(&c)) != 0 || (rc = check_before_run(&c)) != 0)
        return rc;
    if (o->dry_run) {
        char dir[4096];
        int on_demand;
        checkpoint_dir_choose(o, dir, sizeof dir, &on_demand);
        return measure_dry_run(&c, dir, &g_stop) ? interrupted_exit() : IB_EXIT_OK;
    }
    if (c.sys.loadavg1 > c.sys.vcpus)
        ib_warn("load average %.1f is above the %d vCPUs before starting: the machine looks shared; figures may be low",
                c.sys.loadavg1, c.sys.vcpus);
    measure_peaks pk;
    measure_peak(&c, &pk);
    if (g_stop) return interrupted_exit();
    return run_and_record(&c, &pk);
}
