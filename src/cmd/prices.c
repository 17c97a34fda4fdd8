/* instbench prices: on-demand and spot prices per (instance type, region), from live AWS, the
 * on-disk cache or the shipped snapshot (see prices/ and aws/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/aws.h"
#include "instbench/prices.h"
#include "instbench/output.h"

static struct {
    args_list types, regions, columns;
    int wide;
    const char *out_path;
    int market, source, format;   /* choice indexes; format -1: by stdout */
    double ttl_hours, timeout_s;
    int page_size, no_scores;
} O;

static const char *const markets[] = {"on-demand", "spot", "both", NULL};
static const char *const formats[] = {"table", "json", "csv", NULL};

/* An instance type with a size AWS uses (g5.xlarg is refused here, before any lookup), or a
 * pattern over the snapshot's types, made of the characters types and fnmatch use. */
static const char *type_or_pattern_problem(const char *v)
{
    if (!prices_is_pattern(v)) return names_instance_type_size_problem(v);
    if (strlen(v) >= 64 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789.-*?[]!") != strlen(v))
        return "is not an instance type like g5.xlarge nor a pattern like 'g5.*'";
    return NULL;
}

static const char *region_or_all_problem(const char *v)
{
    return strcmp(v, "all") ? names_region_problem(v) : NULL;
}

static const arg_spec prices_specs[] = {
    {"--instance-types", 0, ARG_LIST, &O.types, "LIST", "comma-separated, repeatable, e.g. g5.xlarge,p4d.24xlarge; patterns\n"
     "such as 'g5.*' or 'p4*' match the snapshot's types; ml.* types give\n"
     "SageMaker training prices (default: every instance type in the\n"
     "shipped snapshot).  Listed in natural order (g5.2xlarge before\n"
     "g5.12xlarge)", .check = type_or_pattern_problem, .suggest = prices_suggest_type},
    {"--regions", 0, ARG_LIST, &O.regions, "LIST", "comma-separated, repeatable, or all (the snapshot's regions; with\n"
     "live AWS every commercial region instbench knows) (default: the\n"
     "AWS region from AWS_REGION, AWS_DEFAULT_REGION, the profile or\n"
     "IMDS, else us-east-1)", .check = region_or_all_problem, .suggest = prices_suggest_region},
    {"--market", 0, ARG_CHOICE, &O.market, NULL, "default both", .choices = markets},
    {"--source", 0, ARG_CHOICE, &O.source, NULL, "auto (default): live AWS, then the cache, then the snapshot, per price;\n"
     "live: AWS only, fail if it fails; cache: the on-disk cache only;\n"
     "snapshot: the shipped snapshot only (its date is printed)", .choices = prices_source_names},
    {"--format", 0, ARG_CHOICE, &O.format, NULL, "table (default on a terminal), json (default otherwise; schema\n"
     "instbench.prices/v1, readable by `instbench rank --prices`), csv", .choices = formats},
    {"--cache-ttl", 0, ARG_DOUBLE, &O.ttl_hours, "HOURS", "how long cached live prices stay valid (default 24)", 0.001, 24.0 * 366},
    {"--page-size", 0, ARG_INT, &O.page_size, "N", "results per AWS page (MaxResults; default the service maximum)", 1, 1000},
    {"--no-placement-scores", 0, ARG_FLAG, &O.no_scores, NULL, "do not ask EC2 for spot placement scores"},
    {"--timeout", 0, ARG_DOUBLE, &O.timeout_s, "SECONDS", "limit per AWS request attempt (default 20; 3 attempts, AWS_MAX_ATTEMPTS)",
     0.1, 600},
    {"--output", 'o', ARG_STRING, &O.out_path, "FILE", "write there instead of stdout (checked before any request; a file is\n"
     "replaced atomically, a device or FIFO written through)"},
    ARGS_TABLE_SPECS(&O.wide, &O.columns, "type, region, accelerators,\naccelerator_memory, vcpus, memory, on_demand, on_demand_source, spot,\nspot_az, azs, interruption, savings, advisor_savings, placement,\nspot_source"),
    {0},
};

const arg_command cmd_prices_args = {
    "prices", "[options]",
    "On-demand (Linux, shared tenancy) and spot prices in USD per instance-hour, per instance type\n"
    "and region, with the Spot Advisor's interruption bucket and EC2 spot placement scores.",
    "Credentials and endpoints are resolved as the AWS CLI does (AWS_PROFILE, AWS_ENDPOINT_URL_PRICING,\n"
    "AWS_ENDPOINT_URL_EC2, ...).  Cache: $XDG_CACHE_HOME/instbench/prices (else ~/.cache/...).\n"
    "An instance type or region no source knows exits 2 with the nearest known name (a type newer\n"
    "than the snapshot is looked up live before it is called unknown); nothing found for what was\n"
    "asked exits 1.\n",
    prices_specs, NULL,
};

/* Every instance type of the snapshot, in natural order. */
static int default_types(char ***types, size_t *n)
{
    const char *const *cat;
    size_t k = prices_catalogue_types(&cat);
    ib_error err = {0};
    return prices_expand_types((char *const *)cat, k, types, n, &err);
}

static int wanted_price(const prices_query *q, const price_record *r)
{
    /* a spot answer with no zone (live AWS: no such product) is no price */
    return (q->want_on_demand && !isnan(r->on_demand_usd_per_hour)) || (q->want_spot && r->spot_source[0] && r->n_spot);
}

/* Names no source knows are usage errors naming the nearest known one; a type live AWS could not
 * be asked about only gets the suggestion as a warning.  0 when every name is known. */
static int check_names(const prices_query *q, const price_set *set)
{
    char dym[128];
    for (size_t t = 0; t < q->n_types; t++) {
        const char *type = q->instance_types[t];
        prices_name_state st = prices_type_state(q, set, type);
        const char *near = prices_suggest_type(type);
        if (st == PRICES_NAME_UNDECIDED) {
            if (near) ib_warn("no source knows '%s' (live AWS could not be asked)%s", type,
                              args_did_you_mean(near, dym, sizeof dym));
            continue;
        }
        if (st == PRICES_NAME_KNOWN) continue;
        const char *where = q->source == PRICES_SOURCE_SNAPSHOT ? "is not in the price snapshot (accelerated types "
                                                                  "only; others need --source live)"
                            : q->source == PRICES_SOURCE_CACHE ? "is in neither the price snapshot nor the cache "
                                                                 "(fill the cache with --source live)"
                                                               : "is not an instance type AWS prices in the regions "
                                                                 "asked, nor one the snapshot knows";
        return args_usage_error(&cmd_prices_args, "--instance-types: '%s' %s%s", type, where,
                                args_did_you_mean(near, dym, sizeof dym));
    }
    for (size_t r = 0; r < q->n_regions; r++)
        if (prices_region_state(set, q->regions[r]) == PRICES_NAME_UNKNOWN)
            return args_usage_error(&cmd_prices_args, "--regions: '%s' is not an AWS region (and no source has a "
                                    "price there)%s", q->regions[r],
                                    args_did_you_mean(prices_suggest_region(q->regions[r]), dym, sizeof dym));
    return 0;
}

/* Exit 2 for a name no source knows (check_names), exit 1 with one line saying why when nothing
 * at all was found for what was asked; 0 when something was. */
static int check_found(const prices_query *q, const price_set *set)
{
    int rc = check_names(q, set);
    if (rc) return rc;
    for (size_t i = 0; i < set->n; i++)
        if (wanted_price(q, &set->items[i])) return 0;
    char types[96], regions[96], cache[512] = "the cache";
    if (q->n_types == 1) snprintf(types, sizeof types, "%s", q->instance_types[0]);
    else snprintf(types, sizeof types, "%zu instance types", q->n_types);
    if (q->n_regions == 1) snprintf(regions, sizeof regions, "%s", q->regions[0]);
    else snprintf(regions, sizeof regions, "%zu regions", q->n_regions);
    if (prices_cache_dir(cache, sizeof cache) != 0) snprintf(cache, sizeof cache, "the cache");
    const char *market = q->want_on_demand && q->want_spot ? "" : q->want_spot ? "spot " : "on-demand ";
    switch (q->source) {
    case PRICES_SOURCE_CACHE:
        fprintf(stderr, "instbench prices: no %sprice for %s in %s in %s younger than the TTL: fill it with "
                        "--source live (needs AWS credentials) or use --source auto or snapshot\n",
                market, types, regions, cache);
        break;
    case PRICES_SOURCE_SNAPSHOT:
        fprintf(stderr, "instbench prices: the shipped snapshot has no %sprice for %s in %s (it covers "
                        "accelerated types only): check the names, or use --source live\n", market, types, regions);
        break;
    default:
        fprintf(stderr, "instbench prices: no %sprice for %s in %s from %s: no such product there (check the "
                        "instance type and region)\n", market, types, regions,
                q->source == PRICES_SOURCE_LIVE ? "AWS" : "AWS, the cache or the snapshot");
        break;
    }
    return IB_EXIT_RUNTIME;
}

int cmd_prices(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    O.market = 2;
    O.format = -1;
    int rc = args_parse(&cmd_prices_args, argc, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if ((rc = args_table_fit(&cmd_prices_args, O.wide, &O.columns, prices_table_keys))) return rc;
    const char *out_path = O.out_path;
    prices_query q = {.instance_types = O.types.v, .n_types = O.types.n, .regions = O.regions.v,
                      .n_regions = O.regions.n, .want_on_demand = O.market != 1, .want_spot = O.market != 0,
                      .source = (prices_source)O.source, .page_size = O.page_size, .timeout_s = O.timeout_s,
                      .skip_placement_scores = O.no_scores};
    const char *format = O.format >= 0 ? formats[O.format] : util_isatty_stdout() && !out_path ? "table" : "json";
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
    if (O.regions.n == 1 && !strcmp(O.regions.v[0], "all")) {
        util_free_strv(O.regions.v, O.regions.n);
        O.regions.v = NULL, O.regions.n = 0;
        if (prices_all_regions(q.source == PRICES_SOURCE_AUTO || q.source == PRICES_SOURCE_LIVE, &q.regions,
                               &q.n_regions) != 0)
            goto oom;
    } else if (O.regions.n > 1) {
        for (size_t i = 0; i < O.regions.n; i++)
            if (!strcmp(O.regions.v[i], "all")) {
                rc = args_usage_error(&cmd_prices_args, "--regions: all stands alone, not in a list of regions");
                goto done;
            }
    }
    if (!q.n_regions) {
        ib_error rerr = {0};
        int rr = aws_region_resolve(region_buf, &rerr);
        if (rr != 0 && rerr.code == IB_EXIT_USAGE) {
            /* configured, but not a region: say so rather than quietly show another one */
            rc = args_usage_error(&cmd_prices_args, "%s: fix it or name regions with --regions", rerr.msg);
            goto done;
        }
        if (rr != 0) {
            snprintf(region_buf, sizeof region_buf, "us-east-1");
            ib_info("no AWS region configured; showing us-east-1 (use --regions)");
        }
        q.regions = default_region;
        q.n_regions = 1;
    }

    price_set set;
    if (out_path && util_check_writable(out_path, 0, &err) != 0) {   /* before any AWS request */
        fprintf(stderr, "instbench prices: %s\n", err.msg);
        rc = err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
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
    rc = IB_EXIT_RUNTIME;
    if (prices_shown_from_snapshot(&set, q.want_on_demand, q.want_spot))
        ib_info("note: prices marked 'snapshot' are from the snapshot of %s, not live AWS", set.snapshot_date);

    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int wrc = -1;
    if (mem) {
        if (!strcmp(format, "json")) {
            char *txt = prices_to_json(&set);
            wrc = txt && fputs(txt, mem) >= 0 ? 0 : -1;
            free(txt);
        } else if (!strcmp(format, "csv")) {
            wrc = prices_write_csv(&set, mem);
        } else {
            wrc = prices_write_table(&set, q.want_on_demand, q.want_spot, time(NULL), mem);
        }
        if (fclose(mem) != 0) wrc = -1;
    }
    prices_free(&set);
    if (wrc != 0) {
        free(buf);
        goto oom;
    }
    if (out_path) {
        if (util_write_file_atomic(out_path, buf, len, &err) != 0) {
            fprintf(stderr, "instbench prices: %s\n", err.msg);
            rc = err.code == IB_EXIT_USAGE ? IB_EXIT_USAGE : IB_EXIT_RUNTIME;
            free(buf);
            goto done;
        }
    } else {
        fwrite(buf, 1, len, stdout);   /* a failed write to stdout is reported on exit (main.c) */
    }
    free(buf);
    rc = IB_EXIT_OK;
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
    return rc;
}
