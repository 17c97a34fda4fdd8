/* placement_live: EC2 spot placement scores asked the way a configuration needs them, apart from
 * the per-type scores prices_live fetches with the prices.  A row of N nodes asks for N
 * instances (TargetCapacity=N) and, since a cluster placement group lives in one Availability
 * Zone, for one zone (SingleAvailabilityZone=true); the pool adds the types the user would accept.
 * Zone IDs in the answers are joined to zone names with DescribeAvailabilityZones, in the same
 * rounds.  Deciding which asks to make is the caller's (src/rank/placement.c). */
#include "prices/internal.h"
#include "instbench/aws_services.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void take_scores(placement_ask *a, const ec2_score_query *q, const ec2_zone_map *zm, size_t n_zm)
{
    for (size_t k = 0; k < q->n_scores; k++) {
        const ec2_score *s = &q->scores[k];
        if (strcmp(s->region, a->region) != 0) continue;
        if (!s->az_id[0]) {
            if (!a->single_az) a->region_score = s->score;
            continue;
        }
        if (!a->single_az || a->n_zones == sizeof a->zones / sizeof *a->zones) continue;
        __typeof__(a->zones[0]) *z = &a->zones[a->n_zones++];
        snprintf(z->id, sizeof z->id, "%s", s->az_id);
        z->name[0] = '\0';
        for (size_t m = 0; m < n_zm; m++)
            if (!strcmp(zm[m].region, a->region))
                for (size_t i = 0; i < zm[m].n; i++)
                    if (!strcmp(zm[m].zones[i].id, s->az_id))
                        snprintf(z->name, sizeof z->name, "%s", zm[m].zones[i].name);
        z->score = s->score;
    }
}

int prices_placement_live(placement_ask *asks, size_t n, char **pool, size_t n_pool, double timeout_s, char *note,
                          size_t note_len)
{
    if (note_len) note[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        asks[i].region_score = -1;
        asks[i].n_zones = 0;
        asks[i].failed = 0;
    }
    if (n == 0) return 0;
    aws_client *c = NULL;
    int no_cred;
    ib_error cerr = {0};
    if (prices_live_client(timeout_s, &c, &no_cred, &cerr) != 0) {
        snprintf(note, note_len, "%s", no_cred ? "no AWS credentials" : cerr.msg);
        for (size_t i = 0; i < n; i++) asks[i].failed = 1;
        return -1;
    }
    /* one zone map per region asked */
    size_t n_zm = 0;
    ec2_zone_map *zm = calloc(n, sizeof *zm);
    ec2_score_query *sq = calloc(n, sizeof *sq);
    ib_error *e_sc = calloc(n, sizeof *e_sc), *e_zm = calloc(n, sizeof *e_zm);
    char(*regions)[32] = calloc(n, sizeof *regions);
    char **region_ptr = calloc(n, sizeof *region_ptr);
    int rc = -1;
    if (!zm || !sq || !e_sc || !e_zm || !regions || !region_ptr) {
        snprintf(note, note_len, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        size_t r = 0;
        while (r < n_zm && strcmp(zm[r].region, asks[i].region) != 0) r++;
        if (r == n_zm) snprintf(zm[n_zm++].region, sizeof zm->region, "%s", asks[i].region);
        snprintf(regions[i], sizeof regions[i], "%s", asks[i].region);
        region_ptr[i] = regions[i];
        ec2_score_query *q = &sq[i];
        snprintf(q->instance_type, sizeof q->instance_type, "%s", asks[i].instance_type);
        q->pool = pool;
        q->n_pool = n_pool;
        q->target_capacity = asks[i].capacity;
        q->regions = &region_ptr[i];
        q->n_regions = 1;
        q->single_az = asks[i].single_az;
    }
    aws_pager pagers[2];
    size_t counts[2] = {n, n_zm};
    ib_error *errs[2] = {e_sc, e_zm};
    ib_error perr = {0};
    if (aws_ec2_scores_pager(sq, asks[0].region, &pagers[0], &perr) != 0) {
        snprintf(note, note_len, "%s", perr.msg);
        goto out;
    }
    aws_ec2_zones_pager(zm, &pagers[1], &perr);
    aws_paginate_multi(c, pagers, counts, 2, errs);
    free(pagers[0].ctx);
    for (size_t i = 0; i < n; i++) {
        if (e_sc[i].code) {
            asks[i].failed = 1;
            if (note_len && !note[0]) snprintf(note, note_len, "%.200s", e_sc[i].msg);
            continue;
        }
        take_scores(&asks[i], &sq[i], zm, n_zm);
    }
    for (size_t r = 0; r < n_zm; r++)
        if (e_zm[r].code && note_len && !note[0])
            snprintf(note, note_len, "zone names unknown (%.200s): per-zone scores shown by zone ID", e_zm[r].msg);
    rc = 0;
out:
    for (size_t i = 0; sq && i < n; i++) ec2_score_query_free(&sq[i]);
    free(zm);
    free(sq);
    free(e_sc);
    free(e_zm);
    free(regions);
    free(region_ptr);
    aws_client_destroy(c);
    return rc;
}

/* A spot row of N > 1 nodes: its placement score is for N instances in one zone, the question
 * rank asks of an N-node row (src/prices/placement_asks.c), not the 1-instance scores fetched with
 * the prices; without live AWS it has none rather than those.  The zone scored in PLACEMENT is the
 * row's IN AZ (its cheapest zone). */
void prices_node_scores(const prices_query *q, price_set *set)
{
    if (!q->want_spot || !set->n) return;
    placement_ask *asks = calloc(set->n, sizeof *asks);
    if (!asks) return;
    int live = !q->skip_placement_scores && (q->source == PRICES_SOURCE_AUTO || q->source == PRICES_SOURCE_LIVE);
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        price_record *r = &set->items[i];
        if (r->nodes <= 1 || prices_is_sagemaker(r)) continue;
        r->placement_score = -1;
        for (size_t z = 0; z < r->n_spot; z++) r->spot[z].placement_score = -1;
        if (live && r->n_spot) prices_placement_add(asks, &n, r->region, r->instance_type, r->nodes);
    }
    char note[256] = "";
    if (n) prices_placement_live(asks, n, NULL, 0, q->timeout_s, note, sizeof note);
    for (size_t i = 0; i < set->n; i++) {
        price_record *r = &set->items[i];
        size_t k = r->nodes > 1 ? prices_placement_find(asks, n, r->region, r->instance_type, r->nodes) : n;
        if (k == n || asks[k].failed) continue;
        for (size_t z = 0; z < r->n_spot; z++) {
            int at = prices_placement_zone(&asks[k], r->spot[z].az);
            if (at >= 0) r->spot[z].placement_score = asks[k].zones[at].score;
        }
        const spot_price *cheapest = prices_cheapest_zone(r, set->include_local_zones);
        if (cheapest && cheapest->placement_score >= 1) r->placement_score = cheapest->placement_score;
    }
    if (note[0] && !set->placement_note[0])
        snprintf(set->placement_note, sizeof set->placement_note,
                 "spot placement scores for --nodes unavailable: %.180s", note);
    free(asks);
}
