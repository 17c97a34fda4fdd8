/* instbench prices: on-demand and spot prices per (instance type, region), from live AWS, the
 * on-disk cache or the shipped snapshot (see prices/ and aws/). */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/aws.h"
#include "instbench/instance_type.h"
#include "instbench/output.h"
#include "instbench/prices.h"

static struct {
    args_list types, regions, columns;
    int wide;
    const char *out_path;
    int create_dirs;            /* --create-dirs: make -o's missing directories */
    int market, source, format; /* choice indexes; format -1: by stdout */
    double ttl_hours, timeout_s;
    int page_size, no_scores;
    /* the shopping list: filters and order over what was fetched (prices/filter.c) */
    args_list accelerators;
    int min_vcpus, sort;
    double min_memory, min_acc_memory, max_price, max_spot_price; /* NAN: not given */
    int include_local_zones;
    /* --nodes: one count for every type, or one per --instance-types item (in its order) */
    int nodes[256];
    size_t n_nodes;
    /* the markets bought ahead (prices_market.c) */
    int duration_hours, term, payment, plan; /* term, payment, plan: -1 not given */
    time_t start_after, end_before;
    int started, ended;
} O;

static const char *const markets[] = {"on-demand", "spot", "both", "capacity-block", "savings-plan", NULL};
static const char *const terms[] = {"1y", "3y", NULL};
static const char *const payments[] = {"none", "partial", "all", NULL};
static const char *const plans[] = {"compute", "ec2-instance", "sagemaker", NULL};

static int duration_flag(void *dst, const char *flag, const char *value, ib_error *err)
{
    const char *why = markets_block_duration_problem(value, &O.duration_hours);
    return why ? ib_error_set(err, IB_EXIT_USAGE, "%s %s %s", flag, value, why) : 0;
}

static int date_flag(void *dst, const char *flag, const char *value, ib_error *err)
{
    time_t t;
    if (util_parse_iso8601(value, &t) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: '%s' is not a date like 2026-12-01 or 2026-12-01T11:30:00Z (UTC)",
                            flag, value);
    if (!strcmp(flag, "--start-after")) O.start_after = t, O.started = 1;
    else O.end_before = t, O.ended = 1;
    return 0;
}
static const char *const formats[] = {"table", "json", "csv", NULL};

/* An instance type with a size AWS uses (g5.xlarg is refused here, before any lookup), or a
 * pattern over the snapshot's types, made of the characters types and fnmatch use. */
static const char *type_or_pattern_problem(const char *v)
{
    if (prices_ultraserver_type_ok(v)) return NULL; /* --market capacity-block only (run_market) */
    if (!prices_is_pattern(v)) return names_instance_type_size_problem(v);
    if (strlen(v) >= 64 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789.-*?[]!") != strlen(v))
        return "is not an instance type like g5.xlarge nor a pattern like 'g5.*'";
    return NULL;
}

static const char *region_or_all_problem(const char *v) { return strcmp(v, "all") ? names_region_problem(v) : NULL; }

/* --accelerator NAME[:N]: NAME's shape and N, into NAME (32 bytes) and *COUNT (0: none given);
 * NULL, or why the value is malformed. */
static const char *parse_accelerator(const char *v, char *name, int *count)
{
    static char why[160];
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    *count = 0;
    if (!len) return "has no accelerator name (want NAME or NAME:N, e.g. A10G or A10G:4)";
    /* single inner spaces: AWS names some models in words ("RTX PRO Server 6000", g7e) */
    if (len >= 32 || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789- ") != len ||
        v[0] == ' ' || v[len - 1] == ' ')
        return "is not an accelerator name like A10G or H100 (want NAME or NAME:N, e.g. A10G:4)";
    memcpy(name, v, len);
    name[len] = '\0';
    if (strstr(name, "  ")) return "is not an accelerator name like A10G or H100 (want NAME or NAME:N, e.g. A10G:4)";
    if (colon) {
        long x;
        char num[96];
        int rc = util_parse_int(colon + 1, 1, 256, &x);
        if (rc) {
            snprintf(why, sizeof why,
                     "has a bad count: %s (want NAME:N with N accelerators per instance, a "
                     "whole number in [1, 256])",
                     util_number_error(colon + 1, rc, 1, 256, num, sizeof num));
            return why;
        }
        *count = (int)x;
    }
    return NULL;
}

/* A well-formed NAME[:N] whose NAME some type of the catalogue carries (any case). */
static const char *accelerator_problem(const char *v)
{
    static char why[512];
    char name[32];
    int count;
    const char *p = parse_accelerator(v, name, &count);
    if (p || prices_catalogue_accelerator(name)) return p;
    const char *const *known;
    size_t n = prices_catalogue_accelerators(&known), used = 0;
    used = (size_t)snprintf(why, sizeof why, "is not an accelerator of any instance type in the price catalogue (");
    for (size_t i = 0; i < n && used + 40 < sizeof why; i++)
        used += (size_t)snprintf(why + used, sizeof why - used, "%s%s", i ? ", " : "", known[i]);
    snprintf(why + used, sizeof why - used, ")");
    return why;
}

static const char *accelerator_suggest(const char *v)
{
    static char out[48];
    char name[32];
    int count;
    const char *near = parse_accelerator(v, name, &count) ? NULL : prices_suggest_accelerator(name);
    if (!near) return NULL;
    if (count) snprintf(out, sizeof out, "%s:%d", near, count);
    else snprintf(out, sizeof out, "%s", near);
    return out;
}

/* --nodes N[,N...]: whole numbers in [1, 10000], comma-separated (a count may repeat: 4,4). */
static int nodes_flag(void *dst, const char *flag, const char *value, ib_error *err)
{
    (void)dst;
    if (O.n_nodes) return ib_error_set(err, IB_EXIT_USAGE, "%s given twice (list the counts once: --nodes 4,1)", flag);
    for (const char *p = value;;) {
        size_t len = strcspn(p, ",");
        char item[32], num[96];
        long x;
        int rc = len < sizeof item ? 0 : 1;
        if (!rc) memcpy(item, p, len), item[len] = '\0';
        if (rc || (rc = util_parse_int(item, 1, 10000, &x)) != 0)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "%s: %s (want instances per type: N or N,N,... in "
                                "--instance-types order, each a whole number in [1, 10000])",
                                flag,
                                len < sizeof item ? util_number_error(item, rc, 1, 10000, num, sizeof num)
                                                  : "a count is too long");
        if (O.n_nodes == sizeof O.nodes / sizeof *O.nodes)
            return ib_error_set(err, IB_EXIT_USAGE, "%s: more than %zu counts", flag, sizeof O.nodes / sizeof *O.nodes);
        O.nodes[O.n_nodes++] = (int)x;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

static const arg_spec prices_specs[] = {
    {"--instance-types", 0, ARG_LIST, &O.types, "LIST",
     "comma-separated, repeatable, e.g. g5.xlarge,p4d.24xlarge; patterns\n"
     "such as 'g5.*' or 'p4*' match the snapshot's types; ml.* types give\n"
     "SageMaker training prices (default: every instance type in the\n"
     "shipped snapshot).  Listed in natural order (g5.2xlarge before\n"
     "g5.12xlarge)",
     .check = type_or_pattern_problem, .suggest = prices_suggest_type},
    {"--region", 0, ARG_LIST, &O.regions, "LIST",
     "comma-separated, repeatable, or all (the snapshot's regions; with\n"
     "live AWS every commercial region instbench knows) (default: the\n"
     "AWS region from AWS_REGION, AWS_DEFAULT_REGION, the profile or\n"
     "IMDS, else us-east-1)",
     .check = region_or_all_problem, .suggest = prices_suggest_region, .old_name = "--regions"},
    {"--market", 0, ARG_CHOICE, &O.market, NULL,
     "on-demand, spot, both (default), or a market bought ahead:\n"
     "capacity-block (EC2 Capacity Blocks for ML: the offerings for --block-duration\n"
     "and --nodes instances, their upfront fee and effective $/instance-hour;\n"
     "an UltraServer type such as u-p6e-gb200x72 in --instance-types asks for\n"
     "--nodes UltraServers; live only) or savings-plan (the plan's $/instance-hour for --plan,\n"
     "--term and --payment beside on-demand, with its break-even).  instbench\n"
     "never purchases a block or a plan",
     .choices = markets},
    {"--include-local-zones", 0, ARG_FLAG, &O.include_local_zones, NULL,
     "let Local Zones and Wavelength Zones (use1-atl2-az1, use1-wl1-bos-wlz1:\n"
     "one city each, opt-in per account) give the lowest spot price; by default\n"
     "it is the lowest over the region's Availability Zones (the zones stay\n"
     "listed in JSON, marked by zone_type)"},
    {"--nodes", 0, ARG_FN, NULL, "N[,N...]",
     "price N instances of each type together: one N for every type, or one\n"
     "per --instance-types item in its order (--instance-types\n"
     "g5.xlarge,g5.12xlarge --nodes 4,1: four against one); adds NODES, TOTAL\n"
     "ACCELERATORS and the TOTAL $/h of each market (CSV, JSON: nodes,\n"
     "total_accelerators, *_total_usd_per_hour)",
     .fn = nodes_flag},
    {"--source", 0, ARG_CHOICE, &O.source, NULL,
     "auto (default): live AWS, then the cache, then the snapshot, per price;\n"
     "live: AWS only, fail if it fails; cache: the on-disk cache only;\n"
     "snapshot: the shipped snapshot only (its date is printed)",
     .choices = prices_source_names},
    {"--format", 0, ARG_CHOICE, &O.format, NULL,
     "table (default on a terminal or with --columns), json (default\n"
     "otherwise; schema instbench.prices/v1, readable by `instbench rank --source`;\n"
     "with --columns flat rows, instbench.price-rows/v1, which rank does not read),\n"
     "csv (every column, or those --columns names)",
     .choices = formats},
    {"--cache-ttl", 0, ARG_DOUBLE, &O.ttl_hours, "HOURS", "how long cached live prices stay valid (default 24)", 0.001,
     24.0 * 366},
    {"--page-size", 0, ARG_INT, &O.page_size, "N", "results per AWS page (MaxResults; default the service maximum)", 1,
     1000},
    {"--no-placement-scores", 0, ARG_FLAG, &O.no_scores, NULL, "do not ask EC2 for spot placement scores"},
    {"--timeout", 0, ARG_DOUBLE, &O.timeout_s, "SECONDS",
     "limit per AWS request attempt (default 20; 3 attempts, AWS_MAX_ATTEMPTS)", 0.1, 600},
    {"--output", 'o', ARG_STRING, &O.out_path, "FILE",
     "write there instead of stdout (checked before any request; a file is\n"
     "replaced atomically, a device or FIFO written through)"},
    {"--create-dirs", 0, ARG_FLAG, &O.create_dirs, NULL,
     "create -o's missing directories (without it: refused, exit 2)"},
    {"--accelerator", 0, ARG_LIST, &O.accelerators, "NAME[:N]",
     "only types with this accelerator (A10G, H100, ...: the catalogue's\n"
     "names, any case; A100 is not A100-80GB), with :N exactly N of them per\n"
     "instance (A10G:4, H100:8); comma-separated or repeated: any of them",
     .check = accelerator_problem, .suggest = accelerator_suggest,
     .group = "shopping list (applied to the prices fetched, from every source, in every format)"},
    {"--min-vcpus", 0, ARG_INT, &O.min_vcpus, "N", "only types with at least N vCPUs", 1, 4096},
    {"--min-memory", 0, ARG_DOUBLE, &O.min_memory, "GIB", "only types with at least GIB GiB of instance (host) memory",
     0.001, 1048576, .want = "GiB of instance memory"},
    {"--min-accelerator-memory", 0, ARG_DOUBLE, &O.min_acc_memory, "GIB",
     "only types whose EACH accelerator has at least GIB GiB of memory\n"
     "(the ACCEL GiB column is all of them together: 4 x A10G shows 89,\n"
     "22.35 each); types without an accelerator never qualify",
     0.001, 1048576, .want = "GiB per accelerator"},
    {"--max-price", 0, ARG_DOUBLE, &O.max_price, "USD",
     "only rows costing at most USD per instance-hour in a market shown:\n"
     "the on-demand price or the lowest spot price (--market both: either)",
     0.0001, 100000, .want = "a price in USD per instance-hour"},
    {"--max-spot-price", 0, ARG_DOUBLE, &O.max_spot_price, "USD",
     "only rows whose lowest spot price is at most USD per instance-hour", 0.0001, 100000,
     .want = "a price in USD per instance-hour"},
    {"--sort", 0, ARG_CHOICE, &O.sort, NULL,
     "type (default): natural type order, then the regions as listed; price:\n"
     "on-demand ascending; spot: lowest spot ascending; savings: the row's\n"
     "SAVINGS % (1 - spot / on-demand) descending.  Rows without the figure come last;\n"
     "ties keep the type order",
     .choices = prices_sort_names},
    {"--block-duration", 0, ARG_FN, NULL, "DAYS",
     "capacity-block: the block's length, 3d or 72h (AWS sells 1-14 days in\n"
     "1-day steps, then 7-day steps up to 182d); required",
     .fn = duration_flag, .group = "capacity-block and savings-plan (--market)", .old_name = "--duration"},
    {"--start-after", 0, ARG_FN, NULL, "DATE",
     "capacity-block: offerings starting at or after DATE (UTC, 2026-12-01 or\n"
     "2026-12-01T11:30:00Z; within 8 weeks from now)",
     .fn = date_flag},
    {"--end-before", 0, ARG_FN, NULL, "DATE", "capacity-block: offerings ending by DATE", .fn = date_flag},
    {"--plan", 0, ARG_CHOICE, &O.plan, NULL,
     "savings-plan: compute (default for EC2 types), ec2-instance (one\n"
     "family in one region, the lower rate) or sagemaker (ml.* types; their default)",
     .choices = plans},
    {"--term", 0, ARG_CHOICE, &O.term, NULL, "savings-plan: 1y (default) or 3y", .choices = terms},
    {"--payment", 0, ARG_CHOICE, &O.payment, NULL,
     "savings-plan: none (default), partial or all upfront; the upfront\n"
     "part is shown amortised over the term",
     .choices = payments},
    ARGS_TABLE_SPECS(&O.wide, &O.columns,
                     "the CSV header names, the same in\n"
                     "the table, CSV and JSON (`--format csv` lists them; docs/usage.md), e.g.\n"
                     "instance_type, region, accelerator, vcpus, memory_gib,\n"
                     "on_demand_usd_per_hour, spot_min_usd_per_hour, spot_min_savings_pct,\n"
                     "interruption_label, placement_score, nodes, on_demand_total_usd_per_hour;\n"
                     "capacity-block and savings-plan have theirs.  The table's old keys (type,\n"
                     "on_demand, spot, ...) are accepted until " ARGS_OLD_UNTIL " with a note"),
    {0},
};

const arg_command cmd_prices_args = {
    "prices",
    "[options]",
    "On-demand (Linux, shared tenancy) and spot prices in USD per instance-hour, per instance type\n"
    "and region, with the Spot Advisor's interruption bucket and EC2 spot placement scores.",
    "Credentials and endpoints are resolved as the AWS CLI does (AWS_PROFILE, AWS_ENDPOINT_URL_PRICING,\n"
    "AWS_ENDPOINT_URL_EC2, ...).  Cache: $XDG_CACHE_HOME/instbench/prices (else ~/.cache/...),\n"
    "kept apart per endpoint: what an AWS_ENDPOINT_URL* server answered is never shown as AWS's.\n"
    "An instance type or region no source knows exits 2 with the nearest known name (a type newer\n"
    "than the snapshot is looked up live before it is called unknown); nothing found for what was\n"
    "asked exits 1.\n"
    "Hardware filters (--accelerator, --min-vcpus, --min-memory, --min-accelerator-memory) judge a\n"
    "type by the catalogue (the snapshot's hardware); a type it has no hardware for is left out by\n"
    "them, with a warning naming it.  Filters that leave no row exit 1 with a line naming the filter.\n",
    prices_specs,
    NULL,
    .examples =
        (const arg_example[]){
            {"four g5.xlarge against one g5.12xlarge: both markets, from the shipped snapshot (no AWS account)",
             "instbench prices --source snapshot --instance-types g5.xlarge,g5.12xlarge --nodes 4,1 --region "
             "us-east-1"},
            {"spot machines with four A10G in two regions, cheapest first",
             "instbench prices --accelerator A10G:4 --region us-east-1,us-west-2 --market spot --sort spot"},
            {"every g5 size as CSV for a spreadsheet",
             "instbench prices --instance-types 'g5.*' --format csv -o g5.csv"},
            {0}},
};

/* Every instance type of the snapshot, in natural order. */
static int default_types(char ***types, size_t *n)
{
    const char *const *cat;
    size_t k = prices_catalogue_types(&cat);
    ib_error err = {0};
    return prices_expand_types((char *const *)cat, k, types, n, &err);
}

/* "c6i, c7a, ..., trn1n": the snapshot's families, what --source snapshot can price. */
static void snapshot_families(char *out, size_t len)
{
    const char *const *fam;
    size_t n = prices_catalogue_families(&fam), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", fam[i]);
}

/* Where the region came from when no --region was given ("AWS_REGION", the profile, ...; "" when
 * --region named it or none was found): what a message about that region's name names. */
static char region_from[4200];

/* Names no source knows are usage errors naming the nearest known one; a type live AWS could not
 * be asked about only gets the suggestion as a warning.  0 when every name is known. */
static int check_names(const prices_query *q, const price_set *set)
{
    char dym[128];
    for (size_t t = 0; t < q->n_types; t++) {
        const char *type = q->instance_types[t];
        prices_name_state st = prices_type_state(q, set, type);
        if (st == PRICES_NAME_KNOWN) continue;
        /* the closest known name, only for a name that needs one (an edit distance to every
         * type the catalogue knows: most of a snapshot run's time when taken for every type) */
        const char *near = prices_suggest_type(type);
        if (st == PRICES_NAME_UNDECIDED) {
            if (near)
                ib_warn("no source knows '%s' (live AWS could not be asked)%s", type,
                        args_did_you_mean(near, dym, sizeof dym));
            continue;
        }
        char fams[512], where[640];
        snapshot_families(fams, sizeof fams);
        if (q->source == PRICES_SOURCE_SNAPSHOT)
            snprintf(where, sizeof where, "is not in the price snapshot (its families: %s; others need --source live)",
                     fams);
        else if (q->source == PRICES_SOURCE_CACHE)
            snprintf(where, sizeof where,
                     "is in neither the price snapshot nor the cache (fill the cache with "
                     "--source live)");
        else
            snprintf(where, sizeof where,
                     "is not an instance type AWS prices in the regions asked, nor one the "
                     "snapshot knows");
        /* a type sold only inside UltraServers has no hourly list price in any source: say why */
        instance_type_facts facts;
        if (instance_type_facts_get(type, &facts) == 0 && facts.ultraserver)
            return args_usage_error(&cmd_prices_args,
                                    "--instance-types: '%s' has no public on-demand or spot price: "
                                    "AWS sells it only as part of %s (--market capacity-block quotes those)",
                                    type, facts.ultraserver);
        return args_usage_error(&cmd_prices_args, "--instance-types: '%s' %s%s", type, where,
                                args_did_you_mean(near, dym, sizeof dym));
    }
    for (size_t r = 0; r < q->n_regions; r++)
        if (prices_region_state(set, q->regions[r]) == PRICES_NAME_UNKNOWN)
            return args_usage_error(&cmd_prices_args,
                                    "%s: '%s' is not an AWS region (and no source has a "
                                    "price there%s)%s",
                                    region_from[0] ? region_from : "--region", q->regions[r],
                                    region_from[0] ? "; fix it or name regions with --region" : "",
                                    args_did_you_mean(prices_suggest_region(q->regions[r]), dym, sizeof dym));
    return 0;
}

/* Exit 2 for a name no source knows (check_names), exit 1 with one line saying why when nothing
 * at all was found for what was asked (prices_check_found); 0 when something was. */
static int check_found(const prices_query *q, const price_set *set)
{
    int rc = check_names(q, set);
    return rc ? rc : prices_check_found(q, set);
}

/* The shopping list over SET: filters, then the order (prices/shop.c).  0, or IB_EXIT_RUNTIME with
 * one line when the filters leave nothing (or out of memory). */
static int shop(const prices_query *q, const prices_accelerator_want *acc, price_set *set)
{
    prices_filter f = {.accelerators = acc,
                       .n_accelerators = O.accelerators.n,
                       .min_vcpus = O.min_vcpus,
                       .min_memory_gib = O.min_memory,
                       .min_accelerator_memory_gib = O.min_acc_memory,
                       .max_usd_per_hour = O.max_price,
                       .max_spot_usd_per_hour = O.max_spot_price,
                       .want_on_demand = q->want_on_demand,
                       .want_spot = q->want_spot,
                       .include_local_zones = O.include_local_zones,
                       .sort = (prices_sort)O.sort};
    char typed[256] = ""; /* --accelerator as given, for the line that names it */
    for (size_t i = 0, u = 0; i < O.accelerators.n && u < sizeof typed; i++)
        u += (size_t)snprintf(typed + u, sizeof typed - u, "%s%s", i ? "," : "", O.accelerators.v[i]);
    return prices_shop(set, &f, typed);
}

/* --nodes against --instance-types: one count for all, or one per item given.  0 or exit 2. */
static int check_nodes(void)
{
    if (O.n_nodes <= 1 || O.n_nodes == O.types.n) return 0;
    if (!O.types.n)
        return args_usage_error(&cmd_prices_args,
                                "--nodes gives %zu counts but no --instance-types: one count prices "
                                "every type, several need the types they go with",
                                O.n_nodes);
    return args_usage_error(&cmd_prices_args,
                            "--nodes gives %zu counts for %zu --instance-types: give one for all, or "
                            "one per type in their order",
                            O.n_nodes, O.types.n);
}

/* The count --nodes gives TYPE: the one for all, or that of the --instance-types item naming it
 * (a pattern's count goes to every type it matches; the first item that matches wins). */
static int nodes_of(const char *type)
{
    if (O.n_nodes == 0) return 1;
    if (O.n_nodes == 1) return O.nodes[0];
    for (size_t i = 0; i < O.types.n; i++)
        if (!strcmp(O.types.v[i], type) || (prices_is_pattern(O.types.v[i]) && !fnmatch(O.types.v[i], type, 0)))
            return O.nodes[i];
    return 1;
}

/* --columns: the market's column keys (the CSV's header names, prices_view.c); an old key (the
 * table's before) becomes its column's, with one note naming it.  0 or exit 2. */
static int check_columns(void)
{
    const prices_column *cols = O.market == PRICES_MARKET_BLOCK  ? prices_block_columns
                                : O.market == PRICES_MARKET_PLAN ? prices_plan_columns
                                                                 : prices_columns;
    const char *keys[PRICES_MAX_COLUMNS + 1];
    size_t n = 0;
    while (cols[n].key && n < PRICES_MAX_COLUMNS) keys[n] = cols[n].key, n++;
    keys[n] = NULL;
    for (size_t i = 0; i < O.columns.n; i++) {
        int old;
        const char *key = prices_column_key(cols, O.columns.v[i], &old);
        if (!key || !old) continue; /* unknown: args_table_fit names the keys */
        if (args_column_renamed(&O.columns, i, key)) return IB_EXIT_RUNTIME;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(O.columns.v[j], O.columns.v[i]))
                return args_usage_error(&cmd_prices_args, "--columns: '%s' is listed twice (once by its old key)",
                                        O.columns.v[i]);
    }
    return args_table_fit(&cmd_prices_args, O.wide, &O.columns, keys);
}

/* Whether --columns names a column of the N-instance view (then it shows, N = 1 without --nodes). */
static int columns_ask_nodes(void)
{
    static const char *const keys[] = {"nodes",
                                       "total_accelerators",
                                       "on_demand_total_usd_per_hour",
                                       "spot_min_total_usd_per_hour",
                                       "interruption_job_rate_per_hour",
                                       "interruption_p_no_interruption_24h"};
    for (size_t i = 0; i < O.columns.n; i++)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            if (!strcmp(O.columns.v[i], keys[k])) return 1;
    return 0;
}

/* The flags of the markets bought ahead against --market: each only with its own market, and what
 * those markets cannot answer (spot filters, sort orders, placement scores) refused.  0 or exit 2. */
static int check_market_flags(void)
{
    int block = O.market == PRICES_MARKET_BLOCK, plan = O.market == PRICES_MARKET_PLAN;
    const char *block_flag = O.duration_hours ? "--block-duration"
                             : O.started      ? "--start-after"
                             : O.ended        ? "--end-before"
                                              : NULL;
    const char *plan_flag = O.term >= 0 ? "--term" : O.payment >= 0 ? "--payment" : O.plan >= 0 ? "--plan" : NULL;
    if (block_flag && !block)
        return args_usage_error(&cmd_prices_args, "%s prices a Capacity Block: it needs --market capacity-block",
                                block_flag);
    if (plan_flag && !plan)
        return args_usage_error(&cmd_prices_args, "%s prices a Savings Plan: it needs --market savings-plan",
                                plan_flag);
    if (!block && !plan) return 0;
    const char *other = O.accelerators.n           ? "--accelerator"
                        : O.min_vcpus              ? "--min-vcpus"
                        : !isnan(O.min_memory)     ? "--min-memory"
                        : !isnan(O.min_acc_memory) ? "--min-accelerator-memory"
                        : !isnan(O.max_price)      ? "--max-price"
                        : !isnan(O.max_spot_price) ? "--max-spot-price"
                        : O.sort                   ? "--sort"
                        : O.include_local_zones    ? "--include-local-zones"
                        : O.no_scores              ? "--no-placement-scores"
                        : O.page_size              ? "--page-size"
                                                   : NULL;
    if (other)
        return args_usage_error(&cmd_prices_args, "%s applies to on-demand and spot prices, not to --market %s", other,
                                markets[O.market]);
    if (!O.types.n)
        return args_usage_error(&cmd_prices_args, "--market %s needs --instance-types (one query per type: AWS %s)",
                                markets[O.market], block ? "quotes blocks per type and count" : "rates plans per type");
    if (block && !O.duration_hours)
        return args_usage_error(&cmd_prices_args,
                                "--market capacity-block needs --block-duration (e.g. 3d: AWS quotes a block "
                                "for a length)");
    for (size_t i = 0; block && i < O.n_nodes; i++)
        if (O.nodes[i] > MARKETS_BLOCK_MAX_INSTANCES)
            return args_usage_error(&cmd_prices_args, "--nodes %d: a Capacity Block holds 1 to %d instances",
                                    O.nodes[i], MARKETS_BLOCK_MAX_INSTANCES);
    char why[256];
    if (block && markets_block_window_check(time(NULL), O.start_after, O.end_before, O.duration_hours, why, sizeof why))
        return args_usage_error(&cmd_prices_args, "%s", why);
    return 0;
}

/* Whether TYPE is an --instance-types item itself, not only a pattern's match. */
static int named_outright(const char *type)
{
    for (size_t i = 0; i < O.types.n; i++)
        if (!prices_is_pattern(O.types.v[i]) && !strcmp(O.types.v[i], type)) return 1;
    return 0;
}

/* WRITE's output (into memory first, so a failure writes nothing) to -o's file, replaced
 * atomically, or to stdout.  An exit status. */
static int emit(int (*write)(const void *ctx, FILE *out, ib_error *err), const void *ctx, const char *out_path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ib_error err = {0};
    if (!mem) {
        fprintf(stderr, "instbench prices: out of memory\n");
        return IB_EXIT_RUNTIME;
    }
    int rc = write(ctx, mem, &err);
    if (fclose(mem) != 0 && !rc) rc = ib_error_set(&err, IB_EXIT_RUNTIME, "out of memory");
    if (rc) {
        fprintf(stderr, "instbench prices: %s\n", err.msg[0] ? err.msg : "out of memory");
        free(buf);
        return err.code ? err.code : IB_EXIT_RUNTIME;
    }
    if (out_path && util_write_file_atomic(out_path, buf, len, &err) != 0) {
        fprintf(stderr, "instbench prices: %s\n", err.msg);
        rc = err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
    } else if (!out_path) {
        fwrite(buf, 1, len, stdout); /* a failed write to stdout is reported on exit (main.c) */
    }
    free(buf);
    return rc;
}

static int write_market(const void *a, FILE *out, ib_error *err) { return prices_market_run(a, out, err); }

/* --market capacity-block or savings-plan (prices/prices_market.c). */
static int run_market(char **types, size_t n_types, char **regions, size_t n_regions, const char *format,
                      const char *out_path)
{
    prices_market_args a = {.market = O.market,
                            .types = types,
                            .n_types = n_types,
                            .regions = regions,
                            .n_regions = n_regions,
                            .nodes_of = nodes_of,
                            .duration_hours = O.duration_hours,
                            .start_after = O.start_after,
                            .end_before = O.end_before,
                            .term_years = O.term == 1 ? 3 : 1,
                            .payment = O.payment < 0 ? MARKETS_PAY_NONE : (markets_payment)O.payment,
                            .source = (prices_source)O.source,
                            .timeout_s = O.timeout_s,
                            .format = format,
                            .columns = O.columns.v,
                            .n_columns = O.columns.n};
    char **kept = NULL, why[320];
    int rc = prices_market_prepare(&a, O.plan, named_outright, &kept, why, sizeof why);
    if (rc == IB_EXIT_USAGE) rc = args_usage_error(&cmd_prices_args, "%s", why);
    else if (rc) fprintf(stderr, "instbench prices: out of memory\n");
    else rc = emit(write_market, &a, out_path);
    free(kept);
    return rc;
}

typedef struct written_prices {
    const price_set *set;
    prices_view view;
} written_prices;

static int write_prices(const void *ctx, FILE *out, ib_error *err)
{
    const written_prices *w = ctx;
    return prices_write(w->set, &w->view, out) ? ib_error_set(err, IB_EXIT_RUNTIME, "out of memory") : 0;
}

/* --region into Q: all (the snapshot's regions, and live AWS's), a list, or the one configured
 * (else us-east-1), written into DEFAULT_REGION[0] (32 bytes).  0, an exit status said, or -1
 * out of memory. */
static int resolve_regions(prices_query *q, char **default_region)
{
    if (O.regions.n == 1 && !strcmp(O.regions.v[0], "all")) {
        util_free_strv(O.regions.v, O.regions.n);
        O.regions.v = NULL, O.regions.n = 0;
        if (prices_all_regions(q->source == PRICES_SOURCE_AUTO || q->source == PRICES_SOURCE_LIVE, &q->regions,
                               &q->n_regions) != 0)
            return -1;
    } else if (O.regions.n > 1) {
        for (size_t i = 0; i < O.regions.n; i++)
            if (!strcmp(O.regions.v[i], "all"))
                return args_usage_error(&cmd_prices_args, "--region: all stands alone, not in a list of regions");
    }
    region_from[0] = '\0';
    if (!q->n_regions) {
        ib_error rerr = {0};
        int rr = aws_region_resolve_from(default_region[0], region_from, sizeof region_from, &rerr);
        if (rr < 0 && rerr.code == IB_EXIT_USAGE) /* configured, but not a region: say so */
            return args_usage_error(&cmd_prices_args, "%s: fix it or name regions with --region", rerr.msg);
        if (rr < 0) { /* the config file refused (a device, too large): never "no region" */
            fprintf(stderr, "instbench prices: %s\n", rerr.msg);
            return rerr.code ? rerr.code : IB_EXIT_RUNTIME;
        }
        if (rr != 0) {
            snprintf(default_region[0], 32, "us-east-1");
            ib_info("no AWS region configured; showing us-east-1 (use --region)");
        }
        q->regions = default_region;
        q->n_regions = 1;
    }
    return 0;
}

int cmd_prices(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    O.market = 2;
    O.format = -1;
    O.term = O.payment = O.plan = -1;
    O.min_memory = O.min_acc_memory = O.max_price = O.max_spot_price = NAN;
    prices_accelerator_want *acc = NULL;
    int rc = args_parse(&cmd_prices_args, argc, argv, NULL, NULL);
    if (rc) {
        util_free_strv(O.accelerators.v, O.accelerators.n);
        return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    }
    /* what the markets shown cannot answer is a usage error, not an empty or unordered list */
    const char *need_spot = O.sort == PRICES_SORT_SPOT      ? "--sort spot"
                            : O.sort == PRICES_SORT_SAVINGS ? "--sort savings"
                            : !isnan(O.max_spot_price)      ? "--max-spot-price"
                                                            : NULL;
    rc = check_market_flags();
    if (!rc) rc = check_columns();
    if (!rc) rc = check_nodes();
    if (!rc && O.market == 0 && need_spot)
        rc = args_usage_error(&cmd_prices_args, "%s needs spot prices, which --market on-demand does not show",
                              need_spot);
    if (!rc && O.market == 1 && O.sort == PRICES_SORT_PRICE)
        rc = args_usage_error(&cmd_prices_args, "--sort price orders by the on-demand price, which --market spot does "
                                                "not show (--sort spot orders by the lowest spot price)");
    if (!rc && O.accelerators.n && !(acc = calloc(O.accelerators.n, sizeof *acc))) {
        fprintf(stderr, "instbench prices: out of memory\n");
        rc = IB_EXIT_RUNTIME;
    }
    for (size_t i = 0; !rc && i < O.accelerators.n; i++) { /* args_parse checked each */
        parse_accelerator(O.accelerators.v[i], acc[i].name, &acc[i].count);
        snprintf(acc[i].name, sizeof acc[i].name, "%s", prices_catalogue_accelerator(acc[i].name));
    }
    if (rc) {
        free(acc);
        util_free_strv(O.accelerators.v, O.accelerators.n);
        util_free_strv(O.regions.v, O.regions.n);
        util_free_strv(O.types.v, O.types.n);
        util_free_strv(O.columns.v, O.columns.n);
        return rc;
    }
    const char *out_path = O.out_path;
    prices_query q = {.instance_types = O.types.v,
                      .n_types = O.types.n,
                      .regions = O.regions.v,
                      .n_regions = O.regions.n,
                      .want_on_demand = O.market != 1,
                      .want_spot = O.market != 0,
                      .source = (prices_source)O.source,
                      .page_size = O.page_size,
                      .timeout_s = O.timeout_s,
                      .skip_placement_scores = O.no_scores};
    const char *format = O.format >= 0                       ? formats[O.format]
                         : O.columns.n                       ? "table" /* the columns asked for are a table's */
                         : util_isatty_stdout() && !out_path ? "table"
                                                             : "json";
    if (O.ttl_hours > 0) q.cache_ttl_seconds = (int)ceil(O.ttl_hours * 3600);

    rc = IB_EXIT_RUNTIME;
    char region_buf[32];
    char *default_region[1] = {region_buf};
    ib_error err = {0};
    /* patterns become the snapshot types they match; every list is in natural order */
    q.instance_types = NULL, q.n_types = 0;
    if (!O.types.n && default_types(&q.instance_types, &q.n_types) != 0) goto oom;
    if (O.types.n && prices_expand_types(O.types.v, O.types.n, &q.instance_types, &q.n_types, &err) != 0) {
        if (err.code != IB_EXIT_USAGE) goto oom;
        rc = args_usage_error(&cmd_prices_args, "--instance-types: %s", err.msg);
        goto done;
    }
    if ((rc = resolve_regions(&q, default_region)) != 0) {
        if (rc < 0) goto oom;
        goto done;
    }

    price_set set;
    if (out_path && (util_output_parent_check(out_path, O.create_dirs, &err) != 0 ||
                     util_check_writable(out_path, 0, &err) != 0)) { /* before any AWS request */
        if (err.code == IB_EXIT_USAGE) {
            rc = args_usage_error(&cmd_prices_args, "%s", err.msg); /* -o names a place it cannot write */
        } else {
            fprintf(stderr, "instbench prices: %s\n", err.msg);
            rc = IB_EXIT_RUNTIME;
        }
        goto done;
    }
    for (size_t i = 0; O.market != PRICES_MARKET_BLOCK && i < q.n_types; i++)
        if (prices_ultraserver_type_ok(q.instance_types[i])) {
            rc = args_usage_error(&cmd_prices_args,
                                  "--instance-types: %s is an UltraServer: AWS sells it as a "
                                  "Capacity Block only (--market capacity-block)",
                                  q.instance_types[i]);
            goto done;
        }
    if (O.market >= PRICES_MARKET_BLOCK) {
        rc = run_market(q.instance_types, q.n_types, q.regions, q.n_regions, format, out_path);
        goto done;
    }
    if (prices_get(&q, &set, &err) != 0) {
        fprintf(stderr, "instbench prices: %s%s\n", q.source == PRICES_SOURCE_LIVE ? "--source live: " : "", err.msg);
        rc = err.code ? err.code : IB_EXIT_RUNTIME;
        goto done;
    }
    if ((rc = check_found(&q, &set)) != 0) {
        prices_free(&set);
        goto done;
    }
    if ((rc = shop(&q, acc, &set)) != 0) {
        prices_free(&set);
        goto done;
    }
    prices_warn_missing(&q, &set);
    set.include_local_zones = O.include_local_zones;
    set.nodes_asked = O.n_nodes > 0 || columns_ask_nodes();
    for (size_t i = 0; i < set.n; i++) set.items[i].nodes = nodes_of(set.items[i].instance_type);
    prices_node_scores(&q, &set);
    rc = IB_EXIT_RUNTIME;
    /* under --columns, only where a column of a market's prices is asked for (the table's
     * sources line says the same under the table) */
    int note_od = !O.columns.n, note_spot = !O.columns.n;
    for (size_t i = 0; i < O.columns.n; i++) prices_column_markets(O.columns.v[i], &note_od, &note_spot);
    if (prices_shown_from_snapshot(&set, q.want_on_demand && note_od, q.want_spot && note_spot))
        ib_info("note: prices marked 'snapshot' are from the snapshot of %s, not live AWS", set.snapshot_date);

    written_prices w = {&set,
                        {.format = format,
                         .want_on_demand = q.want_on_demand,
                         .want_spot = q.want_spot,
                         .now = time(NULL),
                         .columns = O.columns.v,
                         .n_columns = O.columns.n}};
    rc = emit(write_prices, &w, out_path);
    prices_free(&set);
    goto done;
oom:
    fprintf(stderr, "instbench prices: out of memory\n");
    rc = IB_EXIT_RUNTIME;
done:
    util_free_strv(q.instance_types, q.n_types);
    if (q.regions != default_region && q.regions != O.regions.v) util_free_strv(q.regions, q.n_regions);
    util_free_strv(O.regions.v, O.regions.n);
    util_free_strv(O.types.v, O.types.n);
    util_free_strv(O.columns.v, O.columns.n);
    util_free_strv(O.accelerators.v, O.accelerators.n);
    free(acc);
    return rc;
}
