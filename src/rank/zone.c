/* rank/zone.c: a zone name and its ID as the results recorded them.  measure reads both from the
 * instance's metadata (placement/availability-zone and availability-zone-id), so a result is the
 * measuring account's own answer to "which ID is us-east-1a?": the answer differs per account. */
#include <stdio.h>
#include <string.h>

#include "instbench/rank.h"

int rank_zone_alias(const rank_results *r, const char *zone, char *alt, size_t len)
{
    const char *found = NULL;
    alt[0] = '\0';
    for (size_t i = 0; zone && i < r->n; i++) {
        const rank_result *x = &r->items[i];
        const char *other = !strcmp(x->az, zone) ? x->az_id : !strcmp(x->az_id, zone) ? x->az : NULL;
        if (!other || !other[0]) continue;
        if (found && strcmp(found, other)) return -1; /* two accounts, two answers: neither is "the" one */
        found = other;
    }
    if (!found) return 0;
    snprintf(alt, len, "%s", found);
    return 1;
}
