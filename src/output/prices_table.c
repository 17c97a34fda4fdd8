/* prices_table: a price_set as an aligned table (money and ages in the one style of
 * output_fmt_usd / output_fmt_duration, the cheapest spot zone named, the interruption bucket,
 * each price's source and age, the sources of the other figures under it) and as CSV (one row
 * per (type, region), plain full-precision numbers, empty cells for unknowns). */
#include "instbench/output.h"

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
const char *const prices_table_keys[] = {"type", "region", "accelerators", "accelerator_memory", "vcpus", "memory",
                                         "on_demand", "on_demand_source", "spot", "spot_az", "azs", "interruption",
                                         "savings", "advisor_savings", "placement", "spot_source",
                                         "on_demand_per_accelerator", "spot_per_accelerator", "nodes",
                                         "total_accelerators", "on_demand_total", "spot_total", "job_interruptions",
                                         "p_uninterrupted_24h", NULL};

/* The type's hardware cells: "4 x A10G" (or "-": none, "?": not in the catalogue; the
 * accelerators of NODES instances), accelerator memory in all, vCPUs, host memory (GiB, whole
 * numbers: what catalogues and sky show-gpus print) of one instance. */
static void hardware_cells(const price_record *r, int nodes, char acc[64], char accm[16], char cpu[16], char mem[16])
{
    const int known = prices_hardware_known(r);
    if (!known) strcpy(acc, "?");
    else if (r->hw.accelerator[0]) snprintf(acc, 64, "%ld x %s", (long)r->hw.accelerator_count * nodes, r->hw.accelerator);
    else strcpy(acc, "-");
    if (known && !isnan(r->hw.accelerator_memory_gib)) snprintf(accm, 16, "%.0f", r->hw.accelerator_memory_gib);
    else strcpy(accm, known ? "-" : "?");
    if (known) snprintf(cpu, 16, "%d", r->hw.vcpus), snprintf(mem, 16, "%.0f", r->hw.memory_gib);
    else strcpy(cpu, "?"), strcpy(mem, "?");
}

/* Whole percent, never "-0". */
static void fmt_pct(char *out, size_t len, double pct)
{
    if (isnan(pct)) snprintf(out, len, "-");
    else snprintf(out, len, "%.0f", fabs(pct) < 0.5 ? 0.0 : pct);
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

enum { PT_MAX = 28 };

typedef struct price_columns {
    const char *headers[PT_MAX], *keys[PT_MAX];
    output_align align[PT_MAX];
    int prio[PT_MAX];
    size_t n;
} price_columns;

static void add_col(price_columns *c, const char *h, const char *k, output_align a, int p)
{
    c->headers[c->n] = h, c->keys[c->n] = k, c->align[c->n] = a, c->prio[c->n++] = p;
}

/* A narrow terminal keeps type, region and the prices longest (output_fit_set); the advisor's
 * savings goes first, the row's own savings says it better.  With --nodes the N-instance columns
 * are the answer asked for and stay (`prices` sets nodes_asked when --columns names one of them).
 * Hardware cells are per instance, but for TOTAL ACCELERATORS. */
static void price_columns_pick(price_columns *c, int want_od, int want_spot, int nodes)
{
    c->n = 0;
    add_col(c, "INSTANCE TYPE", "type", OUTPUT_LEFT, OUTPUT_KEEP);
    add_col(c, "REGION", "region", OUTPUT_LEFT, OUTPUT_KEEP);
    if (nodes) add_col(c, "NODES", "nodes", OUTPUT_RIGHT, OUTPUT_KEEP);
    add_col(c, "ACCELERATORS", "accelerators", OUTPUT_LEFT, 7);
    if (nodes) add_col(c, "TOTAL ACCELERATORS", "total_accelerators", OUTPUT_LEFT, OUTPUT_KEEP);
    add_col(c, "ACCEL GiB", "accelerator_memory", OUTPUT_RIGHT, 4);
    add_col(c, "vCPUs", "vcpus", OUTPUT_RIGHT, 5);
    add_col(c, "MEM GiB", "memory", OUTPUT_RIGHT, 2);
    if (want_od) {
        add_col(c, "ON-DEMAND $/h", "on_demand", OUTPUT_RIGHT, OUTPUT_KEEP);
        add_col(c, "ON-DEMAND $/h PER ACCEL", "on_demand_per_accelerator", OUTPUT_RIGHT, 4);
        if (nodes) add_col(c, "ON-DEMAND $/h TOTAL", "on_demand_total", OUTPUT_RIGHT, OUTPUT_KEEP);
        add_col(c, "ON-DEMAND SOURCE", "on_demand_source", OUTPUT_LEFT, 3);
    }
    if (want_spot) {
        add_col(c, "SPOT $/h (LOWEST)", "spot", OUTPUT_RIGHT, OUTPUT_KEEP);
        add_col(c, "SPOT $/h PER ACCEL", "spot_per_accelerator", OUTPUT_RIGHT, 4);
        if (nodes) add_col(c, "SPOT $/h TOTAL", "spot_total", OUTPUT_RIGHT, OUTPUT_KEEP);
        add_col(c, "IN AZ", "spot_az", OUTPUT_LEFT, 6);
        add_col(c, "AZs", "azs", OUTPUT_RIGHT, 1);
        add_col(c, "INTERRUPTION", "interruption", OUTPUT_LEFT, 5);
        /* the bucket as the NODES-node job lives it (prices/interruption.c): with --nodes only */
        if (nodes) add_col(c, "JOB INTERRUPTIONS", "job_interruptions", OUTPUT_RIGHT, OUTPUT_KEEP);
        if (nodes) add_col(c, "P(24 h UNINTERRUPTED)", "p_uninterrupted_24h", OUTPUT_RIGHT, OUTPUT_KEEP);
        add_col(c, "SAVINGS %", "savings", OUTPUT_RIGHT, 4);
        add_col(c, "ADVISOR SAVINGS %", "advisor_savings", OUTPUT_RIGHT, 0);
        add_col(c, "PLACEMENT 1-10", "placement", OUTPUT_RIGHT, 2);
        add_col(c, "SPOT SOURCE", "spot_source", OUTPUT_LEFT, 3);
    }
}

typedef struct price_text {
    char od[48], odacc[48], odtot[48], ods[64], sp[48], spacc[48], sptot[48], az[48], nz[24], intr[16], sav[16],
        adv[16], pl[16], sps[64], nodes[24], acc[64], acctot[64], accm[16], cpu[16], mem[16], job[48], p24[16];
} price_text;

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
    snprintf(p24, 16, "%.1f%%", 100 * prices_p_uninterrupted(r, PRICES_SURVIVAL_HOURS));
}


/* One row's cells, in price_columns_pick's order; returns how many. */
static size_t price_row_cells(const price_set *s, const price_record *r, int want_od, int want_spot, time_t now,
                              price_text *b, const char *cells[PT_MAX])
{
    size_t k = 0;
    const int nodes = prices_nodes(r);
    hardware_cells(r, 1, b->acc, b->accm, b->cpu, b->mem);
    hardware_cells(r, nodes, b->acctot, b->accm, b->cpu, b->mem);
    cells[k++] = r->instance_type;
    cells[k++] = r->region;
    if (s->nodes_asked) snprintf(b->nodes, sizeof b->nodes, "%d", nodes), cells[k++] = b->nodes;
    cells[k++] = b->acc;
    if (s->nodes_asked) cells[k++] = b->acctot;
    cells[k++] = b->accm;
    cells[k++] = b->cpu;
    cells[k++] = b->mem;
    if (want_od) {
        const double od = r->on_demand_usd_per_hour;
        output_fmt_usd(b->od, sizeof b->od, od);
        output_fmt_usd(b->odacc, sizeof b->odacc, prices_per_accelerator_hour(r, od));
        output_fmt_usd(b->odtot, sizeof b->odtot, nodes * od);
        describe_source(isnan(od) ? "" : r->on_demand_source, r->on_demand_as_of, now, b->ods, sizeof b->ods);
        cells[k++] = b->od;
        cells[k++] = b->odacc;
        if (s->nodes_asked) cells[k++] = b->odtot;
        cells[k++] = b->ods;
    }
    if (want_spot) {
        const spot_price *best = prices_cheapest_zone(r, s->include_local_zones);
        const double sp = best ? best->usd_per_hour : NAN;
        output_fmt_usd(b->sp, sizeof b->sp, sp);
        if (!best && prices_is_sagemaker(r)) snprintf(b->sp, sizeof b->sp, "not published");
        output_fmt_usd(b->spacc, sizeof b->spacc, prices_per_accelerator_hour(r, sp));
        output_fmt_usd(b->sptot, sizeof b->sptot, nodes * sp);
        snprintf(b->az, sizeof b->az, "%s%s", best ? best->az : "-", best ? prices_zone_marker(best->az) : "");
        snprintf(b->nz, sizeof b->nz, "%zu", r->n_spot);
        snprintf(b->intr, sizeof b->intr, "%s", r->interruption_bucket >= 0 ? prices_interruption_label(r->interruption_bucket) : "-");
        fmt_pct(b->sav, sizeof b->sav, prices_spot_savings_pct(r, s->include_local_zones));
        fmt_pct(b->adv, sizeof b->adv, r->savings_pct != -1 ? r->savings_pct : NAN);
        if (r->placement_score > 0) snprintf(b->pl, sizeof b->pl, "%d", r->placement_score);
        else snprintf(b->pl, sizeof b->pl, "-");
        describe_source(r->spot_source, r->spot_as_of, now, b->sps, sizeof b->sps);
        cells[k++] = b->sp;
        cells[k++] = b->spacc;
        if (s->nodes_asked) cells[k++] = b->sptot;
        survival_cells(r, b->job, b->p24);
        const char *v[] = {b->az, b->nz, b->intr, b->job, b->p24, b->sav, b->adv, b->pl, b->sps};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
            if (s->nodes_asked || (v[i] != b->job && v[i] != b->p24)) cells[k++] = v[i];
    }
    return k;
}

/* The snapshot's source reads "<prices>; interruption buckets from <advisor feed>"
 * (scripts/make_price_snapshot.py): the two halves are told apart so that each is named only
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

/* What the lowest spot price ranges over, when it matters: the rows whose Local or Wavelength
 * Zone prices it leaves out (they need an opt-in), or what the markers of the zones shown mean. */
static void zone_clause(const price_set *s, const output_table *t, char *line, size_t len)
{
    size_t rows = 0, marked = 0;
    const int lowest = output_table_showed(t, "spot") || output_table_showed(t, "spot_per_accelerator") ||
                       output_table_showed(t, "spot_total") || output_table_showed(t, "savings");
    for (size_t i = 0; i < s->n; i++) {
        const price_record *r = &s->items[i];
        const spot_price *best = prices_cheapest_zone(r, s->include_local_zones);
        rows += prices_zones_left_out(r, s->include_local_zones) > 0;
        marked += best && prices_zone_kind_of(best->az) != PRICES_ZONE_AVAILABILITY;
    }
    if (rows && lowest)
        clause(line, len, "the lowest spot price leaves out Local and Wavelength Zones, which need an opt-in (%zu %s "
               "some; --include-local-zones counts them)", rows, rows == 1 ? "row has" : "rows have");
    if (marked && output_table_showed(t, "spot_az"))
        clause(line, len, "(LZ) a Local Zone, (WLZ) a Wavelength Zone: each needs an opt-in per account");
}

/* Under the table: where each figure shown comes from (only the columns T showed); the snapshot's
 * origin only when a price shown is the snapshot's. */
static void write_sources(const price_set *s, const output_table *t, int want_od, int want_spot, FILE *out)
{
    const char *sep = strstr(s->snapshot_source, ADVISOR_SEP);
    int price_len = sep ? (int)(sep - s->snapshot_source) : (int)strlen(s->snapshot_source);
    int advisor = 0;
    for (size_t i = 0; i < s->n; i++) advisor |= want_spot && s->items[i].interruption_bucket >= 0;
    const int intr = output_table_showed(t, "interruption"), adv = output_table_showed(t, "advisor_savings");
    char line[1024] = "";
    if (output_table_showed(t, "accelerators") || output_table_showed(t, "accelerator_memory") ||
        output_table_showed(t, "vcpus") || output_table_showed(t, "memory"))
        clause(line, sizeof line, "hardware: the catalogue shipped with instbench");
    if (output_table_showed(t, "on_demand_source") || output_table_showed(t, "spot_source"))
        clause(line, sizeof line, "each price: its SOURCE column");
    else if (output_table_showed(t, "on_demand") || output_table_showed(t, "spot"))
        clause(line, sizeof line, "each price: its SOURCE column (--wide shows it)");
    if (output_table_showed(t, "savings")) clause(line, sizeof line, "SAVINGS %%: 1 - spot / on-demand of the row's own prices");
    if (output_table_showed(t, "on_demand_per_accelerator") || output_table_showed(t, "spot_per_accelerator"))
        clause(line, sizeof line, "PER ACCEL: the instance's price over its accelerators (the catalogue's count)");
    if (output_table_showed(t, "on_demand_total") || output_table_showed(t, "spot_total") ||
        output_table_showed(t, "total_accelerators"))
        clause(line, sizeof line, "TOTAL: NODES instances together (NODES x the price of one)");
    zone_clause(s, t, line, sizeof line);
    if (advisor && (intr || adv))
        clause(line, sizeof line, "%s%s%s: region-wide, from %s", intr ? "INTERRUPTION" : "", intr && adv ? " and " : "",
               adv ? "ADVISOR SAVINGS %" : "",
               sep ? sep + strlen(ADVISOR_SEP) : "the AWS Spot Instance Advisor feed shipped with instbench");
    int sagemaker = 0;
    for (size_t i = 0; i < s->n; i++) sagemaker |= prices_is_sagemaker(&s->items[i]);
    if (sagemaker && output_table_showed(t, "spot"))
        clause(line, sizeof line, "ml.* rows: SageMaker training; its managed spot has no published hourly price "
               "(rank prices it at yours: --price TYPE:spot=USD)");
    if (output_table_showed(t, "job_interruptions") || output_table_showed(t, "p_uninterrupted_24h"))
        clause(line, sizeof line, "JOB INTERRUPTIONS: NODES x a node's rate, assuming the bucket's midpoint share (>20%%: 25%%) "
               "of nodes reclaimed in a 720 h month (-ln(1 - share) / 720 per hour, as rank's spot risk); "
               "P(24 h UNINTERRUPTED): e^(-rate x 24)");
    if (output_table_showed(t, "placement"))
        clause(line, sizeof line, s->nodes_asked
                   ? "PLACEMENT: EC2 spot placement scores, a launch likelihood, not interruption risk (live AWS only); "
                     "for NODES > 1, NODES instances in one zone (SingleAvailabilityZone), that of SPOT AZ"
                   : "PLACEMENT: EC2 spot placement scores, a launch likelihood, not interruption risk (live AWS only)");
    const int snap = prices_shown_from_snapshot(s, want_od, want_spot);
    if (line[0] || snap) fputc('\n', out);
    if (line[0]) output_note(out, "sources: %s.", line);
    if (snap)
        output_note(out, "'snapshot' prices are from the snapshot of %s, not live AWS: %.*s", s->snapshot_date,
                    price_len, s->snapshot_source);
}

int prices_write_table(const price_set *s, int want_od, int want_spot, time_t now, FILE *out)
{
    price_columns col;
    price_columns_pick(&col, want_od, want_spot, s->nodes_asked);
    output_table t;
    if (output_table_init(&t, col.n, col.headers, col.align) != 0) return -1;
    output_table_fit_columns(&t, col.keys, col.prio);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        price_text b;
        const char *cells[PT_MAX];
        price_row_cells(s, &s->items[i], want_od, want_spot, now, &b, cells);
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_text(&t, out);
    /* The notes quote the price data: escaped like the cells (output_note). */
    if (rc == 0) write_sources(s, &t, want_od, want_spot, out);
    output_table_free(&t);
    if (rc == 0 && want_spot && s->placement_note[0]) output_note(out, "%s", s->placement_note);
    return rc;
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

/* The columns, named as the JSON fields they carry (spot.min_usd_per_hour -> spot_min_usd_per_hour;
 * the instance's hardware without "instance_"; times with _utc, as they carry no zone).  Renamed
 * columns keep their place; new ones go last, so columns read by position keep theirs. */
static const char *const csv_headers[] = {
    "instance_type", "region", "on_demand_usd_per_hour", "on_demand_source", "on_demand_as_of_utc",
    "spot_min_usd_per_hour", "spot_min_availability_zone", "spot_max_usd_per_hour", "spot_zone_count",
    "spot_source", "spot_as_of_utc", "interruption_bucket", "interruption_label", "interruption_savings_pct",
    "placement_score", "vcpus", "memory_gib", "accelerator", "accelerator_count", "accelerator_memory_gib",
    "spot_min_savings_pct", "spot_min_zone_type", "on_demand_usd_per_accelerator_hour",
    "spot_min_usd_per_accelerator_hour", "nodes", "total_accelerators", "on_demand_total_usd_per_hour",
    "spot_min_total_usd_per_hour", "interruption_job_rate_per_hour", "interruption_p_no_interruption_24h"};
enum { CSV_NC = sizeof csv_headers / sizeof csv_headers[0] };

typedef struct csv_text {
    char od[32], odt[32], mn[32], mx[32], nz[24], spt[32], ib[16], sav[16], pl[16], cpu[16], mem[32], accn[16],
        accm[32], rsav[32], odacc[32], spacc[32], nodes[16], acctot[24], odtot[32], sptot[32], job[32], p24[32];
} csv_text;

/* R's cells in csv_headers' order into CELLS (pointing into B or R). */
static void csv_row(const price_set *s, const price_record *r, csv_text *b, const char *cells[CSV_NC])
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
    if (r->savings_pct != -1) snprintf(b->sav, sizeof b->sav, "%d", r->savings_pct);
    if (r->placement_score > 0) snprintf(b->pl, sizeof b->pl, "%d", r->placement_score);
    num(prices_spot_savings_pct(r, with_local), b->rsav, sizeof b->rsav);
    snprintf(b->nodes, sizeof b->nodes, "%d", nodes);
    num(prices_job_interruption_rate(r), b->job, sizeof b->job);
    num(prices_p_uninterrupted(r, PRICES_SURVIVAL_HOURS), b->p24, sizeof b->p24);
    const char *v[CSV_NC] = {r->instance_type, r->region, b->od, isnan(od) ? "" : r->on_demand_source, b->odt, b->mn,
                             az, b->mx, b->nz, r->spot_source, b->spt, b->ib, label, b->sav, b->pl, b->cpu, b->mem,
                             r->hw.accelerator, b->accn, b->accm, b->rsav, kind, b->odacc, b->spacc, b->nodes,
                             b->acctot, b->odtot, b->sptot, b->job, b->p24};
    memcpy(cells, v, sizeof v);
}

int prices_write_csv(const price_set *s, FILE *out)
{
    output_table t;
    if (output_table_init(&t, CSV_NC, csv_headers, NULL) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        csv_text b;
        const char *cells[CSV_NC];
        csv_row(s, &s->items[i], &b, cells);
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_csv(&t, out);
    output_table_free(&t);
    return rc;
}
