/* cmd/rank.c: `instbench rank` — result files x prices -> configurations ranked by samples per
 * dollar (or throughput, cost, time), as a table, JSON or CSV, with an optional SVG chart.
 * Flags are parsed here; the work is rank/ (pure) and output/ (rendering). */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/instance_type.h"
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
    int market, spot_mode, sort, format_i, pareto, follow, spot_given, wide, explain;   /* choice indexes, flags */
    int create_dirs;                 /* --create-dirs: make -o's and --plot's missing directories */
    int spot_risk;                   /* index into on_off: 0 on, 1 off */
    int checkpoint_given;            /* --checkpoint-cost */
    double restart_minutes, checkpoint_minutes;   /* NAN: not given */
    args_list columns;
    args_list types;                 /* --instance-types: names and patterns */
    args_list placement_pool;        /* --placement-pool: types asked with each row's own */
    rank_user_price *prices_given;   /* --price flags, in order */
    size_t n_prices_given;
    rank_options opt;
    rank_load_options load;
    int block_hours, plan, term, payment;    /* the markets bought ahead: --block-duration, --plan, ... */
    int plan_given, term_given, payment_given;   /* given at all: --plan compute is the default's index, 0 */
    const char *versus;                      /* --versus CONFIG */
    int plan_utilisation_given;              /* --plan-utilisation */
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
            return ib_error_set(err, IB_EXIT_USAGE, "--price %s (%s) is given twice", p.name, rank_market_name(p.market));
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
        size_t k = strchr("*?[]!", *p) ? 1 : util_utf8_name_char(p);   /* a hostname may be "büro" */
        if (!k) return "is not an instance type like g5.xlarge, a hostname or a pattern like 'g5.*'";
        p += k;
    }
    return NULL;
}

static const char *const markets[] = {"on-demand", "spot", "both", "capacity-block", "savings-plan", "all", NULL};
static const int market_sets[] = {RANK_MARKETS_ON_DEMAND, RANK_MARKETS_SPOT, RANK_MARKETS_BOTH, RANK_MARKETS_BLOCK,
                                  RANK_MARKETS_PLAN, RANK_MARKETS_ALL};
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
static const char *const spot_modes[] = {"lowest", "median", "az", NULL};  /* rank_spot_mode */
static const char *const formats[] = {"table", "json", "csv", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const double MAX_HOURS = 1e9, MAX_USD = 1e15, POSITIVE = 1e-12;
#define DEFAULT_RESULTS "instbench-results"   /* measure's default output directory */

static const arg_spec rank_specs[] = {
    {"--follow", 0, ARG_FLAG, &A.follow, NULL, "follow symbolic links to directories met while walking RESULT directories\n"
     "(default: skipped with a note; a link given as RESULT is always followed)", .group = "inputs"},
    {"--workload", 0, ARG_STRING, &A.workload, "FP", "rank the results whose workload fingerprint starts with FP, or whose model\n"
     "is FP (results of different workloads are never ranked together; default:\n"
     "the group with the most results; the groups found are listed on stderr)", .group = "workload"},
    {"--instance-types", 0, ARG_LIST, &A.types, "LIST", "rank only these instance types: names or patterns such as 'g5.*'\n"
     "(a machine without one by its hostname, as --price names it);\n"
     "comma-separated, repeatable; one that matches no configuration is a\n"
     "usage error naming the nearest", .check = type_filter_problem},
    {"--source", 0, ARG_STRING, &A.prices, "SRC", "auto|live|cache|snapshot, or an instbench.prices/v1 FILE (default auto)",
     .group = "prices", .old_name = "--prices"},
    {"--region", 0, ARG_STRING, &A.region, "REGION", "price every configuration in REGION (default: each result's own region)",
     .check = names_region_problem, .suggest = prices_suggest_region},
    {"--market", 0, ARG_CHOICE, &A.market, NULL, "default both (on-demand and spot); capacity-block and savings-plan\n"
     "price the configuration from live quotes (a Capacity Block offering for\n"
     "its nodes, a Savings Plan rate); all: the four.  SageMaker ml.* types:\n"
     "on-demand only.  instbench never purchases a block or a plan", .choices = markets},
    {"--block-duration", 0, ARG_FN, NULL, "DAYS", "capacity-block: the block's length, 1d (default) to 182d as AWS sells\n"
     "them; a target longer than one block takes several, each paid whole", .fn = block_duration_flag},
    {"--plan", 0, ARG_CHOICE, &A.plan, NULL, "savings-plan: compute (default) or ec2-instance", .choices = plan_names,
     .given = &A.plan_given},
    {"--term", 0, ARG_CHOICE, &A.term, NULL, "savings-plan: 1y (default) or 3y", .choices = term_names,
     .given = &A.term_given},
    {"--payment", 0, ARG_CHOICE, &A.payment, NULL, "savings-plan: none (default), partial or all upfront",
     .choices = payment_names, .given = &A.payment_given},
    {"--plan-utilisation", 0, ARG_DOUBLE, &A.opt.plan_utilisation, "F", "savings-plan: the share (0 to 1) of the term's hours the target does\n"
     "not train that the rest of your fleet keeps the plan busy (default 0:\n"
     "nothing else uses it, so COST to a target is the whole term's\n"
     "commitment; 1: only the target's own hours)", 0, 1, .given = &A.plan_utilisation_given},
    {"--spot-price", 0, ARG_CHOICE, &A.spot_mode, NULL, "spot price across the region's AZs (default lowest)",
     .choices = spot_modes, .given = &A.spot_given},
    {"--include-local-zones", 0, ARG_FLAG, &A.opt.include_local_zones, NULL, "let Local Zones and Wavelength Zones (opt-in per account) count for\n"
     "--spot-price lowest and median (default: the region's Availability Zones)"},
    {"--az", 0, ARG_STRING, &A.az, "ZONE", "price spot in this AZ (implies --spot-price az): a zone ID (use1-az2)\n"
     "or a zone name (us-east-1a).  Which ID a name stands for differs\n"
     "per AWS account: live prices map it through the account's\n"
     "DescribeAvailabilityZones, a result measured in that zone records\n"
     "its ID; snapshot prices name zones by ID only",
     .check = names_zone_problem},
    {"--placement-pool", 0, ARG_LIST, &A.placement_pool, "TYPES", "the instance types you would accept besides each spot row's own,\n"
     "asked together for its placement score (AWS: with one or two types\n"
     "the score is always low; it recommends at least three), e.g.\n"
     "g5.2xlarge,g6.xlarge,g6.2xlarge",
     .check = names_instance_type_size_problem},
    {"--price", 0, ARG_FN, &A, "NAME=USD", "your price per node-hour for NAME: an instance type, or the hostname of\n"
     "results without one (own hardware, another cloud); NAME:spot=USD or\n"
     "NAME:on-demand=USD sets one market, plain NAME=USD the on-demand price.\n"
     "Repeatable.  Precedence: --price, then the price a result recorded\n"
     "(measure --hourly-cost), then AWS's; such rows show price source user", .fn = take_price},
    {"--samples", 0, ARG_DOUBLE, &A.samples, "N", "samples to process", POSITIVE, 1e18,
     .group = "target (adds time and cost columns)"},
    {"--epochs", 0, ARG_DOUBLE, &A.epochs, "E", "with --dataset-size: the same as --samples E*S", POSITIVE, 1e9},
    {"--dataset-size", 0, ARG_DOUBLE, &A.dataset_size, "S", "samples in one epoch", POSITIVE, MAX_USD},
    {"--spot-risk", 0, ARG_CHOICE, &A.spot_risk, NULL, "on (default): spot rows rank by their interruption-aware figures (the\n"
     "Advisor's interruption bucket as a rate per node, N nodes stop N times as\n"
     "often, checkpoints and restarts cost time: EFF. SAMPLES/$, BREAK-EVEN);\n"
     "off: spot ranks at its raw price as if never interrupted",
     .choices = on_off, .group = "spot risk (docs/design.md states the model)"},
    {"--interruption-rate", 0, ARG_FN, &A, "RATE", "interruptions per node-hour for every spot row instead of the Advisor\n"
     "bucket's: a number (0.002), or Nh / Nd for once per N hours / days\n"
     "(500h = 0.002; 20d = once per 480 hours)", .fn = take_rate},
    {"--checkpoint-cost", 0, ARG_DOUBLE, &A.opt.spot.checkpoint_s, "SECONDS", "seconds one checkpoint takes (default: the model's fp32 weights and\n"
     "Adam moments, + a bf16 copy, at 125 MB/s; 60 s when the results lack the\n"
     "parameter count)", RANK_SPOT_MIN_CHECKPOINT_S, RANK_SPOT_MAX_CHECKPOINT_S, .given = &A.checkpoint_given},
    {"--restart-minutes", 0, ARG_DOUBLE, &A.restart_minutes, "MINUTES", "minutes from an interruption to training again: new instance, boot,\n"
     "checkpoint loaded (default 10)", 0, 10080},
    {"--versus", 0, ARG_STRING, &A.versus, "CONFIG", "the row BREAK-EVEN is against: a configuration as rank prints it\n"
     "('1 x g5.12xlarge on-demand') or as sweep takes it (g5.12xlarge,\n"
     "4xg5.xlarge:on-demand; no market: on-demand), not spot (default: the best\n"
     "on-demand row)"},
    {"--checkpoint-every", 0, ARG_DOUBLE, &A.checkpoint_minutes, "MINUTES", "checkpoint interval (default: Daly's optimum for each row)",
     POSITIVE, 1e6},
    {"--deadline", 0, ARG_DOUBLE, &A.opt.deadline_hours, "HOURS", "drop configurations slower than this to the target (spot: the\n"
     "expected time, interruptions included)",
     POSITIVE, MAX_HOURS, .group = "constraints and order"},
    {"--budget", 0, ARG_DOUBLE, &A.opt.budget_usd, "USD", "drop configurations costing more than this to the target (spot: the\n"
     "expected cost; savings-plan: COST, the commitment owed included)",
     POSITIVE, MAX_USD},
    {"--max-hourly", 0, ARG_DOUBLE, &A.opt.max_hourly_usd, "USD",
     "drop configurations costing more than this per hour (all nodes)", POSITIVE, MAX_HOURS},
    {"--pareto", 0, ARG_FLAG, &A.pareto, NULL, "only configurations not beaten on both speed and cost per sample"},
    {"--sort", 0, ARG_CHOICE, &A.sort, "KEY", "samples-per-dollar|throughput|cost|time (default samples-per-dollar)",
     .choices = rank_sort_names},
    {"--top", 0, ARG_INT, &A.top, "N", "show the best N rows only", 1, 1e9},
    {"--format", 0, ARG_CHOICE, &A.format_i, NULL, "default: table on a terminal, json otherwise; with -o FILE\n"
     "the file's extension (.csv, .txt for the table), else json", .choices = formats,
     .group = "output"},
    {"--explain", 0, ARG_FLAG, &A.explain, NULL, "the table's legend in full: how the markets bought ahead, spot risk\n"
     "and placement figures are made, and every spot row's break-even (default: a\n"
     "few lines; -v too)"},
    {"--plot", 0, ARG_STRING, &A.plot, "FILE.svg", "also write a chart: samples/s against $/h of the rows ranked, the\n"
     "Pareto frontier marked (with --pareto: the frontier's points only)"},
    {"--output", 'o', ARG_STRING, &A.out_path, "FILE", "write the table, JSON or CSV to FILE instead of stdout (whole or not\n"
     "at all: a failed run leaves an existing FILE as it was)", .check = args_check_file},
    {"--create-dirs", 0, ARG_FLAG, &A.create_dirs, NULL, "create the missing directories of -o and --plot (without it: refused,\n"
     "exit 2)"},
    ARGS_TABLE_SPECS(&A.wide, &A.columns, "the same names in the table, CSV header\n"
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
    "rank", "[options] [RESULT...]",
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
    "x 3600 / $/h; BREAK-EVEN is the per-node interruption rate at which a spot row falls to the\n"
    "best on-demand row, or the row --versus names (docs/design.md states the model and its defaults).\n"
    "Marks after a configuration: ^ extrapolated (measured on fewer nodes than it has: samples/s\n"
    "scaled linearly, no communication cost assumed; a real run of those nodes replaces it),\n"
    "! identity mismatch (the type contradicts the hardware), ~ runs that disagree by over 10%\n"
    "or carry warnings; JSON and CSV carry measured_nodes, extrapolated, identity_mismatch, runs,\n"
    "samples_per_second_min/max, cv and warnings for every row.\n"
    "Nothing ranked (no usable results, nothing priced) exits 1 with a line saying how to get a\n"
    "priced row; a --region, --az or --instance-types that names nothing exits 2 with the nearest.\n",
    rank_specs, "RESULT",
    .examples = (const arg_example[]){
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
            if (strcmp(col->key, cols->v[i])) {
                char *key = util_strdup(col->key);
                if (!key) return IB_EXIT_RUNTIME;
                free(cols->v[i]);
                cols->v[i] = key;
            }
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
    A.market = 2;   /* both */
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
    snprintf(plan_label, sizeof plan_label, "%s %s %s", plan_labels[a->plan], term_names[a->term], payment_api[a->payment]);
    o->plan_label = plan_label;
    o->spot_mode = (rank_spot_mode)a->spot_mode;
    o->sort = (rank_sort_key)a->sort;
    o->pareto_only = a->pareto;
    a->load.follow = a->follow;
    if (!a->n_paths) {
        /* measure's own default output: `measure` then `rank` needs no path */
        struct stat st;
        if (stat(DEFAULT_RESULTS, &st) != 0 || !S_ISDIR(st.st_mode))
            return args_usage_error(c, "no result files given, and ./%s/ (where measure writes by default) does "
                                    "not exist here", DEFAULT_RESULTS);
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
                                a->plan_given ? "--plan" : a->term_given ? "--term" : "--payment");
    a->format = a->format_i >= 0 ? formats[a->format_i] : a->out_path ? format_of_path(a->out_path)
                : util_isatty_stdout() ? "table" : "json";
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
static struct { char reason[128]; size_t n; } skip_tally[SKIP_REASONS];

static int skip_shown(const char *reason)
{
    int i = 0;
    while (i < SKIP_REASONS && skip_tally[i].n && strncmp(skip_tally[i].reason, reason, sizeof skip_tally[i].reason - 1))
        i++;
    if (i == SKIP_REASONS) return 1;   /* more distinct reasons than tallied: show them */
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
    ib_warn("skipped %s: %s", where, reason);   /* file names are untrusted too: ib_log escapes them */
}

/* Every market ranked has a user price for C, so no AWS price is needed for it. */
static int user_priced(const rank_config *c, const rank_options *o)
{
    double p;
    time_t t;
    for (int m = 0; m < 2; m++)
        if ((o->markets & (1 << m)) && !(m == RANK_SPOT && instance_type_is_sagemaker(c->instance_type)) &&
            !rank_user_price_for(c, (rank_market)m, o, &p, &t))
            return 0;
    return 1;
}

/* Says which --price flags name no configuration of the workload ranked (a typo, or a machine
 * measured on another workload), and which configurations recorded conflicting prices. */
static void check_user_prices(const rank_args *a, const rank_config *c, size_t n)
{
    for (size_t k = 0; k < a->n_prices_given; k++) {
        const rank_user_price *p = &a->prices_given[k];
        int used = 0;
        for (size_t i = 0; i < n && !used; i++) used = !strcasecmp(rank_config_name(&c[i]), p->name);
        if (used) continue;
        char names[400] = "";
        for (size_t i = 0, u = 0; i < n && u + 80 < sizeof names; i++) {
            const char *nm = rank_config_name(&c[i]);
            int dup = !nm[0];
            for (size_t j = 0; j < i && !dup; j++) dup = !strcmp(rank_config_name(&c[j]), nm);
            if (!dup) u += (size_t)snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "", nm);
        }
        ib_warn("--price %s: no configuration of this workload is named %s (names: %s)", p->name, p->name,
                names[0] ? names : "none");
    }
    for (size_t i = 0; i < n; i++)
        if (c[i].recorded_prices_differ)
            ib_warn("%s: its runs recorded different hourly costs (measure --hourly-cost); the newest run's counts",
                    rank_config_name(&c[i])[0] ? rank_config_name(&c[i]) : "a machine without a name");
}

/* Says when the configurations ran attention more than one way (cudnn, unfused, and fused in
 * results of versions before issue 37): the same GPU runs the paths at different speeds
 * (docs/benchmarks.md), so rows measured differently compare the kernels as much as the hardware. */
static void check_attention_paths(const rank_config *c, size_t n)
{
    static const char *const names[] = {"cudnn", "unfused", "fused"};
    size_t count[3] = {0, 0, 0};
    int paths = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) count[k] += !strcmp(c[i].attention, names[k]);
    char how[160] = "";
    for (int k = 0; k < 3; k++)
        if (count[k]) {
            const size_t len = strlen(how);
            snprintf(how + len, sizeof how - len, "%s%zu %s", paths++ ? ", " : "", count[k], names[k]);
        }
    if (paths > 1)
        ib_warn("configurations ran attention more than one way (%s; hardware.attention): one GPU runs the paths at "
                "different speeds, so those rows compare kernels as well as hardware; measure every candidate with "
                "the same INSTBENCH_CUDA_ATTENTION",
                how);
}

/* Placement scores for the rows a price set's cannot answer: multi-node rows (TargetCapacity =
 * nodes, one zone) and, with --placement-pool, every spot row.  Asked live where the prices could
 * be (auto, live); elsewhere, or when AWS does not answer, those rows have none, and -v says why. */
static void placement_scores(const rank_args *a, const rank_config *configs, rank_row *rows, size_t n_rows)
{
    const char *src = a->prices ? a->prices : "auto";
    placement_ask *asks = NULL;
    size_t n = rank_placement_plan(configs, rows, n_rows, a->placement_pool.n, &asks);
    if (n == 0) return;
    char note[320] = "";
    if (strcmp(src, "auto") != 0 && strcmp(src, "live") != 0) {
        for (size_t i = 0; i < n; i++) asks[i].failed = 1;
        snprintf(note, sizeof note, "asked live only (not with --source %s)", src);
    } else {
        prices_placement_live(asks, n, a->placement_pool.v, a->placement_pool.n, 0, note, sizeof note);
    }
    rank_placement_apply(configs, rows, n_rows, asks, n, a->placement_pool.v, a->placement_pool.n);
    /* in words a newcomer reads: which rows lack the figure, and why (the mechanics with -v) */
    if (note[0]) {
        if (ib_log_level >= 2) ib_debug("spot placement scores for %zu multi-node or pooled ask%s: %s", n, n == 1 ? "" : "s", note);
        else ib_info("PLACEMENT is ? on multi-node spot rows: %s", note);
    }
    free(asks);
}

/* Prices for the configurations: a file, or prices_get over the types and regions needed. */
static int load_prices(const rank_args *a, const rank_config *c, size_t n, price_set *ps, char *origin,
                       size_t olen, ib_error *err)
{
    const char *src = a->prices ? a->prices : "auto";
    int s = 0;
    while (prices_source_names[s] && strcmp(src, prices_source_names[s])) s++;
    if (!prices_source_names[s]) {   /* not a source: a prices file */
        if (prices_load_file(src, ps, err) != 0) return -1;
        snprintf(origin, olen, "file %s", src);
        return 0;
    }
    prices_query q = {0};
    q.instance_types = calloc(n + 1, sizeof *q.instance_types);
    q.regions = calloc(n + 1, sizeof *q.regions);
    if (!q.instance_types || !q.regions) {
        free(q.instance_types), free(q.regions);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (user_priced(&c[i], &a->opt)) continue;   /* nothing to fetch for it */
        int seen_t = !c[i].instance_type[0], seen_r = !c[i].region[0];
        for (size_t k = 0; k < q.n_types && !seen_t; k++) seen_t = !strcmp(q.instance_types[k], c[i].instance_type);
        for (size_t k = 0; k < q.n_regions && !seen_r; k++) seen_r = !strcmp(q.regions[k], c[i].region);
        if (!seen_t) q.instance_types[q.n_types++] = (char *)c[i].instance_type;
        if (!seen_r) q.regions[q.n_regions++] = (char *)c[i].region;
    }
    /* a plan's break-even is against the on-demand price */
    q.want_on_demand = (a->opt.markets & (RANK_MARKETS_ON_DEMAND | RANK_MARKETS_PLAN)) != 0;
    q.want_spot = (a->opt.markets & RANK_MARKETS_SPOT) != 0;
    q.source = (prices_source)s;
    int rc = 0;
    memset(ps, 0, sizeof *ps);
    if (q.n_types && q.n_regions) {
        rc = prices_get(&q, ps, err);
        if (rc == 0) prices_warn_missing(&q, ps);
    }
    if (rc != 0 && q.source == PRICES_SOURCE_LIVE) {   /* the message names the flag that asked for live */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "--source live: %.1000s", err->msg);
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    free(q.instance_types);
    free(q.regions);
    /* Each row names its price source already; the snapshot's provenance is for -v. */
    if (rc == 0 && ps->snapshot_note[0]) ib_debug("prices: %s", ps->snapshot_note);
    if (olen) origin[0] = '\0';
    return rc;
}

/* The live quotes of the markets bought ahead, for every configuration that could use one: a
 * Capacity Block offering per (type, nodes, region), a Savings Plan rate per (type, region).
 * Offline (no credentials, --source other than auto or live) the rows say why they are unpriced. */
static int load_quotes(const rank_args *a, const rank_config *c, size_t n, rank_block_quote **blocks,
                       rank_plan_quote **plans, char *missing, size_t mlen, ib_error *err)
{
    rank_options *o = (rank_options *)&a->opt;
    int want_b = (o->markets & RANK_MARKETS_BLOCK) != 0, want_p = (o->markets & RANK_MARKETS_PLAN) != 0;
    *blocks = NULL, *plans = NULL;
    missing[0] = '\0';
    if (!want_b && !want_p) return 0;
    if (a->prices && strcmp(a->prices, "auto") && strcmp(a->prices, "live")) {
        snprintf(missing, mlen, "Capacity Block offerings and Savings Plan rates are live only (--source %s does "
                 "not ask AWS)", a->prices);
        return 0;
    }
    /* one query per distinct (type, nodes) in each region: the types and counts, with counts per type */
    size_t cap = n ? n : 1, nq = 0;
    char **types = calloc(cap, sizeof *types), **regions = calloc(cap, sizeof *regions);
    int *counts = calloc(cap, sizeof *counts);
    int rc = 0;
    if (!types || !regions || !counts) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    size_t got_b = 0, got_p = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].instance_type[0] || !c[i].region[0] || instance_type_is_sagemaker(c[i].instance_type)) continue;
        int dup = 0;
        for (size_t k = 0; k < nq && !dup; k++)
            dup = !strcmp(types[k], c[i].instance_type) && !strcmp(regions[k], c[i].region) && counts[k] == c[i].nodes;
        if (dup) continue;
        types[nq] = (char *)c[i].instance_type;
        regions[nq] = (char *)c[i].region;
        counts[nq++] = (int)c[i].nodes;
    }
    *blocks = calloc(1, sizeof **blocks);
    *plans = calloc(nq ? nq : 1, sizeof **plans);
    if (!*blocks || !*plans) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    char why[320] = "";
    /* one batch per region (its queries go out together, aws_paginate_many): the (type, nodes) pairs
       for blocks, the distinct types for plans */
    char **bt = calloc(nq ? nq : 1, sizeof *bt), **pt = calloc(nq ? nq : 1, sizeof *pt);
    int *bc = calloc(nq ? nq : 1, sizeof *bc);
    double *rates = calloc(nq ? nq : 1, sizeof *rates);
    if (!bt || !pt || !bc || !rates) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t k = 0; k < nq && !rc; k++) {
        int first = 1;
        for (size_t j = 0; j < k && first; j++) first = strcmp(regions[j], regions[k]) != 0;
        if (!first) continue;   /* this region's batch went out with its first query */
        char *region[1] = {regions[k]};
        size_t nbq = 0, npq = 0;
        for (size_t j = k; j < nq; j++) {
            if (strcmp(regions[j], regions[k])) continue;
            if (counts[j] >= 1 && counts[j] <= MARKETS_BLOCK_MAX_INSTANCES) bt[nbq] = types[j], bc[nbq++] = counts[j];
            int dup = 0;
            for (size_t i = 0; i < npq && !dup; i++) dup = !strcmp(pt[i], types[j]);
            if (!dup) pt[npq++] = types[j];
        }
        if (want_b && nbq) {
            market_block_query bq = {bt, nbq, region, 1, bc, (int)o->block_hours, 0, 0, 0};
            market_block *mb = NULL;
            size_t nb = 0;
            int r = prices_fetch_blocks(&bq, &mb, &nb, why, sizeof why, err);
            if (r < 0) rc = -1;
            if (r == 1) want_b = 0;
            rank_block_quote *grown = nb ? realloc(*blocks, (got_b + nb) * sizeof **blocks) : *blocks;
            if (!grown) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            else *blocks = grown;
            for (size_t i = 0; grown && i < nb; i++) {
                rank_block_quote *q = &(*blocks)[got_b++];
                memset(q, 0, sizeof *q);
                snprintf(q->instance_type, sizeof q->instance_type, "%s", mb[i].instance_type);
                snprintf(q->region, sizeof q->region, "%s", mb[i].region);
                snprintf(q->az, sizeof q->az, "%s", mb[i].az);
                q->nodes = mb[i].instance_count;
                q->hours = mb[i].hours;
                q->fee_usd = mb[i].fee_usd;
                q->start = mb[i].start;
            }
            free(mb);
        }
        if (!rc && want_p && npq) {
            market_plan_query pq = {pt, npq, region, 1, plan_api[a->plan], payment_api[a->payment],
                                    a->term == 1 ? 94608000LL : 31536000LL, 0};
            int r = prices_fetch_plan_rates(&pq, rates, why, sizeof why, err);
            if (r < 0) rc = -1;
            if (r == 1) want_p = 0;
            for (size_t i = 0; r == 0 && i < npq; i++) {
                if (isnan(rates[i])) continue;
                rank_plan_quote *q = &(*plans)[got_p++];
                snprintf(q->instance_type, sizeof q->instance_type, "%s", pt[i]);
                snprintf(q->region, sizeof q->region, "%s", regions[k]);
                q->usd_per_hour = rates[i];
            }
        }
        if (why[0] && !missing[0]) snprintf(missing, mlen, "%s", why);
    }
    free(bt), free(pt), free(bc), free(rates);
    o->blocks = *blocks, o->n_blocks = got_b;
    o->plans = *plans, o->n_plans = got_p;
out:
    free(types), free(regions), free(counts);
    return rc;
}

/* --versus CONFIG: "N x TYPE MARKET" as rank labels a row, or "[Nx]TYPE[:MARKET]" as sweep takes a
 * candidate (market: on-demand when none).  The configuration must be one of those ranked and the
 * market one a break-even can be against (not spot).  0, or IB_EXIT_USAGE naming the choices. */
static int resolve_versus(const rank_args *a, const rank_config *c, size_t n, rank_options *o)
{
    if (!a->versus) return 0;
    char name[96] = "", market[32] = "on-demand";
    long nodes = 1;
    const char *v = a->versus;
    char *end;
    long x = strtol(v, &end, 10);
    if (end != v && x > 0) {   /* "4 x g5.xlarge ..." or "4xg5.xlarge..." */
        while (*end == ' ') end++;
        if (*end == 'x' || *end == 'X') nodes = x, v = end + 1;
        while (*v == ' ') v++;
    }
    size_t tl = strcspn(v, " :");
    if (!tl || tl >= sizeof name)
        return args_usage_error(&cmd_rank_args, "--versus '%s' names no configuration (e.g. '1 x g5.12xlarge on-demand')",
                                a->versus);
    memcpy(name, v, tl);
    const char *m = v + tl;
    while (*m == ' ' || *m == ':') m++;
    if (*m) snprintf(market, sizeof market, "%s", m);
    int mk = -1;
    for (int k = 0; k < RANK_N_MARKETS; k++)
        if (!strcasecmp(market, rank_market_name((rank_market)k))) mk = k;
    if (mk < 0 || mk == RANK_SPOT)
        return args_usage_error(&cmd_rank_args, "--versus '%s': %s", a->versus, mk == RANK_SPOT
                                ? "a spot row cannot be what spot breaks even against (name an on-demand, capacity-block "
                                "or savings-plan row)" : "the market must be on-demand, capacity-block or savings-plan");
    if (!(o->markets & (1 << mk)))
        return args_usage_error(&cmd_rank_args, "--versus '%s': the %s market is not ranked (--market)", a->versus,
                                market);
    long hit = -1;
    size_t hits = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].nodes == nodes && !strcasecmp(rank_config_name(&c[i]), name)) hit = (long)i, hits++;
    if (hits == 1) {
        o->versus_config = hit;
        o->versus_market = (rank_market)mk;
        return 0;
    }
    char list[640] = "";
    for (size_t i = 0, u = 0; i < n && u < sizeof list - 80; i++) {
        char l[256];
        rank_config_label(&c[i], RANK_ON_DEMAND, l, sizeof l);
        u += (size_t)snprintf(list + u, sizeof list - u, "%s'%s'", i ? ", " : "", l);
    }
    return args_usage_error(&cmd_rank_args, "--versus '%s' %s: %s", a->versus,
                            hits ? "matches several configurations (they differ in variant)" :
                            "is none of the configurations ranked", list);
}

/* ---- names the user gave: each must name something, or it is a usage error naming the nearest ---- */

/* --instance-types: keeps the configurations whose name (instance type, else hostname) one of the
 * names or patterns matches.  A name or pattern that matches none is IB_EXIT_USAGE. */
static int filter_types(const rank_args *a, rank_config *c, size_t *n)
{
    if (!a->types.n) return 0;
    const char **names = calloc(*n ? *n : 1, sizeof *names);
    unsigned char *keep = calloc(*n ? *n : 1, 1);
    int rc = 0;
    if (!names || !keep) {
        free(names), free(keep);
        fprintf(stderr, "instbench rank: out of memory\n");
        return IB_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < *n; i++) names[i] = rank_config_name(&c[i]);
    for (size_t k = 0; k < a->types.n && !rc; k++) {
        const char *want = a->types.v[k];
        int hit = 0;
        for (size_t i = 0; i < *n; i++)
            if (names[i][0] && (prices_is_pattern(want) ? !fnmatch(want, names[i], 0) : !strcasecmp(want, names[i])))
                keep[i] = hit = 1;
        if (hit) continue;
        /* the names present, in natural order, for the message and the suggestion */
        size_t m = 0;
        for (size_t i = 0; i < *n; i++) {
            int dup = !names[i][0];
            for (size_t j = 0; j < m && !dup; j++) dup = !strcmp(names[j], names[i]);
            if (!dup) names[m++] = names[i];
        }
        qsort(names, m, sizeof *names, names_instance_type_qsort_cmp);
        char list[400] = "", dym[128];
        for (size_t i = 0, u = 0; i < m && u + 80 < sizeof list; i++)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", names[i]);
        rc = args_usage_error(&cmd_rank_args, "--instance-types: '%s' matches no configuration of this workload "
                              "(present: %s)%s", want, m ? list : "none",
                              args_did_you_mean(suggest_closest(want, names, m), dym, sizeof dym));
    }
    size_t kept = 0;
    for (size_t i = 0; i < *n && !rc; i++)
        if (keep[i]) c[kept++] = c[i];
    if (!rc) *n = kept;
    free(names);
    free(keep);
    return rc;
}

/* --region: a region no source knows and nothing is priced in is a typo. */
static int check_region(const rank_args *a, const price_set *ps)
{
    char dym[128];
    if (!a->region || prices_region_state(ps, a->region) != PRICES_NAME_UNKNOWN) return 0;
    return args_usage_error(&cmd_rank_args, "--region: '%s' is not an AWS region (and no source has a price there)%s",
                            a->region, args_did_you_mean(prices_suggest_region(a->region), dym, sizeof dym));
}

/* The regions the configurations are priced in by AWS (distinct, at most CAP). */
static size_t priced_regions(const rank_config *c, size_t n, const char **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].instance_type[0] || !c[i].region[0]) continue;
        int seen = 0;
        for (size_t j = 0; j < k && !seen; j++) seen = !strcmp(out[j], c[i].region);
        if (!seen && k < cap) out[k++] = c[i].region;
    }
    return k;
}

/* Every zone the prices and the snapshot know in REGION (both forms as they come), distinct. */
static size_t zones_known(const price_set *ps, const char *region, const prices_zone *live, size_t n_live,
                          const char **out, size_t cap)
{
    size_t k = prices_catalogue_zones(region, out, cap);
    if (k > cap) k = cap;
    for (size_t i = 0; ps && i < ps->n; i++)
        for (size_t z = 0; z < ps->items[i].n_spot && !strcmp(ps->items[i].region, region); z++) {
            const char *az = ps->items[i].spot[z].az;
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) seen = !strcmp(out[j], az);
            if (!seen && k < cap) out[k++] = az;
        }
    for (size_t i = 0; i < n_live && k + 2 <= cap; i++)
        if (!strcmp(live[i].region, region)) out[k++] = live[i].name, out[k++] = live[i].id;
    return k;
}

/* Some ranked region knows --az, as given or in its other form. */
static int zone_known(const rank_options *o, const price_set *ps, const char *const *regions, size_t n_reg,
                      const prices_zone *live, size_t n_live)
{
    const char *known[256];
    for (size_t r = 0; r < n_reg; r++) {
        size_t k = zones_known(ps, regions[r], live, n_live, known, 256);
        for (size_t i = 0; i < k; i++)
            if (!strcmp(known[i], o->az) || (o->az_alt[0] && !strcmp(known[i], o->az_alt))) return 1;
    }
    return 0;
}

/* Do the prices name REGION's spot zones by ID only (the snapshot, a cache or file made from it)? */
static int ids_only(const price_set *ps, const char *region)
{
    size_t ids = 0, names = 0;
    for (size_t i = 0; ps && i < ps->n; i++)
        for (size_t z = 0; z < ps->items[i].n_spot && !strcmp(ps->items[i].region, region); z++)
            names_zone_is_id(ps->items[i].spot[z].az) ? ids++ : names++;
    return ids > 0 && names == 0;
}

static int live_wanted(const rank_args *a)
{
    return !a->prices || !strcmp(a->prices, "auto") || !strcmp(a->prices, "live");
}

/* --az given as a name the prices cannot be matched to offline: the one line saying how to fix it. */
static int az_name_unmapped(const char *az, const char *region, const char *const *known, size_t n_known)
{
    char ids[160] = "";
    for (size_t i = 0, u = 0; i < n_known && u + 24 < sizeof ids; i++)
        if (names_zone_is_id(known[i])) u += (size_t)snprintf(ids + u, sizeof ids - u, "%s%s", u ? ", " : "", known[i]);
    return args_usage_error(&cmd_rank_args, "--az: %s is a zone name, but these prices name %s's spot zones by ID (%s), "
                            "and which ID a name stands for differs per AWS account, so it cannot be mapped offline: "
                            "give the zone ID (`aws ec2 describe-availability-zones --region %s`, or a result "
                            "measured there: instance.availability_zone_id) or use --source live",
                            az, region, ids[0] ? ids : "none", region);
}

/* --az: finds the zone in the other form (name <-> ID) from the results' own pairs or, with live
 * prices, the account's DescribeAvailabilityZones, and refuses a zone nothing knows or a name
 * that cannot be mapped to the IDs the prices use.  0, or the exit code after one line. */
static int resolve_az(rank_args *a, const rank_results *res, const rank_config *c, size_t n, const price_set *ps)
{
    rank_options *o = &a->opt;
    if (!o->az[0]) return 0;
    const char *regions[64], *known[256];
    size_t n_reg = priced_regions(c, n, regions, 64);
    if (!n_reg) return 0;   /* nothing to price by AWS: the rows say why */
    char dym[128], zone_region[32] = "";
    int is_id = names_zone_is_id(o->az);
    if (!is_id && names_region_of_zone(o->az, zone_region, sizeof zone_region) == 0) {
        int ranked = 0;
        for (size_t r = 0; r < n_reg && !ranked; r++) ranked = !strcmp(regions[r], zone_region);
        if (!ranked) {
            /* us-esat-1a: suggest the zone of the nearest region; else say where the rows are priced */
            const char *near = prices_region_state(ps, zone_region) == PRICES_NAME_UNKNOWN
                                   ? prices_suggest_region(zone_region) : NULL;
            char fixed[64];
            snprintf(fixed, sizeof fixed, "%s%s", near ? near : "", o->az + strlen(zone_region));
            if (near)
                return args_usage_error(&cmd_rank_args, "--az: '%s' is not a zone of an AWS region%s", o->az,
                                        args_did_you_mean(fixed, dym, sizeof dym));
            return args_usage_error(&cmd_rank_args, "--az: %s is a zone of %s, but the configurations are priced in "
                                    "%s%s; --region %s prices them there", o->az, zone_region, regions[0],
                                    n_reg > 1 ? " and other regions" : "", zone_region);
        }
    }
    if (rank_zone_alias(res, o->az, o->az_alt, sizeof o->az_alt) < 0)
        ib_info("--az %s: results from different AWS accounts pair it with different zones; not using them", o->az);
    prices_zone *live = NULL;
    size_t n_live = 0;
    if (!o->az_alt[0] && live_wanted(a)) {
        ib_error zerr = {0};
        if (prices_live_zones(regions, n_reg, 0, &live, &n_live, &zerr) != 0)
            ib_debug("--az: zone names not mapped through live AWS: %s", zerr.msg);
        for (size_t i = 0; i < n_live && !o->az_alt[0]; i++) {
            const char *other = !strcmp(live[i].name, o->az) ? live[i].id : !strcmp(live[i].id, o->az) ? live[i].name : NULL;
            if (other) snprintf(o->az_alt, sizeof o->az_alt, "%s", other);
        }
    }
    int rc = 0;
    if (!zone_known(o, ps, regions, n_reg, live, n_live)) {
        /* nothing in any ranked region knows the zone, in either form */
        const char *region = is_id ? regions[0] : zone_region;
        size_t k = zones_known(ps, region, live, n_live, known, 256);
        if (!is_id && !o->az_alt[0] && ids_only(ps, region))
            rc = az_name_unmapped(o->az, region, known, k);
        else
            rc = args_usage_error(&cmd_rank_args, "--az: '%s' is not a zone of %s that the prices know%s", o->az,
                                  is_id && n_reg > 1 ? "the regions ranked" : region,
                                  args_did_you_mean(suggest_closest(o->az, known, k), dym, sizeof dym));
    }
    free(live);
    return rc;
}

static void list_groups(const rank_group *g, size_t n, size_t chosen, int explicit)
{
    ib_info("%zu workloads found; results of different workloads are never ranked together:", n);
    for (size_t i = 0; i < n; i++)
        ib_info("  %s %.16s  %s %s batch %ld/device: %zu result%s", i == chosen ? "->" : "  ", g[i].fingerprint,
                g[i].model[0] ? g[i].model : "?", g[i].precision, g[i].batch_per_device, g[i].n, g[i].n == 1 ? "" : "s");
    if (!explicit) ib_info("ranking the largest group; pick another with --workload FINGERPRINT (a prefix is enough)");
}

/* Nothing could be priced: one line saying how to get a priced row. */
static void nothing_priced_hint(const rank_args *a, const rank_config *c, size_t n, size_t n_rows, char *out,
                                size_t len)
{
    const rank_config *known = NULL;
    if (n_rows == 0) {   /* defensive: every configuration yields a row, priced or with its reason */
        snprintf(out, len, "no configuration to rank: check the filters (--instance-types, --market)");
        return;
    }
    if (a->opt.spot_mode == RANK_SPOT_AZ && a->opt.markets == RANK_MARKETS_SPOT) {
        snprintf(out, len, "no configuration could be priced: no spot price in %s%s%s%s for any of them; rank "
                           "without --az (the lowest spot price across the region's zones), or --market both",
                 a->opt.az, a->opt.az_alt[0] ? " (" : "", a->opt.az_alt, a->opt.az_alt[0] ? ")" : "");
        return;
    }
    /* One piece of advice, the one that works for the first configuration it applies to (the same
     * as the report's reason for that row): a machine off EC2 is priced by its hostname, a type
     * without a region by --region. */
    const rank_config *off_ec2 = NULL, *no_region = NULL;
    for (size_t i = 0; i < n; i++) {
        if (c[i].instance_type[0] && c[i].region[0] && !known) known = &c[i];
        if (!c[i].instance_type[0] && c[i].host[0] && !off_ec2) off_ec2 = &c[i];
        if (c[i].instance_type[0] && !c[i].region[0] && !no_region) no_region = &c[i];
    }
    if (!known && off_ec2) {
        snprintf(out, len, "no configuration could be priced: %s is not an EC2 instance type (measured off EC2), so "
                           "AWS cannot price it: give its price per hour, rank --price %s=USD (or record it: measure "
                           "--hourly-cost USD)", off_ec2->host, off_ec2->host);
        return;
    }
    if (!known && no_region) {
        snprintf(out, len, "no configuration could be priced: no result says which region %s ran in: rank with "
                           "--region R (e.g. --region us-east-1), or give a price, --price %s=USD",
                 no_region->instance_type, no_region->instance_type);
        return;
    }
    if (!known) {
        snprintf(out, len, "no configuration could be priced: no result names its instance type or hostname: record "
                           "each machine's price per hour when measuring (measure --hourly-cost USD)");
        return;
    }
    snprintf(out, len, "no configuration could be priced (e.g. %s in %s, with --source %s): get prices with "
                       "`instbench prices --instance-types %s --region %s -o prices.json` (live AWS needs "
                       "credentials) and pass --source prices.json, or pick a --region or --market that has them",
             known->instance_type, known->region, a->prices ? a->prices : "auto", known->instance_type, known->region);
}

static size_t superseded(const rank_config *c, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += c[i].superseded;
    return k;
}

/* The report in its format, to stdout or, with -o, to a file written whole (through memory, then
 * util_write_file_atomic: a failure leaves what was there). */
static int write_report(const rank_args *a, const rank_report *rep, ib_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = a->out_path ? open_memstream(&buf, &len) : stdout;
    if (!out) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    int rc = !strcmp(a->format, "json") ? rank_report_write_json(rep, out, err)
             : !strcmp(a->format, "csv") ? rank_report_write_csv(rep, out, err)
                                         : rank_report_write_table(rep, out, err);
    if (!a->out_path) return rc;
    if (fclose(out) != 0 && rc == 0) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (rc == 0 && util_write_file_atomic(a->out_path, buf, len, err) == 0) ib_info("wrote %s", a->out_path);
    else rc = -1;
    free(buf);
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
    char quotes_missing[320] = "";
    rc = IB_EXIT_RUNTIME;

    /* The files the user named are checked before any work: a typo in a directory is refused,
     * not made into a stray tree, and an unwritable place is found before the ranking. */
    const char *named[2] = {a.out_path, a.plot};
    for (int i = 0; i < 2; i++)
        if (named[i] && (util_output_parent_check(named[i], a.create_dirs, &err) != 0 ||
                         util_check_writable(named[i], 0, &err) != 0))
            goto fail;
    rank_s3 *s3 = rank_s3_new();   /* s3:// inputs: read into memory by cmd/rank_s3.c */
    a.load.remote = s3 ? rank_s3_read : NULL;
    a.load.remote_ctx = s3;
    int loaded = rank_load(a.paths, a.n_paths, &a.load, &res, on_skip, NULL, &err);
    rank_s3_free(s3);
    if (loaded != 0) goto fail;
    skip_summary();
    ib_info("read %zu input%s: %zu result%s, %zu skipped", res.files_read, res.files_read == 1 ? "" : "s", res.n,
            res.n == 1 ? "" : "s", res.skipped);
    if (res.duplicates)
        ib_info("%zu duplicate%s ignored (a file, directory or run reached more than once counts once)",
                res.duplicates, res.duplicates == 1 ? "" : "s");
    if (res.n == 0) {
        ib_error_set(&err, IB_EXIT_RUNTIME, "no usable results%s", res.skipped ? " (every input was skipped, see above)" : "");
        goto fail;
    }
    if (rank_group_by_workload(&res, &groups, &n_groups, &err) != 0) goto fail;
    if (a.workload && rank_group_pick(groups, n_groups, a.workload, &chosen, &err) != 0) goto fail;
    if (n_groups > 1) list_groups(groups, n_groups, chosen, a.workload != NULL);
    const rank_group *g = &groups[chosen];

    if (!a.checkpoint_given) {
        /* measure's timed checkpoint where the results have one, else the model's state at a
         * gp3 volume's baseline (docs/design.md, "Spot risk") */
        double measured = rank_spot_measured_checkpoint_s(&res, g);
        a.opt.spot.checkpoint_s = isfinite(measured) ? measured : rank_spot_default_checkpoint_s(g->params, g->precision);
        if (isfinite(measured)) a.opt.spot.checkpoint_source = "measured";
    }
    if (rank_combine_runs(&res, g, a.region, &configs, &n_configs, &err) != 0) goto fail;
    if ((rc = filter_types(&a, configs, &n_configs)) != 0) goto done;
    if ((rc = resolve_versus(&a, configs, n_configs, &a.opt)) != 0) goto done;
    check_user_prices(&a, configs, n_configs);
    check_attention_paths(configs, n_configs);
    char origin[320] = "";
    rc = IB_EXIT_RUNTIME;
    if (load_prices(&a, configs, n_configs, &ps, origin, sizeof origin, &err) != 0) goto fail;
    have_prices = 1;
    if ((rc = check_region(&a, &ps)) != 0 || (rc = resolve_az(&a, &res, configs, n_configs, &ps)) != 0) goto done;
    rc = IB_EXIT_RUNTIME;
    if (load_quotes(&a, configs, n_configs, &block_quotes, &plan_quotes, quotes_missing, sizeof quotes_missing, &err) != 0)
        goto fail;
    a.opt.quotes_missing = quotes_missing;
    if (quotes_missing[0]) ib_warn("%s", quotes_missing);
    if (rank_score(configs, n_configs, &ps, &a.opt, &rows, &n_rows, &err) != 0) goto fail;
    if (ps.placement_note[0] && (a.opt.markets & RANK_MARKETS_SPOT)) ib_info("placement scores: %s", ps.placement_note);
    placement_scores(&a, configs, rows, n_rows);

    size_t n_with_price = 0;
    for (size_t i = 0; i < n_rows; i++) n_with_price += rows[i].priced != 0;
    char no_price[640] = "";
    if (n_with_price == 0) nothing_priced_hint(&a, configs, n_configs, n_rows, no_price, sizeof no_price);

    rank_filter_stats st;
    size_t n_priced = rank_filter(rows, &n_rows, &a.opt, &st);
    rank_pareto_mark(rows, n_priced);
    if (a.opt.pareto_only) rank_pareto_keep(rows, &n_priced, &n_rows, &st);
    rank_sort(rows, n_priced, configs, a.opt.sort);
    if (st.by_max_hourly) ib_info("%zu row%s over --max-hourly", st.by_max_hourly, st.by_max_hourly == 1 ? "" : "s");
    if (st.by_deadline) ib_info("%zu row%s miss --deadline", st.by_deadline, st.by_deadline == 1 ? "" : "s");
    if (st.by_budget) ib_info("%zu row%s over --budget", st.by_budget, st.by_budget == 1 ? "" : "s");
    if (st.by_pareto) ib_info("%zu row%s off the Pareto frontier", st.by_pareto, st.by_pareto == 1 ? "" : "s");
    if (n_priced == 0 && (st.by_max_hourly || st.by_deadline || st.by_budget))
        ib_warn("no configuration meets the constraints");

    /* --top trims the ranked rows only; the unpriced rows still say why they are missing. */
    if (a.top > 0 && (size_t)a.top < n_priced) {
        memmove(rows + a.top, rows + n_priced, (n_rows - n_priced) * sizeof *rows);
        n_rows -= n_priced - (size_t)a.top;
        n_priced = (size_t)a.top;
    }

    rank_report rep = {g,      groups, n_groups,       configs,  n_configs,      rows, n_priced,
                       n_rows, &a.opt, st,             a.samples > 0 ? 0 : a.epochs,
                       a.samples > 0 ? 0 : a.dataset_size, a.region, origin[0] ? origin : NULL,
                       res.files_read, res.n, res.skipped, res.duplicates, superseded(configs, n_configs),
                       a.columns.v, a.columns.n, a.wide, a.explain || ib_log_level >= 2};
    if (rep.superseded)
        ib_info("%zu extrapolated result%s left out: a run measured on all of %s nodes exists", rep.superseded,
                rep.superseded == 1 ? "" : "s", rep.superseded == 1 ? "its" : "their");
    if (write_report(&a, &rep, &err) != 0) goto fail;
    if (!strcmp(a.format, "csv"))
        for (size_t i = n_priced; i < n_rows; i++) {
            char label[256];
            rank_config_label(&configs[rows[i].config], rows[i].market, label, sizeof label);
            ib_warn("not ranked: %s: %s", label, rows[i].unpriced_reason);
        }
    if (a.plot) {
        if (rank_report_write_svg(&rep, a.plot, &err) != 0) goto fail;
        ib_info("wrote %s", a.plot);
    }
    /* a failed write to stdout is reported on exit (main.c) */
    if (no_price[0]) {
        /* the report above lists each configuration's reason; this says how to get a priced row */
        fprintf(stderr, "instbench rank: %s\n", no_price);
        rc = IB_EXIT_RUNTIME;
        goto done;
    }
    rc = IB_EXIT_OK;
    goto done;
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
