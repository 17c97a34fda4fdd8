/* rank/filter.c: constraints (--max-hourly, --deadline, --budget).
 *
 * Unpriced rows cannot be judged against money constraints; they are kept after the priced rows
 * (with their reason) so the output can say why they are not ranked.  Rows are never reordered
 * otherwise: the stable compaction keeps the caller's order for sort.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/rank.h"
#include "rank/internal.h"

/* the tolerance: internal.h */
int rank_within_limit(double value, double limit) { return isnan(limit) || value <= limit * (1 + 1e-12); }

double rank_row_hours_from_now(const rank_row *row)
{
    const double wait = row->market == RANK_CAPACITY_BLOCK && row->wait_hours > 0 ? row->wait_hours : 0;
    return row->rank_hours_to_target + wait;
}

size_t rank_filter(rank_row *rows, size_t *n, const rank_options *o, rank_filter_stats *st)
{
    rank_filter_stats local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    rank_row *unpriced = malloc((*n ? *n : 1) * sizeof *unpriced);
    size_t kept = 0, nu = 0;
    for (size_t i = 0; i < *n; i++) {
        rank_row *r = &rows[i];
        if (!r->priced) {
            st->unpriced++;
            if (unpriced) unpriced[nu++] = *r;
            continue;
        }
        if (!rank_within_limit(r->usd_per_hour, o->max_hourly_usd)) {
            st->by_max_hourly++;
            continue;
        }
        /* a deadline is a time from now: a Capacity Block finishes its WAIT later than it trains */
        if (!rank_within_limit(rank_row_hours_from_now(r), o->deadline_hours)) {
            st->by_deadline++;
            continue;
        }
        if (!rank_within_limit(r->rank_cost_to_target, o->budget_usd)) {
            st->by_budget++;
            continue;
        }
        rows[kept++] = *r;
    }
    if (unpriced) memcpy(rows + kept, unpriced, nu * sizeof *unpriced);
    free(unpriced);
    *n = kept + nu;
    return kept;
}
