/* prices_table: a price_set as an aligned table (units in the headers, the cheapest spot zone
 * named, the interruption bucket, each price's source and age) and as CSV (one row per
 * (type, region), plain full-precision numbers, empty cells for unknowns). */
#include "instbench/output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const spot_price *cheapest(const price_record *r)
{
    const spot_price *best = NULL;
    for (size_t i = 0; i < r->n_spot; i++)
        if (!best || r->spot[i].usd_per_hour < best->usd_per_hour) best = &r->spot[i];
    return best;
}

/* "live", "cache, 3.2 h old", "snapshot 2026-11-21" */
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
        double h = difftime(now, as_of) / 3600.0;
        if (h < 0.05 && !strcmp(src, "live")) snprintf(out, len, "live");
        else if (h < 1) snprintf(out, len, "%s, %.0f min old", src, h * 60 < 1 ? 1 : h * 60);
        else snprintf(out, len, "%s, %.1f h old", src, h);
    }
}

const char *const prices_table_keys[] = {"type", "region", "accelerators", "accelerator_memory", "vcpus", "memory",
                                         "on_demand", "on_demand_source", "spot", "spot_az", "azs", "interruption",
                                         "savings", "placement", "spot_source", NULL};

/* The type's hardware cells: "4 x A10G" (or "-": none, "?": not in the catalogue), accelerator
 * memory in all, vCPUs, host memory (GiB, whole numbers: what catalogues and sky show-gpus print). */
static void hardware_cells(const price_record *r, char acc[48], char accm[16], char cpu[16], char mem[16])
{
    const int known = r->hw.vcpus >= 1;
    if (!known) strcpy(acc, "?");
    else if (r->hw.accelerator[0]) snprintf(acc, 48, "%d x %s", r->hw.accelerator_count, r->hw.accelerator);
    else strcpy(acc, "-");
    if (known && !isnan(r->hw.accelerator_memory_gib)) snprintf(accm, 16, "%.0f", r->hw.accelerator_memory_gib);
    else strcpy(accm, known ? "-" : "?");
    if (known) snprintf(cpu, 16, "%d", r->hw.vcpus), snprintf(mem, 16, "%.0f", r->hw.memory_gib);
    else strcpy(cpu, "?"), strcpy(mem, "?");
}

int prices_write_table(const price_set *s, int want_od, int want_spot, time_t now, FILE *out)
{
    const char *headers[15], *keys[15];
    output_align align[15];
    int prio[15];   /* a narrow terminal keeps type, region and the prices longest (output_fit_set) */
    size_t nc = 0;
#define COL(h, k, a, p) (headers[nc] = (h), keys[nc] = (k), prio[nc] = (p), align[nc++] = (a))
    COL("INSTANCE TYPE", "type", OUTPUT_LEFT, OUTPUT_KEEP);
    COL("REGION", "region", OUTPUT_LEFT, OUTPUT_KEEP);
    COL("ACCELERATORS", "accelerators", OUTPUT_LEFT, 7);
    COL("ACCEL GiB", "accelerator_memory", OUTPUT_RIGHT, 4);
    COL("vCPUs", "vcpus", OUTPUT_RIGHT, 5);
    COL("MEM GiB", "memory", OUTPUT_RIGHT, 2);
    if (want_od) {
        COL("ON-DEMAND $/h", "on_demand", OUTPUT_RIGHT, OUTPUT_KEEP);
        COL("ON-DEMAND SOURCE", "on_demand_source", OUTPUT_LEFT, 3);
    }
    if (want_spot) {
        COL("SPOT $/h (lowest)", "spot", OUTPUT_RIGHT, OUTPUT_KEEP);
        COL("IN AZ", "spot_az", OUTPUT_LEFT, 6);
        COL("AZs", "azs", OUTPUT_RIGHT, 1);
        COL("INTERRUPTION", "interruption", OUTPUT_LEFT, 5);
        COL("SAVINGS %", "savings", OUTPUT_RIGHT, 4);
        COL("PLACEMENT 1-10", "placement", OUTPUT_RIGHT, 2);
        COL("SPOT SOURCE", "spot_source", OUTPUT_LEFT, 3);
    }
#undef COL
    output_table t;
    if (output_table_init(&t, nc, headers, align) != 0) return -1;
    output_table_fit_columns(&t, keys, prio);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const price_record *r = &s->items[i];
        char od[32] = "-", ods[64], sp[32] = "-", az[32] = "-", nz[24], intr[16] = "-", sav[16] = "-",
             pl[16] = "-", sps[64], acc[48], accm[16], cpu[16], mem[16];
        const char *cells[15];
        size_t k = 0;
        hardware_cells(r, acc, accm, cpu, mem);
        cells[k++] = r->instance_type;
        cells[k++] = r->region;
        cells[k++] = acc;
        cells[k++] = accm;
        cells[k++] = cpu;
        cells[k++] = mem;
        if (want_od) {
            if (!isnan(r->on_demand_usd_per_hour)) snprintf(od, sizeof od, "%.4f", r->on_demand_usd_per_hour);
            describe_source(isnan(r->on_demand_usd_per_hour) ? "" : r->on_demand_source, r->on_demand_as_of, now,
                            ods, sizeof ods);
            cells[k++] = od;
            cells[k++] = ods;
        }
        if (want_spot) {
            const spot_price *b = cheapest(r);
            if (b) {
                snprintf(sp, sizeof sp, "%.4f", b->usd_per_hour);
                snprintf(az, sizeof az, "%s", b->az);
            }
            snprintf(nz, sizeof nz, "%zu", r->n_spot);
            if (r->interruption_bucket >= 0) snprintf(intr, sizeof intr, "%s", prices_interruption_label(r->interruption_bucket));
            if (r->savings_pct != -1) snprintf(sav, sizeof sav, "%d", r->savings_pct);
            if (r->placement_score > 0) snprintf(pl, sizeof pl, "%d", r->placement_score);
            describe_source(r->spot_source, r->spot_as_of, now, sps, sizeof sps);
            cells[k++] = sp;
            cells[k++] = az;
            cells[k++] = nz;
            cells[k++] = intr;
            cells[k++] = sav;
            cells[k++] = pl;
            cells[k++] = sps;
        }
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_text(&t, out);
    output_table_free(&t);
    /* The notes quote the price data: escaped like the cells. */
    if (rc == 0 && s->snapshot_date[0]) {
        fputc('\n', out);
        output_note(out, "'snapshot' prices%s are from the snapshot of %s, not live AWS: %s",
                    want_spot ? " and interruption buckets" : "", s->snapshot_date, s->snapshot_source);
    }
    if (rc == 0 && want_spot && s->placement_note[0]) output_note(out, "%s", s->placement_note);
    return rc;
}

/* Shortest text that reads back as the same double: spreadsheets get plain numbers. */
static void num(double v, char *out, size_t len)
{
    if (isnan(v)) {
        out[0] = '\0';
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(out, len, "%.*g", prec, v);
        if (strtod(out, NULL) == v) return;
    }
}

static void when(const char *src, time_t t, char *out)
{
    if (src[0]) util_utc_iso8601(t, out);
    else out[0] = '\0';
}

int prices_write_csv(const price_set *s, FILE *out)
{
    static const char *const headers[] = {
        "instance_type", "region", "on_demand_usd_per_hour", "on_demand_source", "on_demand_as_of",
        "spot_min_usd_per_hour", "spot_min_availability_zone", "spot_max_usd_per_hour", "spot_zones",
        "spot_source", "spot_as_of", "interruption_bucket", "interruption_label", "savings_pct",
        "placement_score", "vcpus", "memory_gib", "accelerator", "accelerator_count", "accelerator_memory_gib"};
    enum { NC = sizeof headers / sizeof headers[0] };
    output_table t;
    if (output_table_init(&t, NC, headers, NULL) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const price_record *r = &s->items[i];
        char od[32], odt[32], mn[32] = "", mx[32] = "", nz[24] = "", spt[32], ib[16] = "", sav[16] = "", pl[16] = "";
        char cpu[16] = "", mem[32] = "", accn[16] = "", accm[32] = "";
        if (r->hw.vcpus >= 1) {
            snprintf(cpu, sizeof cpu, "%d", r->hw.vcpus), num(r->hw.memory_gib, mem, sizeof mem);
            snprintf(accn, sizeof accn, "%d", r->hw.accelerator_count), num(r->hw.accelerator_memory_gib, accm, sizeof accm);
        }
        const char *az = "", *label = "";
        num(r->on_demand_usd_per_hour, od, sizeof od);
        when(isnan(r->on_demand_usd_per_hour) ? "" : r->on_demand_source, r->on_demand_as_of, odt);
        const spot_price *b = cheapest(r);
        if (b) {
            double hi = b->usd_per_hour;
            for (size_t z = 0; z < r->n_spot; z++)
                if (r->spot[z].usd_per_hour > hi) hi = r->spot[z].usd_per_hour;
            num(b->usd_per_hour, mn, sizeof mn);
            num(hi, mx, sizeof mx);
            az = b->az;
        }
        if (r->spot_source[0]) snprintf(nz, sizeof nz, "%zu", r->n_spot);
        when(r->spot_source, r->spot_as_of, spt);
        if (r->interruption_bucket >= 0) {
            snprintf(ib, sizeof ib, "%d", r->interruption_bucket);
            label = prices_interruption_label(r->interruption_bucket);
        }
        if (r->savings_pct != -1) snprintf(sav, sizeof sav, "%d", r->savings_pct);
        if (r->placement_score > 0) snprintf(pl, sizeof pl, "%d", r->placement_score);
        const char *cells[NC] = {r->instance_type, r->region, od, isnan(r->on_demand_usd_per_hour) ? "" : r->on_demand_source,
                                 odt, mn, az, mx, nz, r->spot_source, spt, ib, label, sav, pl, cpu, mem,
                                 r->hw.accelerator, accn, accm};
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_csv(&t, out);
    output_table_free(&t);
    return rc;
}
