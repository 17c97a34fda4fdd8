/* rank/report.c: ranked rows -> the table people read and the CSV spreadsheets read.
 *
 * The table rounds and groups digits (money and durations in output's one style), with units in
 * the headers and the figures' sources under it; the CSV carries the same rows as
 * plain full-precision numbers (no units, no separators), so the two never disagree except in
 * rounding.  Both put every market of every configuration in one list, which is what makes
 * "4 x g5.xlarge spot" against "1 x g5.12xlarge on-demand" readable in one glance.  Text from
 * result and price files (names, reasons, file names) reaches the table terminal-safe. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"
#include "instbench/rank.h"
#include "rank/internal.h"

void rank_report_price_summary(const rank_report *r, char *out, size_t len)
{
    /* Distinct sources in a fixed order, plus the as-of date range of the prices used. */
    static const char *const order[] = {"live", "cache", "snapshot", "file", "user"};
    char srcs[96] = "";
    time_t lo = 0, hi = 0;
    for (size_t i = 0; i < r->n_priced; i++) {
        time_t t = r->rows[i].price_as_of;
        if (t > 0 && (!lo || t < lo)) lo = t;
        if (t > hi) hi = t;
    }
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        for (size_t i = 0; i < r->n_priced; i++)
            if (!strcmp(r->rows[i].price_source, order[k])) {
                size_t u = strlen(srcs);
                snprintf(srcs + u, sizeof srcs - u, "%s%s", u ? "+" : "", order[k]);
                break;
            }
    char a[32] = "", b[32] = "";
    if (lo) util_utc_iso8601(lo, a), a[10] = '\0';
    if (hi) util_utc_iso8601(hi, b), b[10] = '\0';
    char dates[80] = "";
    if (lo && strcmp(a, b)) snprintf(dates, sizeof dates, " as of %s..%s", a, b);
    else if (lo) snprintf(dates, sizeof dates, " as of %s", a);
    snprintf(out, len, "%s%s", srcs[0] ? srcs : "no prices", dates);
}

static size_t dropped_by_constraints(const rank_report *r)
{
    return r->removed.by_max_hourly + r->removed.by_deadline + r->removed.by_budget;
}

static void workload_line(const rank_report *r, char *out, size_t len)
{
    const rank_group *g = r->group;
    char batch[64] = "";
    if (g->batch_per_device > 0) snprintf(batch, sizeof batch, ", batch %ld/device", g->batch_per_device);
    snprintf(out, len, "workload %.12s: %s %s%s%s%s", g->fingerprint, g->model[0] ? g->model : "(model?)", g->precision,
             batch, g->data[0] ? ", data " : "", g->data);
}

/* Some ranked row is of market M; with BY_TARGET_COST, one that ranks by what the target costs
 * there (score.c), not by its $/h. */
static int any_market(const rank_report *r, rank_market m, int by_target_cost)
{
    for (size_t i = 0; i < r->n_priced; i++)
        if (r->rows[i].market == m && (!by_target_cost || rank_row_ranks_by_target_cost(&r->rows[i], r->opts)))
            return 1;
    return 0;
}

/* The lines above the table: workload, results, prices, target, order. */
static void write_header(const rank_report *r, FILE *out)
{
    const rank_options *o = r->opts;
    char line[512], prices[160];
    workload_line(r, line, sizeof line);
    rank_report_price_summary(r, prices, sizeof prices);
    output_note(out, "%s", line);
    const char *region = r->n_rows ? r->configs[r->rows[0].config].region : "";
    for (size_t i = 1; i < r->n_rows; i++)
        if (strcmp(r->configs[r->rows[i].config].region, region)) region = "";
    output_note(out, "%zu result%s in %zu configuration%s%s%s", r->group->n, r->group->n == 1 ? "" : "s", r->n_configs,
                r->n_configs == 1 ? "" : "s", region[0] ? " in " : "", region);
    /* The origin (snapshot note, file name) only when it says more than the summary does. */
    int say_origin = r->prices_origin && strcmp(r->prices_origin, "auto") &&
                     strncmp(prices, r->prices_origin, strlen(r->prices_origin));
    /* the summary is of the rows shown: when the constraints dropped every priced one it would say
     * "no prices" of rows that had prices (the line under the table says what happened) */
    if (r->n_priced || !dropped_by_constraints(r))
        output_note(out, "prices: %s%s%s%s", prices, say_origin ? " (" : "", say_origin ? r->prices_origin : "",
                    say_origin ? ")" : "");
    if (o->target_samples > 0) {
        char n[64];
        output_fmt_grouped(n, sizeof n, o->target_samples, 0);
        if (r->epochs > 0) {
            char ds[64];
            output_fmt_grouped(ds, sizeof ds, r->dataset_size, 0);
            output_note(out, "target: %g epochs x %s samples = %s samples", r->epochs, ds, n);
        } else {
            output_note(out, "target: %s samples", n);
        }
    }
    /* rows bought ahead rank, with a target, by what it costs there (score.c): said where they are */
    const int by_spd = o->sort == RANK_SORT_SAMPLES_PER_DOLLAR;
    const int cb = by_spd && any_market(r, RANK_CAPACITY_BLOCK, 1);
    const int sp = by_spd && any_market(r, RANK_SAVINGS_PLAN, 1);
    int eff_shown = !r->n_columns; /* the default table shows EFF. SAMPLES/$ on such rows */
    for (size_t i = 0; i < r->n_columns; i++) eff_shown |= !strcmp(r->columns[i], "effective_samples_per_dollar");
    output_note(out, "sorted by %s%s%s%s%s%s%s%s", rank_sort_key_name(o->sort), cb || sp ? " (" : "",
                cb ? "capacity-block" : "", cb && sp ? " and " : "", sp ? "savings-plan" : "",
                cb || sp ? " rows: samples per dollar of what the target costs there" : "",
                cb || sp ? (eff_shown ? ", EFF. SAMPLES/$)" : ")") : "",
                o->pareto_only ? "; Pareto frontier only" : "");
    fputc('\n', out);
}

enum { MAX_SHOWN = RANK_MAX_COLUMNS };

/* ITEMS joined by SEP into OUT ("" for none; cut at LEN). */
static void join(const char *const *items, size_t n, const char *sep, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0, u = 0; i < n && u < len; i++)
        u += (size_t)snprintf(out + u, len - u, "%s%s", i ? sep : "", items[i]);
}

/* A value in the table's style where the column has none of its own: whole numbers plain, others
 * grouped with two decimals, flags yes/no, lists comma-joined, nothing "-". */
static void people_text(const rank_value *v, char *out, size_t len)
{
    switch (v->kind) {
    case RANK_V_NUMBER: output_fmt_grouped(out, len, v->number, v->number == floor(v->number) ? 0 : 2); break;
    case RANK_V_TEXT: snprintf(out, len, "%s", v->text); break;
    case RANK_V_BOOL: snprintf(out, len, "%s", v->flag ? "yes" : "no"); break;
    case RANK_V_TIME: util_utc_spreadsheet((time_t)v->number, out); break;
    case RANK_V_LIST:
        if (v->n_items) join(v->items, v->n_items, ",", out, len);
        else snprintf(out, len, "-");
        break;
    default: snprintf(out, len, "-");
    }
}

/* The first ranked spot row the model covers, or NULL. */
static const rank_row *first_risky(const rank_report *r)
{
    for (size_t i = 0; i < r->n_priced; i++)
        if (r->rows[i].risk.valid) return &r->rows[i];
    return NULL;
}

/* Some ranked spot row has an on-demand row to break even against. */
static int any_breakeven(const rank_report *r)
{
    for (size_t i = 0; i < r->n_priced; i++)
        if (r->rows[i].risk.valid && r->rows[i].risk.breakeven_against >= 0) return 1;
    return 0;
}

/* Some ranked spot row has a placement score (live AWS only: from the snapshot, the cache or a
 * prices file, or without ec2:GetSpotPlacementScores, no row has one). */
static int any_placement(const rank_report *r)
{
    for (size_t i = 0; i < r->n_priced; i++)
        if (r->rows[i].market == RANK_SPOT && r->rows[i].placement_score > 0) return 1;
    return 0;
}

/* The table's default columns for this report: one region for every row is said above the table
 * instead of in a column; without a target the time and cost columns would be empty; without a
 * spot row the model covers, the risk columns would repeat SAMPLES/$ or be empty (without any spot
 * row, spot's columns would be empty too); P90 time and
 * P(no interruption) only with --wide. */
static size_t table_columns(const rank_report *r, const rank_column **cols)
{
    if (r->n_columns) return rank_report_columns(r, NULL, cols, MAX_SHOWN);
    int one_region = 1, risk = first_risky(r) != NULL, target = r->opts->target_samples > 0;
    const int by_target_cost = any_market(r, RANK_CAPACITY_BLOCK, 1) || any_market(r, RANK_SAVINGS_PLAN, 1);
    for (size_t i = 1; i < r->n_rows; i++)
        one_region &= !strcmp(r->configs[r->rows[i].config].region, r->configs[r->rows[0].config].region);
    const rank_column *all[MAX_SHOWN];
    size_t n = rank_report_columns(r, rank_table_keys, all, MAX_SHOWN), k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *key = all[i]->key;
        if (one_region && !strcmp(key, "region")) continue;
        if (!target && (!strcmp(key, "hours_to_target") || !strcmp(key, "cost_to_target_usd"))) continue;
        /* EFF. SAMPLES/$ where some row ranks by a figure other than its SAMPLES/$: spot with its
         * interruptions priced in, a row bought ahead by what the target costs there */
        if (!risk && !by_target_cost && !strcmp(key, "effective_samples_per_dollar")) continue;
        if (!any_breakeven(r) && !strcmp(key, "breakeven_rate_per_node_hour")) continue;
        /* the markets bought ahead: their columns only when such a row is ranked */
        if (!any_market(r, RANK_CAPACITY_BLOCK, 0) && (!strcmp(key, "blocks_to_target") || !strcmp(key, "wait_hours")))
            continue;
        if (!any_market(r, RANK_SAVINGS_PLAN, 0) &&
            (!strcmp(key, "plan_break_even_on_demand") || !strcmp(key, "plan_break_even_spot")))
            continue;
        /* spot's own columns only when a spot row is ranked: under --market on-demand or
         * savings-plan they were empty on every row */
        if (!any_market(r, RANK_SPOT, 0) &&
            (!strcmp(key, "spot_az") || !strcmp(key, "interruption_label") || !strcmp(key, "plan_break_even_spot")))
            continue;
        /* PLACEMENT only when some row has a score: from the snapshot it read "?" on every row */
        if (!any_placement(r) && !strcmp(key, "placement_score")) continue;
        if ((!risk || !target || !r->wide) &&
            (!strcmp(key, "p90_hours_to_target") || !strcmp(key, "p_no_interruption")))
            continue;
        cols[k++] = all[i];
    }
    return k;
}

/* Where each figure shown comes from, under the table T (the price's own source is a column),
 * then one line per mark the shown rows carry. */
/* What the PLACEMENT figures asked AWS, and AWS's own caveat on a score of one or two types. */
static void placement_note(const rank_report *r, FILE *out)
{
    int single_type = 0, multi = 0, multi_unknown = 0, pooled = 0;
    for (size_t i = 0; i < r->n_priced; i++) {
        const rank_row *row = &r->rows[i];
        if (row->market != RANK_SPOT) continue;
        const int nodes = r->configs[row->config].nodes > 1;
        multi |= nodes;
        multi_unknown |= nodes && row->placement_score < 1;
        if (row->placement_score < 1) continue;
        single_type |= row->placement_types <= 2;
        pooled |= row->placement_types > 2;
    }
    if (multi)
        output_note(out,
                    "PLACEMENT of an N-node row: the score for N instances in one zone (SingleAvailabilityZone: "
                    "its cluster placement group lives in one), the zone it is priced in%s.",
                    multi_unknown ? "; ? where it could not be asked (live AWS only: -v says why)" : "");
    if (single_type)
        output_note(out,
                    "PLACEMENT asked for %s: AWS says a score for one or two instance types is always low; "
                    "--placement-pool TYPES asks together with the types you would accept (AWS recommends at "
                    "least three).",
                    pooled ? "one or two types on some rows" : "the row's instance type alone");
}

static void write_legend(const rank_report *r, const output_table *t, FILE *out)
{
    int spot = 0, extra = 0, mismatch = 0, noisy = 0, sockets = 0, path[RANK_ATTENTION_PATHS] = {0};
    int builds = 0; /* these rows' runs came from more than one build (tool.revision; "" unknown) */
    const char *first_build = NULL;
    unsigned warned = 0;
    for (size_t i = 0; i < r->n_priced; i++) {
        const rank_config *c = &r->configs[r->rows[i].config];
        for (size_t j = 0; j < c->n_revisions; j++) {
            if (!first_build) first_build = c->revisions[j].text;
            builds |= strcmp(first_build, c->revisions[j].text) != 0;
        }
        for (int k = 0; k < RANK_ATTENTION_PATHS; k++) path[k] |= !strcmp(c->attention, rank_attention_paths[k]);
        spot |= r->rows[i].market == RANK_SPOT;
        extra |= c->extrapolated;
        mismatch |= c->identity_mismatch;
        noisy |= rank_config_noisy(c);
        warned |= c->warnings;
        sockets |= c->socket_on_efa;
    }
    const int runs = output_table_showed(t, "runs"), price = output_table_showed(t, "price_source");
    const int hours = output_table_showed(t, "hours_to_target"), cost = output_table_showed(t, "cost_to_target_usd");
    const int intr = spot && output_table_showed(t, "interruption_label");
    const int place = spot && output_table_showed(t, "placement_score");
    output_note(out, "sources: SAMPLES/s measured%s; $/h (all nodes) from %s; SAMPLES/$%s%s%s computed from those%s%s.",
                runs ? " (the median of RUNS)" : "",
                price          ? "PRICE SOURCE"
                : r->n_columns ? "each row's price source (--columns ...,price_source shows it)"
                               : "each row's price source (--wide shows it)",
                hours ? ", TIME" : "", cost ? (hours ? " and COST" : ", COST") : "",
                hours || cost ? " to the target" : "",
                intr ? "; INTERRUPTION: AWS Spot Instance Advisor (region-wide)" : "",
                place ? "; PLACEMENT: EC2 spot placement scores" : "");
    /* the markets' and placement's explanations: with --explain (or -v); a few lines by default */
    const int cb = any_market(r, RANK_CAPACITY_BLOCK, 0), sp = any_market(r, RANK_SAVINGS_PLAN, 0);
    if (!r->explain && (cb || sp || spot))
        output_note(out, "--explain (or -v): how the %s%s%s figures are made%s.", spot ? "spot" : "",
                    cb ? (spot ? (sp ? ", capacity-block" : " and capacity-block") : "capacity-block") : "",
                    sp ? (spot || cb ? " and savings-plan" : "savings-plan") : "",
                    spot ? ", and every spot row's break-even" : "");
    if (r->explain && cb)
        output_note(out,
                    "capacity-block rows: the cheapest Capacity Block offered now for that many nodes (live; with "
                    "--deadline, the cheapest that ends the target in time), paid "
                    "whole up front and never interrupted; $/h is its fee / its hours, %s; WAIT: until it starts (not "
                    "in TIME).  instbench never purchases a block.",
                    r->opts->target_samples > 0 ? "COST the fee of every block the target needs (BLOCKS: how many, "
                                                  "each paid whole however little of the last one is used)"
                                                : "SAMPLES/$ as if every hour of it "
                                                  "trains");
    char term_h[32];
    output_fmt_grouped(term_h, sizeof term_h, r->opts->plan_term_hours, 0);
    /* which view of a plan's COST is shown: the commitment the target leaves idle is owed too, less
     * the share --plan-utilisation says other work uses */
    char plan_cost[320] = "";
    double u = isfinite(r->opts->plan_utilisation) ? r->opts->plan_utilisation : 0;
    if (r->opts->target_samples > 0 && u <= 0)
        snprintf(plan_cost, sizeof plan_cost,
                 "the whole term's commitment (x terms the target needs), as "
                 "nothing else uses the plan (--plan-utilisation F: the share of the other hours the rest of your "
                 "fleet uses)");
    else if (r->opts->target_samples > 0 && u >= 1)
        snprintf(plan_cost, sizeof plan_cost,
                 "the target's own hours only (--plan-utilisation 1: the rest "
                 "of your fleet uses every other hour of the term)");
    else if (r->opts->target_samples > 0)
        snprintf(plan_cost, sizeof plan_cost,
                 "the target's hours plus %.4g%% of the commitment for the "
                 "term's other hours (--plan-utilisation %.4g: the rest of your fleet uses the rest)",
                 100 * (1 - u), u);
    /* by default the view of COST alone (what --budget judges); the whole story with --explain */
    if (!r->explain && sp && plan_cost[0]) output_note(out, "savings-plan rows: COST is %s.", plan_cost);
    /* without a target they rank by their rate as if every hour paid for trains: said by default,
     * since a plan's commitment then looks like a price per hour of use */
    if (!r->explain && (sp || cb) && !(r->opts->target_samples > 0))
        output_note(out,
                    "%s%s%s rows: SAMPLES/$ as if every hour %s trains (--samples or --epochs: ranked by what "
                    "reaching the target costs, idle hours paid for included).",
                    cb ? "capacity-block" : "", cb && sp ? " and " : "", sp ? "savings-plan" : "",
                    cb && sp ? "of the block or the plan's term"
                    : cb     ? "of the block"
                             : "of the plan's term");
    if (r->explain && sp)
        output_note(
            out,
            "savings-plan rows (%s): $/h is the plan's rate x nodes, the commitment owed for each of the "
            "term's %s hours whether the nodes train or not%s%s; PLAN PAYS vs OD: rate / on-demand, the share of "
            "the term's hours they must train for the plan to cost no more than on-demand; vs SPOT: rate x "
            "the spot row's efficiency / its price, the same against spot with its interruptions%s.  "
            "instbench never purchases a plan.",
            r->opts->plan_label ? r->opts->plan_label : "", term_h, plan_cost[0] ? "; COST: " : "", plan_cost,
            r->opts->markets & RANK_MARKETS_SPOT ? "" : " (no spot row ranked here: --market all)");
    if (place && r->explain) placement_note(r, out);
    if (spot && r->explain && !any_placement(r) && !r->n_columns)
        output_note(out, "PLACEMENT (EC2's spot placement score) is left out: no spot row has one (live AWS only; -v "
                         "says why).");
    if (!output_table_showed(t, "configuration")) return; /* the marks ride on the configuration */
    if (extra)
        output_note(out, "^ extrapolated: measured on fewer nodes than the row has (measure --count); its SAMPLES/s is "
                         "the measured figure x nodes / measured nodes, which assumes linear scaling (no "
                         "communication cost). Measure on all nodes for the real figure.");
    if (sockets)
        output_note(out,
                    "# sockets on an EFA type: NCCL carried the gradients between the nodes over TCP sockets "
                    "(topology.network), not the EFA this instance type pays for; launched with EFA interfaces and "
                    "NCCL's aws-ofi-nccl plugin it can do better (docs/usage.md, EFA between the nodes).");
    if (mismatch)
        output_note(out, "! identity mismatch: the result names an instance type its hardware contradicts (kept with "
                         "measure --identity-mismatch ok); the price is that type's, the throughput this machine's.");
    if (noisy) {
        const char *names[RANK_WARN_N];
        size_t n = 0;
        for (unsigned b = 0; b < RANK_WARN_N; b++)
            if (warned & (1u << b)) names[n++] = rank_warning_codes[b];
        char codes[160];
        join(names, n, ", ", codes, sizeof codes);
        output_note(out,
                    "~ run quality: its runs differ by more than %.0f%% of their median%s%s%s; re-measure on a "
                    "quiet machine before trusting it (JSON/CSV: warnings, cv, samples_per_second_min/max).",
                    100 * RANK_SPREAD_LIMIT, codes[0] ? " or carry warnings (" : "", codes, codes[0] ? ")" : "");
        if (warned & RANK_WARN_GEMM_FALLBACK) /* not noise: re-measuring alone will not change it */
            output_note(out, "gemm_fallback: some of the step's GEMM shapes ran off cuBLASLt's own road (through "
                             "cuBLAS, or their bias added by a kernel: hardware.gemm), so the row is below what its "
                             "GPU can do; measure -v names the shapes.");
    }
    const char *paths[RANK_ATTENTION_PATHS];
    size_t n_paths = 0;
    for (int k = 0; k < RANK_ATTENTION_PATHS; k++)
        if (path[k]) paths[n_paths++] = rank_attention_paths[k];
    if (n_paths > 1) {
        char ways[96];
        join(paths, n_paths, ", ", ways, sizeof ways);
        output_note(out,
                    "attention: these rows ran it more than one way (%s; --columns ...,attention shows which; "
                    "JSON/CSV: attention), and one GPU runs the paths at different speeds: measure every candidate "
                    "with the same INSTBENCH_CUDA_ATTENTION%s to compare hardware alone.",
                    ways, path[RANK_ATTN_CUDNN_NONDET] ? " and INSTBENCH_CUDNN_NONDETERMINISTIC" : "");
    }
    /* said on stderr too (rank_warn_revisions); here so a table saved with -o carries it */
    if (builds)
        output_note(out, "builds: these rows were measured by more than one build of instbench (the warning above "
                         "names them; JSON: inputs.revisions), so a difference between rows may be the code's, not "
                         "the hardware's: measure every candidate with one build.");
}

/* "1 per 310 h" style: once every H hours, H = 1 / RATE. */
static void once_every(double rate, char *out, size_t len)
{
    char h[48];
    rank_fmt_every_hours(rate, h, sizeof h);
    snprintf(out, len, "once every %s hours", h);
}

/* The seed question answered for one spot row: how often a node may be reclaimed before the best
 * on-demand row wins. */
static void write_breakeven(const rank_report *r, const rank_row *row, FILE *out)
{
    const rank_spot_risk *k = &row->risk;
    if (k->breakeven_against < 0) return;
    char spot[256], od[256], at[96], be[96];
    rank_config_label(&r->configs[row->config], row->market, spot, sizeof spot);
    rank_config_label(&r->configs[k->breakeven_against], k->breakeven_against_market, od, sizeof od);
    once_every(k->rate_per_node_hour, at, sizeof at);
    if (isnan(k->breakeven_rate)) {
        output_note(out, "%s stays ahead of %s even if a node is reclaimed once an hour.", spot, od);
        return;
    }
    if (k->breakeven_rate <= 0) {
        output_note(out, "%s is behind %s at any interruption rate.", spot, od);
        return;
    }
    once_every(k->breakeven_rate, be, sizeof be);
    if (k->breakeven_rate > k->rate_per_node_hour)
        output_note(out, "%s stays ahead of %s unless a node is reclaimed more often than %s (assumed: %s).", spot, od,
                    be, at);
    else
        output_note(out,
                    "%s falls behind %s: a node reclaimed more often than %s puts it behind, and the assumed "
                    "rate is %s.",
                    spot, od, be, at);
}

enum { BREAKEVEN_LINES = 4 };

/* The spot model's assumptions (one line), then the break-even of the first BREAKEVEN_LINES spot
 * rows in rank order (JSON and CSV carry every row's). */
static void write_spot_risk(const rank_report *r, const output_table *t, FILE *out)
{
    if (!first_risky(r)) return;
    const rank_spot_options *so = &r->opts->spot;
    char rate[160], tau[64], delta[48], restart[48];
    if (isfinite(so->rate_per_node_hour)) {
        once_every(so->rate_per_node_hour, rate, sizeof rate);
        size_t u = strlen(rate);
        snprintf(rate + u, sizeof rate - u, " per node (--interruption-rate)");
    } else {
        snprintf(rate, sizeof rate,
                 "from the Advisor bucket's midpoint (<5%% -> 2.5%%, ..., >20%% -> 25%% of nodes "
                 "a month; assumed)");
    }
    if (so->checkpoint_s < 60) snprintf(delta, sizeof delta, "%.3g s", so->checkpoint_s);
    else output_fmt_duration(delta, sizeof delta, so->checkpoint_s);
    output_fmt_duration(restart, sizeof restart, so->restart_s);
    if (isfinite(so->interval_s)) {
        char d[48];
        output_fmt_duration(d, sizeof d, so->interval_s);
        snprintf(tau, sizeof tau, "every %s", d);
    } else {
        snprintf(tau, sizeof tau, "interval: Daly's optimum per row");
    }
    int times = output_table_showed(t, "hours_to_target") || output_table_showed(t, "cost_to_target_usd");
    /* which row BREAK-EVEN is against, named: the best on-demand one, or the user's --versus */
    char against[400] = "", vs[256] = "";
    for (size_t i = 0; i < r->n_priced && !vs[0]; i++)
        if (r->rows[i].risk.valid && r->rows[i].risk.breakeven_against >= 0)
            rank_config_label(&r->configs[r->rows[i].risk.breakeven_against], r->rows[i].risk.breakeven_against_market,
                              vs, sizeof vs);
    if (vs[0])
        snprintf(against, sizeof against, "; BREAK-EVEN: the per-node rate at which the row falls to %s (%s)", vs,
                 r->opts->versus_config >= 0 ? "--versus" : "the best on-demand row; --versus names another");
    if (r->explain)
        output_note(
            out,
            "spot risk: interruption rate %s; N nodes stop N times as often; checkpoint %s (%s), restart %s, "
            "checkpoint %s%s. EFF. SAMPLES/$ ranks spot%s (--spot-risk off: the raw price)%s.",
            rate, delta, so->checkpoint_source, restart, tau,
            output_table_showed(t, "breakeven_rate_per_node_hour") ? against : "",
            r->opts->target_samples > 0 ? ", the job's: the target / its expected cost" : "",
            times ? "; TIME and COST are without interruptions, while the order, the Pareto frontier, --deadline, "
                    "--budget and --sort judge spot rows by the expected figures, interruptions included (JSON/CSV: "
                    "expected_hours_to_target, expected_cost_to_target_usd, p90_hours_to_target; --wide: P90 TIME)"
                  : "");
    /* what BREAK-EVEN is against, the one thing a reader needs to read that column */
    if (!r->explain && vs[0] && output_table_showed(t, "breakeven_rate_per_node_hour"))
        output_note(out, "%s.", against + 2);
    size_t shown = 0, risky = 0;
    for (size_t i = 0; i < r->n_priced; i++) {
        if (!r->rows[i].risk.valid) continue;
        risky++;
        if (shown < (r->explain ? BREAKEVEN_LINES : 1) && r->rows[i].risk.breakeven_against >= 0) {
            write_breakeven(r, &r->rows[i], out);
            shown++;
        }
    }
    if (risky > shown && r->explain && shown == BREAKEVEN_LINES)
        output_note(out, "(the first %d spot rows; JSON and CSV: breakeven_rate_per_node_hour for every row)",
                    BREAKEVEN_LINES);
}

static void write_unranked(const rank_report *r, FILE *out)
{
    fprintf(out, "\nnot ranked (no usable price):\n");
    for (size_t i = r->n_priced; i < r->n_rows; i++) {
        const rank_row *row = &r->rows[i];
        char cfg[256], sps[48];
        rank_config_label(&r->configs[row->config], row->market, cfg, sizeof cfg);
        rank_fmt_samples_per_second(row->samples_per_second, sps, sizeof sps);
        output_note(out, "  %s (%s samples/s): %s", cfg, sps, row->unpriced_reason);
    }
}

int rank_report_write_table(const rank_report *r, FILE *out, ib_error *err)
{
    const rank_options *o = r->opts;
    write_header(r, out);
    const rank_column *cols[MAX_SHOWN];
    size_t nc = table_columns(r, cols);
    const char *hdr[MAX_SHOWN], *keys[MAX_SHOWN];
    output_align align[MAX_SHOWN];
    int prio[MAX_SHOWN];
    for (size_t c = 0; c < nc; c++) {
        hdr[c] = cols[c]->header, keys[c] = cols[c]->key, prio[c] = cols[c]->priority;
        align[c] = cols[c]->right ? OUTPUT_RIGHT : OUTPUT_LEFT;
    }
    output_table t;
    if (output_table_init(&t, nc, hdr, align) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    output_table_fit_columns(&t, keys, prio);
    static char text[MAX_SHOWN][320];
    for (size_t i = 0; i < r->n_priced; i++) {
        const char *cells[MAX_SHOWN];
        for (size_t c = 0; c < nc; c++) {
            if (cols[c]->show) {
                cols[c]->show(r, &r->rows[i], text[c], sizeof text[c]);
            } else {
                rank_value v = {0};
                cols[c]->get(r, &r->rows[i], &v);
                people_text(&v, text[c], sizeof text[c]);
            }
            cells[c] = text[c];
        }
        if (output_table_add_row(&t, cells) != 0) {
            output_table_free(&t);
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        }
    }
    if (r->n_priced) {
        output_table_write_text(&t, out);
    } else if (dropped_by_constraints(r)) {
        /* priced rows there were: say which limits dropped them, not that nothing was priced */
        const rank_filter_stats *st = &r->removed;
        char why[160] = "";
        size_t u = 0;
        if (st->by_max_hourly)
            u += (size_t)snprintf(why + u, sizeof why - u, "%zu over --max-hourly", st->by_max_hourly);
        if (st->by_deadline)
            u += (size_t)snprintf(why + u, sizeof why - u, "%s%zu miss --deadline", u ? ", " : "", st->by_deadline);
        if (st->by_budget) snprintf(why + u, sizeof why - u, "%s%zu over --budget", u ? ", " : "", st->by_budget);
        output_note(out,
                    "no configuration meets the constraints (%s): loosen them, or rank without them to see "
                    "each row's figures.",
                    why);
    } else {
        fprintf(out, "no priced configuration is left to rank.\n");
    }

    int frontier = 0;
    for (size_t i = 0; i < r->n_priced && !o->pareto_only; i++) frontier |= r->rows[i].pareto && r->n_priced > 1;
    if (r->n_priced) fputc('\n', out);
    if (frontier && output_table_showed(&t, "rank"))
        output_note(out, "* Pareto frontier: no other row is both faster and cheaper per sample.");
    if (r->n_priced) write_legend(r, &t, out);
    if (r->n_priced) write_spot_risk(r, &t, out);
    output_table_free(&t);
    if (r->n_rows > r->n_priced) write_unranked(r, out);
    if (ferror(out)) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the table");
    return 0;
}

/* One cell as CSV writes it: numbers in util_fmt_double's shortest round-trip form (the JSON's
 * very text), flags true/false (Calc, Excel and pandas read them as booleans), lists joined
 * with ';', nothing as an empty cell. */
static void plain_text(const rank_value *v, char *out, size_t len)
{
    out[0] = '\0';
    switch (v->kind) {
    case RANK_V_NUMBER: util_fmt_double(out, len, v->number); break;
    case RANK_V_TEXT: snprintf(out, len, "%s", v->text); break;
    case RANK_V_BOOL: snprintf(out, len, "%s", v->flag ? "true" : "false"); break;
    case RANK_V_TIME: util_utc_spreadsheet((time_t)v->number, out); break;
    case RANK_V_LIST: join(v->items, v->n_items, ";", out, len); break;
    default: break;
    }
}

int rank_report_write_csv(const rank_report *r, FILE *out, ib_error *err)
{
    const rank_column *cols[MAX_SHOWN];
    size_t nc = rank_report_columns(r, NULL, cols, MAX_SHOWN);
    const char *hdr[MAX_SHOWN];
    for (size_t c = 0; c < nc; c++) hdr[c] = cols[c]->key;
    output_table t;
    if (output_table_init(&t, nc, hdr, NULL) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    static char text[MAX_SHOWN][320];
    /* ranked rows, then the unpriced ones with their reason: one sheet holds every measured machine */
    for (size_t i = 0; i < r->n_rows; i++) {
        const char *cells[MAX_SHOWN];
        for (size_t c = 0; c < nc; c++) {
            rank_value v = {0};
            cols[c]->get(r, &r->rows[i], &v);
            plain_text(&v, text[c], sizeof text[c]);
            cells[c] = text[c];
        }
        if (output_table_add_row(&t, cells) != 0) {
            output_table_free(&t);
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        }
    }
    int rc = output_table_write_csv(&t, out);
    output_table_free(&t);
    if (rc != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write CSV");
    return 0;
}
