/* rank/report_plot.c: the --plot chart.  samples/s (y) against $/h (x): every ranked row is a
 * point tagged with its rank (the key beside the plot names its configuration); dashed iso-cost
 * lines are lines of equal samples per dollar (y = x * samples_per_dollar / 3600), so "further
 * up-left" reads as "cheaper per sample"; the Pareto rows are joined in red.  Every row stands at
 * the figures it is ranked by: a spot row at its effective samples/s (interruptions priced in,
 * spot_risk.c), a capacity-block or savings-plan row with a target at what the target costs
 * there per hour of its training, so the frontier and the iso-cost lines agree with the ranking.
 * Scales, ticks and label placement are output/svg.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"
#include "instbench/rank.h"
#include "rank/internal.h"

/* Two significant figures: 1234567 -> 1200000. */
static double round2(double v)
{
    double p = pow(10, floor(log10(v)) - 1);
    return floor(v / p) * p;
}

static void fmt_spd(char *out, size_t len, double v)
{
    if (v >= 1e6) snprintf(out, len, "%g M samples/$", v / 1e6);
    else if (v >= 1e3) snprintf(out, len, "%g k samples/$", v / 1e3);
    else snprintf(out, len, "%g samples/$", v);
}

int rank_report_write_svg(const rank_report *r, const char *path, ib_error *err)
{
    size_t n = r->n_priced;
    output_point *pts = calloc(n ? n : 1, sizeof *pts);
    char(*labels)[384] = calloc(n ? n : 1, sizeof *labels);
    char(*tags)[16] = calloc(n ? n : 1, sizeof *tags);
    if (!pts || !labels || !tags) {
        free(pts), free(labels), free(tags);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    double best = 0;
    int extrapolated = 0;
    for (size_t i = 0; i < n; i++) {
        const rank_row *row = &r->rows[i];
        char l[256];
        rank_config_label(&r->configs[row->config], row->market, l, sizeof l);
        /* a row bought ahead that ranks by its target's cost stands at that cost per hour of
         * training (COST / TIME: the idle commitment, the unused block hours spread over it), so
         * its place against the iso-cost lines is its rank's, as a spot row's effective rate is */
        const int by_cost = rank_row_ranks_by_target_cost(row, r->opts);
        const double x = by_cost ? row->cost_to_target / row->hours_to_target : row->usd_per_hour;
        /* A figure that is not finite reads "-": the chart never says nan or inf. */
        char usd[32], sps[32]; /* the tables' number style ("-" when not finite) */
        output_fmt_usd(usd, sizeof usd, x);
        rank_fmt_samples_per_second(row->rank_samples_per_second, sps, sizeof sps);
        const rank_config *c = &r->configs[row->config];
        snprintf(labels[i], sizeof labels[i], "#%d %.200s: %.24s/h%s, %.24s %ssamples/s%s", row->rank, l, usd,
                 by_cost ? " (target cost / time)" : "", sps, row->risk.valid ? "effective " : "",
                 c->extrapolated ? " (extrapolated)" : "");
        snprintf(tags[i], sizeof tags[i], "#%d", row->rank);
        pts[i] = (output_point){x, row->rank_samples_per_second, labels[i], tags[i], row->pareto, c->extrapolated};
        extrapolated |= c->extrapolated;
        if (isfinite(row->rank_samples_per_dollar) && row->rank_samples_per_dollar > best)
            best = row->rank_samples_per_dollar;
    }
    output_ray rays[3];
    char rl[3][48];
    size_t nr = 0;
    if (best > 0 && isfinite(best))
        for (int k = 0; k < 3; k++) {
            double v = round2(best / (1 << (2 * k))); /* best, best/4, best/16 */
            fmt_spd(rl[k], sizeof rl[k], v);
            rays[nr++] = (output_ray){v / 3600.0, rl[k]};
        }

    char title[256], subtitle[320], prices[160];
    rank_report_price_summary(r, prices, sizeof prices);
    const rank_group *g = r->group;
    snprintf(title, sizeof title, "%s %s: samples/s against $/h", g->model[0] ? g->model : "workload", g->precision);
    snprintf(subtitle, sizeof subtitle, "workload %.12s; prices: %s%s%s; %zu configuration%s ranked", g->fingerprint,
             prices, r->prices_origin ? " - " : "", r->prices_origin ? r->prices_origin : "", n, n == 1 ? "" : "s");
    output_plot plot = {title,
                        subtitle,
                        "cost ($/h, all nodes)",
                        "training throughput (samples/s)",
                        pts,
                        n,
                        rays,
                        nr,
                        extrapolated ? "red: Pareto frontier (no other configuration is both faster and cheaper per "
                                       "sample); dashed lines: equal samples per dollar; hollow dashed rings: "
                                       "extrapolated from fewer nodes (linear scaling assumed)"
                                     : "red: Pareto frontier (no other configuration is both faster and cheaper per "
                                       "sample); dashed: equal samples per dollar",
                        "rank, configuration: cost, throughput"};
    char *svg = NULL;
    size_t len = 0;
    int rc = output_svg_scatter(&plot, &svg, &len, err);
    if (rc == 0 && util_write_file_atomic(path, svg, len, err) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "cannot write the chart %s: %s", path, why);
    }
    free(svg);
    free(pts);
    free(labels);
    free(tags);
    return rc;
}
