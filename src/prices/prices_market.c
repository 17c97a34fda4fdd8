/* prices --market capacity-block | savings-plan: the two markets bought ahead of time.  A Capacity
 * Block is a quote for dates (its offerings, live only); a Savings Plan is a rate for a term, shown
 * beside the on-demand price it replaces.  instbench only reads these: it never purchases either. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "instbench/prices.h"


static int cmp_block(const void *a, const void *b)
{
    const market_block *x = a, *y = b;
    int c = strcmp(x->instance_type, y->instance_type);
    if (c) return c;
    if ((c = strcmp(x->region, y->region))) return c;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->usd_per_instance_hour != y->usd_per_instance_hour)
        return x->usd_per_instance_hour < y->usd_per_instance_hour ? -1 : 1;
    return strcmp(x->az, y->az);
}

/* The JSON's very text (util_fmt_double: the shortest that reads back), so a CSV cell and the
 * JSON number are equal strings; "" when not finite. */
static void fmt_num(char *out, size_t len, double v) { util_fmt_double(out, len, v); }

/* A plan whose rate is above on-demand never pays, however many hours it is used: its break-even
 * reads "never" in every format rather than a share above 100%. */
static int never_pays(double break_even) { return isfinite(break_even) && break_even > 1; }

/* The columns in CSV order (prices_view.c: the keys in every format); the old keys are the
 * table's before. */
#define L OUTPUT_LEFT
#define R OUTPUT_RIGHT
#define K OUTPUT_KEEP
#define T PRICES_TEXT
#define N PRICES_NUMBER
#define U PRICES_TIME
const prices_column prices_block_columns[] = {
    {"instance_type", "INSTANCE TYPE", L, K, T, "type"},
    {"region", "REGION", L, 60, T, NULL},
    {"availability_zone", "ZONE", L, 50, T, "az"},
    {"offering_id", "OFFERING", L, 10, T, "offering"},
    {"instance_count", "INSTANCES", R, K, N, "instances"},
    {"start_utc", "START (UTC)", L, K, U, "start"},
    {"end_utc", "END (UTC)", L, 40, U, "end"},
    {"duration_hours", "DURATION", R, 45, N, "duration"},
    {"upfront_fee_usd", "UPFRONT FEE", R, K, N, "fee"},
    {"accelerators_per_instance", "ACCELERATORS/INSTANCE", R, 1, N, NULL},
    {"usd_per_instance_hour", "$/INSTANCE-H", R, K, N, "per_instance_hour"},
    {"usd_per_accelerator_hour", "$/ACCEL-H", R, 55, N, "per_accelerator_hour"},
    {"wait_hours", "STARTS IN", R, 48, N, "wait"},
    {"ultraserver_type", "ULTRASERVER TYPE", L, 1, T, NULL},
    {"ultraserver_count", "ULTRASERVERS", R, 1, N, NULL},
    {NULL, NULL, 0, 0, 0, NULL},
};
static const char *const block_defaults[] = {"instance_type",
                                             "region",
                                             "availability_zone",
                                             "instance_count",
                                             "start_utc",
                                             "end_utc",
                                             "duration_hours",
                                             "upfront_fee_usd",
                                             "usd_per_instance_hour",
                                             "usd_per_accelerator_hour",
                                             "wait_hours",
                                             "offering_id",
                                             NULL};

/* The offerings into G, each cell plain (CSV, JSON rows) and shown (the table). */
static int blocks_grid(const market_block *b, size_t n, time_t now, prices_grid *g)
{
    if (prices_grid_init(g, prices_block_columns) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char cnt[16], start[32], end[32], hours[32], fee[32], acc[16] = "", pih[32], pah[32], wait[32], us[16] = "";
        char scnt[96], sstart[32], send[32], sdur[32], sfee[32], spih[32], spah[32], swait[32];
        if (b[i].ultraserver_type[0]) snprintf(us, sizeof us, "%d", b[i].ultraserver_count);
        snprintf(cnt, sizeof cnt, "%d", b[i].instance_count);
        util_utc_spreadsheet(b[i].start, start);
        util_utc_spreadsheet(b[i].end, end);
        fmt_num(hours, sizeof hours, b[i].hours);
        fmt_num(fee, sizeof fee, b[i].fee_usd);
        if (b[i].accelerators) snprintf(acc, sizeof acc, "%d", b[i].accelerators);
        fmt_num(pih, sizeof pih, b[i].usd_per_instance_hour);
        fmt_num(pah, sizeof pah, b[i].usd_per_accelerator_hour);
        fmt_num(wait, sizeof wait, b[i].start > now ? (b[i].start - now) / 3600.0 : 0);
        /* an UltraServer block: its instances, and the UltraServers they make */
        if (b[i].ultraserver_type[0])
            snprintf(scnt, sizeof scnt, "%d (%d x %s)", b[i].instance_count, b[i].ultraserver_count,
                     b[i].ultraserver_type);
        else snprintf(scnt, sizeof scnt, "%d", b[i].instance_count);
        util_utc_iso8601(b[i].start, sstart);
        util_utc_iso8601(b[i].end, send);
        sstart[16] = send[16] = '\0'; /* minutes are the block's precision */
        sstart[10] = send[10] = ' ';
        output_fmt_duration(sdur, sizeof sdur, b[i].hours * 3600);
        output_fmt_usd(sfee, sizeof sfee, b[i].fee_usd);
        output_fmt_usd(spih, sizeof spih, b[i].usd_per_instance_hour);
        output_fmt_usd(spah, sizeof spah, b[i].usd_per_accelerator_hour);
        if (b[i].start <= now) snprintf(swait, sizeof swait, "now");
        else output_fmt_duration(swait, sizeof swait, (double)(b[i].start - now));
        const char *plain[] = {b[i].instance_type,
                               b[i].region,
                               b[i].az,
                               b[i].offering_id,
                               cnt,
                               start,
                               end,
                               hours,
                               fee,
                               acc,
                               pih,
                               pah,
                               wait,
                               b[i].ultraserver_type,
                               us};
        const char *shown[] = {NULL, NULL, NULL, NULL, scnt,  sstart, send, sdur,
                               sfee, NULL, spih, spah, swait, NULL,   NULL};
        rc = prices_grid_add(g, plain, shown);
    }
    return rc;
}

static void blocks_legend(const prices_market_args *a, const output_table *t, FILE *out)
{
    (void)a;
    fputc('\n', out);
    output_note(out,
                "UPFRONT FEE: the whole block, paid when it is bought, whether it is used or not; a block is "
                "never interrupted.  $/INSTANCE-H: the fee / (INSTANCES x the block's hours)%s.  STARTS IN: the "
                "wait until the block starts.  instbench never purchases a block.",
                output_table_showed(t, "usd_per_accelerator_hour") ? "; $/ACCEL-H: that / the accelerators of one "
                                                                     "instance"
                                                                   : "");
}

static cJSON *iso_or_null(time_t t)
{
    char s[32];
    if (!t) return cJSON_CreateNull();
    util_utc_iso8601(t, s);
    return cJSON_CreateString(s);
}

static cJSON *doc_head(const char *market, time_t now, const char *note)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", "instbench.offerings/v1");
    cJSON_AddStringToObject(d, "market", market);
    cJSON_AddItemToObject(d, "generated_at", iso_or_null(now));
    if (note) cJSON_AddStringToObject(d, "note", note);
    return d;
}

static cJSON *blocks_json(const prices_market_args *a, const market_block *b, size_t n, time_t now, const char *note)
{
    cJSON *d = doc_head("capacity-block", now, note), *q = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    cJSON_AddNumberToObject(q, "duration_hours", a->duration_hours);
    cJSON_AddItemToObject(q, "start_after", iso_or_null(a->start_after));
    cJSON_AddItemToObject(q, "end_before", iso_or_null(a->end_before));
    cJSON_AddItemToObject(d, "query", q);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "instance_type", b[i].instance_type);
        cJSON_AddStringToObject(o, "region", b[i].region);
        cJSON_AddStringToObject(o, "availability_zone", b[i].az);
        cJSON_AddStringToObject(o, "offering_id", b[i].offering_id);
        cJSON_AddNumberToObject(o, "instance_count", b[i].instance_count);
        if (b[i].ultraserver_type[0]) {
            cJSON_AddStringToObject(o, "ultraserver_type", b[i].ultraserver_type);
            cJSON_AddNumberToObject(o, "ultraserver_count", b[i].ultraserver_count);
        } else {
            cJSON_AddNullToObject(o, "ultraserver_type");
            cJSON_AddNullToObject(o, "ultraserver_count");
        }
        cJSON_AddItemToObject(o, "start", iso_or_null(b[i].start));
        cJSON_AddItemToObject(o, "end", iso_or_null(b[i].end));
        cJSON_AddNumberToObject(o, "duration_hours", b[i].hours);
        cJSON_AddNumberToObject(o, "upfront_fee_usd", b[i].fee_usd);
        if (b[i].accelerators) cJSON_AddNumberToObject(o, "accelerators_per_instance", b[i].accelerators);
        else cJSON_AddNullToObject(o, "accelerators_per_instance");
        cJSON_AddItemToObject(o, "usd_per_instance_hour", output_json_number(b[i].usd_per_instance_hour));
        cJSON_AddItemToObject(o, "usd_per_accelerator_hour", output_json_number(b[i].usd_per_accelerator_hour));
        cJSON_AddNumberToObject(o, "wait_hours", b[i].start > now ? (b[i].start - now) / 3600.0 : 0);
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddItemToObject(d, "offerings", arr);
    return d;
}

/* ---- Savings Plans ------------------------------------------------------------------------ */

typedef struct plan_row {
    const char *type, *region;
    int nodes;
    double rate, on_demand;
    char od_source[16];
    markets_plan_money money;
} plan_row;

static const char *payment_name(markets_payment p)
{
    return p == MARKETS_PAY_ALL ? "All Upfront" : p == MARKETS_PAY_PARTIAL ? "Partial Upfront" : "No Upfront";
}

const prices_column prices_plan_columns[] = {
    {"instance_type", "INSTANCE TYPE", L, K, T, "type"},
    {"region", "REGION", L, 60, T, NULL},
    {"plan_type", "PLAN", L, 30, T, "plan"},
    {"term_years", "TERM", L, 35, N, "term"},
    {"payment_option", "PAYMENT", L, 32, T, "payment"},
    {"plan_usd_per_hour", "PLAN $/h", R, K, N, "rate"},
    {"on_demand_usd_per_hour", "ON-DEMAND $/h", R, K, N, "on_demand"},
    {"on_demand_source", "ON-DEMAND SOURCE", L, 10, T, NULL},
    {"break_even_utilisation", "BREAK-EVEN", R, K, PRICES_NUMBER_OR_WORD, "break_even"},
    {"nodes", "NODES", R, 45, N, NULL},
    {"commitment_usd_per_hour", "COMMITMENT $/h", R, 40, N, "commitment"},
    {"upfront_usd", "UPFRONT", R, 38, N, "upfront"},
    {"recurring_usd_per_hour", "RECURRING $/h", R, 37, N, "recurring"},
    {"term_hours", "TERM HOURS", R, 1, N, NULL},
    /* 100 x (1 - break-even): what the plan saves at full use, below 0 when it never pays */
    {"savings_pct", "SAVINGS %", R, 50, N, "savings"},
    {NULL, NULL, 0, 0, 0, NULL},
};
#undef L
#undef R
#undef K
#undef T
#undef N
#undef U
static const char *const plan_defaults[] = {"instance_type",
                                            "region",
                                            "plan_type",
                                            "term_years",
                                            "payment_option",
                                            "plan_usd_per_hour",
                                            "on_demand_usd_per_hour",
                                            "savings_pct",
                                            "break_even_utilisation",
                                            "nodes",
                                            "commitment_usd_per_hour",
                                            "upfront_usd",
                                            "recurring_usd_per_hour",
                                            "on_demand_source",
                                            NULL};

static int plans_grid(const prices_market_args *a, const plan_row *p, size_t n, prices_grid *g)
{
    if (prices_grid_init(g, prices_plan_columns) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char term[16], rate[32], od[32], be[32], nodes[16], com[32], up[32], rec[32], th[32], sav[32] = "";
        char sterm[16], srate[32], sod[32], ssav[16], sbe[16], scom[32], sup[32], srec[32];
        snprintf(term, sizeof term, "%d", a->term_years);
        fmt_num(rate, sizeof rate, p[i].rate);
        fmt_num(od, sizeof od, p[i].on_demand);
        double u = markets_break_even_utilisation(p[i].rate, p[i].on_demand);
        if (never_pays(u)) snprintf(be, sizeof be, "never");
        else fmt_num(be, sizeof be, u);
        if (isfinite(u)) fmt_num(sav, sizeof sav, (1 - u) * 100);
        snprintf(nodes, sizeof nodes, "%d", p[i].nodes);
        fmt_num(com, sizeof com, p[i].money.commitment_usd_per_hour);
        fmt_num(up, sizeof up, p[i].money.upfront_usd);
        fmt_num(rec, sizeof rec, p[i].money.recurring_usd_per_hour);
        fmt_num(th, sizeof th, p[i].money.term_hours);
        snprintf(sterm, sizeof sterm, "%dy", a->term_years);
        output_fmt_usd(srate, sizeof srate, p[i].rate);
        output_fmt_usd(sod, sizeof sod, p[i].on_demand);
        if (never_pays(u)) snprintf(ssav, sizeof ssav, "none"), snprintf(sbe, sizeof sbe, "never");
        else if (isfinite(u))
            snprintf(ssav, sizeof ssav, "%.0f", (1 - u) * 100), snprintf(sbe, sizeof sbe, "%.0f%%", u * 100);
        else snprintf(ssav, sizeof ssav, "-"), snprintf(sbe, sizeof sbe, "-");
        output_fmt_usd(scom, sizeof scom, p[i].money.commitment_usd_per_hour);
        output_fmt_usd(sup, sizeof sup, p[i].money.upfront_usd);
        output_fmt_usd(srec, sizeof srec, p[i].money.recurring_usd_per_hour);
        const char *plain[] = {p[i].type,
                               p[i].region,
                               a->plan_type,
                               term,
                               payment_name(a->payment),
                               rate,
                               od,
                               p[i].od_source,
                               be,
                               nodes,
                               com,
                               up,
                               rec,
                               th,
                               sav};
        const char *shown[] = {NULL, NULL, a->plan_label, sterm, NULL, srate, sod, NULL,
                               sbe,  NULL, scom,          sup,   srec, NULL,  ssav};
        rc = prices_grid_add(g, plain, shown);
    }
    return rc;
}

static void plans_legend(const prices_market_args *a, const output_table *t, FILE *out)
{
    (void)t;
    char hours[32];
    long long term_hours = a->term_years == 3 ? 26280 : 8760;
    output_fmt_grouped(hours, sizeof hours, (double)term_hours, 0);
    fputc('\n', out);
    output_note(out,
                "PLAN $/h: the plan's rate per instance-hour.  COMMITMENT $/h: NODES x that, owed for every "
                "one of the term's %s hours whether the instances run or not; %s pays %s of it UPFRONT and the "
                "rest as RECURRING $/h, so amortised over the term UPFRONT / %s h + RECURRING $/h = COMMITMENT "
                "$/h.  BREAK-EVEN: PLAN $/h / ON-DEMAND $/h, the share of the term's hours the instances must "
                "run for the plan to cost no more than on-demand (never: the rate is above on-demand); SAVINGS %%: 1 - "
                "that.  instbench never "
                "purchases a plan.",
                hours, payment_name(a->payment),
                a->payment == MARKETS_PAY_ALL       ? "all"
                : a->payment == MARKETS_PAY_PARTIAL ? "half (AWS asks for at "
                                                      "least half; instbench assumes half)"
                                                    : "none",
                hours);
}

/* G in A's format: the table (its default columns or --columns) and LEGEND under it when it has
 * rows, the CSV, or with --columns the JSON rows with NOTE (the whole offerings document is the
 * caller's). */
static int write_grid(const prices_market_args *a, const prices_grid *g, const char *const *defaults,
                      void (*legend)(const prices_market_args *, const output_table *, FILE *), const char *note,
                      FILE *out)
{
    if (!strcmp(a->format, "csv")) return prices_grid_write_csv(g, a->columns, a->n_columns, out);
    if (!strcmp(a->format, "json"))
        return prices_grid_write_rows(g, a->market == PRICES_MARKET_BLOCK ? "capacity-block" : "savings-plan",
                                      time(NULL), note, a->columns, a->n_columns, out);
    output_table t;
    int rc = prices_grid_write_table(g, defaults, a->n_columns > 0, &t, out);
    if (!rc && g->n_rows) legend(a, &t, out);
    output_table_free(&t);
    return rc;
}

/* The rows written: the table, the CSV, the JSON rows (--columns) or the whole document (NOTE:
 * why it is empty, or NULL). */
static int write_blocks(const prices_market_args *a, const market_block *b, size_t n, time_t now, const char *note,
                        FILE *out)
{
    if (!strcmp(a->format, "json") && !a->n_columns) {
        cJSON *d = blocks_json(a, b, n, now, note);
        ib_error err = {0};
        int rc = d ? output_json_write(out, d, &err) : -1;
        cJSON_Delete(d);
        return rc;
    }
    prices_grid g;
    int rc = blocks_grid(b, n, now, &g);
    if (!rc) rc = write_grid(a, &g, block_defaults, blocks_legend, note, out);
    prices_grid_free(&g);
    return rc;
}

static cJSON *plans_json(const prices_market_args *a, const plan_row *p, size_t n, time_t now, const char *note)
{
    cJSON *d = doc_head("savings-plan", now, note), *q = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    cJSON_AddStringToObject(q, "plan_type", a->plan_type);
    cJSON_AddNumberToObject(q, "term_years", a->term_years);
    cJSON_AddStringToObject(q, "payment_option", payment_name(a->payment));
    cJSON_AddItemToObject(d, "query", q);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "instance_type", p[i].type);
        cJSON_AddStringToObject(o, "region", p[i].region);
        cJSON_AddItemToObject(o, "plan_usd_per_hour", output_json_number(p[i].rate));
        cJSON_AddItemToObject(o, "on_demand_usd_per_hour", output_json_number(p[i].on_demand));
        if (p[i].od_source[0]) cJSON_AddStringToObject(o, "on_demand_source", p[i].od_source);
        else cJSON_AddNullToObject(o, "on_demand_source");
        double u = markets_break_even_utilisation(p[i].rate, p[i].on_demand);
        cJSON_AddItemToObject(o, "break_even_utilisation",
                              never_pays(u) ? cJSON_CreateString("never") : output_json_number(u));
        cJSON_AddNumberToObject(o, "nodes", p[i].nodes);
        cJSON_AddItemToObject(o, "commitment_usd_per_hour", output_json_number(p[i].money.commitment_usd_per_hour));
        cJSON_AddItemToObject(o, "upfront_usd", output_json_number(p[i].money.upfront_usd));
        cJSON_AddItemToObject(o, "recurring_usd_per_hour", output_json_number(p[i].money.recurring_usd_per_hour));
        cJSON_AddItemToObject(o, "term_hours", output_json_number(p[i].money.term_hours));
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddItemToObject(d, "rates", arr);
    return d;
}

static int write_plans(const prices_market_args *a, const plan_row *p, size_t n, time_t now, const char *note,
                       FILE *out)
{
    if (!strcmp(a->format, "json") && !a->n_columns) {
        cJSON *d = plans_json(a, p, n, now, note);
        ib_error err = {0};
        int rc = d ? output_json_write(out, d, &err) : -1;
        cJSON_Delete(d);
        return rc;
    }
    prices_grid g;
    int rc = plans_grid(a, p, n, &g);
    if (!rc) rc = write_grid(a, &g, plan_defaults, plans_legend, note, out);
    prices_grid_free(&g);
    return rc;
}

/* ---- the command --------------------------------------------------------------------------- */

/* Offline (no credentials, or a source that is not live): the one line, on stdout for a table and
 * inside the document otherwise (the whole one; the rows and the CSV have only their header); exit
 * 0, no figure. */
static int offline(const prices_market_args *a, const char *why, FILE *out)
{
    ib_warn("%s", why);
    if (!strcmp(a->format, "table")) return fprintf(out, "%s\n", why) < 0 ? -1 : 0;
    return a->market == PRICES_MARKET_BLOCK ? write_blocks(a, NULL, 0, time(NULL), why, out)
                                            : write_plans(a, NULL, 0, time(NULL), why, out);
}

static int run_blocks(const prices_market_args *a, FILE *out, ib_error *err)
{
    time_t now = time(NULL);
    int *counts = calloc(a->n_types ? a->n_types : 1, sizeof *counts);
    if (!counts) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < a->n_types; i++) counts[i] = a->nodes_of(a->types[i]);
    market_block_query q = {a->types,          a->n_types,     a->regions,    a->n_regions, counts,
                            a->duration_hours, a->start_after, a->end_before, a->timeout_s};
    market_block *b = NULL;
    size_t n = 0;
    char why[320];
    int rc = prices_fetch_blocks(&q, &b, &n, why, sizeof why, err);
    free(counts);
    if (rc == 1 && a->source == PRICES_SOURCE_LIVE) return ib_error_set(err, IB_EXIT_RUNTIME, "--source live: %s", why);
    if (rc == 1) return offline(a, why, out) ? ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the output") : 0;
    if (rc) return -1;
    if (!n) {
        free(b);
        char days[16];
        snprintf(days, sizeof days, "%dd", a->duration_hours / 24);
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "no Capacity Block of %s is offered for %s%s in %s%s (other dates, "
                            "another --block-duration or fewer --nodes may find one)",
                            days, a->n_types == 1 ? a->types[0] : "the types asked", "",
                            a->n_regions == 1 ? a->regions[0] : "the regions asked",
                            a->start_after || a->end_before ? " between the dates asked" : "");
    }
    /* a type with no offering is said, not silently missing */
    for (size_t t = 0; t < a->n_types; t++) {
        int any = 0;
        for (size_t i = 0; i < n && !any; i++)
            any = !strcmp(b[i].ultraserver_type[0] ? b[i].ultraserver_type : b[i].instance_type, a->types[t]);
        if (!any)
            ib_warn("no Capacity Block of %s is offered now for %s", a->types[t],
                    a->n_regions == 1 ? a->regions[0] : "in the regions asked");
    }
    qsort(b, n, sizeof *b, cmp_block);
    int wrc = write_blocks(a, b, n, now, NULL, out);
    free(b);
    return wrc ? ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the output") : 0;
}

static int run_plans(const prices_market_args *a, FILE *out, ib_error *err)
{
    time_t now = time(NULL);
    size_t n = a->n_types * a->n_regions;
    long long duration_s = a->term_years == 3 ? 94608000LL : 31536000LL;
    double *rates = calloc(n ? n : 1, sizeof *rates);
    plan_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rates || !rows) {
        free(rates);
        free(rows);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    market_plan_query q = {a->types,   a->n_types,  a->regions, a->n_regions, a->plan_type, payment_name(a->payment),
                           duration_s, a->timeout_s};
    char why[320];
    int rc = prices_fetch_plan_rates(&q, rates, why, sizeof why, err);
    if (rc == 1 && a->source == PRICES_SOURCE_LIVE) {
        ib_error_set(err, IB_EXIT_RUNTIME, "--source live: %s", why);
        goto fail;
    }
    if (rc == 1) {
        free(rates);
        free(rows);
        return offline(a, why, out) ? ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the output") : 0;
    }
    if (rc) goto fail;
    /* the on-demand price beside it: live, else the cache, else the snapshot, its source shown */
    prices_query pq = {.instance_types = (char **)a->types,
                       .n_types = a->n_types,
                       .regions = (char **)a->regions,
                       .n_regions = a->n_regions,
                       .want_on_demand = 1,
                       .source = a->source,
                       .skip_placement_scores = 1,
                       .timeout_s = a->timeout_s};
    price_set set;
    if (prices_get(&pq, &set, err) != 0) goto fail;
    size_t m = 0;
    for (size_t t = 0; t < a->n_types; t++)
        for (size_t r = 0; r < a->n_regions; r++) {
            double rate = rates[t * a->n_regions + r];
            if (isnan(rate)) {
                ib_warn("AWS has no %s Savings Plan rate (%dy, %s) for %s in %s", a->plan_label, a->term_years,
                        payment_name(a->payment), a->types[t], a->regions[r]);
                continue;
            }
            plan_row *p = &rows[m++];
            p->type = a->types[t];
            p->region = a->regions[r];
            p->nodes = a->nodes_of(a->types[t]);
            p->rate = rate;
            p->on_demand = NAN;
            for (size_t i = 0; i < set.n; i++)
                if (!strcmp(set.items[i].instance_type, p->type) && !strcmp(set.items[i].region, p->region)) {
                    p->on_demand = set.items[i].on_demand_usd_per_hour;
                    if (!isnan(p->on_demand))
                        snprintf(p->od_source, sizeof p->od_source, "%s", set.items[i].on_demand_source);
                }
            markets_plan_money_of(rate, duration_s, a->payment, p->nodes, &p->money);
        }
    if (!m) {
        prices_free(&set);
        ib_error_set(err, IB_EXIT_RUNTIME, "AWS has no %s Savings Plan rate (%dy, %s) for what was asked",
                     a->plan_label, a->term_years, payment_name(a->payment));
        goto fail;
    }
    int wrc = write_plans(a, rows, m, now, NULL, out);
    if (wrc == 0 && prices_shown_from_snapshot(&set, 1, 0))
        ib_info("note: on-demand prices marked 'snapshot' are from the snapshot of %s, not live AWS",
                set.snapshot_date);
    prices_free(&set);
    free(rates);
    free(rows);
    return wrc ? ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the output") : 0;
fail:
    free(rates);
    free(rows);
    return -1;
}

int prices_market_run(const prices_market_args *a, FILE *out, ib_error *err)
{
    if (a->source == PRICES_SOURCE_CACHE || a->source == PRICES_SOURCE_SNAPSHOT) {
        char why[256];
        snprintf(why, sizeof why,
                 "%s come from live AWS only: they are in neither the snapshot nor the cache, and "
                 "instbench shows no stale figure (--source auto or live with AWS credentials)",
                 a->market == PRICES_MARKET_BLOCK ? "Capacity Block offerings" : "Savings Plan rates");
        return offline(a, why, out) ? ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the output") : 0;
    }
    return a->market == PRICES_MARKET_BLOCK ? run_blocks(a, out, err) : run_plans(a, out, err);
}

/* `prices --plan`'s choices, in its order, and what AWS calls them. */
static const char *const plan_flags[] = {"compute", "ec2-instance", "sagemaker"};
static const char *const plan_api[] = {"Compute", "EC2Instance", "SageMaker"};
static const char *const plan_labels[] = {"Compute", "EC2 Instance", "SageMaker"};

int prices_market_prepare(prices_market_args *a, int plan, int (*named)(const char *type), char ***kept, char *why,
                          size_t len)
{
    int sagemaker = 0, ec2 = 0;
    size_t k = 0;
    *kept = malloc((a->n_types ? a->n_types : 1) * sizeof **kept);
    if (!*kept) return IB_EXIT_RUNTIME;
    for (size_t i = 0; i < a->n_types; i++) {
        const char *t = a->types[i];
        if (instance_type_is_sagemaker(t)) sagemaker = 1;
        else ec2 = 1;
        /* a pattern with capacity-block means the types sold as blocks ('p*': p4d, p5..., not
         * p3.2xlarge); a type named outright that is not sold so is refused */
        if (a->market == PRICES_MARKET_BLOCK && !instance_type_capacity_block(t)) {
            if (!named(t)) continue;
            char fams[160];
            instance_type_capacity_block_families(fams, sizeof fams);
            snprintf(why, len, "--instance-types: no Capacity Block is sold for %s (AWS sells them for %s)", t, fams);
            return IB_EXIT_USAGE;
        }
        (*kept)[k++] = a->types[i];
    }
    if (!k) {
        snprintf(why, len, "--instance-types: none of the types they match is sold as a Capacity Block");
        return IB_EXIT_USAGE;
    }
    a->types = *kept, a->n_types = k;
    if (a->market != PRICES_MARKET_PLAN) return 0;
    if (plan < 0) plan = sagemaker ? 2 : 0;
    if (sagemaker && ec2) {
        snprintf(why, len,
                 "--market savings-plan: ml.* types take a SageMaker plan and EC2 types another: ask for "
                 "them apart");
        return IB_EXIT_USAGE;
    }
    if ((plan == 2) != sagemaker) {
        snprintf(why, len, "--plan %s covers %s, not %s", plan_flags[plan],
                 plan == 2 ? "SageMaker's ml.* types" : "EC2 instance types",
                 sagemaker ? "ml.* types (--plan sagemaker)" : "EC2 instance types (--plan compute or ec2-instance)");
        return IB_EXIT_USAGE;
    }
    a->plan_type = plan_api[plan];
    a->plan_label = plan_labels[plan];
    return 0;
}
