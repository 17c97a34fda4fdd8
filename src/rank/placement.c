/* placement: which spot placement scores a set of rows needs, and giving each row its own.
 * Pure: the asking is src/prices/placement_live.c's.  AWS's GetSpotPlacementScores answers "can
 * this region (or zone) give me TargetCapacity instances of these types now"; a row of N nodes
 * needs N instances in the one zone its cluster placement group lives in, and AWS warns that one
 * or two types always score low, so --placement-pool adds the types the user would accept. */
#include "rank/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/instance_type.h"
static int needs_ask(const rank_config *c, const rank_row *row, size_t n_pool)
{
    return row->priced && row->market == RANK_SPOT && c->instance_type[0] && c->region[0] &&
           !instance_type_is_sagemaker(c->instance_type) && (c->nodes > 1 || n_pool > 0);
}

static size_t find_ask(const placement_ask *asks, size_t n, const rank_config *c)
{
    return prices_placement_find(asks, n, c->region, c->instance_type, (int)c->nodes);
}

size_t rank_placement_plan(const rank_config *configs, const rank_row *rows, size_t n_rows, size_t n_pool,
                           placement_ask **asks)
{
    *asks = NULL;
    size_t n = 0;
    placement_ask *a = calloc(n_rows ? n_rows : 1, sizeof *a);
    if (!a) return 0;
    for (size_t i = 0; i < n_rows; i++) {
        const rank_config *c = &configs[rows[i].config];
        /* AWS takes a TargetCapacity up to 2,000,000,000; a node count is far below */
        if (!needs_ask(c, &rows[i], n_pool) || c->nodes < 1 || c->nodes > 100000) continue;
        prices_placement_add(a, &n, c->region, c->instance_type, (int)c->nodes);
    }
    if (n == 0) {
        free(a);
        return 0;
    }
    *asks = a;
    return n;
}

/* The types one ask sends: the row's, and the pool's others once each (as ec2.c sends them). */
static int types_sent(const char *type, char *const *pool, size_t n_pool)
{
    int n = 1;
    for (size_t k = 0; k < n_pool; k++) {
        int dup = !strcmp(pool[k], type);
        for (size_t j = 0; j < k && !dup; j++) dup = !strcmp(pool[j], pool[k]);
        n += !dup;
    }
    return n;
}

void rank_placement_apply(const rank_config *configs, rank_row *rows, size_t n_rows, const placement_ask *asks,
                          size_t n_asks, char *const *pool, size_t n_pool)
{
    for (size_t i = 0; i < n_rows; i++) {
        rank_row *row = &rows[i];
        const rank_config *c = &configs[row->config];
        if (!needs_ask(c, row, n_pool)) continue;
        size_t k = find_ask(asks, n_asks, c);
        row->placement_score = -1;
        row->placement_capacity = row->placement_types = 0;
        row->placement_zone[0] = '\0';
        if (k == n_asks || asks[k].failed) continue;
        const placement_ask *a = &asks[k];
        /* the zone the row is priced in (a name, or an ID where prices use IDs); priced over
         * several zones (a median), the zone that scores best, named */
        int best = -1, same = 0;
        if ((best = prices_placement_zone(a, row->az)) >= 0) same = 1;
        else if (!strncmp(row->az, "median", 6))
            for (size_t z = 0; z < a->n_zones; z++)
                if (best < 0 || a->zones[z].score > a->zones[best].score) best = (int)z;
        if (best < 0) continue;
        row->placement_score = a->zones[best].score;
        row->placement_capacity = a->capacity;
        row->placement_types = types_sent(c->instance_type, pool, n_pool);
        /* the zone as SPOT AZ names it (an ID where the prices use IDs) */
        snprintf(row->placement_zone, sizeof row->placement_zone, "%s",
                 same                     ? row->az
                 : a->zones[best].name[0] ? a->zones[best].name
                                          : a->zones[best].id);
    }
}
