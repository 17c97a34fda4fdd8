/* sweep/plan: what a sweep launches and what it can cost at most.  Pure: the caller fetched the
 * prices and resolved the AMIs; this only decides and adds up.
 *
 * Worst case of a candidate = nodes x (USD per node-hour) x sweep_billed_minutes_max / 60: every
 * node billed for the whole life it can have when nothing but its own timer ends it (the sweep's
 * process gone): the timer's whole minutes, the boot before the user data sets it and the halt
 * after it (sweep.h).  USD per node-hour: on-demand rows the on-demand price; spot rows the
 * highest spot price among the region's Availability Zones (the launch may land in any zone),
 * capped at on-demand, or on-demand when no spot price is known, said so.  The launch sets that
 * price as the spot request's MaxPrice, so EC2 interrupts (or refuses) rather than bill more.
 * Local and Wavelength Zones are left out: the default subnets a sweep launches into are
 * Availability Zones. */
#include "instbench/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sweep_timer_minutes(double max_minutes)
{
    /* shutdown(8) takes whole minutes: rounded up, the instance never ends before the sweep's bound */
    if (!(max_minutes > 0)) return 1;
    if (max_minutes > 7 * 24 * 60) max_minutes = 7 * 24 * 60;
    int t = (int)ceil(max_minutes);
    return t < 1 ? 1 : t;
}

double sweep_billed_minutes_max(double max_minutes)
{
    double m = sweep_timer_minutes(max_minutes) + SWEEP_BOOT_ALLOWANCE_MINUTES;
    return m < 1 ? 1 : m; /* EC2 bills at least 60 seconds */
}

/* "snapshot 2026-11-21" / "live 2026-11-25": a price's source and the UTC day it is of. */
static void source_text(const char *source, time_t as_of, char *out, size_t len)
{
    char day[32] = "";
    if (as_of > 0) {
        util_utc_iso8601(as_of, day);
        day[10] = '\0';
    }
    snprintf(out, len, "%s%s%s", source[0] ? source : "unknown source", day[0] ? " " : "", day);
}

/* The price of one node-hour of LINE's candidate from R (may be NULL). */
static void price_line(sweep_plan_line *line, const price_record *r)
{
    double od = r ? r->on_demand_usd_per_hour : NAN;
    char od_src[64] = "", spot_src[64] = "";
    if (r) {
        source_text(r->on_demand_source, r->on_demand_as_of, od_src, sizeof od_src);
        source_text(r->spot_source, r->spot_as_of, spot_src, sizeof spot_src);
    }
    line->usd_per_node_hour = NAN;
    line->spot_max_price = NAN;
    line->price_source[0] = '\0';
    if (line->cand.block) {
        /* the block's fee was paid when it was bought: committed, not this sweep's to spend */
        line->usd_per_node_hour = 0;
        line->committed = 1;
        snprintf(line->price_source, sizeof line->price_source, "Capacity Block %s: fee already paid (committed)",
                 line->cand.reservation);
        return;
    }
    if (!line->cand.spot) {
        if (!isnan(od)) {
            line->usd_per_node_hour = od;
            snprintf(line->price_source, sizeof line->price_source, "%s", od_src);
        }
        return;
    }
    double hi = r ? prices_highest_spot(r, 0) : NAN;
    if (!isnan(hi)) {
        size_t zones = r->n_spot - prices_zones_left_out(r, 0);
        int capped = !isnan(od) && od < hi;
        line->usd_per_node_hour = capped ? od : hi;
        snprintf(line->price_source, sizeof line->price_source, "%s, highest of %zu zone%s%s", spot_src, zones,
                 zones == 1 ? "" : "s", capped ? ", capped at on-demand" : "");
    } else if (!isnan(od)) {
        line->usd_per_node_hour = od;
        line->spot_at_on_demand = 1;
        snprintf(line->price_source, sizeof line->price_source, "on-demand (no spot price known), %s", od_src);
    }
    line->spot_max_price = line->usd_per_node_hour; /* what the launch lets EC2 bill at most */
}

int sweep_plan_build(const sweep_plan_input *in, sweep_plan *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(in->max_minutes > 0) || !isfinite(in->max_minutes))
        return ib_error_set(err, IB_EXIT_USAGE, "--max-minutes must be more than 0");
    if (!isnan(in->max_cost_usd) && !(in->max_cost_usd >= 0 && isfinite(in->max_cost_usd)))
        return ib_error_set(err, IB_EXIT_USAGE, "--max-cost must be a number of US dollars >= 0");
    if (in->n == 0) return ib_error_set(err, IB_EXIT_USAGE, "no candidates");
    out->lines = calloc(in->n, sizeof *out->lines);
    if (!out->lines) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    out->n = in->n;
    out->max_minutes = in->max_minutes;
    out->max_cost_usd = in->max_cost_usd;
    out->billed_minutes_max = sweep_billed_minutes_max(in->max_minutes);
    out->total_usd = 0;
    int unpriced = 0;
    for (size_t i = 0; i < in->n; i++) {
        sweep_plan_line *line = &out->lines[i];
        line->cand = in->cands[i];
        if (sweep_type_ami_kind(line->cand.type, in->ec2_archs ? in->ec2_archs[i] : NULL, &line->kind,
                                &line->arch_source, err) != 0)
            goto fail;
        const sweep_ami *ami = in->ami_override ? in->ami_override : &in->amis[line->kind];
        if (!ami->id[0]) {
            ib_error_set(err, IB_EXIT_USAGE, "%s: no AMI for %s (%s)", line->cand.spec,
                         line->kind <= SWEEP_AMI_GPU_ARM64 ? "NVIDIA GPU types" : "CPU types",
                         sweep_ami_kind_arch(line->kind));
            goto fail;
        }
        line->ami = *ami;
        sweep_efa_layout(in->nets ? in->nets[i] : NULL, line->cand.type, line->cand.nodes, in->efa_off, &line->efa);
        if (line->efa.elastic_ip) out->elastic_ips += line->cand.nodes;
        price_line(line, in->prices[i]);
        line->worst_case_usd = line->cand.nodes * line->usd_per_node_hour * out->billed_minutes_max / 60.0;
        out->instances += line->cand.nodes;
        if (isnan(line->worst_case_usd)) unpriced = 1;
        else out->total_usd += line->worst_case_usd;
    }
    if (unpriced) out->total_usd = NAN;
    out->verdict = isnan(in->max_cost_usd)              ? SWEEP_NO_CEILING
                   : unpriced                           ? SWEEP_UNPRICED
                   : out->total_usd <= in->max_cost_usd ? SWEEP_WITHIN
                                                        : SWEEP_OVER;
    return 0;
fail:
    sweep_plan_free(out);
    return -1;
}

void sweep_plan_free(sweep_plan *p)
{
    free(p->lines);
    p->lines = NULL;
    p->n = 0;
}
