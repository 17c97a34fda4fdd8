/* instbench measure: run the ViT training benchmark on this machine and write a result JSON
 * (schemas/result-v1.json).  Parses flags, resolves identity, topology and batch size, calls
 * bench_run (src/bench/runner.c), then writes the result atomically.  Ctrl-C / SIGTERM stop at
 * the next step boundary and leave no file: exit 130 / 143. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/backend.h"
#include "instbench/instance_type.h"
#include "instbench/output.h"
#include "instbench/aws.h"
#include "instbench/aws_ids.h"
#include "instbench/bench.h"
#include "instbench/model.h"
#include "instbench/prices.h"   /* the catalogue the identity flags are checked against */
#include "instbench/rank.h"   /* RANK_MIN/MAX_USD_PER_HOUR: what rank accepts as a price */
#include "instbench/suggest.h"
#include "instbench/util.h"

enum { DEFAULT_BATCH = 128, AUTO_BATCH_MAX = 8192 };
static const double DEFAULT_DURATION_S = 30.0;
static const int DEFAULT_MIN_STEPS = 5;

static volatile sig_atomic_t g_stop;

/* First signal: stop at the next step boundary.  Second: the user insists, die now (nothing is
 * half-written: result writes happen with the signals blocked). */
static void on_signal(int sig)
{
    if (g_stop) {
        checkpoint_remove_pending();   /* a checkpoint file being written goes with the process */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_stop = sig;
}

/* What the flags say.  Choices are indexes into their names: backend, market and format -1 when
 * not given (auto), the others their default's index. */
static struct {
    model_cli model;
    int backend, precision, optimizer, data, market, format;
    int cuda_graphs;           /* index into on_off: 0 on (default), 1 off */
    int batch;                 /* 0 = auto */
    double lr;                 /* < 0: optimizer default */
    int steps, have_steps, have_duration, model_given;
    double duration_s;
    int warmup;                /* -1 auto */
    int workers;               /* 0 = default */
    int ranks;                 /* 0 = auto: every local GPU on cuda, 1 on cpu */
    bench_rendezvous_flags rdv;
    const char *instance_type, *region;
    int count;                 /* 0 = nodes */
    double hourly_cost;        /* --hourly-cost, USD per node-hour; 0 = not given */
    const char *output, *append;
    int create_dirs;           /* --create-dirs: make missing directories of --output / --append */
    int identity_mismatch;     /* --identity-mismatch ok: 0; not given: -1 (a contradiction refuses) */
    int dry_run;
    uint64_t seed;
    int checkpoint;            /* index into on_off: 0 on (default), 1 off */
    const char *checkpoint_dir;
} O;

/* A whole number >= 0 up to 2^63-1 (64-bit seeds). */
static int take_seed(void *dst, const char *flag, const char *v, ib_error *err)
{
    char *end;
    errno = 0;
    long long s = strtoll(v, &end, 10);
    if (strpbrk(v, " \t\n\v\f\r"))
        return ib_error_set(err, IB_EXIT_USAGE, "--seed: '%s' has whitespace in it, which is not part of a number", v);
    if (errno || *end || !v[0] || s < 0) return ib_error_set(err, IB_EXIT_USAGE, "--seed: '%s' is not a whole number >= 0", v);
    *(uint64_t *)dst = (uint64_t)s;
    return 0;
}

static const char *check_host(const char *v)
{
    return aws_host_valid(v) ? NULL : "is not a host name (RFC 1123) or IP address";
}

static const char *const data_modes[] = {"host", "device", NULL};
static const char *const markets[] = {"on-demand", "spot", NULL};
static const char *const formats[] = {"table", "json", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const mismatch_ok[] = {"ok", NULL};

static const arg_spec measure_specs[] = {
    {"--backend", 0, ARG_CHOICE, &O.backend, NULL, "training backend (default: cuda when available, else cpu)",
     .choices = backend_names, .group = "workload"},
    ARGS_MODEL_SPECS(&O.model, &O.model_given, NULL),
    {"--batch-size", 0, ARG_INT, &O.batch, "N|auto", "per-device batch (default 128); auto = the largest that fits in memory",
     1, 1 << 20, .word = "auto", .word_value = 0},
    {"--precision", 0, ARG_CHOICE, &O.precision, NULL, "bf16 (default: bf16 matmuls, fp32 master weights) or fp32",
     .choices = backend_precision_names},
    {"--optimizer", 0, ARG_CHOICE, &O.optimizer, NULL, "adam (default) or adamw (torch defaults: lr 1e-3, betas 0.9/0.999,\n"
     "eps 1e-8, weight decay 0 / 1e-2)", .choices = backend_optimizer_names},
    {"--lr", 0, ARG_DOUBLE, &O.lr, "X", "learning rate (default 1e-3)", 1e-12, 1e3},
    {"--data", 0, ARG_CHOICE, &O.data, NULL, "host (default): fresh random images made by CPU worker threads every\n"
     "step and handed to the backend, as PyTorch's FakeDataset;\n"
     "device: inputs made once where the model runs (pure compute)", .choices = data_modes},
    {"--workers", 0, ARG_INT, &O.workers, "N", "data-pipeline threads per rank (default: vCPUs / local ranks)", 1, 1024},
    {"--cuda-graphs", 0, ARG_CHOICE, &O.cuda_graphs, NULL, "on (default): a one-rank CUDA run replays forward and\n"
     "backward as one CUDA graph from its second step (no per-kernel launch cost);\n"
     "off: every kernel launched each step.  Data-parallel runs launch eagerly\n"
     "(the gradient buckets' hooks); the result records which ran", .choices = on_off},
    {"--seed", 0, ARG_FN, &O.seed, "N", "seed of the weights and data (default 0)", .fn = take_seed},
    {"--steps", 0, ARG_INT, &O.steps, "N", "timed steps", 1, 100000000, .given = &O.have_steps, .group = "measurement"},
    {"--duration", 0, ARG_DOUBLE, &O.duration_s, "S", "timed window in seconds (default 30, at least 5 steps)", 1e-3,
     7 * 86400.0, .want = "seconds", .given = &O.have_duration},
    {"--warmup", 0, ARG_INT, &O.warmup, "N", "warm-up steps (default: until the step time settles, at least 3)", 0, 100000},
    {"--ranks", 0, ARG_INT, &O.ranks, "N", "data-parallel ranks in this process (CPU: the cores are split\n"
     "between them; CUDA: one GPU each, NCCL); gradients averaged\n"
     "every step. Default: every local GPU on cuda (one per process\n"
     "under a per-GPU launcher), 1 on cpu", 1, 256, .group = "topology"},
    {"--nnodes", 0, ARG_INT, &O.rdv.nnodes, "N", "multi-node rendezvous, recorded in the result (without flags,\n"
     "the environment of torchrun, a PyTorchJob or Volcano pod\n"
     "(WORLD_SIZE/RANK/MASTER_*), Kubeflow Trainer v2 (PET_*) or srun\n"
     "(SLURM_*) is read: docs/usage.md, Launchers)", 1, 100000},
    {"--node-rank", 0, ARG_INT, &O.rdv.node_rank, "N", "this node's rank, 0 to nnodes-1", 0, 99999},
    {"--master-addr", 0, ARG_STRING, &O.rdv.master_addr, "HOST", "where rank 0 listens", .check = check_host},
    {"--master-port", 0, ARG_INT, &O.rdv.master_port, "N", "its port", 1, 65535},
    {"--instance-type", 0, ARG_STRING, &O.instance_type, "T", "e.g. g5.xlarge (a type of a family the price snapshot covers\n"
     "must be one of its sizes; other families, e.g. c5.large, as given)", .check = names_instance_type_size_problem,
     .suggest = prices_suggest_type, .group = "identity (read from EC2 instance metadata, IMDSv2, unless all three are given)"},
    {"--region", 0, ARG_STRING, &O.region, "R", "e.g. us-east-1: an AWS region instbench knows", .check = names_region_problem,
     .suggest = prices_suggest_region},
    {"--market", 0, ARG_CHOICE, &O.market, NULL, "the market this instance runs on", .choices = markets},
    {"--count", 0, ARG_INT, &O.count, "N", "nodes in the cluster this result stands for (default: nodes)", 1, 100000},
    {"--identity-mismatch", 0, ARG_CHOICE, &O.identity_mismatch, NULL,
     "ok: record the result under --instance-type although the type's\n"
     "accelerators (kind, count) or vCPUs, as the price snapshot states\n"
     "them, differ from this run's; the result says so\n"
     "(instance.identity_mismatch).  Without it such a run is refused\n"
     "(exit 2) before measuring.  An identity from instance metadata is\n"
     "this machine's own and is never refused", .choices = mismatch_ok},
    /* The bounds rank accepts: a price it would refuse must not be recorded either. */
    {"--hourly-cost", 0, ARG_DOUBLE, &O.hourly_cost, "USD",
     "what one node of this configuration costs per hour, in US dollars\n"
     "(the whole machine with all its GPUs, not per GPU); recorded in\n"
     "the result for the run's market (--market, else on-demand), and\n"
     "`rank` prices the result with it: nodes x USD per hour", RANK_MIN_USD_PER_HOUR, RANK_MAX_USD_PER_HOUR,
     .want = "a price in US dollars per node-hour",
     .group = "price (for machines AWS cannot price: your own hardware, another cloud, a discount)"},
    {"--output", 'o', ARG_STRING, &O.output, "FILE", "result file, replaced if it exists (default: a new file\n"
     "./instbench-results/<instance type or hostname>-<random>-<UTC time\n"
     "to the millisecond>.json, never overwriting); - writes the JSON to\n"
     "stdout; s3://BUCKET/KEY uploads it (a KEY ending in / gets the\n"
     "generated name); a presigned PUT URL (instbench presign) uploads it\n"
     "without credentials.  Checked before the run; if the write still\n"
     "fails, the result is saved to ./instbench-result-*.json (else\n"
     "$TMPDIR; an upload: as without --output) and the exit status is 1", .group = "output"},
    {"--append", 0, ARG_STRING, &O.append, "FILE", "also append the result as one line to FILE (JSON Lines)",
     .check = args_check_file},
    {"--create-dirs", 0, ARG_FLAG, &O.create_dirs, NULL, "create the missing directories of --output and --append\n"
     "(without it a missing one is refused, exit 2, as cp does;\n"
     "./instbench-results/ is always made when a result goes there)"},
    {"--format", 0, ARG_CHOICE, &O.format, NULL, "stdout: table (default on a terminal) or json", .choices = formats},
    {"--dry-run", 0, ARG_FLAG, &O.dry_run, NULL, "check everything a run would check (flags, backend, memory for the\n"
     "batch, the output files, the identity, the rendezvous settings), print\n"
     "what would run and how long, estimated from one timed training step\n"
     "at a small batch (seconds), and exit without measuring"},
    {"--checkpoint", 0, ARG_CHOICE, &O.checkpoint, NULL, "on (default): after the timed window, time one checkpoint of\n"
     "the state a training job saves (fp32 weights, Adam's two moments,\n"
     "the bf16 copy under bf16; from a GPU with the copy to the host):\n"
     "written with fsync, read back, removed (the result's checkpoint;\n"
     "rank's measured checkpoint cost).  Skipped with a warning when\n"
     "the disk lacks the room; off: not timed", .choices = on_off, .group = "checkpoint"},
    {"--checkpoint-dir", 0, ARG_STRING, &O.checkpoint_dir, "DIR", "where the checkpoint is written (default: the result file's\n"
     "directory, ./instbench-results/ for the default result; for\n"
     "stdout or S3, ./instbench-results/ when it exists, else .)"},
    {0},
};

const arg_command cmd_measure_args = {
    "measure", "[options]",
    "Runs the ViT training benchmark here (warm-up, then a timed window) and writes a result\n"
    "JSON (schema instbench.result/v1) that `instbench rank` reads.",
    "Progress goes to stderr when it is a terminal (NO_COLOR honoured).\n"
    "Interrupted (Ctrl-C, SIGTERM): nothing is written, exit 130 / 143.\n",
    measure_specs, NULL,
    .examples = (const arg_example[]){
        {"the default run on this machine (every GPU; the result goes to ./instbench-results/)", "instbench measure"},
        {"a quick CPU run of a small model", "instbench measure --backend cpu --model vit_tiny_patch16_224 --batch-size 16 --duration 10"},
        {"a machine AWS cannot price (your own hardware): record what it costs an hour",
         "instbench measure --hourly-cost 1.20 -o workstation.json"},
        {0}},
};

/* The identity flags name what `rank` will price: offline, the snapshot and AWS's region list
 * are the catalogue.  A type of a family the snapshot covers must be one of its sizes (the snapshot
 * lists every size of those families); a type of another family (c5.large) is taken as given. */
static int check_identity_names(void)
{
    char dym[128];
    if (O.instance_type && !prices_catalogue_has_type(O.instance_type)) {
        char list[512];
        const char *near;
        if (prices_catalogue_size_list(O.instance_type, list, sizeof list, &near))
            return args_usage_error(&cmd_measure_args, "--instance-type: '%s' is not one of the sizes the price "
                                    "snapshot lists for its family (%s)%s", O.instance_type, list,
                                    args_did_you_mean(near, dym, sizeof dym));
    }
    if (O.region && !aws_region_known(O.region) && !prices_catalogue_has_region(O.region))
        return args_usage_error(&cmd_measure_args, "--region: '%s' is not an AWS region instbench knows%s", O.region,
                                args_did_you_mean(prices_suggest_region(O.region), dym, sizeof dym));
    return 0;
}

static int parse_args(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    O.backend = O.market = O.format = O.identity_mismatch = -1;
    O.precision = IB_PREC_BF16, O.optimizer = IB_OPT_ADAM, O.data = BENCH_DATA_HOST;
    model_cli_init(&O.model, "vit_base_patch16_224");
    O.batch = DEFAULT_BATCH;
    O.lr = -1;
    O.warmup = -1;
    O.rdv.nnodes = O.rdv.node_rank = O.rdv.master_port = -1;
    int rc = args_parse(&cmd_measure_args, argc, argv, NULL, NULL);
    if (rc) return rc;
    if ((rc = check_identity_names()) != 0) return rc;
    if (O.have_steps && O.have_duration) return args_usage_error(&cmd_measure_args, "--steps and --duration exclude each other");
    if (!O.have_steps && !O.have_duration) O.duration_s = DEFAULT_DURATION_S;
    if (O.checkpoint_dir && O.checkpoint == 1)
        return args_usage_error(&cmd_measure_args, "--checkpoint-dir with --checkpoint off: nothing is written there");
    ib_error err = {0};
    if (O.checkpoint_dir && checkpoint_check_dir(O.checkpoint_dir, &err))
        return args_usage_error(&cmd_measure_args, "%s", err.msg);
    return 0;
}

/* Where the checkpoint goes: --checkpoint-dir, else the result file's directory (the result's
 * file system): ./instbench-results/ for the default result, made for the checkpoint when it is
 * missing (take_checkpoint); for stdout or S3, ./instbench-results/ when it exists, else the
 * current directory.  *MADE_ON_DEMAND: 1 when the directory is the default one and may be missing. */
static void checkpoint_dir_choose(char *out, size_t n, int *made_on_demand)
{
    struct stat st;
    *made_on_demand = 0;
    if (O.checkpoint_dir) snprintf(out, n, "%s", O.checkpoint_dir);
    else if (!O.output) {
        snprintf(out, n, "instbench-results");
        *made_on_demand = 1;
    } else if (strcmp(O.output, "-") != 0 && !result_output_is_remote(O.output)) {
        const char *slash = strrchr(O.output, '/');
        if (!slash) snprintf(out, n, ".");
        else snprintf(out, n, "%.*s", slash == O.output ? 1 : (int)(slash - O.output), O.output);
    } else if (stat("instbench-results", &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(out, n, "instbench-results");
    else
        snprintf(out, n, ".");
}

typedef struct checkpoint_job {
    char dir[4096];
    int make_dir;   /* dir is the default result directory: made if missing, removed after if it was */
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
        ib_warn("checkpoint not timed: cannot create %s: %s (the result's checkpoint is null)", job->dir, strerror(errno));
        return;
    }
    ib_info("checkpoint: timing one save of the training state in %s", job->dir);
    int rc = checkpoint_measure(b, job->dir, &g_stop, &job->result, &err);
    if (made) rmdir(job->dir);   /* empty again: the checkpoint file is removed */
    if (rc < 0) ib_warn("checkpoint not timed: %s (the result's checkpoint is null)", err.msg);
    else if (rc == 0)
        ib_info("checkpoint: %.1f MiB written in %.3f s, read back in %.3f s (%s)", job->result.bytes / 1048576.0,
                job->result.write_s, job->result.read_s, job->result.dir_fs);
}

/* The model the flags name, checked; a message and -1 when they name none that can be built. */
static int resolve_model(vit_config *model)
{
    ib_error err = {0};
    if (model_cli_resolve(&O.model, model, &err) || model_validate(model, &err)) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return -1;
    }
    return 0;
}

int cmd_measure_check_args(int argc, char **argv)
{
    int rc = parse_args(argc, argv);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_USAGE : rc;
    vit_config model;
    memset(&model, 0, sizeof model);
    return resolve_model(&model) != 0 ? IB_EXIT_USAGE : 0;
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
static int too_big_for_memory(const ib_backend_ops *backend, const ib_train_config *train, bench_data_mode data, int ranks,
                              uint64_t avail)
{
    ib_train_config one = *train;
    one.batch_size = 1;
    const vit_config *m = &train->model;
    /* fused kernels and cuDNN keep no T x T matrix; only the unfused path's memory is quadratic */
    const int linear = strcmp(backend_attention(backend, &one), "unfused") != 0;
    char need[32], have[32];
    fprintf(stderr,
            "instbench measure: %s does not fit at any batch size: batch 1 needs about %s but %s is available "
            "(--image-size %d with --patch-size %d makes %d tokens per image; %s: a larger --patch-size or a "
            "smaller --image-size needs less)\n",
            m->name, memory_text((double)memfit_rank_bytes(backend, &one, data) * ranks, need, sizeof need),
            memory_text((double)avail, have, sizeof have), m->img_size, m->patch_size, model_seq_len(m),
            linear ? "activation memory grows with them" : "attention memory grows with their square");
    return IB_EXIT_USAGE;
}

/* Said before the run, not found by rank afterwards: what the recorded identity will make of the result. */
static void warn_identity(const bench_identity *id, int nnodes, const char *hostname)
{
    if (id->type[0] && !id->region[0] && O.hourly_cost <= 0)
        ib_warn("--instance-type %s without --region (and no instance metadata here): rank can price this result "
                "only when given --region R, or a price with --price %s=USD; add --region now to record it",
                id->type, id->type);
    if (!id->type[0] && O.hourly_cost <= 0)
        ib_warn("this result names no instance type (no instance metadata here, no --instance-type): rank can "
                "price it only at a price you give (--hourly-cost now, or rank --price %s=USD)", hostname);
    if (id->count > nnodes)
        ib_warn("--count %d with %d node(s) running: rank will price the result as %d nodes at the throughput "
                "measured on %d (cost x %d, throughput not scaled); start the run on every node (--nnodes) to "
                "measure theirs", id->count, nnodes, id->count, nnodes, id->count);
}

/* A SageMaker job's node: the result stands for all of its hosts (as --count would say) unless
 * --count was given; a lone run on one of several hosts is told how to measure them together. */
static void sagemaker_topology(bench_identity *id, const bench_rendezvous *rdv)
{
    const bench_sagemaker *sm = &id->sagemaker;
    if (sm->nodes <= 0) return;
    ib_info("identity: SageMaker training job (%s), %s, node %d of %d", sagemaker_resource_config_path(),
            sm->instance_type, sm->node_rank, sm->nodes);
    if (O.count == 0 && sm->nodes > rdv->nnodes) id->count = sm->nodes;
    if (rdv->nnodes == 1 && sm->nodes > 1)
        ib_warn("SageMaker runs %d hosts but this run measures one node (priced as %d: --count %d); to measure "
                "them together start it on every host with --nnodes %d --node-rank %d --master-addr %s",
                sm->nodes, id->count, id->count, sm->nodes, sm->node_rank, sm->master_host);
}

/* The differences of a checked identity as one line: "accelerators: ...; vcpus: ...". */
static const char *differences_text(const bench_identity *id, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0, u = 0; i < id->n_differences && (size_t)u < n; i++)
        u += snprintf(buf + u, n - (size_t)u, "%s%s", i ? "; " : "", id->differences[i]);
    return buf;
}

/* A type given by flag must be the machine that runs: the price snapshot's accelerators and
 * vCPUs for it against this run's (identity_check says how they compare).  A contradiction is
 * refused unless --identity-mismatch ok, which records it.  NODE_DEVICES: the GPUs the job drives
 * on this node; FIRST_GPU: this process's first. */
static int check_identity_hardware(bench_identity *id, const ib_backend_ops *backend, const bench_sysinfo *sys,
                                   int node_devices, int first_gpu)
{
    const price_record *rec = prices_catalogue_hardware(id->type);
    const char *const *known = NULL;
    const size_t n_known = prices_catalogue_accelerators(&known);
    const bench_type_hardware hw = {rec ? rec->hw.vcpus : 0, rec ? rec->hw.accelerator : NULL,
                                    rec ? rec->hw.accelerator_count : 0, known, n_known};
    const int is_cpu = backend->device == IB_DEVICE_HOST;
    const bench_run_hardware run = {backend->name, is_cpu ? 0 : node_devices,
                                    !is_cpu && first_gpu < sys->gpu_count ? sys->gpus[first_gpu].name : NULL, sys->vcpus};
    const int m = identity_check(id, rec ? &hw : NULL, &run);
    if (m < 0 && id->type[0])
        ib_debug("identity: the price snapshot has no hardware for %s: recorded as given, not checked", id->type);
    if (m <= 0) return 0;
    char diff[sizeof id->differences + 16];
    differences_text(id, diff, sizeof diff);
    if (O.identity_mismatch != 0) {
        util_term_printf(stderr, "instbench measure: --instance-type %s is not this machine: %s (--identity-mismatch ok "
                         "records the result under %s anyway, marked as a mismatch)\n", id->type, diff, id->type);
        return IB_EXIT_USAGE;
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
                "or throttled", 100 * t->cv, t->median, t->p10, t->p90);
    else if (!strcmp(w->code, "drift"))
        ib_warn("step time drifted up by more than 10%% during the timed window (throttling?)");
    else if (!strcmp(w->code, "mfu_over_100"))
        ib_warn("MFU above 100%%: the peak figure (%s) is too low; measured while the machine was busy?", peak_source);
    else if (!strcmp(w->code, "other_processes"))
        ib_warn("%s: the machine is shared; figures may be low", w->text);
    else if (strcmp(w->code, "shared_machine") != 0)
        ib_warn("%s", w->text);
}

/* SECONDS as "~N s" below a minute and a half, "~N min" below an hour and a half, else "~N.N h". */
static const char *estimate_text(double seconds, char *buf, size_t n)
{
    if (seconds < 90) snprintf(buf, n, "~%.0f s", seconds < 1 ? 1 : seconds);
    else if (seconds < 90 * 60) snprintf(buf, n, "~%.0f min", seconds / 60);
    else snprintf(buf, n, "~%.1f h", seconds / 3600);
    return buf;
}

/* The dry run's "estimated time" lines: one step of the run's configuration timed (bench_probe_step,
 * on PROBE's device) and scaled to the run's batch and planned steps (bench_estimate_run).  A probe
 * that cannot run says why, and the rest of the report stands.  -1: interrupted. */
static int dry_run_estimate(const ib_backend_ops *backend, const ib_train_config *probe, bench_data_mode data,
                            const bench_rendezvous *rdv, char *out, size_t n)
{
    double target = 0.25;   /* seconds a probe step may reach before its batch stops growing */
    const char *env = getenv("INSTBENCH_PROBE_SECONDS");
    if (env && env[0] && util_parse_double(env, 0, 60, &target) != 0) {
        ib_warn("INSTBENCH_PROBE_SECONDS: '%s' is not a number of seconds from 0 to 60: 0.25 used", env);
        target = 0.25;
    }
    bench_probe p;
    ib_error err = {0};
    if (bench_probe_step(backend, probe, target, &g_stop, &p, &err) != 0) {
        if (g_stop) return -1;
        snprintf(out, n, "  estimated time: none (the probe step failed: %s)\n", err.msg);
        return 0;
    }
    ib_debug("dry-run probe: batch %d, forward+backward %.9g s, optimizer %.9g s", p.batch, p.forward_backward_s,
             p.optimizer_s);
    bench_estimate e;
    bench_estimate_run(&p, probe->batch_size, O.warmup, O.have_steps ? O.steps : 0, O.duration_s, DEFAULT_MIN_STEPS, &e);
    char total[32], scaled[48] = "";
    if (p.batch < probe->batch_size) snprintf(scaled, sizeof scaled, ", scaled to batch %d", probe->batch_size);
    snprintf(out, n, "  estimated time: %s (%d warm-up + %d timed steps of ~%.3g s, from a probe step at batch %d%s)\n"
             "    not counted: %sstart-up (building the model, the GEMM-rate measurement)%s%s%s\n",
             estimate_text(e.total_s, total, sizeof total), e.warmup_steps, e.timed_steps, e.step_s, p.batch, scaled,
             O.warmup < 0 ? "more warm-up while the step time has not settled (up to 30 steps), " : "",
             data == BENCH_DATA_HOST ? ", the host data pipeline" : "",
             rdv->world_size > 1 ? ", averaging the gradients between ranks" : "",
             rdv->rank == 0 && O.checkpoint == 0 ? ", the checkpoint" : "");
    return 0;
}

/* --dry-run: everything has been checked; say what a run would do and stop.  PROBE: the run's
 * per-rank configuration on this process's first device. */
static int dry_run_report(const ib_backend_ops *backend, const ib_train_config *train, bench_data_mode data,
                          const bench_rendezvous *rdv, int workers, const bench_identity *id)
{
    char estimate[2048];   /* two lines, the second naming what is left out; or why there is none */
    if (dry_run_estimate(backend, train, data, rdv, estimate, sizeof estimate) != 0) return interrupted_exit();
    const int is_cpu = backend->device == IB_DEVICE_HOST;
    const double gib = (double)memfit_rank_bytes(backend, train, data) * (is_cpu ? O.ranks : 1) / 1073741824.0;
    printf("would measure %s (%s, batch %d per device x %d rank(s) here, %d in all) on backend %s\n",
           train->model.name, backend_precision_name(train->precision), train->batch_size, O.ranks, rdv->world_size,
           backend->name);
    printf("  memory: about %.2f GiB %s\n", gib, is_cpu ? "of host memory" : "per GPU");
    printf("  data: %s", data == BENCH_DATA_HOST ? "host, " : "device\n");
    if (data == BENCH_DATA_HOST) printf("%d worker thread(s) per rank\n", workers);
    if (O.have_steps) printf("  timing: %d steps after warm-up\n", O.steps);
    else printf("  timing: %g s window after warm-up (at least %d steps)\n", O.duration_s, DEFAULT_MIN_STEPS);
    printf("  nodes: %d (%s rendezvous), this is node %d\n", rdv->nnodes, rdv->kind, rdv->node_rank);
    if (strcmp(rdv->kind, "none") != 0)
        printf("  rendezvous: global rank %d of %d; rank 0 serves the NCCL unique id on %s:%d\n", rdv->rank,
               rdv->world_size, rdv->master_addr, rdv->id_port);
    printf("  identity: %s, region %s, market %s, count %d (from %s)\n", id->type[0] ? id->type : "unknown type",
           id->region[0] ? id->region : "unknown", id->market[0] ? id->market : "unknown", id->count, id->source);
    char diff[sizeof id->differences + 16];
    if (id->mismatch > 0)
        printf("  identity check: not this machine, recorded as a mismatch (--identity-mismatch ok): %s\n",
               differences_text(id, diff, sizeof diff));
    else if (id->mismatch == 0 && !strcmp(id->source, "flag"))
        printf("  identity check: %s has this run's accelerators and vCPUs\n", id->type);
    else if (id->mismatch < 0 && id->type[0])
        printf("  identity check: none (the price snapshot has no hardware for %s)\n", id->type);
    char shown[1024];   /* a presigned --output's signature is never printed */
    if (rdv->rank == 0)
        printf("  result: %s%s%s\n", !O.output ? "a new file in ./instbench-results/" : !strcmp(O.output, "-") ? "stdout"
               : aws_url_for_display(O.output, shown, sizeof shown), O.append ? ", appended to " : "", O.append ? O.append : "");
    else
        printf("  result: written by global rank 0, not here\n");
    char dir[4096];
    int on_demand;
    checkpoint_dir_choose(dir, sizeof dir, &on_demand);
    if (rdv->rank == 0 && O.checkpoint == 0)
        printf("  checkpoint: one save of the training state (%.1f MiB) timed in %s\n",
               checkpoint_state_bytes(model_param_count(&train->model), train->precision) / 1048576.0, dir);
    fputs(estimate, stdout);
    return IB_EXIT_OK;
}

int cmd_measure(int argc, char **argv)
{
    int prc = parse_args(argc, argv);
    if (prc) return prc == ARGS_HELP ? IB_EXIT_OK : prc;
    const ib_backend_ops *backend = O.backend >= 0 ? backend_find(backend_names[O.backend]) : NULL;
    const bench_data_mode data = (bench_data_mode)O.data;
    ib_error err = {0};

    /* ---- signals: from here on, Ctrl-C means "stop and write nothing".  Start-up (the peak
     * probe, the model build) looks at the flag as often as the run does. ---- */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* ---- workload ---- */
    if (!backend) {
        /* default: a GPU backend when one is usable (cuda: its module loads and sees a GPU), else
         * cpu, and -v says why */
        const ib_backend_ops *skipped = NULL;
        const char *why = NULL;
        backend = backend_auto(&skipped, &why);
        if (skipped) ib_debug("backend auto: %s (%s is not usable: %s)", backend->name, skipped->name, why);
    } else {
        const char *why = backend->unavailable_reason();
        if (why) {
            fprintf(stderr, "instbench measure: backend '%s' is not available: %s\n", backend->name, why);
            return IB_EXIT_USAGE;
        }
    }
    ib_train_config train;
    memset(&train, 0, sizeof train);
    if (resolve_model(&train.model) != 0) return IB_EXIT_USAGE;
    train.precision = (ib_precision)O.precision;
    backend_default_optim((ib_optimizer)O.optimizer, &train.optim);
    if (O.lr > 0) train.optim.lr = (float)O.lr;
    train.seed = O.seed;

    bench_sysinfo sys;
    sysinfo_collect(&sys);
    if (g_stop) return interrupted_exit();
    const int is_cpu = backend->device == IB_DEVICE_HOST;   /* ranks share the cores and host memory */
    if (!is_cpu) sysinfo_gpus_from_backend(&sys, backend);   /* the devices it will use, not NVML's list */
    if (O.ranks == 0) {
        /* docs/design.md: data-parallel over every local GPU.  One process drives them all unless a launcher
         * (torchrun --nproc-per-node, srun --ntasks-per-node) already starts one process per GPU. */
        const char *lws = getenv("LOCAL_WORLD_SIZE"), *tpn = getenv("SLURM_NTASKS_PER_NODE");
        int launcher_per_gpu = (lws && atoi(lws) > 1) || (tpn && atoi(tpn) > 1);
        O.ranks = (!is_cpu && !launcher_per_gpu && sys.gpu_count > 1) ? sys.gpu_count : 1;
    }
    if (is_cpu && O.ranks > sys.vcpus) {
        fprintf(stderr, "instbench measure: --ranks %d is more than the %d vCPUs here (each rank needs a core)\n",
                O.ranks, sys.vcpus);
        return IB_EXIT_USAGE;
    }
    const char *no_dp = NULL;
    const int gpu_dp = backend_dp_usable(backend, &no_dp);   /* GPU ranks average over NCCL */
    if (!is_cpu && O.ranks > 1 && !gpu_dp) {
        /* The in-process comm averages host memory; GPU gradients need the backend's own. */
        fprintf(stderr, "instbench measure: --ranks %d with --backend %s: %s\n", O.ranks, backend->name, no_dp);
        return IB_EXIT_USAGE;
    }
    if (!is_cpu && O.ranks > sys.gpu_count && sys.gpu_count > 0) {
        fprintf(stderr, "instbench measure: --ranks %d is more than the %d GPUs here\n", O.ranks, sys.gpu_count);
        return IB_EXIT_USAGE;
    }
    train.threads = is_cpu ? (sys.vcpus / O.ranks > 0 ? sys.vcpus / O.ranks : 1) : 0;

    /* ---- topology ---- */
    bench_rendezvous rdv;
    if (rendezvous_resolve(&O.rdv, O.ranks, &rdv, &err)) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return IB_EXIT_USAGE;
    }
    if (rdv.world_size > O.ranks && !gpu_dp) {
        /* Only the backend's own comm reaches other processes; src/comm averages within this one. */
        fprintf(stderr,
                "instbench measure: the %s rendezvous asks for %d ranks over %d node(s), but backend '%s' can only "
                "average gradients between ranks of one process (--ranks N): %s; cross-process data parallelism "
                "needs the NCCL comm of the cuda backend\n",
                rdv.kind, rdv.world_size, rdv.nnodes, backend->name, no_dp);
        return IB_EXIT_USAGE;
    }
    int workers = O.workers > 0 ? O.workers : (sys.vcpus / rdv.local_world_size > 0 ? sys.vcpus / rdv.local_world_size : 1);
    /* graphs where nothing runs between forward and backward: one rank in the whole job */
    train.cuda_graphs = !is_cpu && O.cuda_graphs == 0 && rdv.world_size == 1;

    /* ---- batch size: estimated before anything is allocated ---- */
    /* GPU: the devices this process drives (the runner's choice: from its local rank when the backend
     * averages across processes, else from 0), free memory after set-up, NCCL's buffers set aside */
    const int first_gpu = gpu_dp && rdv.local_rank + O.ranks <= sys.gpu_count ? rdv.local_rank : 0;
    uint64_t avail = is_cpu ? sys.memory_available_bytes
                            : memfit_device_available(backend, &sys, first_gpu, O.ranks, rdv.world_size > 1);
    if (avail > 0) avail = avail / 10 * 9;   /* headroom for the OS, allocator slack, the driver */
    if (O.batch == 0) {
        if (avail == 0) {
            fprintf(stderr, "instbench measure: --batch-size auto: cannot tell how much memory the device has\n");
            return IB_EXIT_RUNTIME;
        }
        train.batch_size = memfit_largest_batch(backend, train, data, is_cpu ? O.ranks : 1, avail, AUTO_BATCH_MAX);
        if (train.batch_size < 1) return too_big_for_memory(backend, &train, data, is_cpu ? O.ranks : 1, avail);
        ib_info("batch size auto: %d per device (largest that fits in %.1f GiB%s)", train.batch_size,
                avail / 1073741824.0, train.batch_size == AUTO_BATCH_MAX ? ", capped" : "");
    } else {
        train.batch_size = O.batch;
        if (avail > 0 && (uint64_t)memfit_rank_bytes(backend, &train, data) * (uint64_t)(is_cpu ? O.ranks : 1) > avail) {
            int fit = memfit_largest_batch(backend, train, data, is_cpu ? O.ranks : 1, avail, AUTO_BATCH_MAX);
            if (fit < 1) return too_big_for_memory(backend, &train, data, is_cpu ? O.ranks : 1, avail);
            fprintf(stderr,
                    "instbench measure: --batch-size %d needs about %.1f GiB but %.1f GiB is available; the largest "
                    "batch that fits is %d (or use --batch-size auto)\n",
                    O.batch, (double)memfit_rank_bytes(backend, &train, data) * (is_cpu ? O.ranks : 1) / 1073741824.0,
                    avail / 1073741824.0, fit);
            return IB_EXIT_USAGE;
        }
    }

    /* ---- output: a typo in --output must not cost a whole measurement ---- */
    if (rdv.rank == 0 && result_check_output(O.output, O.append, O.create_dirs, &err) != 0) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
    }

    if (g_stop) return interrupted_exit();

    bench_identity id;
    if (identity_resolve(O.instance_type, O.region, (O.market >= 0 ? markets[O.market] : NULL), O.count > 0 ? O.count : rdv.nnodes, &id, &err) != 0) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    if (g_stop) return interrupted_exit();
    /* Trainium and Inferentia (and other non-NVIDIA accelerators) are priced, but a result measured
     * on their host CPU would be ranked as if it were the type's training speed */
    const char *not_ours = id.type[0] ? instance_type_not_measurable(id.type) : NULL;
    if (not_ours) {
        fprintf(stderr, "instbench measure: %s: instbench does not measure it: %s\n", id.type, not_ours);
        return IB_EXIT_USAGE;
    }
    sagemaker_topology(&id, &rdv);
    if ((prc = check_identity_hardware(&id, backend, &sys, rdv.local_world_size, first_gpu)) != 0) return prc;
    warn_identity(&id, rdv.nnodes, sys.hostname);
    if (O.dry_run) {
        ib_train_config probe = train;   /* this process's first GPU, as the runner assigns them */
        probe.device = is_cpu ? 0 : first_gpu;
        return dry_run_report(backend, &probe, data, &rdv, workers, &id);
    }
    if (sys.loadavg1 > sys.vcpus)
        ib_warn("load average %.1f is above the %d vCPUs before starting: the machine looks shared; figures may be low",
                sys.loadavg1, sys.vcpus);

    /* ---- peak for MFU ---- */
    double peak = 0;
    char peak_source[512] = "";
    const char *cpu_bf16 = train.precision == IB_PREC_BF16 && backend->bf16_mode ? backend->bf16_mode() : NULL;
    const int bf16_emulated = cpu_bf16 && !strcmp(cpu_bf16, "emulated");
    if (cpu_bf16)
        ib_info("bf16 on this CPU: %s", !bf16_emulated
                                            ? "native (oneDNN bf16 matmuls)"
                                            : "emulated (no bf16 matmul in oneDNN on this CPU: bf16 operands widened to "
                                              "fp32 for fp32 GEMMs, fp32 accumulation, autocast's rounding)");
    ib_attention_library att_lib;
    const int have_att_lib = !is_cpu && backend_attention_library(backend, &train, &att_lib) == 0;
    if (!is_cpu) {
        const char *a = backend_attention(backend, &train);
        if (!strcmp(a, "cudnn"))
            ib_info("attention: cuDNN %s fused SDPA (%s)", att_lib.version, att_lib.path);
        else
            ib_info("attention: unfused (cuBLASLt matmuls around a softmax kernel)");
    }
    /* the GEMM library's own rate on this model's shapes, measured here: the CPU's peak is that
     * already; a GPU measures cuBLASLt's on its first device (backend.h gemm_rate) */
    double gemm = 0;
    int gemm_devices = 0;
    if (backend->peak_measure) {
        double t = 0;
        ib_error perr = {0};
        if (backend->peak_measure(&train, &g_stop, &t, peak_source, sizeof peak_source, &perr) == 0 && t > 0)
            peak = t * rdv.nnodes, gemm = t, gemm_devices = rdv.nnodes;
        else if (!g_stop)
            ib_warn("no %s peak (%s): MFU not computed", backend->name, perr.msg);
    } else if (sys.gpu_count > 0) {
        double t = 0;
        if (peak_gpu_lookup(sys.gpus[0].name, train.precision, &t, peak_source, sizeof peak_source) == 0)
            peak = t * rdv.world_size;
        else
            ib_warn("no %s peak known for '%s' in configs/gpu-peak-flops.json: MFU not computed",
                    backend_precision_name(train.precision), sys.gpus[0].name);
    }
    if (!is_cpu && backend->gemm_rate && !g_stop) {
        double t = 0;
        ib_error gerr = {0};
        ib_train_config probe = train;   /* this process's first GPU, as the runner assigns them */
        probe.device = rdv.local_rank > 0 && rdv.local_rank < backend->device_count() ? rdv.local_rank : 0;
        if (backend->gemm_rate(&probe, &g_stop, &t, &gerr) == 0 && t > 0) {
            gemm = t, gemm_devices = rdv.world_size;
            ib_info("cuBLASLt on this model's GEMM shapes: %.1f TFLOP/s on GPU %d", t, probe.device);
        } else if (!g_stop) {
            ib_warn("cuBLASLt's GEMM rate not measured (%s): the result carries no gemm_share", gerr.msg);
        }
    }
    if (g_stop) return interrupted_exit();

    /* ---- run ---- */
    /* cuda ranks: NCCL across this process's GPUs and, with a rendezvous, other processes (rdv) */
    bench_run_config rc = {.train = train, .backend = backend, .ranks = O.ranks, .data = data, .workers = workers,
                           .warmup = O.warmup, .steps = O.steps, .duration_s = O.duration_s,
                           .min_steps = DEFAULT_MIN_STEPS, .progress = ib_log_level >= 1 && util_isatty_stderr(),
                           .color = util_stderr_color(), .markers = ib_log_level >= 2, .stop = &g_stop, .rdv = &rdv};
    checkpoint_job ck;
    memset(&ck, 0, sizeof ck);
    if (rdv.rank == 0 && O.checkpoint == 0) {
        checkpoint_dir_choose(ck.dir, sizeof ck.dir, &ck.make_dir);
        rc.after_window = take_checkpoint, rc.after_user = &ck;
    }
    if (data == BENCH_DATA_HOST)
        ib_info("measuring %s (%s, batch %d x %d rank(s), host data from %d worker(s)/rank) on %s",
                train.model.name, backend_precision_name(train.precision), train.batch_size, O.ranks, workers,
                backend->name);
    else
        ib_info("measuring %s (%s, batch %d x %d rank(s), device data) on %s", train.model.name,
                backend_precision_name(train.precision), train.batch_size, O.ranks, backend->name);
    bench_result res;
    bench_cpu_sample load0, load1;
    sysinfo_cpu_sample(&load0);
    int run_rc = bench_run(&rc, &res, &err);
    sysinfo_cpu_sample(&load1);
    if (run_rc) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        return err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
    }
    if (res.interrupted || g_stop) return interrupted_exit();

    double others = -1, steal = -1;
    sysinfo_host_load(&load0, &load1, sys.vcpus, &others, &steal);

    /* ---- result ---- */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char ts[32];
    util_utc_iso8601(now.tv_sec, ts);
    bench_report rep = {
        .timestamp = ts, .identity = id, .sys = &sys, .backend = backend->name, .accelerator_count = is_cpu ? 0 : O.ranks,
        .workload = {.model = train.model, .precision = train.precision, .optim = train.optim,
                     .batch_size_per_device = train.batch_size, .data = data},
        .params = model_param_count(&train.model), .train_flops_per_sample = model_train_flops_per_sample(&train.model),
        .global_batch_size = train.batch_size * rdv.world_size, .topology = rdv, .m = &res, .others_share = others,
        .steal_share = steal, .peak_tflops = peak, .peak_source = peak > 0 ? peak_source : NULL, .cpu_bf16 = cpu_bf16,
        .gemm_tflops = gemm, .gemm_devices = gemm_devices,
        .attention = backend_attention(backend, &train), .attention_library = have_att_lib ? &att_lib : NULL,
        .cuda_graphs = is_cpu ? -1 : train.cuda_graphs,
        .hourly_cost_usd = O.hourly_cost, .checkpoint = &ck.result};
    result_warning warnings[RESULT_MAX_WARNINGS];
    for (size_t i = 0, n = result_warnings(&rep, warnings); i < n; i++) say_warning(&warnings[i], &res, peak_source);

    if (rdv.rank != 0) return IB_EXIT_OK;   /* only rank 0 writes */

    char *pretty = result_to_json(&rep, 1);
    char *line = result_to_json(&rep, 0);
    if (!pretty || !line) {
        free(pretty);
        free(line);
        fprintf(stderr, "instbench measure: out of memory\n");
        return IB_EXIT_RUNTIME;
    }
    /* A signal during the writes must not leave half of them done: hold it until they finish. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    int exit_code = IB_EXIT_OK;
    char path[4096] = "";
    int to_stdout = O.output && !strcmp(O.output, "-");
    int saved = to_stdout ? 0 : result_save(O.output, id.type, sys.hostname, &now, pretty, path, sizeof path, &err);
    if (saved != 0) {
        fprintf(stderr, "instbench measure: %s\n", err.msg);
        exit_code = IB_EXIT_RUNTIME;
        if (saved > 0) fprintf(stderr, "instbench measure: the result was saved to %s instead\n", path);
    }
    if (O.append && result_append_line(O.append, line, &err)) {
        fprintf(stderr, "instbench measure: %s%s%s\n", err.msg, saved == 0 && !to_stdout ? "; the result is in " : "",
                saved == 0 && !to_stdout ? path : "");
        exit_code = IB_EXIT_RUNTIME;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    int json = O.format >= 0 ? O.format == 1 : !util_isatty_stdout();
    if (to_stdout || json || saved < 0) {
        /* saved nowhere: stdout is the last place the measurement can go */
        fputs(pretty, stdout);
    } else {
        const char *nc = getenv("NO_COLOR");
        output_fit_set(output_terminal_width(stdout), NULL, 0);
        result_print_summary(stdout, &rep, util_isatty_stdout() && !(nc && nc[0]));
    }
    fflush(stdout);
    if (saved == 0 && !to_stdout) ib_info("result written to %s", path);
    free(pretty);
    free(line);
    return exit_code;
}
