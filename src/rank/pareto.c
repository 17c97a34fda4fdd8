/* rank/pareto.c: the configurations not beaten on both speed and cost.
 *
 * Objectives: samples/s (higher is faster) and samples per dollar (higher is cheaper per sample;
 * equivalently a lower cost to any fixed target, since cost = target / samples_per_dollar).  A
 * row is dominated when another row is at least as good on both and strictly better on one; ties
 * on both keep both.  O(n^2) is fine: a group holds tens to a few thousand configurations. */
#include <string.h>

#include "instbench/rank.h"

void rank_pareto_mark(rank_row *rows, size_t n_priced)
{
    for (size_t i = 0; i < n_priced; i++) {
        rows[i].pareto = 1;
        for (size_t j = 0; j < n_priced; j++) {
            if (i == j) continue;
            double si = rows[i].rank_samples_per_second, sj = rows[j].rank_samples_per_second;
            double di = rows[i].rank_samples_per_dollar, dj = rows[j].rank_samples_per_dollar;
            if (sj >= si && dj >= di && (sj > si || dj > di)) {
                rows[i].pareto = 0;
                break;
            }
        }
    }
}

void rank_pareto_keep(rank_row *rows, size_t *n_priced, size_t *n, rank_filter_stats *st)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n_priced; i++)
        if (rows[i].pareto) rows[kept++] = rows[i];
    size_t dropped = *n_priced - kept;
    if (st) st->by_pareto += dropped;
    /* Slide the unpriced tail down behind the kept rows. */
    memmove(rows + kept, rows + *n_priced, (*n - *n_priced) * sizeof *rows);
    *n -= dropped;
    *n_priced = kept;
}
