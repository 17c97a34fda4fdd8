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

const char *const rank_table_keys[] = {"rank", "config", "region", "accelerators", "usd_per_hour", "samples_per_s",
                                       "samples_per_usd", "hours", "cost", "spot_az", "interruption", "placement",
                                       "price", "runs", NULL};

/* "snapshot 4d 2h": the price's source and how old it is, in the one duration style. */
static void fmt_price_age(char *out, size_t len, const char *source, time_t now, time_t as_of)
{
    const char *src = source[0] ? source : "?";
    if (as_of <= 0) {
        snprintf(out, len, "%s", src);
        return;
    }
    double s = difftime(now, as_of);
    char age[48];
    output_fmt_duration(age, sizeof age, s < 0 ? 0 : s);
    snprintf(out, len, "%s %s", src, age);
}

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

static const char *interruption(const rank_row *row)
{
    if (row->market != RANK_SPOT) return "-";
    if (row->interruption_bucket < 0) return "?";
    const char *l = prices_interruption_label(row->interruption_bucket);
    return l ? l : "?";
}

static void workload_line(const rank_report *r, char *out, size_t len)
{
    const rank_group *g = r->group;
    char batch[64] = "";
    if (g->batch_per_device > 0) snprintf(batch, sizeof batch, ", batch %ld/device", g->batch_per_device);
    snprintf(out, len, "workload %.12s: %s %s%s%s%s", g->fingerprint, g->model[0] ? g->model : "(model?)",
             g->precision, batch, g->data[0] ? ", data " : "", g->data);
}

/* The lines above the table: workload, results, prices, target, order. */
static void write_header(const rank_report *r, FILE *out)
{
    const rank_options *o = r->opts;
    char line[512], prices[160];
    workload_line(r, line, sizeof line);
    rank_report_price_summary(r, prices, sizeof prices);
    util_term_printf(out, "%s\n", line);
    const char *region = r->n_rows ? r->configs[r->rows[0].config].region : "";
    for (size_t i = 1; i < r->n_rows; i++)
        if (strcmp(r->configs[r->rows[i].config].region, region)) region = "";
    util_term_printf(out, "%zu result%s in %zu configuration%s%s%s\n", r->group->n, r->group->n == 1 ? "" : "s",
                     r->n_configs, r->n_configs == 1 ? "" : "s", region[0] ? " in " : "", region);
    /* The origin (snapshot note, file name) only when it says more than the summary does. */
    int say_origin = r->prices_origin && strcmp(r->prices_origin, "auto") && strncmp(prices, r->prices_origin, strlen(r->prices_origin));
    util_term_printf(out, "prices: %s%s%s%s\n", prices, say_origin ? " (" : "", say_origin ? r->prices_origin : "",
                     say_origin ? ")" : "");
    if (o->target_samples > 0) {
        char n[64];
        output_fmt_grouped(n, sizeof n, o->target_samples, 0);
        if (r->epochs > 0) {
            char ds[64];
            output_fmt_grouped(ds, sizeof ds, r->dataset_size, 0);
            fprintf(out, "target: %g epochs x %s samples = %s samples\n", r->epochs, ds, n);
        } else {
            fprintf(out, "target: %s samples\n", n);
        }
    }
    fprintf(out, "sorted by %s%s\n\n", rank_sort_key_name(o->sort), o->pareto_only ? "; Pareto frontier only" : "");
}

/* The table's columns, in rank_table_keys order.  Headers in upper case as every table's are;
 * units keep their case ($/h, /s). */
enum { TABLE_NC = 14, COL_REGION = 2, COL_TIME = 7, COL_COST = 8 };
static const char *const rank_headers[TABLE_NC] = {"RANK", "CONFIGURATION", "REGION", "ACCELERATORS", "$/h", "SAMPLES/s",
                                             "SAMPLES/$", "TIME", "COST", "SPOT AZ", "INTERRUPTION", "PLACEMENT",
                                             "PRICE SOURCE, AGE", "RUNS (SPREAD)"};
static const output_align rank_align[TABLE_NC] = {OUTPUT_RIGHT, OUTPUT_LEFT,  OUTPUT_LEFT,  OUTPUT_LEFT, OUTPUT_RIGHT,
                                            OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_LEFT,
                                            OUTPUT_LEFT,  OUTPUT_RIGHT, OUTPUT_LEFT,  OUTPUT_RIGHT};
/* A narrow terminal keeps rank, configuration, samples/$ and $/h longest (output_fit_set). */
static const int rank_prio[TABLE_NC] = {OUTPUT_KEEP, OUTPUT_KEEP, 3, 2, 9, 7, OUTPUT_KEEP, 6, 8, 4, 5, 1, 5, 2};

/* One row's cells (TABLE_NC of them, in the buffers of B). */
typedef struct row_text {
    char rk[16], cfg[256], acc[128], ph[48], sps[48], spd[48], time[48], cost[64], place[16], price[80], runs[48];
} row_text;

static void row_cells(const rank_report *r, const rank_row *row, row_text *b, const char *cells[TABLE_NC])
{
    const rank_options *o = r->opts;
    const rank_config *c = &r->configs[row->config];
    int target = o->target_samples > 0;
    snprintf(b->rk, sizeof b->rk, "%d%s", row->rank, o->pareto_only || !row->pareto ? "" : "*");
    rank_config_label(c, row->market, b->cfg, sizeof b->cfg);
    rank_accelerator_label(c, b->acc, sizeof b->acc);
    output_fmt_usd(b->ph, sizeof b->ph, row->usd_per_hour);
    output_fmt_grouped(b->sps, sizeof b->sps, row->samples_per_second, row->samples_per_second < 100 ? 2 : 1);
    output_fmt_grouped(b->spd, sizeof b->spd, row->samples_per_dollar, 0);
    output_fmt_duration(b->time, sizeof b->time, target ? row->hours_to_target * 3600 : NAN);
    output_fmt_usd(b->cost, sizeof b->cost, target ? row->cost_to_target : NAN);
    if (row->market == RANK_SPOT && row->placement_score > 0) snprintf(b->place, sizeof b->place, "%d/10", row->placement_score);
    else snprintf(b->place, sizeof b->place, "%s", row->market == RANK_SPOT ? "?" : "-");
    fmt_price_age(b->price, sizeof b->price, row->price_source, o->now, row->price_as_of);
    if (c->runs > 1)
        snprintf(b->runs, sizeof b->runs, "%zu (%.1f%%)", c->runs, 100.0 * (c->sps_max - c->sps_min) / c->samples_per_second);
    else
        snprintf(b->runs, sizeof b->runs, "1");
    /* User-priced rows: off EC2 no region; a user's spot price is not one AZ's. */
    const char *v[TABLE_NC] = {b->rk, b->cfg, c->region[0] ? c->region : "-", b->acc, b->ph, b->sps, b->spd, b->time,
                         b->cost, row->market == RANK_SPOT && row->az[0] ? row->az : "-", interruption(row), b->place,
                         b->price, b->runs};
    memcpy(cells, v, sizeof v);
}

/* Where each figure shown comes from, under the table T (the price's own source is a column). */
static void write_legend(const rank_report *r, const output_table *t, FILE *out)
{
    int spot = 0;
    for (size_t i = 0; i < r->n_priced; i++) spot |= r->rows[i].market == RANK_SPOT;
    const int runs = output_table_showed(t, "runs"), price = output_table_showed(t, "price");
    const int hours = output_table_showed(t, "hours"), cost = output_table_showed(t, "cost");
    const int intr = spot && output_table_showed(t, "interruption"), place = spot && output_table_showed(t, "placement");
    output_note(out, "sources: SAMPLES/s measured%s; $/h (all nodes) from %s; SAMPLES/$%s%s%s computed from those%s%s.",
                runs ? " (the median of RUNS)" : "", price ? "PRICE SOURCE" : "each row's price source (--wide shows it)",
                hours ? ", TIME" : "", cost ? (hours ? " and COST" : ", COST") : "", hours || cost ? " to the target" : "",
                intr ? "; INTERRUPTION: AWS Spot Instance Advisor (region-wide)" : "",
                place ? "; PLACEMENT: EC2 spot placement scores" : "");
}

static void write_unranked(const rank_report *r, FILE *out)
{
    fprintf(out, "\nnot ranked (no usable price):\n");
    for (size_t i = r->n_priced; i < r->n_rows; i++) {
        const rank_row *row = &r->rows[i];
        char cfg[256], sps[48];
        rank_config_label(&r->configs[row->config], row->market, cfg, sizeof cfg);
        output_fmt_grouped(sps, sizeof sps, row->samples_per_second, 1);
        output_note(out, "  %s (%s samples/s): %s", cfg, sps, row->unpriced_reason);
    }
}

int rank_report_write_table(const rank_report *r, FILE *out, ib_error *err)
{
    const rank_options *o = r->opts;
    write_header(r, out);
    /* One region for every row: said once above the table instead of in a column.  Without a
     * target the time and cost columns would be empty: left out. */
    int drop[TABLE_NC] = {0};
    drop[COL_REGION] = 1;
    for (size_t i = 1; i < r->n_rows; i++)
        drop[COL_REGION] &= !strcmp(r->configs[r->rows[i].config].region, r->configs[r->rows[0].config].region);
    drop[COL_TIME] = drop[COL_COST] = !(o->target_samples > 0);
    const char *h2[TABLE_NC], *k2[TABLE_NC];
    output_align a2[TABLE_NC];
    int p2[TABLE_NC];
    size_t nc = 0;
    for (size_t c = 0; c < TABLE_NC; c++)
        if (!drop[c]) h2[nc] = rank_headers[c], k2[nc] = rank_table_keys[c], p2[nc] = rank_prio[c], a2[nc++] = rank_align[c];
    output_table t;
    if (output_table_init(&t, nc, h2, a2) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    output_table_fit_columns(&t, k2, p2);
    for (size_t i = 0; i < r->n_priced; i++) {
        row_text b;
        const char *cells[TABLE_NC], *c2[TABLE_NC];
        row_cells(r, &r->rows[i], &b, cells);
        for (size_t k = 0, j = 0; k < TABLE_NC; k++)
            if (!drop[k]) c2[j++] = cells[k];
        if (output_table_add_row(&t, c2) != 0) {
            output_table_free(&t);
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        }
    }
    if (r->n_priced) output_table_write_text(&t, out);
    else fprintf(out, "no priced configuration is left to rank.\n");

    int frontier = 0;
    for (size_t i = 0; i < r->n_priced && !o->pareto_only; i++) frontier |= r->rows[i].pareto && r->n_priced > 1;
    if (r->n_priced) fputc('\n', out);
    if (frontier) fprintf(out, "* Pareto frontier: no other row is both faster and cheaper per sample.\n");
    if (r->n_priced) write_legend(r, &t, out);
    output_table_free(&t);
    if (r->n_rows > r->n_priced) write_unranked(r, out);
    if (ferror(out)) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the table");
    return 0;
}

/* Plain numbers for spreadsheets: the shortest of 15/16/17 significant digits that reads back
 * as the same double (0.1 stays "0.1"); "" when unknown. */
static void fmt_plain(char *out, size_t len, double v)
{
    out[0] = '\0';
    if (!isfinite(v)) return;
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, len, "%.*g", digits, v);
        if (strtod(out, NULL) == v) return;
    }
}

int rank_report_write_csv(const rank_report *r, FILE *out, ib_error *err)
{
    enum { NC = 25 };
    static const char *const hdr[NC] = {
        "rank", "configuration", "instance_type", "nodes", "market", "region", "accelerator", "accelerators_per_node",
        "accelerators_total", "usd_per_hour", "usd_per_hour_per_node", "samples_per_second", "samples_per_dollar",
        "target_samples", "hours_to_target", "cost_to_target_usd", "spot_az", "interruption_bucket",
        "interruption_label", "placement_score", "price_source", "price_as_of", "runs", "pareto",
        "host"};   /* appended last: columns read by position before it keep their place */
    output_table t;
    if (output_table_init(&t, NC, hdr, NULL) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < r->n_priced; i++) {
        const rank_row *row = &r->rows[i];
        const rank_config *c = &r->configs[row->config];
        char rk[16], cfg[256], nodes[24], apn[24], tot[24], ph[40], pn[40], sps[40], spd[40], tgt[40], hrs[40],
            cost[40], ib[16], pl[16], asof[32] = "", runs[24];
        snprintf(rk, sizeof rk, "%d", row->rank);
        rank_config_label(c, row->market, cfg, sizeof cfg);
        snprintf(nodes, sizeof nodes, "%ld", c->nodes);
        snprintf(apn, sizeof apn, "%ld", c->accelerator_count);
        snprintf(tot, sizeof tot, "%ld", c->accelerator_count * c->nodes);
        fmt_plain(ph, sizeof ph, row->usd_per_hour);
        fmt_plain(pn, sizeof pn, row->price_per_node);
        fmt_plain(sps, sizeof sps, row->samples_per_second);
        fmt_plain(spd, sizeof spd, row->samples_per_dollar);
        fmt_plain(tgt, sizeof tgt, r->opts->target_samples > 0 ? r->opts->target_samples : NAN);
        fmt_plain(hrs, sizeof hrs, row->hours_to_target);
        fmt_plain(cost, sizeof cost, row->cost_to_target);
        if (row->interruption_bucket >= 0) snprintf(ib, sizeof ib, "%d", row->interruption_bucket);
        else ib[0] = '\0';
        if (row->placement_score > 0) snprintf(pl, sizeof pl, "%d", row->placement_score);
        else pl[0] = '\0';
        if (row->price_as_of > 0) util_utc_iso8601(row->price_as_of, asof);
        snprintf(runs, sizeof runs, "%zu", c->runs);
        const char *il = row->interruption_bucket >= 0 ? interruption(row) : "";
        const char *cells[NC] = {rk, cfg, c->instance_type, nodes, rank_market_name(row->market), c->region,
                                 c->accelerator, apn, tot, ph, pn, sps, spd, tgt, hrs, cost,
                                 row->market == RANK_SPOT ? row->az : "", ib, il, pl, row->price_source, asof, runs,
                                 row->pareto ? "1" : "0", c->host};
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
