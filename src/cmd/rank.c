/* cmd/rank.c: `instbench rank` — result files x prices -> configurations ranked by samples per
 * dollar (or throughput, cost, time), as a table, JSON or CSV, with an optional SVG chart.
 * Flags are parsed here; the work is rank/ (pure) and output/ (rendering). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "instbench/prices.h"
#include "instbench/rank.h"
#include "instbench/util.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: instbench rank [options] RESULT...\n\n"
            "Ranks measured configurations (nodes x instance type x market) by training samples per dollar.\n\n"
            "RESULT: result files from `instbench measure`, directories (searched recursively for *.json and\n"
            "        *.jsonl), glob patterns, .jsonl files (one result per line), or - for stdin.\n"
            "        Invalid or foreign files are skipped with a reason on stderr.  Each result counts once:\n"
            "        a file, directory or run reached again is ignored (\"N duplicates ignored\").\n\n"
            "inputs:\n"
            "  --follow             follow symbolic links to directories met while walking RESULT directories\n"
            "                       (default: skipped with a note; a link given as RESULT is always followed)\n"
            "workload:\n"
            "  --workload FP        rank the results whose workload fingerprint starts with FP, or whose model\n"
            "                       is FP (results of different workloads are never ranked together; default:\n"
            "                       the group with the most results; the groups found are listed on stderr)\n"
            "prices:\n"
            "  --prices SRC         auto|live|cache|snapshot, or an instbench.prices/v1 FILE (default auto)\n"
            "  --region REGION      price every configuration in REGION (default: each result's own region)\n"
            "  --market M           on-demand|spot|both (default both; SageMaker ml.* types: on-demand only)\n"
            "  --spot-price P       lowest|median|az: spot price across the region's AZs (default lowest)\n"
            "  --az NAME            price spot in this AZ (implies --spot-price az)\n"
            "  --price NAME=USD     your price per node-hour for NAME: an instance type, or the hostname of\n"
            "                       results without one (own hardware, another cloud); NAME:spot=USD or\n"
            "                       NAME:on-demand=USD sets one market, plain NAME=USD the on-demand price.\n"
            "                       Repeatable.  Precedence: --price, then the price a result recorded\n"
            "                       (measure --hourly-cost), then AWS's; such rows show price source user\n"
            "target (adds time and cost columns):\n"
            "  --samples N          samples to process\n"
            "  --epochs E --dataset-size S   the same as --samples E*S\n"
            "constraints and order:\n"
            "  --deadline HOURS     drop configurations slower than this to the target\n"
            "  --budget USD         drop configurations costing more than this to the target\n"
            "  --max-hourly USD     drop configurations costing more than this per hour (all nodes)\n"
            "  --pareto             only configurations not beaten on both speed and cost per sample\n"
            "  --sort KEY           samples-per-dollar|throughput|cost|time (default samples-per-dollar)\n"
            "  --top N              show the best N rows only\n"
            "output:\n"
            "  --format F           table|json|csv (default: table on a terminal, json otherwise)\n"
            "  --plot FILE.svg      also write a chart: samples/s against $/h, Pareto frontier drawn\n"
            "  -h, --help           this help\n\n"
            "samples per dollar = samples/s x 3600 / (nodes x $/h per node); time = samples / (samples/s);\n"
            "cost = time x $/h.  Repeated runs of one configuration count once, at their median samples/s.\n"
            "exit status: 0 ok, 1 runtime error (no usable results, unreadable prices), 2 usage error\n");
}

typedef struct rank_args {
    char **paths;
    size_t n_paths;
    const char *workload, *prices, *region, *format, *plot;
    double samples, epochs, dataset_size;
    long top;
    rank_user_price *prices_given;   /* --price flags, in order */
    size_t n_prices_given;
    rank_options opt;
    rank_load_options load;
} rank_args;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "instbench rank: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(try: instbench rank --help)\n");
    va_end(ap);
    return IB_EXIT_USAGE;
}

/* Positive finite number up to MAX for flag NAME. */
static int number(const char *name, const char *v, double max, double *out)
{
    int rc = util_parse_double(v, 0, max, out);
    if (rc == 0 && *out > 0) return 0;
    if (rc == 0 || rc == UTIL_NUM_LOW) return usage_error("%s needs a positive number, got '%s'", name, v);
    char why[200];
    return usage_error("%s: %s", name, util_number_error(v, rc, 0, max, why, sizeof why));
}

static int parse_args(int argc, char **argv, rank_args *a)
{
    memset(a, 0, sizeof *a);
    rank_options_init(&a->opt);
    a->paths = calloc((size_t)argc, sizeof *a->paths);
    a->prices_given = calloc((size_t)argc, sizeof *a->prices_given);
    if (!a->paths || !a->prices_given) return IB_EXIT_RUNTIME;
    int spot_given = 0, only_paths = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (only_paths || arg[0] != '-' || !strcmp(arg, "-")) {
            a->paths[a->n_paths++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            only_paths = 1;
            continue;
        }
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(arg, "--pareto")) {
            a->opt.pareto_only = 1;
            continue;
        }
        if (!strcmp(arg, "--follow")) {
            a->load.follow = 1;
            continue;
        }
        /* Every other flag takes a value: "--flag VALUE" or "--flag=VALUE". */
        char name[64];
        const char *val, *eq = strchr(arg, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
            val = i + 1 < argc ? argv[i + 1] : NULL;
        }
        static const char *const valued[] = {"--workload", "--prices", "--region", "--market", "--spot-price",
                                             "--az", "--samples", "--epochs", "--dataset-size", "--deadline",
                                             "--budget", "--max-hourly", "--sort", "--top", "--format", "--plot",
                                             "--price"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++) known |= !strcmp(name, valued[k]);
        if (!known) return usage_error("unknown option '%s'", arg);
        if (!val) return usage_error("%s needs a value", name);
        if (!eq) i++;
        if (!val[0]) return usage_error("%s needs a non-empty value", name);

        if (!strcmp(name, "--workload")) a->workload = val;
        else if (!strcmp(name, "--prices")) a->prices = val;
        else if (!strcmp(name, "--price")) {
            rank_user_price *p = &a->prices_given[a->n_prices_given];
            char why[256];
            if (rank_parse_user_price(val, p, why, sizeof why) != 0) return usage_error("%s", why);
            /* Two prices for one machine and market is a typo more often than an intent. */
            for (size_t k = 0; k < a->n_prices_given; k++)
                if (a->prices_given[k].market == p->market && !strcasecmp(a->prices_given[k].name, p->name))
                    return usage_error("--price %s (%s) is given twice", p->name, rank_market_name(p->market));
            a->n_prices_given++;
        }
        else if (!strcmp(name, "--region")) {
            for (const char *p = val; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-') || strlen(val) > 31)
                    return usage_error("--region '%s' is not a region name (like us-east-1)", val);
            a->region = val;
        } else if (!strcmp(name, "--market")) {
            if (rank_parse_markets(val, &a->opt.markets) != 0)
                return usage_error("--market must be on-demand, spot or both, not '%s'", val);
        } else if (!strcmp(name, "--spot-price")) {
            if (rank_parse_spot_mode(val, &a->opt.spot_mode) != 0)
                return usage_error("--spot-price must be lowest, median or az, not '%s'", val);
            spot_given = 1;
        } else if (!strcmp(name, "--az")) {
            if (strlen(val) >= sizeof a->opt.az) return usage_error("--az '%s' is too long", val);
            strcpy(a->opt.az, val);
        } else if (!strcmp(name, "--samples")) {
            if (number(name, val, 1e18, &a->samples)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--epochs")) {
            if (number(name, val, 1e9, &a->epochs)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--dataset-size")) {
            if (number(name, val, 1e15, &a->dataset_size)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--deadline")) {
            if (number(name, val, 1e9, &a->opt.deadline_hours)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--budget")) {
            if (number(name, val, 1e15, &a->opt.budget_usd)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--max-hourly")) {
            if (number(name, val, 1e9, &a->opt.max_hourly_usd)) return IB_EXIT_USAGE;
        } else if (!strcmp(name, "--sort")) {
            if (rank_parse_sort_key(val, &a->opt.sort) != 0)
                return usage_error("--sort must be samples-per-dollar, throughput, cost or time, not '%s'", val);
        } else if (!strcmp(name, "--top")) {
            char why[200];
            int nrc = util_parse_int(val, 1, 1000000000L, &a->top);
            if (nrc != 0)
                return usage_error("--top needs a whole number >= 1: %s",
                                   util_number_error(val, nrc, 1, 1e9, why, sizeof why));
        } else if (!strcmp(name, "--format")) {
            if (strcmp(val, "table") && strcmp(val, "json") && strcmp(val, "csv"))
                return usage_error("--format must be table, json or csv, not '%s'", val);
            a->format = val;
        } else if (!strcmp(name, "--plot")) {
            a->plot = val;
        }
    }
    if (!a->n_paths) return usage_error("no result files given");
    if (a->samples > 0 && (a->epochs > 0 || a->dataset_size > 0))
        return usage_error("give either --samples or --epochs with --dataset-size, not both");
    if ((a->epochs > 0) != (a->dataset_size > 0))
        return usage_error("--epochs and --dataset-size go together");
    a->opt.target_samples = a->samples > 0 ? a->samples : a->epochs * a->dataset_size;
    if (a->opt.target_samples > 1e18) return usage_error("the target (--epochs x --dataset-size) is too large");
    if (!(a->opt.target_samples > 0) && (!isnan(a->opt.deadline_hours) || !isnan(a->opt.budget_usd)))
        return usage_error("--deadline and --budget need a target: --samples N or --epochs E --dataset-size S");
    if (a->opt.az[0]) {
        if (spot_given && a->opt.spot_mode != RANK_SPOT_AZ)
            return usage_error("--az goes with --spot-price az, not another mode");
        a->opt.spot_mode = RANK_SPOT_AZ;
    } else if (a->opt.spot_mode == RANK_SPOT_AZ) {
        return usage_error("--spot-price az needs --az NAME");
    }
    if (!a->format) a->format = util_isatty_stdout() ? "table" : "json";
    a->opt.user_prices = a->prices_given;
    a->opt.n_user_prices = a->n_prices_given;
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
        if ((o->markets & (1 << m)) && !(m == RANK_SPOT && rank_is_sagemaker_type(c->instance_type)) &&
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

/* Prices for the configurations: a file, or prices_get over the types and regions needed. */
static int load_prices(const rank_args *a, const rank_config *c, size_t n, price_set *ps, char *origin,
                       size_t olen, ib_error *err)
{
    const char *src = a->prices ? a->prices : "auto";
    prices_source s;
    if (!strcmp(src, "auto")) s = PRICES_SOURCE_AUTO;
    else if (!strcmp(src, "live")) s = PRICES_SOURCE_LIVE;
    else if (!strcmp(src, "cache")) s = PRICES_SOURCE_CACHE;
    else if (!strcmp(src, "snapshot")) s = PRICES_SOURCE_SNAPSHOT;
    else {
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
    q.want_on_demand = (a->opt.markets & RANK_MARKETS_ON_DEMAND) != 0;
    q.want_spot = (a->opt.markets & RANK_MARKETS_SPOT) != 0;
    q.source = s;
    int rc = 0;
    memset(ps, 0, sizeof *ps);
    if (q.n_types && q.n_regions) rc = prices_get(&q, ps, err);
    free(q.instance_types);
    free(q.regions);
    /* Each row names its price source already; the snapshot's provenance is for -v. */
    if (rc == 0 && ps->snapshot_note[0]) ib_debug("prices: %s", ps->snapshot_note);
    if (olen) origin[0] = '\0';
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
static void nothing_priced_hint(const rank_args *a, const rank_config *c, size_t n, char *out, size_t len)
{
    const rank_config *known = NULL;
    for (size_t i = 0; i < n && !known; i++)
        if (c[i].instance_type[0] && c[i].region[0]) known = &c[i];
    if (!known) {
        snprintf(out, len, "no configuration could be priced: no result says which instance type and region it ran "
                           "on; run measure on EC2 (IMDS) or give --instance-type T --region R, or rank with "
                           "--region R");
        return;
    }
    snprintf(out, len, "no configuration could be priced (e.g. %s in %s, with --prices %s): get prices with "
                       "`instbench prices --instance-types %s --regions %s -o prices.json` (live AWS needs "
                       "credentials) and pass --prices prices.json, or pick a --region or --market that has them",
             known->instance_type, known->region, a->prices ? a->prices : "auto", known->instance_type, known->region);
}

int cmd_rank(int argc, char **argv)
{
    rank_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.paths);
        free(a.prices_given);
        return rc < 0 ? IB_EXIT_OK : rc;
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
    rc = IB_EXIT_RUNTIME;

    if (rank_load(a.paths, a.n_paths, &a.load, &res, on_skip, NULL, &err) != 0) goto fail;
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

    if (rank_combine_runs(&res, g, a.region, &configs, &n_configs, &err) != 0) goto fail;
    check_user_prices(&a, configs, n_configs);
    char origin[320] = "";
    if (load_prices(&a, configs, n_configs, &ps, origin, sizeof origin, &err) != 0) goto fail;
    have_prices = 1;
    if (rank_score(configs, n_configs, &ps, &a.opt, &rows, &n_rows, &err) != 0) goto fail;
    if (ps.placement_note[0] && (a.opt.markets & RANK_MARKETS_SPOT)) ib_info("placement scores: %s", ps.placement_note);

    size_t n_with_price = 0;
    for (size_t i = 0; i < n_rows; i++) n_with_price += rows[i].priced != 0;
    char no_price[512] = "";
    if (n_rows > 0 && n_with_price == 0) nothing_priced_hint(&a, configs, n_configs, no_price, sizeof no_price);

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
                       res.files_read, res.n, res.skipped, res.duplicates};
    if (!strcmp(a.format, "json")) {
        if (rank_report_write_json(&rep, stdout, &err) != 0) goto fail;
    } else if (!strcmp(a.format, "csv")) {
        if (rank_report_write_csv(&rep, stdout, &err) != 0) goto fail;
        for (size_t i = n_priced; i < n_rows; i++) {
            char label[256];
            rank_config_label(&configs[rows[i].config], rows[i].market, label, sizeof label);
            ib_warn("not ranked: %s: %s", label, rows[i].unpriced_reason);
        }
    } else {
        if (rank_report_write_table(&rep, stdout, &err) != 0) goto fail;
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
    if (have_prices) prices_free(&ps);
    free(configs);
    rank_groups_free(groups, n_groups);
    rank_results_free(&res);
    free(a.paths);
    free(a.prices_given);
    return rc;
}
