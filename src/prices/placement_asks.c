/* placement_asks: the spot placement question a configuration of N nodes is, shared by rank's rows
 * (src/rank/placement.c) and `prices --nodes` (prices_node_scores).  Pure; the asking is
 * placement_live.c's.  A cluster placement group lives in one Availability Zone, so N nodes need
 * N instances in one zone: TargetCapacity=N with SingleAvailabilityZone=true, per region and type. */
#include "instbench/prices.h"

#include <stdio.h>
#include <string.h>

size_t prices_placement_find(const placement_ask *asks, size_t n, const char *region, const char *type, int capacity)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(asks[i].region, region) && !strcmp(asks[i].instance_type, type) && asks[i].capacity == capacity)
            return i;
    return n;
}

size_t prices_placement_add(placement_ask *asks, size_t *n, const char *region, const char *type, int capacity)
{
    size_t k = prices_placement_find(asks, *n, region, type, capacity);
    if (k < *n) return k;
    placement_ask *a = &asks[(*n)++];
    memset(a, 0, sizeof *a);
    snprintf(a->region, sizeof a->region, "%s", region);
    snprintf(a->instance_type, sizeof a->instance_type, "%s", type);
    a->capacity = capacity;
    a->single_az = 1;
    return k;
}

int prices_placement_zone(const placement_ask *a, const char *az)
{
    for (size_t z = 0; az && az[0] && z < a->n_zones; z++)
        if (!strcmp(a->zones[z].name, az) || !strcmp(a->zones[z].id, az)) return (int)z;
    return -1;
}
