/* rank/select.c: the scored rows to the rows shown: the constraints and --pareto applied, the
 * priced rows sorted and numbered, --top, and a line on stderr per filter that removed rows. */
#include <string.h>

#include "instbench/rank.h"

size_t rank_select(rank_row *rows, size_t *n_rows, const rank_config *configs, const rank_options *o, int top,
                   rank_filter_stats *st)
{
    size_t n_priced = rank_filter(rows, n_rows, o, st);
    rank_pareto_mark(rows, n_priced);
    if (o->pareto_only) rank_pareto_keep(rows, &n_priced, n_rows, st);
    rank_sort(rows, n_priced, configs, o->sort);
    if (st->by_max_hourly) ib_info("%zu row%s over --max-hourly", st->by_max_hourly, st->by_max_hourly == 1 ? "" : "s");
    if (st->by_deadline) ib_info("%zu row%s miss --deadline", st->by_deadline, st->by_deadline == 1 ? "" : "s");
    if (st->by_budget) ib_info("%zu row%s over --budget", st->by_budget, st->by_budget == 1 ? "" : "s");
    if (st->by_pareto) ib_info("%zu row%s off the Pareto frontier", st->by_pareto, st->by_pareto == 1 ? "" : "s");
    if (n_priced == 0 && (st->by_max_hourly || st->by_deadline || st->by_budget))
        ib_warn("no configuration meets the constraints");

    /* --top trims the ranked rows only; the unpriced rows still say why they are missing. */
    if (top > 0 && (size_t)top < n_priced) {
        memmove(rows + top, rows + n_priced, (*n_rows - n_priced) * sizeof *rows);
        *n_rows -= n_priced - (size_t)top;
        n_priced = (size_t)top;
    }
    return n_priced;
}
