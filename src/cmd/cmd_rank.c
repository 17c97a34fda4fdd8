/* cmd/cmd_rank.c: `instbench rank` — result files x prices -> configurations ranked by samples per
 * dollar (or throughput, cost, time), as a table, JSON or CSV, with an optional SVG chart.
 * Flags are parsed here and rank's steps called in order; the work is rank/'s (pure but for
 * rank/ask.c, which asks AWS through prices/) and output/'s (rendering). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/names.h"
#include "instbench/prices.h"
#include "instbench/rank.h"
#include "instbench/suggest.h"
#include "instbench/util.h"

typedef struct rank_args {
    char **paths;
    int n_paths;
    const char *workload, *prices, *region, *plot, *az, *out_path;
    const char *format;
    double samples, epochs, dataset_size;
    int top;
    int market, spot_mode, sort, format_i, pareto, follow, spot_given, wide, explain; /* choice indexes, flags */
    int create_dirs;                            /* --create-dirs: make -o's and --plot's missing directories */
    int spot_risk;                              /* index into on_off: 0 on, 1 off */
    int checkpoint_given;                       /* --checkpoint-cost */
    double restart_minutes, checkpoint_minutes; /* NAN: not given */
    args_list columns;
    args_list types;               /* --instance-types: names and patterns */
    args_list placement_pool;      /* --placement-pool: types asked with each row's own */
    rank_user_price *prices_given; /* --price flags, in order */
    size_t n_prices_given;
    rank_options opt;
    rank_load_options load;
    int block_hours, plan, term, payment;      /* the markets bought ahead: --block-duration, --plan, ... */
    int plan_given, term_given, payment_given; /* given at all: --plan compute is the default's index, 0 */
    const char *versus;                        /* --versus CONFIG */
    int plan_utilisation_given;                /* --plan-utilisation */
} rank_args;

static rank_args A;

/* --price NAME[:market]=USD, repeatable; two prices for one machine and market is a typo more
 * often than an intent. */
static int take_price(void *dst, const char *flag, const char *v, ib_error *err)
{
    rank_args *a = dst;
    rank_user_price p, *grown;
    char why[256];
    if (rank_parse_user_price(v, &p, why, sizeof why) != 0) return ib_error_set(err, IB_EXIT_USAGE, "%s", why);
    for (size_t k = 0; k < a->n_prices_given; k++)
        if (a->prices_given[k].market == p.market && !strcasecmp(a->prices_given[k].name, p.name))
            return ib_error_set(err, IB_EXIT_USAGE, "--price %s (%s) is given twice", p.name,
                                rank_market_name(p.market));
    if (!(grown = realloc(a->prices_given, (a->n_prices_given + 1) * sizeof *grown)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    a->prices_given = grown;
    a->prices_given[a->n_prices_given++] = p;
    return 0;
}

/* --interruption-rate X | Nh | Nd (spot_risk.c says what each means). */
static int take_rate(void *dst, const char *flag, const char *v, ib_error *err)
{
    (void)flag;
    char why[256];
    if (rank_spot_parse_rate(v, &((rank_args *)dst)->opt.spot.rate_per_node_hour, why, sizeof why) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "%s", why);
    return 0;
}

/* --instance-types: an instance type or hostname as --price names machines, or a pattern. */
static const char *type_filter_problem(const char *v)
{
    if (strlen(v) >= 72) return "is too long for an instance type or hostname";
    for (const char *p = v; *p;) {
        size_t k = strchr("*?[]!", *p) ? 1 : util_utf8_name_char(p); /* a hostname may be "büro" */
        if (!k) return "is not an instance type like g5.xlarge, a hostname or a pattern like 'g5.*'";
        p += k;
    }
    return NULL;
}

static const char *const markets[] = {"on-demand", "spot", "both", "capacity-block", "savings-plan", "all", NULL};
static const int market_sets[] = {RANK_MARKETS_ON_DEMAND, RANK_MARKETS_SPOT, RANK_MARKETS_BOTH,
                                  RANK_MARKETS_BLOCK,     RANK_MARKETS_PLAN, RANK_MARKETS_ALL};
static const char *const plan_names[] = {"compute", "ec2-instance", NULL};
static const char *const plan_api[] = {"Compute", "EC2Instance"}, *const plan_labels[] = {"Compute", "EC2 Instance"};
static const char *const term_names[] = {"1y", "3y", NULL};
static const char *const payment_names[] = {"none", "partial", "all", NULL};
static const char *const payment_api[] = {"No Upfront", "Partial Upfront", "All Upfront"};

static int block_duration_flag(void *dst, const char *flag, const char *value, ib_error *err)
{
    (void)dst;
    const char *why = markets_block_duration_problem(value, &A.block_hours);
    return why ? ib_error_set(err, IB_EXIT_USAGE, "%s %s %s", flag, value, why) : 0;
}
static const char *const spot_modes[] = {"lowest", "median", "az", NULL}; /* rank_spot_mode */
static const char *const formats[] = {"table", "json", "csv", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const double MAX_HOURS = 1e9, MAX_USD = 1e15, POSITIVE = 1e-12;
#define DEFAULT_RESULTS "instbench-results" /* measure's default output directory */

static const arg_spec rank_specs[] = {
    {"--follow", 0, ARG_FLAG, &A.follow, NULL,
     "follow symbolic links to directories met while walking RESULT directories\n"
     "(default: skipped with a note; a link given as RESULT is always followed)",
     .group = "inputs"},
    {"--workload", 0, ARG_STRING, &A.workload, "FP",
     "rank the results whose workload fingerprint starts with FP, or whose model\n"
     "is FP (results of different workloads are never ranked together; default:\n"
     "the group with the most results; the groups found are listed on stderr)",
     .group = "workload"},
    {"--instance-types", 0, ARG_LIST, &A.types, "LIST",
     "rank only these instance types: names or patterns such as 'g5.*'\n"
     "(a machine without one by its hostname, as --price names it);\n"
     "comma-separated, repeatable; one that matches no configuration is a\n"
     "usage error naming the nearest",
     .check = type_filter_problem},
    {"--source", 0, ARG_STRING, &A.prices, "SRC",
     "auto|live|cache|snapshot, or an instbench.prices/v1 FILE (default auto)", .group = "prices",
     .old_name = "--prices"},
    {"--region", 0, ARG_STRING, &A.region, "REGION",
     "price every configuration in REGION (default: each result's own region)", .check = names_region_problem,
     .suggest = prices_suggest_region},
    {"--market", 0, ARG_CHOICE, &A.market, NULL,
     "default both (on-demand and spot); capacity-block and savings-plan\n"
     "price the configuration from live quotes (a Capacity Block offering for\n"
     "its nodes, a Savings Plan rate); all: the four.  SageMaker ml.* types:\n"
     "on-demand only.  instbench never purchases a block or a plan",
     .choices = markets},
    {"--block-duration", 0, ARG_FN, NULL, "DAYS",
     "capacity-block: the block's length, 1d (default) to 182d as AWS sells\n"
     "them; a target longer than one block takes several, each paid whole",
     .fn = block_duration_flag},
    {"--plan", 0, ARG_CHOICE, &A.plan, NULL, "savings-plan: compute (default) or ec2-instance", .choices = plan_names,
     .given = &A.plan_given},
    {"--term", 0, ARG_CHOICE, &A.term, NULL, "savings-plan: 1y (default) or 3y", .choices = term_names,
     .given = &A.term_given},
    {"--payment", 0, ARG_CHOICE, &A.payment, NULL, "savings-plan: none (default), partial or all upfront",
     .choices = payment_names, .given = &A.payment_given},
    {"--plan-utilisation", 0, ARG_DOUBLE, &A.opt.plan_utilisation, "F",
     "savings-plan: the share (0 to 1) of the term's hours the target does\n"
     "not train that the rest of your fleet keeps the plan busy (default 0:\n"
     "nothing else uses it, so COST to a target is the whole term's\n"
     "commitment; 1: only the target's own hours)",
     0, 1, .given = &A.plan_utilisation_given},
    {"--spot-price", 0, ARG_CHOICE, &A.spot_mode, NULL, "spot price across the region's AZs (default lowest)",
     .choices = spot_modes, .given = &A.spot_given},
    {"--include-local-zones", 0, ARG_FLAG, &A.opt.include_local_zones, NULL,
     "let Local Zones and Wavelength Zones (opt-in per account) count for\n"
     "--spot-price lowest and median (default: the region's Availability Zones)"},
    {"--az", 0, ARG_STRING, &A.az, "ZONE",
     "price spot in this AZ (implies --spot-price az): a zone ID (use1-az2)\n"
     "or a zone name (us-east-1a).  Which ID a name stands for differs\n"
     "per AWS account: live prices map it through the account's\n"
     "DescribeAvailabilityZones, a result measured in that zone records\n"
     "its ID; snapshot prices name zones by ID only",
     .check = names_zone_problem},
    {"--placement-pool", 0, ARG_LIST, &A.placement_pool, "TYPES",
     "the instance types you would accept besides each spot row's own,\n"
     "asked together for its placement score (AWS: with one or two types\n"
     "the score is always low; it recommends at least three), e.g.\n"
     "g5.2xlarge,g6.xlarge,g6.2xlarge",
     .check = names_instance_type_size_problem},
    {"--price", 0, ARG_FN, &A, "NAME=USD",
     "your price per node-hour for NAME: an instance type, or the hostname of\n"
     "results without one (own hardware, another cloud); NAME:spot=USD or\n"
     "NAME:on-demand=USD sets one market, plain NAME=USD the on-demand price.\n"
     "Repeatable.  Precedence: --price, then the price a result recorded\n"
     "(measure --hourly-cost), then AWS's; such rows show price source user",
     .fn = take_price},
    /* a count of samples: at least one (an epoch count may be a fraction) */
    {"--samples", 0, ARG_DOUBLE, &A.samples, "N", "samples to process", 1, 1e18,
     .group = "target (adds time and cost columns)"},
    {"--epochs", 0, ARG_DOUBLE, &A.epochs, "E", "with --dataset-size: the same as --samples E*S", POSITIVE, 1e9},
    {"--dataset-size", 0, ARG_DOUBLE, &A.dataset_size, "S", "samples in one epoch", 1, MAX_USD},
    {"--spot-risk", 0, ARG_CHOICE, &A.spot_risk, NULL,
     "on (default): spot rows rank by their interruption-aware figures (the\n"
     "Advisor's interruption bucket as a rate per node, N nodes stop N times as\n"
     "often, checkpoints and restarts cost time: EFF. SAMPLES/$, BREAK-EVEN);\n"
     "off: spot ranks at its raw price as if never interrupted",
     .choices = on_off, .group = "spot risk (docs/design.md states the model)"},
    {"--interruption-rate", 0, ARG_FN, &A, "RATE",
     "interruptions per node-hour for every spot row instead of the Advisor\n"
     "bucket's: a number (0.002), or Nh / Nd for once per N hours / days\n"
     "(500h = 0.002; 20d = once per 480 hours)",
     .fn = take_rate},
    {"--checkpoint-cost", 0, ARG_DOUBLE, &A.opt.spot.checkpoint_s, "SECONDS",
     "seconds one checkpoint takes (default: the model's fp32 weights and\n"
     "Adam moments, + a bf16 copy, at 125 MB/s; 60 s when the results lack the\n"
     "parameter count)",
     RANK_SPOT_MIN_CHECKPOINT_S, RANK_SPOT_MAX_CHECKPOINT_S, .given = &A.checkpoint_given},
    {"--restart-minutes", 0, ARG_DOUBLE, &A.restart_minutes, "MINUTES",
     "minutes from an interruption to training again: new instance, boot,\n"
     "checkpoint loaded (default 10)",
     0, 10080},
    {"--versus", 0, ARG_STRING, &A.versus, "CONFIG",
     "the row BREAK-EVEN is against: a configuration as rank prints it\n"
     "('1 x g5.12xlarge on-demand') or as sweep takes it (g5.12xlarge,\n"
     "4xg5.xlarge:on-demand; no market: on-demand), not spot (default: the best\n"
     "on-demand row)"},
    {"--checkpoint-every", 0, ARG_DOUBLE, &A.checkpoint_minutes, "MINUTES",
     "checkpoint interval (default: Daly's optimum for each row)", POSITIVE, 1e6},
    {"--deadline", 0, ARG_DOUBLE, &A.opt.deadline_hours, "HOURS",
     "drop configurations that reach the target later than this from now\n"
     "(spot: the expected time, interruptions included; capacity-block:\n"
     "its wait until the block starts too)",
     POSITIVE, MAX_HOURS, .group = "constraints and order"},
    {"--budget", 0, ARG_DOUBLE, &A.opt.budget_usd, "USD",
     "drop configurations costing more than this to the target (spot: the\n"
     "expected cost; savings-plan: COST, the commitment owed included)",
     POSITIVE, MAX_USD},
    {"--max-hourly", 0, ARG_DOUBLE, &A.opt.max_hourly_usd, "USD",
     "drop configurations costing more than this per hour (all nodes)", POSITIVE, MAX_HOURS},
    {"--pareto", 0, ARG_FLAG, &A.pareto, NULL, "only configurations not beaten on both speed and cost per sample"},
    {"--sort", 0, ARG_CHOICE, &A.sort, "KEY", "samples-per-dollar|throughput|cost|time (default samples-per-dollar)",
     .choices = rank_sort_names},
    {"--top", 0, ARG_INT, &A.top, "N", "show the best N rows only", 1, 1e9},
    {"--format", 0, ARG_CHOICE, &A.format_i, NULL,
     "default: table on a terminal, json otherwise; with -o FILE\n"
     "the file's extension (.csv, .txt for the table), else json",
     .choices = formats, .group = "output"},
    {"--explain", 0, ARG_FLAG, &A.explain, NULL,
     "the table's legend in full: how the markets bought ahead, spot risk\n"
     "and placement figures are made, and every spot row's break-even (default: a\n"
     "few lines; -v too)"},
    {"--plot", 0, ARG_STRING, &A.plot, "FILE.svg",
     "also write a chart: samples/s against $/h of the rows ranked, the\n"
     "Pareto frontier marked (with --pareto: the frontier's points only)"},
    {"--output", 'o', ARG_STRING, &A.out_path, "FILE",
     "write the table, JSON or CSV to FILE instead of stdout (whole or not\n"
     "at all: a failed run leaves an existing FILE as it was)",
     .check = args_check_file},
    {"--create-dirs", 0, ARG_FLAG, &A.create_dirs, NULL,
     "create the missing directories of -o and --plot (without it: refused,\n"
     "exit 2)"},
    ARGS_TABLE_SPECS(&A.wide, &A.columns,
                     "the same names in the table, CSV header\n"
                     "and JSON rows, and --columns applies to all three: rank, configuration,\n"
                     "instance_type, host, nodes, measured_nodes, extrapolated, market, region,\n"
                     "model, precision, batch_size_per_device, data, backend, attention,\n"
                     "fingerprint, accelerators, accelerator, accelerators_per_node,\n"
                     "accelerators_total, usd_per_hour, usd_per_hour_per_node, samples_per_second,\n"
                     "samples_per_dollar, effective_samples_per_dollar, target_samples,\n"
                     "hours_to_target, cost_to_target_usd, runs, samples_per_second_min,\n"
                     "samples_per_second_max, cv, busbw_gbps, gemm_share, network, socket_on_efa,\n"
                     "warnings, identity_mismatch, spot_az,\n"
                     "spot_zone_type, interruption_bucket, interruption_label, placement_score,\n"
                     "placement_target_capacity, placement_instance_types, placement_zone,\n"
                     "spot_rate_per_node_hour, spot_rate_source, spot_job_rate_per_hour,\n"
                     "checkpoint_cost_s, checkpoint_cost_source, restart_s,\n"
                     "checkpoint_interval_s, spot_efficiency, effective_samples_per_second,\n"
                     "expected_hours_to_target, p90_hours_to_target,\n"
                     "expected_cost_to_target_usd, p90_cost_to_target_usd, p_no_interruption,\n"
                     "breakeven_rate_per_node_hour, breakeven_against, blocks_to_target,\n"
                     "block_hours, block_fee_usd, wait_hours, plan_commitment_usd_per_hour,\n"
                     "plan_term_usd, plan_break_even_on_demand, plan_break_even_spot,\n"
                     "price_source, price_as_of_utc, pareto, unpriced_reason\n"
                     "(default: the table shows what fits; CSV and JSON every column)"),
    {0},
};

const arg_command cmd_rank_args = {
    "rank",
    "[options] [RESULT...]",
    "Ranks measured configurations (nodes x instance type x market) by training samples per dollar.\n\n"
    "RESULT: result files from `instbench measure`, directories (searched recursively for *.json and\n"
    "        *.jsonl), glob patterns, .jsonl files (one result per line), - for stdin, or\n"
    "        s3://BUCKET/PREFIX/ (the *.json and *.jsonl objects under it, read into memory, at most\n"
    "        64 MiB each; AWS credentials as for prices); none: ./instbench-results/, where measure\n"
    "        writes by default.  Files and objects ending in .gz (r.json.gz, runs.jsonl.gz) are\n"
    "        gzip-compressed: the size caps apply to what they decompress to.\n"
    "        Invalid or foreign files are skipped with a reason on stderr.  Each result counts once:\n"
    "        a file, directory or run reached again is ignored (\"N duplicates ignored\").",
    "samples per dollar = samples/s x 3600 / (nodes x $/h per node); time = samples / (samples/s);\n"
    "cost = time x $/h.  Repeated runs of one configuration count once, at their median samples/s.\n"
    "Spot rows rank by effective samples per dollar: samples/s x T_s/T_w (Daly 2006: N nodes\n"
    "interrupted N times as often as one, work since the last checkpoint lost, a restart each time)\n"
    "x 3600 / $/h (with a target, the job's: target / expected cost); BREAK-EVEN is the per-node\n"
    "interruption rate at which a spot row falls to the best on-demand row, or the row --versus\n"
    "names (docs/design.md states the model and its defaults).\n"
    "Marks after a configuration: ^ extrapolated (measured on fewer nodes than it has: samples/s\n"
    "scaled linearly, no communication cost assumed; a real run of those nodes replaces it),\n"
    "! identity mismatch (the type contradicts the hardware), ~ runs that disagree by over 10%\n"
    "or carry warnings; JSON and CSV carry measured_nodes, extrapolated, identity_mismatch, runs,\n"
    "samples_per_second_min/max, cv and warnings for every row.\n"
    "Nothing ranked (no usable results, nothing priced) exits 1 with a line saying how to get a\n"
    "priced row; a --region, --az or --instance-types that names nothing exits 2 with the nearest.\n",
    rank_specs,
    "RESULT",
    .examples =
        (const arg_example[]){
            {"everything measure wrote here (./instbench-results/), priced on both markets", "instbench rank"},
            {"a spreadsheet: every column, which rows are extrapolated or noisy included",
             "instbench rank instbench-results/ -o rank.csv"},
            {"time and cost of 300 epochs of ImageNet-1k, within a $5,000 budget",
             "instbench rank instbench-results/ --epochs 300 --dataset-size 1281167 --budget 5000"},
            {"your own machine at your price next to AWS's, with a chart",
             "instbench rank instbench-results/ --price workstation=0.90 --plot rank.svg"},
            {"spot if a node is reclaimed once every 100 hours and a checkpoint takes 2 minutes",
             "instbench rank instbench-results/ --interruption-rate 100h --checkpoint-cost 120 --samples 1e9 --wide"},
            {0}},
};

/* -o without --format: the file's extension says which (rank.csv, rank.txt), else JSON. */
static const char *format_of_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".csv")) return "csv";
    if (dot && !strcasecmp(dot, ".txt")) return "table";
    return "json";
}

/* --columns: every name a column of rank_columns, or a name from before version 2 (replaced by
 * its key). */
static int check_columns(const arg_command *c, args_list *cols)
{
    for (size_t i = 0; i < cols->n; i++) {
        const rank_column *col = rank_column_find(cols->v[i]);
        if (col) {
            /* an older name becomes the key, which every format and the table's fitting use */
            if (strcmp(col->key, cols->v[i]) && args_column_renamed(cols, i, col->key)) return IB_EXIT_RUNTIME;
            continue;
        }
        const char *keys[RANK_MAX_COLUMNS];
        size_t n = 0;
        for (const rank_column *k = rank_columns; k->key && n < RANK_MAX_COLUMNS; k++) keys[n++] = k->key;
        char dym[128];
        return args_usage_error(c, "--columns: '%s' is not a column%s", cols->v[i],
                                args_did_you_mean(suggest_closest(cols->v[i], keys, n), dym, sizeof dym));
    }
    return 0;
}

static int parse_args(int argc, char **argv, rank_args *a)
{
    memset(&A, 0, sizeof A);
    rank_options_init(&A.opt);
    A.market = 2; /* both */
    A.format_i = -1;
    A.restart_minutes = A.checkpoint_minutes = NAN;
    if (!(A.paths = calloc((size_t)argc, sizeof *A.paths))) return IB_EXIT_RUNTIME;
    int rc = args_parse(&cmd_rank_args, argc, argv, A.paths, &A.n_paths);
    *a = A;
    if (rc) return rc;
    const arg_command *c = &cmd_rank_args;
    /* a table written to a file is not cut to the terminal's width */
    if ((rc = check_columns(c, &a->columns)) || (rc = args_table_fit(c, a->wide || a->out_path, &a->columns, NULL)))
        return rc;
    rank_options *o = &a->opt;
    o->markets = market_sets[a->market];
    o->block_hours = a->block_hours ? a->block_hours : 24;
    o->plan_term_hours = a->term == 1 ? 26280 : 8760;
    static char plan_label[64];
    snprintf(plan_label, sizeof plan_label, "%s %s %s", plan_labels[a->plan], term_names[a->term],
             payment_api[a->payment]);
    o->plan_label = plan_label;
    o->spot_mode = (rank_spot_mode)a->spot_mode;
    o->sort = (rank_sort_key)a->sort;
    o->pareto_only = a->pareto;
    a->load.follow = a->follow;
    if (!a->n_paths) {
        /* measure's own default output: `measure` then `rank` needs no path */
        struct stat st;
        if (stat(DEFAULT_RESULTS, &st) != 0 || !S_ISDIR(st.st_mode))
            return args_usage_error(c,
                                    "no result files given, and ./%s/ (where measure writes by default) does "
                                    "not exist here",
                                    DEFAULT_RESULTS);
        a->paths[a->n_paths++] = (char *)DEFAULT_RESULTS;
    }
    ib_error perr;
    if (rank_s3_check_inputs(a->paths, (size_t)a->n_paths, &perr) != 0) return args_usage_error(c, "%s", perr.msg);
    if (a->az && strlen(a->az) >= sizeof o->az) return args_usage_error(c, "--az '%s' is too long", a->az);
    if (a->az) strcpy(o->az, a->az);
    if (a->samples > 0 && (a->epochs > 0 || a->dataset_size > 0))
        return args_usage_error(c, "give either --samples or --epochs with --dataset-size, not both");
    if ((a->epochs > 0) != (a->dataset_size > 0)) return args_usage_error(c, "--epochs and --dataset-size go together");
    o->target_samples = a->samples > 0 ? a->samples : a->epochs * a->dataset_size;
    if (o->target_samples > 1e18) return args_usage_error(c, "the target (--epochs x --dataset-size) is too large");
    /* --samples' own floor: the product of a fraction of an epoch and a small dataset may be under it */
    if (a->epochs > 0 && o->target_samples < 1)
        return args_usage_error(c, "the target (--epochs x --dataset-size) is below one sample: %g", o->target_samples);
    if (!(o->target_samples > 0) && (!isnan(o->deadline_hours) || !isnan(o->budget_usd)))
        return args_usage_error(c, "--deadline and --budget need a target: --samples N or --epochs E --dataset-size S");
    if (o->az[0]) {
        if (a->spot_given && o->spot_mode != RANK_SPOT_AZ)
            return args_usage_error(c, "--az goes with --spot-price az, not another mode");
        o->spot_mode = RANK_SPOT_AZ;
    } else if (o->spot_mode == RANK_SPOT_AZ) {
        return args_usage_error(c, "--spot-price az needs --az NAME");
    }
    if (a->block_hours && !(o->markets & RANK_MARKETS_BLOCK))
        return args_usage_error(c, "--block-duration prices a Capacity Block: it needs --market capacity-block or all");
    if (a->plan_utilisation_given && !(o->markets & RANK_MARKETS_PLAN))
        return args_usage_error(c, "--plan-utilisation prices a Savings Plan: it needs --market savings-plan or all");
    if ((a->plan_given || a->term_given || a->payment_given) && !(o->markets & RANK_MARKETS_PLAN))
        return args_usage_error(c, "%s prices a Savings Plan: it needs --market savings-plan or all",
                                a->plan_given   ? "--plan"
                                : a->term_given ? "--term"
                                                : "--payment");
    a->format = a->format_i >= 0       ? formats[a->format_i]
                : a->out_path          ? format_of_path(a->out_path)
                : util_isatty_stdout() ? "table"
                                       : "json";
    o->spot.off = a->spot_risk == 1;
    if (!isnan(a->restart_minutes)) o->spot.restart_s = a->restart_minutes * 60;
    if (!isnan(a->checkpoint_minutes)) o->spot.interval_s = a->checkpoint_minutes * 60;
    if (a->checkpoint_given) o->spot.checkpoint_source = "user";
    if (o->spot.off && (!isnan(o->spot.rate_per_node_hour) || a->checkpoint_given || !isnan(a->restart_minutes) ||
                        !isnan(a->checkpoint_minutes)))
        return args_usage_error(c, "--spot-risk off ranks spot at its raw price: --interruption-rate, "
                                   "--checkpoint-cost, --restart-minutes and --checkpoint-every do not apply");
    o->user_prices = a->prices_given;
    o->n_user_prices = a->n_prices_given;
    return 0;
}

/* Skips for one reason are reported one line each up to SKIP_LINES_SHOWN; past that (a 60 MiB
 * array of junk is millions of elements) only with -v, and counted per reason at the end. */
enum { SKIP_LINES_SHOWN = 20, SKIP_REASONS = 32 };
static struct {
    char reason[128];
    size_t n;
} skip_tally[SKIP_REASONS];

static int skip_shown(const char *reason)
{
    int i = 0;
    while (i < SKIP_REASONS && skip_tally[i].n &&
           strncmp(skip_tally[i].reason, reason, sizeof skip_tally[i].reason - 1))
        i++;
    if (i == SKIP_REASONS) return 1; /* more distinct reasons than tallied: show them */
    if (!skip_tally[i].n) snprintf(skip_tally[i].reason, sizeof skip_tally[i].reason, "%s", reason);
    return ++skip_tally[i].n <= SKIP_LINES_SHOWN || ib_log_level >= IB_LOG_DEBUG;
}

static void skip_summary(void)
{
    for (int i = 0; i < SKIP_REASONS && skip_tally[i].n; i++)
        if (skip_tally[i].n > SKIP_LINES_SHOWN && ib_log_level < IB_LOG_DEBUG)
            ib_warn("... and %zu more skipped: %s (-v lists every one)", skip_tally[i].n - SKIP_LINES_SHOWN,
                    skip_tally[i].reason);
}

static void on_skip(void *ctx, const char *where, const char *reason)
{
    (void)ctx;
    if (!skip_shown(reason)) return;
    ib_warn("skipped %s: %s", where, reason); /* file names are untrusted too: ib_log escapes them */
}

/* --source lets rank ask AWS (auto, live). */
static int live_wanted(const rank_args *a)
{
    return !a->prices || !strcmp(a->prices, "auto") || !strcmp(a->prices, "live");
}

static size_t superseded(const rank_config *c, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += c[i].superseded;
    return k;
}

/* The report in its format, to stdout or, with -o, to a file written whole (through memory, then
 * util_write_file_atomic: a failure leaves what was there). */
/* The report in the chosen format, to stdout, or with -o into *BUF (malloc'd) for the caller to
 * write once everything else has succeeded. */
static int write_report(const rank_args *a, const rank_report *rep, char **buf, size_t *len, ib_error *err)
{
    *buf = NULL, *len = 0;
    FILE *out = a->out_path ? open_memstream(buf, len) : stdout;
    if (!out) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    int rc = !strcmp(a->format, "json")  ? rank_report_write_json(rep, out, err)
             : !strcmp(a->format, "csv") ? rank_report_write_csv(rep, out, err)
                                         : rank_report_write_table(rep, out, err);
    if (!a->out_path) return rc;
    if (fclose(out) != 0 && rc == 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (rc != 0) free(*buf), *buf = NULL;
    return rc;
}

/* The files the user named are checked before any work: a typo in a directory is refused, not
 * made into a stray tree, an unwritable place is found before the ranking, and neither may be an
 * input (a result read, then replaced by the ranking, is lost) or the other: a->load is told
 * WRITES (room for 2). */
static int check_outputs(rank_args *a, rank_written *writes, ib_error *err)
{
    const char *named[2] = {a->out_path, a->plot};
    if (a->out_path && a->plot && util_same_file(a->out_path, a->plot))
        return ib_error_set(err, IB_EXIT_USAGE, "-o and --plot name one file (%s): the chart would replace the report",
                            a->plot);
    size_t n = 0;
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (!named[i]) continue;
        if (util_output_parent_check(named[i], a->create_dirs, err) != 0 || util_check_writable(named[i], 0, err) != 0)
            return -1;
        if (stat(named[i], &st) == 0 && S_ISREG(st.st_mode))
            writes[n++] = (rank_written){st.st_dev, st.st_ino, i ? "--plot" : "-o"};
    }
    a->load.writes = writes;
    a->load.n_writes = n;
    return 0;
}

/* The report (stdout, or -o), the rows not ranked (CSV, or -o of a run that ranked nothing: said on
 * stderr), the chart.  -o's file is written last and only when NOTHING_RANKED is 0, so a run that
 * fails (nothing priced, the chart not written) leaves an existing one as it was. */
static int emit(const rank_args *a, const rank_report *rep, int nothing_ranked, ib_error *err)
{
    char *report = NULL;
    size_t len = 0;
    if (write_report(a, rep, &report, &len, err) != 0) return -1;
    if (!strcmp(a->format, "csv") || (a->out_path && nothing_ranked))
        for (size_t i = rep->n_priced; i < rep->n_rows; i++) {
            char label[256];
            rank_config_label(&rep->configs[rep->rows[i].config], rep->rows[i].market, label, sizeof label);
            ib_warn("not ranked: %s: %s", label, rep->rows[i].unpriced_reason);
        }
    int rc = 0;
    if (a->plot && (rc = rank_report_write_svg(rep, a->plot, err)) == 0) ib_info("wrote %s", a->plot);
    if (rc == 0 && a->out_path && !nothing_ranked && (rc = util_write_file_atomic(a->out_path, report, len, err)) == 0)
        ib_info("wrote %s", a->out_path);
    if (rc == 0 && a->out_path && nothing_ranked) ib_warn("%s not written: nothing was ranked", a->out_path);
    free(report);
    return rc;
}

int cmd_rank(int argc, char **argv)
{
    rank_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.paths);
        free(a.prices_given);
        return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    }
    ib_error err;
    ib_error_clear(&err);
    rank_results res = {0};
    rank_group *groups = NULL;
    size_t n_groups = 0, chosen = 0, n_configs = 0, n_rows = 0;
    rank_config *configs = NULL;
    rank_row *rows = NULL;
    price_set ps = {0};
    int have_prices = 0;
    rank_block_quote *block_quotes = NULL;
    rank_plan_quote *plan_quotes = NULL;
    rc = IB_EXIT_RUNTIME;

    rank_written writes[2];
    if (check_outputs(&a, writes, &err) != 0) goto refused;
    rank_s3 *s3 = rank_s3_new(); /* s3:// inputs: read into memory by cmd/cmd_rank_s3.c */
    a.load.remote = s3 ? rank_s3_read : NULL;
    a.load.remote_ctx = s3;
    int loaded = rank_load(a.paths, a.n_paths, &a.load, &res, on_skip, NULL, &err);
    rank_s3_free(s3);
    if (loaded != 0 && err.code == IB_EXIT_USAGE) goto refused;
    if (loaded != 0) goto fail;
    skip_summary();
    ib_info("read %zu input%s: %zu result%s, %zu skipped", res.files_read, res.files_read == 1 ? "" : "s", res.n,
            res.n == 1 ? "" : "s", res.skipped);
    if (res.duplicates)
        ib_info("%zu duplicate%s ignored (a file, directory or run reached more than once counts once)", res.duplicates,
                res.duplicates == 1 ? "" : "s");
    if (res.n == 0 && res.files_read == 0 && !res.skipped) {
        /* an empty folder (or prefix): say what rank looks for and where results come from */
        char where[160];
        util_term_escape(a.n_paths == 1 ? a.paths[0] : "the inputs given", where, sizeof where);
        ib_error_set(&err, IB_EXIT_RUNTIME,
                     "no usable results: no *.json or *.jsonl file (or .gz) in %s; instbench measure writes them",
                     where);
        goto fail;
    }
    if (res.n == 0) {
        ib_error_set(&err, IB_EXIT_RUNTIME, "no usable results%s",
                     res.skipped ? " (every input was skipped, see above)" : "");
        goto fail;
    }
    if (rank_group_by_workload(&res, &groups, &n_groups, &err) != 0) goto fail;
    if (a.workload && rank_group_pick(groups, n_groups, a.workload, &chosen, &err) != 0) goto fail;
    if (n_groups > 1) rank_groups_list(groups, n_groups, chosen, a.workload != NULL);
    const rank_group *g = &groups[chosen];

    if (!a.checkpoint_given) {
        /* measure's timed checkpoint where the results have one, else the model's state at a
         * gp3 volume's baseline (docs/design.md, "Spot risk") */
        double measured = rank_spot_measured_checkpoint_s(&res, g);
        a.opt.spot.checkpoint_s =
            isfinite(measured) ? measured : rank_spot_default_checkpoint_s(g->params, g->precision);
        if (isfinite(measured)) a.opt.spot.checkpoint_source = "measured";
    }
    if (rank_combine_runs(&res, g, a.region, &configs, &n_configs, &err) != 0) goto fail;
    if (rank_filter_types(a.types.v, a.types.n, configs, &n_configs, &err) != 0 ||
        rank_resolve_versus(a.versus, configs, n_configs, &a.opt, &err) != 0)
        goto refused;
    rank_warn_inputs(configs, n_configs, &a.opt);
    char origin[320] = "";
    if (rank_load_prices(a.prices, configs, n_configs, &a.opt, &ps, origin, sizeof origin, &err) != 0) goto fail;
    have_prices = 1;
    if (rank_check_region(a.region, &ps, &err) != 0 ||
        rank_resolve_az(&a.opt, live_wanted(&a), &res, configs, n_configs, &ps, &err) != 0)
        goto refused;
    if (rank_load_quotes(a.prices, plan_api[a.plan], payment_api[a.payment], configs, n_configs, &a.opt, &block_quotes,
                         &plan_quotes, NULL, 0, &err) != 0) /* each gap says its reason */
        goto fail;
    if (rank_score(configs, n_configs, &ps, &a.opt, &rows, &n_rows, &err) != 0) goto fail;
    /* a live fetch has said its note already (prices_get); a prices file's is said here */
    if (ps.placement_note[0] && (a.opt.markets & RANK_MARKETS_SPOT) && !strncmp(origin, "file ", 5))
        ib_info("placement scores: %s", ps.placement_note);
    rank_ask_placement(a.prices, a.placement_pool.v, a.placement_pool.n, configs, rows, n_rows);

    size_t n_with_price = 0;
    for (size_t i = 0; i < n_rows; i++) n_with_price += rows[i].priced != 0;
    char no_price[640] = "";
    if (n_with_price == 0)
        rank_nothing_priced_hint(a.prices, &a.opt, configs, n_configs, n_rows, no_price, sizeof no_price);

    rank_filter_stats st;
    size_t n_priced = rank_select(rows, &n_rows, configs, &a.opt, a.top, &st);

    /* clang-format off */
    rank_report rep = {g, groups, n_groups, configs, n_configs, rows, n_priced, n_rows, &a.opt, st,
                       a.samples > 0 ? 0 : a.epochs, a.samples > 0 ? 0 : a.dataset_size, a.region,
                       origin[0] ? origin : NULL, res.files_read, res.n, res.skipped, res.duplicates,
                       superseded(configs, n_configs), a.columns.v, a.columns.n, a.wide,
                       a.explain || ib_log_level >= 2};
    /* clang-format on */
    if (rep.superseded)
        ib_info("%zu extrapolated result%s left out: a run measured on all of %s nodes exists", rep.superseded,
                rep.superseded == 1 ? "" : "s", rep.superseded == 1 ? "its" : "their");
    if (emit(&a, &rep, no_price[0] != 0, &err) != 0) goto fail;
    /* a failed write to stdout is reported on exit (main.c) */
    if (no_price[0]) {
        /* the report above lists each configuration's reason; this says how to get a priced row */
        fprintf(stderr, "instbench rank: %s\n", no_price);
        rc = IB_EXIT_RUNTIME;
        goto done;
    }
    rc = IB_EXIT_OK;
    goto done;
refused: /* a name the user gave names nothing: the usage form, with the nearest */
    if (err.code == IB_EXIT_USAGE) {
        rc = args_usage_error(&cmd_rank_args, "%s", err.msg);
        goto done;
    }
fail:
    fprintf(stderr, "instbench rank: %s\n", err.msg[0] ? err.msg : "failed");
    rc = err.code ? err.code : IB_EXIT_RUNTIME;
done:
    free(rows);
    free(block_quotes);
    free(plan_quotes);
    if (have_prices) prices_free(&ps);
    free(configs);
    rank_groups_free(groups, n_groups);
    rank_results_free(&res);
    free(a.paths);
    free(a.prices_given);
    return rc;
}
