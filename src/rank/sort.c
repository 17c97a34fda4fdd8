/* rank/sort.c: order priced rows by the chosen objective, then number them.
 *
 * samples-per-dollar and throughput: higher first.  cost: lower cost to the target first (with no
 * target, lower $/h: the cost of keeping the configuration running).  time: the job done soonest
 * first, counted from now (a Capacity Block's wait included; without a target, higher
 * samples/s).  Ties fall back to samples per dollar, then samples/s, then the configuration
 * label, so the order never depends on input order.  Every figure is the
 * row's ranking figure: a spot row's risk-adjusted one (spot_risk.c) unless --spot-risk off. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/names.h"
#include "instbench/rank.h"
#include "rank/internal.h"

typedef struct sort_item {
    rank_row row;
    const char *type; /* the configuration's instance type, or hostname */
    char label[320];
} sort_item;

static rank_sort_key g_key;

static int cmp_desc(double a, double b) { return (a < b) - (a > b); }
static int cmp_asc(double a, double b) { return (a > b) - (a < b); }

static int cmp_items(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    const rank_row *x = &a->row, *y = &b->row;
    int c = 0;
    switch (g_key) {
    case RANK_SORT_SAMPLES_PER_DOLLAR: c = cmp_desc(x->rank_samples_per_dollar, y->rank_samples_per_dollar); break;
    case RANK_SORT_THROUGHPUT: c = cmp_desc(x->rank_samples_per_second, y->rank_samples_per_second); break;
    case RANK_SORT_COST:
        c = isnan(x->rank_cost_to_target) || isnan(y->rank_cost_to_target)
                ? cmp_asc(x->usd_per_hour, y->usd_per_hour)
                : cmp_asc(x->rank_cost_to_target, y->rank_cost_to_target);
        break;
    case RANK_SORT_TIME:
        /* with a target, when the job is done counted from now: the row's hours to the target
         * (for spot, the expected hours of the whole job, whose last interval is shorter than
         * the rest: not the target at the long-run effective rate) and a Capacity Block's wait
         * before it starts, as --deadline counts it (filter.c); without one, samples/s */
        c = isfinite(x->rank_hours_to_target) && isfinite(y->rank_hours_to_target)
                ? cmp_asc(rank_row_hours_from_now(x), rank_row_hours_from_now(y))
                : cmp_desc(x->rank_samples_per_second, y->rank_samples_per_second);
        break;
    }
    if (!c) c = cmp_desc(x->rank_samples_per_dollar, y->rank_samples_per_dollar);
    if (!c) c = cmp_desc(x->rank_samples_per_second, y->rank_samples_per_second);
    if (!c) c = names_instance_type_cmp(a->type, b->type); /* g5.2xlarge before g5.12xlarge */
    if (!c) c = strcmp(a->label, b->label);
    if (!c) c = (x->market > y->market) - (x->market < y->market);
    return c;
}

void rank_sort(rank_row *rows, size_t n_priced, const rank_config *configs, rank_sort_key key)
{
    sort_item *items = malloc((n_priced ? n_priced : 1) * sizeof *items);
    if (items) {
        for (size_t i = 0; i < n_priced; i++) {
            items[i].row = rows[i];
            const rank_config *c = &configs[rows[i].config];
            items[i].type = rank_config_name(c);
            /* Region in the label keeps equal types priced in two regions in a fixed order. */
            char l[256];
            rank_config_label(c, rows[i].market, l, sizeof l);
            snprintf(items[i].label, sizeof items[i].label, "%s %s", l, c->region);
        }
        g_key = key;
        qsort(items, n_priced, sizeof *items, cmp_items);
        for (size_t i = 0; i < n_priced; i++) rows[i] = items[i].row;
        free(items);
    }
    for (size_t i = 0; i < n_priced; i++) rows[i].rank = (int)i + 1;
}
