/* prices_table: on-demand and spot prices as people and spreadsheets read them, one row per
 * (type, region) and one set of column names (prices_columns: the CSV header, the JSON rows' keys,
 * --columns).  The table shows money and ages in the one style of output_fmt_usd /
 * output_fmt_duration, the cheapest spot zone named, the interruption bucket, each price's source
 * and age, the sources of the other figures under it; the CSV and the JSON rows carry plain
 * full-precision numbers, empty (null) for unknowns.  The whole instbench.prices/v1 document is
 * prices_json.c's. */
#include "instbench/prices.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "live", "cache, 3.2 h old", "snapshot 2026-11-21": ages in the one duration style. */
static void describe_source(const char *src, time_t as_of, time_t now, char *out, size_t len)
{
    if (!src[0]) {
        snprintf(out, len, "-");
    } else if (!strcmp(src, "snapshot")) {
        char d[32];
        util_utc_iso8601(as_of, d);
        d[10] = '\0';
        snprintf(out, len, "snapshot %s", d);
    } else {
        double s = difftime(now, as_of);
        char age[48];
        output_fmt_duration(age, sizeof age, s < 0 ? 0 : s);
        if (s < 180 && !strcmp(src, "live")) snprintf(out, len, "live");
        else snprintf(out, len, "%s, %s old", src, age);
    }
}

/* The original keys first (messages and scripts list them in this order), the later ones after. */

/* The type's hardware cells: "4 x A10G" (or "-": none, "?": not in the catalogue; the
 * accelerators of NODES instances), accelerator memory in all, vCPUs, host memory (GiB, whole
 * numbers: what catalogues and sky show-gpus print; "-" when a file left it unknown) of one
 * instance. */
static void hardware_cells(const price_record *r, int nodes, char acc[64], char accm[16], char cpu[16], char mem[16])
{
    const int known = prices_hardware_known(r);
    if (!known) strcpy(acc, "?");
    else if (r->hw.accelerator[0])
        snprintf(acc, 64, "%ld x %s", (long)r->hw.accelerator_count * nodes, r->hw.accelerator);
    else strcpy(acc, "-");
    if (known && !isnan(r->hw.accelerator_memory_gib)) snprintf(accm, 16, "%.0f", r->hw.accelerator_memory_gib);
    else strcpy(accm, known ? "-" : "?");
    if (known) snprintf(cpu, 16, "%d", r->hw.vcpus);
    else strcpy(cpu, "?");
    if (known && !isnan(r->hw.memory_gib)) snprintf(mem, 16, "%.0f", r->hw.memory_gib);
    else strcpy(mem, known ? "-" : "?");
}

/* Whole percent, never "-0". */
static void fmt_pct(char *out, size_t len, double pct)
{
    if (isnan(pct)) snprintf(out, len, "-");
    else snprintf(out, len, "%.0f", fabs(pct) < 0.5 ? 0.0 : pct);
}

void prices_column_markets(const char *key, int *od, int *spot)
{
    if (!strncmp(key, "on_demand_", 10) || !strcmp(key, "spot_min_savings_pct")) *od = 1;
    if (!strncmp(key, "spot_", 5)) *spot = 1;
}

int prices_shown_from_snapshot(const price_set *s, int want_od, int want_spot)
{
    for (size_t i = 0; i < s->n; i++) {
        const price_record *r = &s->items[i];
        if (want_od && !isnan(r->on_demand_usd_per_hour) && !strcmp(r->on_demand_source, "snapshot")) return 1;
        if (want_spot && r->n_spot && !strcmp(r->spot_source, "snapshot")) return 1;
    }
    return 0;
}


/* The job's interruption rate as "1 per 626 h" (once every H hours, rank's BREAK-EVEN style) and
 * its chance of a day without one as "96.2%"; "-" without an Advisor bucket. */
static void survival_cells(const price_record *r, char job[48], char p24[16])
{
    const double rate = prices_job_interruption_rate(r);
    if (isnan(rate)) {
        strcpy(job, "-"), strcpy(p24, "-");
        return;
    }
    char h[32];
    output_fmt_grouped(h, sizeof h, 1 / rate, 1 / rate < 10 ? 1 : 0);
    snprintf(job, 48, "1 per %s h", h);
    output_fmt_probability(p24, 16, prices_p_uninterrupted(r, PRICES_SURVIVAL_HOURS));
}


/* The columns, named as the JSON fields they carry (spot.min_usd_per_hour -> spot_min_usd_per_hour;
 * the instance's hardware without "instance_"; times with _utc, as they carry no zone).  Renamed
 * columns keep their place; new ones go last, so columns read by position keep theirs.  The old
 * keys are the table's before its keys became these names. */
#define L OUTPUT_LEFT
#define R OUTPUT_RIGHT
#define K OUTPUT_KEEP
#define T PRICES_TEXT
#define N PRICES_NUMBER
#define U PRICES_TIME
const prices_column prices_columns[] = {
    {"instance_type", "INSTANCE TYPE", L, K, T, "type"},
    {"region", "REGION", L, K, T, NULL},
    {"on_demand_usd_per_hour", "ON-DEMAND $/h", R, K, N, "on_demand"},
    {"on_demand_source", "ON-DEMAND SOURCE", L, 3, T, NULL},
    {"on_demand_as_of_utc", "ON-DEMAND AS OF (UTC)", L, 1, U, NULL},
    {"spot_min_usd_per_hour", "SPOT $/h (LOWEST)", R, K, N, "spot"},
    {"spot_min_availability_zone", "IN AZ", L, 6, T, "spot_az"},
    {"spot_max_usd_per_hour", "SPOT $/h (HIGHEST)", R, 1, N, NULL},
    {"spot_zone_count", "AZs", R, 1, N, "azs"},
    {"spot_source", "SPOT SOURCE", L, 3, T, NULL},
    {"spot_as_of_utc", "SPOT AS OF (UTC)", L, 1, U, NULL},
    {"interruption_bucket", "INTERRUPTION BUCKET", R, 1, N, NULL},
    {"interruption_label", "INTERRUPTION", L, 5, T, "interruption"},
    {"interruption_savings_pct", "ADVISOR SAVINGS %", R, 0, N, "advisor_savings"},
    {"placement_score", "PLACEMENT 1-10", R, 2, N, "placement"},
    {"vcpus", "vCPUs", R, 5, N, NULL},
    {"memory_gib", "MEM GiB", R, 2, N, "memory"},
    {"accelerator", "ACCELERATORS", L, 7, T, "accelerators"}, /* the table shows "4 x A10G" */
    {"accelerator_count", "ACCELERATOR COUNT", R, 1, N, NULL},
    {"accelerator_memory_gib", "ACCEL GiB", R, 4, N, "accelerator_memory"},
    {"spot_min_savings_pct", "SAVINGS %", R, 4, N, "savings"},
    {"spot_min_zone_type", "ZONE TYPE", L, 1, T, NULL},
    {"on_demand_usd_per_accelerator_hour", "ON-DEMAND $/h PER ACCEL", R, 4, N, "on_demand_per_accelerator"},
    {"spot_min_usd_per_accelerator_hour", "SPOT $/h PER ACCEL", R, 4, N, "spot_per_accelerator"},
    {"nodes", "NODES", R, K, N, NULL},
    {"total_accelerators", "TOTAL ACCELERATORS", L, K, N, NULL}, /* the table shows "16 x A10G" */
    {"on_demand_total_usd_per_hour", "ON-DEMAND $/h TOTAL", R, K, N, "on_demand_total"},
    {"spot_min_total_usd_per_hour", "SPOT $/h TOTAL", R, K, N, "spot_total"},
    {"interruption_job_rate_per_hour", "JOB INTERRUPTIONS", R, K, N, "job_interruptions"},
    {"interruption_p_no_interruption_24h", "P(24 h UNINTERRUPTED)", R, K, N, "p_uninterrupted_24h"},
    {NULL, NULL, 0, 0, 0, NULL},
};
#undef L
#undef R
#undef K
#undef T
#undef N
#undef U
enum {
    C_TYPE,
    C_REGION,
    C_OD,
    C_OD_SOURCE,
    C_OD_AS_OF,
    C_SPOT,
    C_SPOT_AZ,
    C_SPOT_MAX,
    C_AZS,
    C_SPOT_SOURCE,
    C_SPOT_AS_OF,
    C_BUCKET,
    C_INTERRUPTION,
    C_ADVISOR,
    C_PLACEMENT,
    C_VCPUS,
    C_MEMORY,
    C_ACC,
    C_ACC_COUNT,
    C_ACC_MEMORY,
    C_SAVINGS,
    C_ZONE_TYPE,
    C_OD_ACC,
    C_SPOT_ACC,
    C_NODES,
    C_ACC_TOTAL,
    C_OD_TOTAL,
    C_SPOT_TOTAL,
    C_JOB,
    C_P24,
    NC
};

/* The table's columns without --columns: a narrow terminal keeps type, region and the prices
 * longest (output_fit_set); the advisor's savings goes first, the row's own savings says it
 * better.  With --nodes the N-instance columns are the answer asked for and stay (`prices` sets
 * nodes_asked when --columns names one of them).  Hardware cells are per instance, but for TOTAL
 * ACCELERATORS.  KEYS: room for NC + 1. */
static void default_columns(int want_od, int want_spot, int nodes, int placement, const char **keys)
{
    size_t n = 0;
#define ADD(c) (keys[n++] = prices_columns[c].key)
    ADD(C_TYPE), ADD(C_REGION);
    if (nodes) ADD(C_NODES);
    ADD(C_ACC);
    if (nodes) ADD(C_ACC_TOTAL);
    ADD(C_ACC_MEMORY), ADD(C_VCPUS), ADD(C_MEMORY);
    if (want_od) {
        ADD(C_OD), ADD(C_OD_ACC);
        if (nodes) ADD(C_OD_TOTAL);
        ADD(C_OD_SOURCE);
    }
    if (want_spot) {
        ADD(C_SPOT), ADD(C_SPOT_ACC);
        if (nodes) ADD(C_SPOT_TOTAL);
        ADD(C_SPOT_AZ), ADD(C_AZS), ADD(C_INTERRUPTION);
        /* the bucket as the NODES-node job lives it (prices/interruption.c): with --nodes only */
        if (nodes) ADD(C_JOB), ADD(C_P24);
        ADD(C_SAVINGS), ADD(C_ADVISOR);
        /* scores come from live AWS only: from the snapshot or the cache the column was "-" on every row */
        if (placement) ADD(C_PLACEMENT);
        ADD(C_SPOT_SOURCE);
    }
#undef ADD
    keys[n] = NULL;
}

typedef struct shown_text {
    char od[48], odacc[48], odtot[48], ods[64], sp[48], spmax[48], spacc[48], sptot[48], az[48], nz[24], adv[16],
        sav[16], sps[64], acc[64], acctot[64], accm[16], cpu[16], mem[16], job[48], p24[16];
} shown_text;

/* R's cells as the table shows them, by column (NULL: the plain cell, "-" when empty). */
static void shown_row(const price_set *s, const price_record *r, time_t now, shown_text *b, const char *cells[NC])
{
    for (size_t c = 0; c < NC; c++) cells[c] = NULL;
    const int nodes = prices_nodes(r);
    char unused[16];
    hardware_cells(r, 1, b->acc, b->accm, b->cpu, b->mem);
    hardware_cells(r, nodes, b->acctot, unused, unused, unused);
    cells[C_ACC] = b->acc, cells[C_ACC_MEMORY] = b->accm, cells[C_VCPUS] = b->cpu, cells[C_MEMORY] = b->mem;
    cells[C_ACC_TOTAL] = b->acctot;
    const double od = r->on_demand_usd_per_hour;
    output_fmt_usd(b->od, sizeof b->od, od);
    output_fmt_usd(b->odacc, sizeof b->odacc, prices_per_accelerator_hour(r, od));
    output_fmt_usd(b->odtot, sizeof b->odtot, nodes * od);
    describe_source(isnan(od) ? "" : r->on_demand_source, r->on_demand_as_of, now, b->ods, sizeof b->ods);
    cells[C_OD] = b->od, cells[C_OD_ACC] = b->odacc, cells[C_OD_TOTAL] = b->odtot, cells[C_OD_SOURCE] = b->ods;
    const spot_price *best = prices_cheapest_zone(r, s->include_local_zones);
    const double sp = best ? best->usd_per_hour : NAN;
    output_fmt_usd(b->sp, sizeof b->sp, sp);
    if (!best && prices_is_sagemaker(r)) snprintf(b->sp, sizeof b->sp, "not published");
    output_fmt_usd(b->spmax, sizeof b->spmax, best ? prices_highest_spot(r, s->include_local_zones) : NAN);
    output_fmt_usd(b->spacc, sizeof b->spacc, prices_per_accelerator_hour(r, sp));
    output_fmt_usd(b->sptot, sizeof b->sptot, nodes * sp);
    snprintf(b->az, sizeof b->az, "%s%s", best ? best->az : "-", best ? prices_zone_marker(best->az) : "");
    snprintf(b->nz, sizeof b->nz, "%zu", r->n_spot);
    fmt_pct(b->sav, sizeof b->sav, prices_spot_savings_pct(r, s->include_local_zones));
    fmt_pct(b->adv, sizeof b->adv, r->savings_pct != PRICES_SAVINGS_UNKNOWN ? r->savings_pct : NAN);
    describe_source(r->spot_source, r->spot_as_of, now, b->sps, sizeof b->sps);
    survival_cells(r, b->job, b->p24);
    cells[C_SPOT] = b->sp, cells[C_SPOT_MAX] = b->spmax, cells[C_SPOT_ACC] = b->spacc, cells[C_SPOT_TOTAL] = b->sptot;
    cells[C_SPOT_AZ] = b->az, cells[C_AZS] = b->nz, cells[C_SAVINGS] = b->sav, cells[C_ADVISOR] = b->adv;
    cells[C_SPOT_SOURCE] = b->sps, cells[C_JOB] = b->job, cells[C_P24] = b->p24;
}


/* The snapshot's source reads "<prices>; interruption buckets from <advisor feed>"
 * (scripts/data/make_price_snapshot.py): the two halves are told apart so that each is named only
 * where its figures are shown. */
static const char ADVISOR_SEP[] = "; interruption buckets from ";

/* Appends "; " (unless first) and the formatted clause to the legend LINE. */
static void clause(char *line, size_t len, const char *fmt, ...)
{
    size_t used = strlen(line);
    if (used + 3 >= len) return;
    if (used) used += (size_t)snprintf(line + used, len - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + used, len - used, fmt, ap);
    va_end(ap);
}

/* Whether T showed the column A or B. */
static int either(const output_table *t, const char *a, const char *b)
{
    return output_table_showed(t, a) || output_table_showed(t, b);
}

/* What the lowest spot price ranges over, when it matters: the rows whose Local or Wavelength
 * Zone prices it leaves out (they need an opt-in), or what the markers of the zones shown mean. */
static void zone_clause(const price_set *s, const output_table *t, char *line, size_t len)
{
    size_t rows = 0, marked = 0;
    const int lowest = either(t, "spot_min_usd_per_hour", "spot_min_usd_per_accelerator_hour") ||
                       either(t, "spot_min_total_usd_per_hour", "spot_min_savings_pct");
    for (size_t i = 0; i < s->n; i++) {
        const price_record *r = &s->items[i];
        const spot_price *best = prices_cheapest_zone(r, s->include_local_zones);
        rows += prices_zones_left_out(r, s->include_local_zones) > 0;
        marked += best && prices_zone_kind_of(best->az) != PRICES_ZONE_AVAILABILITY;
    }
    if (rows && lowest)
        clause(line, len,
               "the lowest spot price leaves out Local and Wavelength Zones, which need an opt-in (%zu %s "
               "some; --include-local-zones counts them)",
               rows, rows == 1 ? "row has" : "rows have");
    if (marked && output_table_showed(t, "spot_min_availability_zone"))
        clause(line, len, "(LZ) a Local Zone, (WLZ) a Wavelength Zone: each needs an opt-in per account");
}

/* Under the table: where each figure shown comes from (only the columns T showed); the snapshot's
 * origin only when a price shown is the snapshot's. */
static void write_sources(const price_set *s, const output_table *t, const prices_view *v, FILE *out)
{
    const int want_od = v->want_on_demand, want_spot = v->want_spot;
    const int od_shown = output_table_showed(t, "on_demand_usd_per_hour");
    const int spot_shown = output_table_showed(t, "spot_min_usd_per_hour");
    const char *sep = strstr(s->snapshot_source, ADVISOR_SEP);
    int price_len = sep ? (int)(sep - s->snapshot_source) : (int)strlen(s->snapshot_source);
    int advisor = 0;
    for (size_t i = 0; i < s->n; i++) advisor |= want_spot && s->items[i].interruption_bucket >= 0;
    const int intr = output_table_showed(t, "interruption_label");
    const int bucket = output_table_showed(t, "interruption_bucket");
    const int adv = output_table_showed(t, "interruption_savings_pct");
    /* every clause at once, with --nodes and ml.* rows, is about 1.3 KB of fixed text plus the
     * Advisor's part of snapshot_source (under 512): 1024 cut the line short without a word */
    char line[4096] = "";
    if (output_table_showed(t, "accelerator") || output_table_showed(t, "accelerator_memory_gib") ||
        output_table_showed(t, "vcpus") || output_table_showed(t, "memory_gib"))
        clause(line, sizeof line, "hardware: the catalogue shipped with instbench");
    if (output_table_showed(t, "on_demand_source") || output_table_showed(t, "spot_source"))
        clause(line, sizeof line, "each price: its SOURCE column");
    else if (!v->n_columns && (od_shown || spot_shown))
        clause(line, sizeof line, "each price: its SOURCE column (--wide shows it)");
    else if (od_shown || spot_shown) /* --wide adds no column to those --columns picks */
        clause(line, sizeof line, "each price: its SOURCE column (--columns ...,%s%s%s shows it)",
               od_shown ? "on_demand_source" : "", od_shown && spot_shown ? "," : "", spot_shown ? "spot_source" : "");
    if (output_table_showed(t, "spot_min_savings_pct"))
        clause(line, sizeof line, "SAVINGS %%: 1 - spot / on-demand of the row's own prices");
    if (either(t, "on_demand_usd_per_accelerator_hour", "spot_min_usd_per_accelerator_hour"))
        clause(line, sizeof line, "PER ACCEL: the instance's price over its accelerators (the catalogue's count)");
    /* N as the table names it: its NODES column, or the flag when that column is not shown */
    const int nodes_col = output_table_showed(t, "nodes");
    const char *n_first = nodes_col ? "NODES" : "N (--nodes)", *n_again = nodes_col ? "NODES" : "N";
    if (either(t, "on_demand_total_usd_per_hour", "spot_min_total_usd_per_hour") ||
        output_table_showed(t, "total_accelerators"))
        clause(line, sizeof line, "TOTAL: %s instances together (%s x the price of one)", n_first, n_again);
    zone_clause(s, t, line, sizeof line);
    if (advisor && (intr || bucket || adv)) {
        /* the Advisor's columns shown, named as their headers: "A", "A and B", "A, B and C" */
        const char *named[3];
        int k = 0;
        if (intr) named[k++] = "INTERRUPTION";
        if (bucket) named[k++] = "INTERRUPTION BUCKET";
        if (adv) named[k++] = "ADVISOR SAVINGS %";
        char names[96] = "";
        for (int i = 0, used = 0; i < k; i++)
            used += snprintf(names + used, sizeof names - (size_t)used, "%s%s",
                             !i           ? ""
                             : i == k - 1 ? " and "
                                          : ", ",
                             named[i]);
        clause(line, sizeof line, "%s: region-wide, from %s", names,
               sep ? sep + strlen(ADVISOR_SEP) : "the AWS Spot Instance Advisor feed shipped with instbench");
    }
    int sagemaker = 0;
    for (size_t i = 0; i < s->n; i++) sagemaker |= prices_is_sagemaker(&s->items[i]);
    if (sagemaker && output_table_showed(t, "spot_min_usd_per_hour"))
        clause(line, sizeof line,
               "ml.* rows: SageMaker training; its managed spot has no published hourly price "
               "(rank prices it at yours: --price TYPE:spot=USD)");
    const int job = output_table_showed(t, "interruption_job_rate_per_hour");
    const int p24 = output_table_showed(t, "interruption_p_no_interruption_24h");
    char rate[320];
    snprintf(rate, sizeof rate,
             "%s x a node's rate, assuming the bucket's midpoint share (>20%%: 25%%) of nodes reclaimed in a "
             "720 h month (-ln(1 - share) / 720 per hour, as rank's spot risk)",
             n_first);
    /* each of the two says what it is without the other: P(24 h) alone defines the rate it uses */
    if (job) clause(line, sizeof line, "JOB INTERRUPTIONS: %s", rate);
    if (p24 && job) clause(line, sizeof line, "P(24 h UNINTERRUPTED): e^(-rate x 24)");
    else if (p24) clause(line, sizeof line, "P(24 h UNINTERRUPTED): e^(-rate x 24), the job's rate being %s", rate);
    static const char placement[] =
        "PLACEMENT: EC2 spot placement scores, a launch likelihood, not interruption risk (live AWS only)";
    if (output_table_showed(t, "placement_score") && !s->nodes_asked) clause(line, sizeof line, "%s", placement);
    else if (output_table_showed(t, "placement_score"))
        clause(line, sizeof line, "%s; for %s > 1, %s instances in one zone (SingleAvailabilityZone), %s", placement,
               n_first, n_again,
               output_table_showed(t, "spot_min_availability_zone") ? "that of IN AZ"
                                                                    : "that of the row's cheapest spot zone");
    /* the snapshot's origin only under a figure made of its prices: a column of the market's
     * (on_demand_*, spot_*; SAVINGS % reads both), not under hardware or the Advisor's alone */
    int od_cols = 0, spot_cols = 0;
    for (const prices_column *c = prices_columns; c->key; c++)
        if (output_table_showed(t, c->key)) prices_column_markets(c->key, &od_cols, &spot_cols);
    const int snap = prices_shown_from_snapshot(s, want_od && od_cols, want_spot && spot_cols);
    if (line[0] || snap) fputc('\n', out);
    if (line[0]) output_note(out, "sources: %s.", line);
    if (snap)
        output_note(out, "'snapshot' prices are from the snapshot of %s, not live AWS: %.*s", s->snapshot_date,
                    price_len, s->snapshot_source);
}

/* CSV numbers: util_fmt_double, the very text the JSON writer gives; empty for NAN (unknown). */
static void num(double v, char *out, size_t len) { util_fmt_double(out, len, v); }

/* "2026-11-21T00:00:00" (UTC, what the _utc column names say; util_utc_spreadsheet): the form
 * LibreOffice Calc's default import, Excel and pandas read as a date-time.  Empty when SRC is (no
 * price). */
static void when(const char *src, time_t t, char *out)
{
    if (!src[0]) out[0] = '\0';
    else util_utc_spreadsheet(t, out);
}

typedef struct cell_text {
    char od[32], odt[32], mn[32], mx[32], nz[24], spt[32], ib[16], sav[16], pl[16], cpu[16], mem[32], accn[16],
        accm[32], rsav[32], odacc[32], spacc[32], nodes[16], acctot[24], odtot[32], sptot[32], job[32], p24[32];
} cell_text;

/* R's plain cells in prices_columns' order into CELLS (pointing into B or R). */
static void plain_row(const price_set *s, const price_record *r, cell_text *b, const char *cells[NC])
{
    memset(b, 0, sizeof *b);
    const int nodes = prices_nodes(r), with_local = s->include_local_zones;
    if (prices_hardware_known(r)) {
        snprintf(b->cpu, sizeof b->cpu, "%d", r->hw.vcpus), num(r->hw.memory_gib, b->mem, sizeof b->mem);
        snprintf(b->accn, sizeof b->accn, "%d", r->hw.accelerator_count);
        num(r->hw.accelerator_memory_gib, b->accm, sizeof b->accm);
        snprintf(b->acctot, sizeof b->acctot, "%ld", (long)nodes * r->hw.accelerator_count);
    }
    const double od = r->on_demand_usd_per_hour;
    num(od, b->od, sizeof b->od);
    num(prices_per_accelerator_hour(r, od), b->odacc, sizeof b->odacc);
    num(nodes * od, b->odtot, sizeof b->odtot);
    when(isnan(od) ? "" : r->on_demand_source, r->on_demand_as_of, b->odt);
    const spot_price *lo = prices_cheapest_zone(r, with_local);
    const char *az = "", *kind = "", *label = "";
    if (lo) {
        num(lo->usd_per_hour, b->mn, sizeof b->mn);
        num(prices_highest_spot(r, with_local), b->mx, sizeof b->mx);
        num(prices_per_accelerator_hour(r, lo->usd_per_hour), b->spacc, sizeof b->spacc);
        num(nodes * lo->usd_per_hour, b->sptot, sizeof b->sptot);
        az = lo->az;
        kind = prices_zone_kind_name(prices_zone_kind_of(lo->az));
    }
    if (r->spot_source[0]) snprintf(b->nz, sizeof b->nz, "%zu", r->n_spot);
    when(r->spot_source, r->spot_as_of, b->spt);
    if (r->interruption_bucket >= 0) {
        snprintf(b->ib, sizeof b->ib, "%d", r->interruption_bucket);
        label = prices_interruption_label(r->interruption_bucket);
    }
    if (r->savings_pct != PRICES_SAVINGS_UNKNOWN) snprintf(b->sav, sizeof b->sav, "%d", r->savings_pct);
    if (r->placement_score > 0) snprintf(b->pl, sizeof b->pl, "%d", r->placement_score);
    num(prices_spot_savings_pct(r, with_local), b->rsav, sizeof b->rsav);
    snprintf(b->nodes, sizeof b->nodes, "%d", nodes);
    num(prices_job_interruption_rate(r), b->job, sizeof b->job);
    num(prices_p_uninterrupted(r, PRICES_SURVIVAL_HOURS), b->p24, sizeof b->p24);
    const char *v[NC] = {r->instance_type,
                         r->region,
                         b->od,
                         isnan(od) ? "" : r->on_demand_source,
                         b->odt,
                         b->mn,
                         az,
                         b->mx,
                         b->nz,
                         r->spot_source,
                         b->spt,
                         b->ib,
                         label,
                         b->sav,
                         b->pl,
                         b->cpu,
                         b->mem,
                         r->hw.accelerator,
                         b->accn,
                         b->accm,
                         b->rsav,
                         kind,
                         b->odacc,
                         b->spacc,
                         b->nodes,
                         b->acctot,
                         b->odtot,
                         b->sptot,
                         b->job,
                         b->p24};
    memcpy(cells, v, sizeof v);
}

/* The table of G (rows already in), its legend and the placement note. */
static int write_table(const price_set *s, const prices_view *v, const prices_grid *g, FILE *out)
{
    const char *defaults[NC + 1];
    int placement = 0;
    for (size_t i = 0; i < s->n; i++) placement |= s->items[i].placement_score > 0;
    default_columns(v->want_on_demand, v->want_spot, s->nodes_asked, placement, defaults);
    output_table t;
    int rc = prices_grid_write_table(g, defaults, v->n_columns > 0, &t, out);
    /* The notes quote the price data: escaped like the cells (output_note). */
    if (rc == 0) write_sources(s, &t, v, out);
    output_table_free(&t);
    if (rc == 0 && v->want_spot && s->placement_note[0]) output_note(out, "%s", s->placement_note);
    return rc;
}

int prices_write(const price_set *s, const prices_view *v, FILE *out)
{
    const int json = !strcmp(v->format, "json");
    if (json && !v->n_columns) { /* the whole document, what rank --source reads back */
        char *txt = prices_to_json(s);
        int rc = txt && fputs(txt, out) >= 0 ? 0 : -1;
        free(txt);
        return rc;
    }
    prices_grid g;
    if (prices_grid_init(&g, prices_columns) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        cell_text p;
        shown_text b;
        const char *plain[NC], *shown[NC];
        plain_row(s, &s->items[i], &p, plain);
        shown_row(s, &s->items[i], v->now, &b, shown);
        rc = prices_grid_add(&g, plain, shown);
    }
    const char *market = v->want_on_demand && v->want_spot ? "both" : v->want_spot ? "spot" : "on-demand";
    if (rc == 0) {
        if (json) rc = prices_grid_write_rows(&g, market, v->now, NULL, v->columns, v->n_columns, out);
        else if (!strcmp(v->format, "csv")) rc = prices_grid_write_csv(&g, v->columns, v->n_columns, out);
        else rc = write_table(s, v, &g, out);
    }
    prices_grid_free(&g);
    return rc;
}
