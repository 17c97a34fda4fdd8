/* instbench measure: run the ViT training benchmark on this machine and write a result JSON
 * (schemas/result-v1.json).  Parses and checks the flags, then calls bench_measure
 * (src/bench/measure_run.c), which does the rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/backend.h"
#include "instbench/instance_type.h"
#include "instbench/aws.h"
#include "instbench/aws_ids.h"
#include "instbench/bench.h"
#include "instbench/model.h"
#include "instbench/prices.h" /* the catalogue the identity flags are checked against */
#include "instbench/rank.h"   /* RANK_MIN/MAX_USD_PER_HOUR: what rank accepts as a price */
#include "instbench/suggest.h"
#include "instbench/util.h"

enum { DEFAULT_BATCH = 128 };
static const double DEFAULT_DURATION_S = 30.0;
static const int DEFAULT_MIN_STEPS = 5;

/* What the flags say.  Choices are indexes into their names: backend, market and format -1 when
 * not given (auto), the others their default's index. */
static struct {
    model_cli model;
    int backend, precision, optimizer, data, market, format;
    int cuda_graphs; /* index into on_off: 0 on (default), 1 off */
    int batch;       /* 0 = auto */
    double lr;       /* < 0: optimizer default */
    int steps, have_steps, have_duration, model_given;
    double duration_s;
    int warmup;  /* -1 auto */
    int workers; /* 0 = default */
    int ranks;   /* 0 = auto: every local GPU on cuda, 1 on cpu */
    bench_rendezvous_flags rdv;
    const char *instance_type, *region;
    int count;          /* 0 = nodes */
    double hourly_cost; /* --hourly-cost, USD per node-hour; 0 = not given */
    const char *output, *append;
    int create_dirs;       /* --create-dirs: make missing directories of --output / --append */
    int identity_mismatch; /* --identity-mismatch ok: 0; not given: -1 (a contradiction refuses) */
    int dry_run;
    uint64_t seed;
    int checkpoint; /* index into on_off: 0 on (default), 1 off */
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
    if (errno || *end || !v[0] || s < 0 || strspn(v, "0123456789") != strlen(v)) /* "+5" too */
        return ib_error_set(err, IB_EXIT_USAGE, "--seed: '%s' is not a whole number >= 0", v);
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
    {"--batch-size", 0, ARG_INT, &O.batch, "N|auto",
     "per-device batch (default 128); auto = the largest that fits in memory", 1, 1 << 20, .word = "auto",
     .word_value = 0},
    {"--precision", 0, ARG_CHOICE, &O.precision, NULL, "bf16 (default: bf16 matmuls, fp32 master weights) or fp32",
     .choices = backend_precision_names},
    {"--optimizer", 0, ARG_CHOICE, &O.optimizer, NULL,
     "adam (default) or adamw (torch defaults: lr 1e-3, betas 0.9/0.999,\n"
     "eps 1e-8, weight decay 0 / 1e-2)",
     .choices = backend_optimizer_names},
    {"--lr", 0, ARG_DOUBLE, &O.lr, "X", "learning rate (default 1e-3)", 1e-12, 1e3},
    {"--data", 0, ARG_CHOICE, &O.data, NULL,
     "host (default): fresh random images made by CPU worker threads every\n"
     "step and handed to the backend, as PyTorch's FakeDataset;\n"
     "device: inputs made once where the model runs (pure compute)",
     .choices = data_modes},
    {"--workers", 0, ARG_INT, &O.workers, "N", "data-pipeline threads per rank (default: vCPUs / local ranks)", 1,
     1024},
    {"--cuda-graphs", 0, ARG_CHOICE, &O.cuda_graphs, NULL,
     "on (default): a one-rank CUDA run replays forward and\n"
     "backward as one CUDA graph from its second step (no per-kernel launch cost);\n"
     "off: every kernel launched each step.  Data-parallel runs launch eagerly\n"
     "(the gradient buckets' hooks); the result records which ran",
     .choices = on_off},
    {"--seed", 0, ARG_FN, &O.seed, "N", "seed of the weights and data (default 0)", .fn = take_seed},
    {"--steps", 0, ARG_INT, &O.steps, "N", "timed steps", 1, 100000000, .given = &O.have_steps, .group = "measurement"},
    {"--duration", 0, ARG_DOUBLE, &O.duration_s, "S", "timed window in seconds (default 30, at least 5 steps)", 1e-3,
     7 * 86400.0, .want = "seconds", .given = &O.have_duration},
    {"--warmup", 0, ARG_INT, &O.warmup, "N", "warm-up steps (default: until the step time settles, at least 3)", 0,
     100000},
    {"--ranks", 0, ARG_INT, &O.ranks, "N",
     "data-parallel ranks in this process (CPU: the cores are split\n"
     "between them; CUDA: one GPU each, NCCL); gradients averaged\n"
     "every step. Default: every local GPU on cuda (one per process\n"
     "under a per-GPU launcher), 1 on cpu",
     1, 256, .group = "topology"},
    {"--nnodes", 0, ARG_INT, &O.rdv.nnodes, "N",
     "multi-node rendezvous, recorded in the result (without flags,\n"
     "the environment of torchrun, a PyTorchJob or Volcano pod\n"
     "(WORLD_SIZE/RANK/MASTER_*), Kubeflow Trainer v2 (PET_*) or srun\n"
     "(SLURM_*) is read: docs/usage.md, Launchers)",
     1, 100000},
    {"--node-rank", 0, ARG_INT, &O.rdv.node_rank, "N", "this node's rank, 0 to nnodes-1", 0, 99999},
    {"--master-addr", 0, ARG_STRING, &O.rdv.master_addr, "HOST", "where rank 0 listens", .check = check_host},
    {"--master-port", 0, ARG_INT, &O.rdv.master_port, "N", "its port", 1, 65535},
    {"--rendezvous-timeout", 0, ARG_DOUBLE, &O.rdv.timeout_s, "S",
     "how long the processes of a multi-process job wait for each other\n"
     "at the rendezvous, in seconds (default 600); past it a process\n"
     "that never came fails the job (exit 1)",
     1, 86400.0, .want = "seconds"},
    {"--instance-type", 0, ARG_STRING, &O.instance_type, "T",
     "e.g. g5.xlarge (a type of a family the price snapshot covers\n"
     "must be one of its sizes; other families, e.g. c5.large, as given)",
     .check = names_instance_type_size_problem, .suggest = prices_suggest_type,
     .group = "identity (read from EC2 instance metadata, IMDSv2, unless all three are given)"},
    {"--region", 0, ARG_STRING, &O.region, "R", "e.g. us-east-1: an AWS region instbench knows",
     .check = names_region_problem, .suggest = prices_suggest_region},
    {"--market", 0, ARG_CHOICE, &O.market, NULL, "the market this instance runs on", .choices = markets},
    {"--count", 0, ARG_INT, &O.count, "N", "nodes in the cluster this result stands for (default: nodes)", 1, 100000},
    {"--identity-mismatch", 0, ARG_CHOICE, &O.identity_mismatch, NULL,
     "ok: record the result under --instance-type although the type's\n"
     "accelerators (kind, count) or vCPUs, as the price snapshot states\n"
     "them, differ from this run's; the result says so\n"
     "(instance.identity_mismatch).  Without it such a run is refused\n"
     "(exit 2) before measuring.  An identity from instance metadata is\n"
     "this machine's own and is never refused",
     .choices = mismatch_ok},
    /* The bounds rank accepts: a price it would refuse must not be recorded either. */
    {"--hourly-cost", 0, ARG_DOUBLE, &O.hourly_cost, "USD",
     "what one node of this configuration costs per hour, in US dollars\n"
     "(the whole machine with all its GPUs, not per GPU); recorded in\n"
     "the result for the run's market (--market, else on-demand), and\n"
     "`rank` prices the result with it: nodes x USD per hour",
     RANK_MIN_USD_PER_HOUR, RANK_MAX_USD_PER_HOUR, .want = "a price in US dollars per node-hour",
     .group = "price (for machines AWS cannot price: your own hardware, another cloud, a discount)"},
    {"--output", 'o', ARG_STRING, &O.output, "FILE",
     "result file, replaced if it exists (default: a new file\n"
     "./instbench-results/<instance type or hostname>-<random>-<UTC time\n"
     "to the millisecond>.json, never overwriting); - writes the JSON to\n"
     "stdout; s3://BUCKET/KEY uploads it (a KEY ending in / gets the\n"
     "generated name); a presigned PUT URL (instbench presign) uploads it\n"
     "without credentials.  Checked before the run; if the write still\n"
     "fails, the result is saved to ./instbench-result-*.json (else\n"
     "$TMPDIR; an upload: as without --output) and the exit status is 1",
     .group = "output"},
    {"--append", 0, ARG_STRING, &O.append, "FILE", "also append the result as one line to FILE (JSON Lines)",
     .check = args_check_file},
    {"--create-dirs", 0, ARG_FLAG, &O.create_dirs, NULL,
     "create the missing directories of --output and --append\n"
     "(without it a missing one is refused, exit 2, as cp does;\n"
     "./instbench-results/ is always made when a result goes there)"},
    {"--format", 0, ARG_CHOICE, &O.format, NULL, "stdout: table (default on a terminal) or json", .choices = formats},
    {"--dry-run", 0, ARG_FLAG, &O.dry_run, NULL,
     "check everything a run would check (flags, backend, whether the GPUs\n"
     "can run the precision, memory for the batch, the output files, the\n"
     "identity, the rendezvous settings), print\n"
     "what would run and how long, estimated from one timed training step\n"
     "at a small batch (seconds), and exit without measuring"},
    {"--checkpoint", 0, ARG_CHOICE, &O.checkpoint, NULL,
     "on (default): after the timed window, time one checkpoint of\n"
     "the state a training job saves (fp32 weights, Adam's two moments,\n"
     "the bf16 copy under bf16; from a GPU with the copy to the host):\n"
     "written with fsync, read back, removed (the result's checkpoint;\n"
     "rank's measured checkpoint cost).  Skipped with a warning when\n"
     "the disk lacks the room; off: not timed",
     .choices = on_off, .group = "checkpoint"},
    {"--checkpoint-dir", 0, ARG_STRING, &O.checkpoint_dir, "DIR",
     "where the checkpoint is written (default: the result file's\n"
     "directory, ./instbench-results/ for the default result; for\n"
     "stdout or S3, ./instbench-results/ when it exists, else .)"},
    {0},
};

const arg_command cmd_measure_args = {
    "measure",
    "[options]",
    "Runs the ViT training benchmark here (warm-up, then a timed window) and writes a result\n"
    "JSON (schema instbench.result/v1) that `instbench rank` reads.",
    "Progress goes to stderr when it is a terminal (NO_COLOR honoured).\n"
    "Interrupted (Ctrl-C, SIGTERM): stops at the next step boundary, nothing is written, exit 130 / 143;\n"
    "a second Ctrl-C stops at once.\n",
    measure_specs,
    NULL,
    .examples =
        (const arg_example[]){
            {"the default run on this machine (every GPU; the result goes to ./instbench-results/)",
             "instbench measure"},
            {"a quick CPU run of a small model",
             "instbench measure --backend cpu --model vit_tiny_patch16_224 --batch-size 16 --duration 10"},
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
            return args_usage_error(&cmd_measure_args,
                                    "--instance-type: '%s' is not one of the sizes the price "
                                    "snapshot lists for its family (%s)%s",
                                    O.instance_type, list, args_did_you_mean(near, dym, sizeof dym));
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
    if (O.have_steps && O.have_duration)
        return args_usage_error(&cmd_measure_args, "--steps and --duration exclude each other");
    if (!O.have_steps && !O.have_duration) O.duration_s = DEFAULT_DURATION_S;
    if (O.checkpoint_dir && O.checkpoint == 1)
        return args_usage_error(&cmd_measure_args, "--checkpoint-dir with --checkpoint off: nothing is written there");
    ib_error err = {0};
    if (O.checkpoint_dir && checkpoint_check_dir(O.checkpoint_dir, &err))
        return args_usage_error(&cmd_measure_args, "%s", err.msg);
    return 0;
}

int cmd_measure_check_args(int argc, char **argv, int *gpu_bf16)
{
    int rc = parse_args(argc, argv);
    if (rc) return rc;
    *gpu_bf16 = O.precision == IB_PREC_BF16 && (O.backend < 0 || strcmp(backend_names[O.backend], "cpu") != 0);
    vit_config model;
    memset(&model, 0, sizeof model);
    return bench_measure_model(&O.model, &model) != 0 ? IB_EXIT_USAGE : 0;
}

int cmd_measure_value_follows(const char *a) { return args_value_follows(&cmd_measure_args, a); }

int cmd_measure(int argc, char **argv)
{
    int rc = parse_args(argc, argv);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    bench_measure_value_follows(cmd_measure_value_follows);
    const bench_measure_options o = {.backend = O.backend >= 0 ? backend_find(backend_names[O.backend]) : NULL,
                                     .model = O.model,
                                     .precision = (ib_precision)O.precision,
                                     .optimizer = (ib_optimizer)O.optimizer,
                                     .lr = O.lr,
                                     .seed = O.seed,
                                     .data = (bench_data_mode)O.data,
                                     .workers = O.workers,
                                     .cuda_graphs = O.cuda_graphs == 0,
                                     .batch = O.batch,
                                     .steps = O.have_steps ? O.steps : 0,
                                     .duration_s = O.duration_s,
                                     .min_steps = DEFAULT_MIN_STEPS,
                                     .warmup = O.warmup,
                                     .ranks = O.ranks,
                                     .rdv = O.rdv,
                                     .instance_type = O.instance_type,
                                     .region = O.region,
                                     .market = O.market >= 0 ? markets[O.market] : NULL,
                                     .count = O.count,
                                     .hourly_cost = O.hourly_cost,
                                     .output = O.output,
                                     .append = O.append,
                                     .create_dirs = O.create_dirs,
                                     .identity_mismatch_ok = O.identity_mismatch == 0,
                                     .dry_run = O.dry_run,
                                     .checkpoint = O.checkpoint == 0,
                                     .checkpoint_dir = O.checkpoint_dir,
                                     .format = O.format};
    return bench_measure(&o);
}
