/* libFuzzer target: `instbench rank` reads result files from anywhere (other machines, shared
 * folders).  Any bytes must either parse into a result with finite, bounded throughput and
 * printable strings, or be refused with a reason; a parsed result then goes through scoring and
 * every renderer (table, CSV, JSON, SVG) without tripping the sanitizers.  The options it is
 * ranked with follow from its bytes (knobs()), so each input renders one way and a mutation can
 * reach the others: the sort key, the markets bought ahead (a block and a plan quote for its
 * type), and the table with every column, wide and explained. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"
#include "instbench/rank.h"

static int printable(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s == 0x7f) return 0;
    return 1;
}

/* FNV-1a of the input: bits that pick the options, the same on every run of one input */
static uint32_t knobs(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rank_result r;
    char why[256];
    if (rank_parse_result((const char *)data, size, &r, why, sizeof why) != 0) {
        if (!why[0] || strlen(why) >= sizeof why) __builtin_trap();
        return 0;
    }
    if (!isfinite(r.samples_per_second) || r.samples_per_second <= 0 || r.nodes < 1 || !r.fingerprint[0])
        __builtin_trap();
    if (!printable(r.accelerator) || !printable(r.instance_type) || !printable(r.model)) __builtin_trap();

    rank_results rs = {&r, 1, 1, 1, 0};
    rank_group *g = NULL;
    size_t ng = 0, nc = 0, nrows = 0;
    rank_config *c = NULL;
    rank_row *rows = NULL;
    ib_error err;
    if (rank_group_by_workload(&rs, &g, &ng, &err) != 0 || ng != 1) __builtin_trap();
    if (rank_combine_runs(&rs, &g[0], "us-east-1", &c, &nc, &err) != 0 || nc != 1) __builtin_trap();
    /* A price for whatever type the input named, so the priced paths run too. */
    spot_price sp = {.az = "us-east-1a", .usd_per_hour = 0.5, .placement_score = (int)(size % 12) - 1};
    price_record pr = {0};
    snprintf(pr.instance_type, sizeof pr.instance_type, "%s", c[0].instance_type);
    strcpy(pr.region, "us-east-1");
    pr.on_demand_usd_per_hour = 1.25;
    pr.spot = &sp;
    pr.n_spot = 1;
    pr.interruption_bucket = (int)(size % 6) - 1;
    pr.placement_score = (int)(size % 11);
    price_set ps = {.items = &pr, .n = 1};
    rank_options o;
    rank_options_init(&o);
    o.target_samples = (double)size * 1000.0 + 1;
    const uint32_t k = knobs(data, size);
    o.sort = (rank_sort_key)(k & 3);
    rank_block_quote bq = {.region = "us-east-1", .az = "us-east-1a", .nodes = c[0].nodes, .hours = 24, .fee_usd = 300};
    rank_plan_quote pq = {.region = "us-east-1", .usd_per_hour = 0.9};
    if (k & 4) {
        snprintf(bq.instance_type, sizeof bq.instance_type, "%s", c[0].instance_type);
        snprintf(pq.instance_type, sizeof pq.instance_type, "%s", c[0].instance_type);
        bq.start = o.now + 7200;
        o.markets = RANK_MARKETS_ALL;
        o.blocks = &bq, o.n_blocks = 1, o.block_hours = 24;
        o.plans = &pq, o.n_plans = 1, o.plan_term_hours = 8760, o.plan_label = "Compute 1y No Upfront";
    }
    if (rank_score(c, nc, &ps, &o, &rows, &nrows, &err) != 0) __builtin_trap();
    size_t priced = rank_filter(rows, &nrows, &o, NULL);
    rank_pareto_mark(rows, priced);
    rank_sort(rows, priced, c, o.sort);
    rank_report rep = {&g[0], g, ng, c, nc, rows, priced, nrows, &o, {0}, 0, 0, NULL, "fuzz", 1, 1, 0};
    char *every[RANK_MAX_COLUMNS];
    if (k & 8) {
        for (const rank_column *col = rank_columns; col->key && rep.n_columns < RANK_MAX_COLUMNS; col++)
            every[rep.n_columns++] = (char *)col->key;
        rep.columns = every;
        rep.wide = rep.explain = 1;
    }
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        rank_report_write_table(&rep, sink, &err);
        rank_report_write_csv(&rep, sink, &err);
        rank_report_write_json(&rep, sink, &err);
        fclose(sink);
    }
    free(rows);
    free(c);
    rank_groups_free(g, ng);
    return 0;
}
