/* prices_live: prices straight from AWS.  Everything one run needs goes out in the same
 * concurrent rounds (aws_paginate_multi): GetProducts per (type, region), DescribeSpotPriceHistory
 * per region (all types in one request), and, for spot, GetSpotPlacementScores per type (region
 * level and per AZ) plus DescribeAvailabilityZones per region (scores name AZ IDs, prices AZ
 * names).  So a run takes about (longest NextToken chain) x (round-trip time). */
#include "prices/internal.h"
#include "instbench/aws_services.h"
#include "instbench/instance_type.h"
#include "instbench/names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void first_error(char *dst, size_t cap, const ib_error *e)
{
    if (!dst[0] && e->msg[0]) snprintf(dst, cap, "%s", e->msg);
}

static int cmp_zone(const void *a, const void *b)
{
    return strcmp(((const spot_price *)a)->az, ((const spot_price *)b)->az);
}

/* Spot zones of one type from its run of a region's DescribeSpotPriceHistory result (E, N: in zone
 * order, one entry per zone, so the record's zones are too): -1 with ERR when out of memory or when
 * they are more than a prices file holds (the cache would refuse what it wrote, and `prices --format
 * json` would write what `rank` refuses). */
static int fill_spot(price_record *r, const ec2_spot_entry *e, size_t n, time_t now, ib_error *err)
{
    free(r->spot);
    r->spot = NULL;
    r->n_spot = 0;
    if (n) {
        r->spot = calloc(n, sizeof *r->spot);
        if (!r->spot) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
        for (size_t i = 0; i < n; i++, e++) {
            if (!names_zone_ok(e->az)) { /* the price files and the cache would refuse it */
                ib_debug("prices: ignoring a spot price in zone '%s' (not a zone name)", e->az);
                continue;
            }
            /* a zone named for another region would price this one (its lowest spot, say); an ID
             * (use1-az4) names no region instbench can check */
            if (!names_zone_is_id(e->az) && !names_zone_in_region(e->az, r->region)) {
                ib_debug("prices: ignoring a spot price in zone '%s' (not a zone of %s)", e->az, r->region);
                continue;
            }
            spot_price *z = &r->spot[r->n_spot++];
            snprintf(z->az, sizeof z->az, "%s", e->az);
            z->usd_per_hour = e->usd_per_hour;
            z->timestamp = e->timestamp;
            z->placement_score = -1;
        }
        if (r->n_spot > PRICES_MAX_ZONES) {
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "EC2 DescribeSpotPriceHistory: %zu zones for %s in %s, more than the %d any region has "
                         "(is the endpoint AWS?)",
                         r->n_spot, r->instance_type, r->region, PRICES_MAX_ZONES);
            free(r->spot);
            r->spot = NULL;
            r->n_spot = 0;
            return -1;
        }
    }
    strcpy(r->spot_source, "live");
    r->spot_as_of = now;
    return 0;
}

/* The zone name ZM gives AZ_ID, or NULL. */
static const char *zone_name(const ec2_zone_map *zm, const char *az_id)
{
    for (size_t z = 0; z < zm->n; z++)
        if (!strcmp(zm->zones[z].id, az_id)) return zm->zones[z].name;
    return NULL;
}

/* R's zone AZ (fill_spot leaves them in zone order, one per name), or NULL: a search, not a scan, since a
 * server names both the zones and the scores looked up in them. */
static spot_price *spot_zone(price_record *r, const char *az)
{
    spot_price key;
    if (!az || snprintf(key.az, sizeof key.az, "%s", az) >= (int)sizeof key.az) return NULL;
    return r->n_spot ? bsearch(&key, r->spot, r->n_spot, sizeof *r->spot, cmp_zone) : NULL;
}

/* Placement scores onto RECS (n_types x n_regions, type-major).  A score query names its type by
 * its index among the EC2 types (ec2_rec: that type's index in RECS) and its region by name, which
 * finds one record; a per-AZ score names a zone ID, found in the record's zones as an ID or, through
 * DescribeAvailabilityZones (ZM, per region), as the zone's name: time linear in the scores (times
 * the regions asked and the log of the zones).
 * Returns how many per-AZ scores found no zone of a record that has zones. */
static size_t take_scores(price_record *recs, size_t n_regions, char **regions, const size_t *ec2_rec,
                          const ec2_score_query *sc, const ib_error *e_sc, size_t n_sc, const ec2_zone_map *zm,
                          size_t n_zm, live_report *rep)
{
    size_t unmatched = 0;
    for (size_t q = 0; q < n_sc; q++) {
        if (e_sc[q].code) {
            if (!rep->placement_note[0])
                snprintf(rep->placement_note, sizeof rep->placement_note, "spot placement scores unavailable: %.200s",
                         e_sc[q].msg);
            continue;
        }
        for (size_t k = 0; k < sc[q].n_scores; k++) {
            const ec2_score *s = &sc[q].scores[k];
            size_t r = 0;
            while (r < n_regions && strcmp(regions[r], s->region) != 0) r++;
            if (r == n_regions) continue;
            price_record *rec = &recs[ec2_rec[q / 2] * n_regions + r];
            if (!sc[q].single_az) {
                if (!s->az_id[0]) rec->placement_score = s->score;
                continue;
            }
            const char *name = r < n_zm ? zone_name(&zm[r], s->az_id) : NULL;
            spot_price *by_id = spot_zone(rec, s->az_id), *by_name = spot_zone(rec, name);
            if (by_id) by_id->placement_score = s->score;
            if (by_name) by_name->placement_score = s->score;
            unmatched += !by_id && !by_name && rec->n_spot > 0;
        }
    }
    return unmatched;
}

/* long: the four kinds of query (pricing, spot history, placement scores, zone names) are built
 * into buffers, sent together as one aws_paginate_multi batch and read back from the same buffers,
 * which this one function owns and frees on every path (contract in prices/internal.h). */
int prices_live_fetch(aws_client *c, price_record *recs, size_t n_types, size_t n_regions, int want_od, int want_spot,
                      int want_scores, int page_size, time_t now, live_status *st, live_report *rep)
{
    size_t n = n_types * n_regions;
    memset(rep, 0, sizeof *rep);
    for (size_t i = 0; i < n; i++) st[i].od = st[i].spot = 0;
    if (!want_spot) want_scores = 0;

    size_t n_od = want_od ? n : 0, n_sp = want_spot ? n_regions : 0;
    size_t n_sc = want_scores ? 2 * n_types : 0, n_zm = want_scores ? n_regions : 0;
    pricing_item *od = calloc(n_od ? n_od : 1, sizeof *od);
    ec2_spot_query *sp = calloc(n_sp ? n_sp : 1, sizeof *sp);
    ec2_score_query *sc = calloc(n_sc ? n_sc : 1, sizeof *sc);
    ec2_zone_map *zm = calloc(n_zm ? n_zm : 1, sizeof *zm);
    ib_error *e_od = calloc(n_od ? n_od : 1, sizeof *e_od), *e_sp = calloc(n_sp ? n_sp : 1, sizeof *e_sp);
    ib_error *e_sc = calloc(n_sc ? n_sc : 1, sizeof *e_sc), *e_zm = calloc(n_zm ? n_zm : 1, sizeof *e_zm);
    char **types = calloc(n_types ? n_types : 1, sizeof *types),
         **regions = calloc(n_regions ? n_regions : 1, sizeof *regions);
    size_t *ec2_rec = calloc(n_types ? n_types : 1, sizeof *ec2_rec); /* EC2 type k is recs' type ec2_rec[k] */
    aws_pager pagers[4];
    size_t counts[4], np = 0;
    ib_error *errs[4];
    int rc = -1;
    if (!od || !sp || !sc || !zm || !e_od || !e_sp || !e_sc || !e_zm || !types || !regions || !ec2_rec) {
        snprintf(rep->od_error, sizeof rep->od_error, "out of memory");
        goto out;
    }
    /* SageMaker (ml.*) types have no EC2 spot market: spot and scores are for EC2 types only. */
    size_t n_ec2 = 0;
    for (size_t t = 0; t < n_types; t++)
        if (!instance_type_is_sagemaker(recs[t * n_regions].instance_type)) {
            ec2_rec[n_ec2] = t;
            types[n_ec2++] = recs[t * n_regions].instance_type;
        }
    if (n_ec2 == 0) n_sp = n_sc = n_zm = 0;
    else if (n_sc) n_sc = 2 * n_ec2;
    for (size_t r = 0; r < n_regions; r++) regions[r] = recs[r].region;

    ib_error perr = {0};
    if (n_od) {
        for (size_t i = 0; i < n; i++) {
            snprintf(od[i].instance_type, sizeof od[i].instance_type, "%s", recs[i].instance_type);
            snprintf(od[i].region, sizeof od[i].region, "%s", recs[i].region);
        }
        if (aws_pricing_pager(od, n_od, page_size, &pagers[np], &perr) != 0) {
            first_error(rep->od_error, sizeof rep->od_error, &perr);
            rep->od_failed = rep->od_asked = n_od;
            for (size_t i = 0; i < n; i++) st[i].od = -1;
            n_od = 0;
        } else {
            counts[np] = n_od;
            errs[np++] = e_od;
        }
    }
    if (n_sp) {
        for (size_t r = 0; r < n_regions; r++) {
            snprintf(sp[r].region, sizeof sp[r].region, "%s", regions[r]);
            sp[r].instance_types = types;
            sp[r].n_types = n_ec2;
            sp[r].start_time = now;
            sp[r].max_entries = n_ec2 * PRICES_MAX_ZONES; /* fill_spot's bound, as the answer arrives */
        }
        if (aws_ec2_spot_pager(sp, page_size, &pagers[np], &perr) != 0) goto out;
        counts[np] = n_sp;
        errs[np++] = e_sp;
    }
    if (n_sc) {
        for (size_t t = 0; t < n_ec2; t++)
            for (int single = 0; single < 2; single++) {
                ec2_score_query *q = &sc[2 * t + single];
                snprintf(q->instance_type, sizeof q->instance_type, "%s", types[t]);
                q->regions = regions;
                q->n_regions = n_regions;
                q->single_az = single;
            }
        if (aws_ec2_scores_pager(sc, regions[0], &pagers[np], &perr) != 0) goto out;
        counts[np] = n_sc;
        errs[np++] = e_sc;
        for (size_t r = 0; r < n_regions; r++) snprintf(zm[r].region, sizeof zm[r].region, "%s", regions[r]);
        aws_ec2_zones_pager(zm, &pagers[np], &perr);
        counts[np] = n_zm;
        errs[np++] = e_zm;
    }

    double t0 = util_now_seconds();
    aws_paginate_multi(c, pagers, counts, np, errs);
    ib_debug("prices: %zu pricing, %zu spot, %zu score, %zu zone queries in %.3f s", n_od, n_sp, n_sc, n_zm,
             util_now_seconds() - t0);

    /* on-demand */
    rep->od_asked += n_od;
    for (size_t i = 0; i < n_od; i++) {
        if (e_od[i].code) {
            st[i].od = -1;
            rep->od_failed++;
            first_error(rep->od_error, sizeof rep->od_error, &e_od[i]);
            continue;
        }
        st[i].od = 1;
        recs[i].on_demand_usd_per_hour = od[i].usd_per_hour; /* NAN: no such product there */
        /* ... or one AWS lists only at $0/h, which is no price either, and is said as such */
        recs[i].od_live_zero = isnan(od[i].usd_per_hour) && od[i].n_zero > 0;
        strcpy(recs[i].on_demand_source, "live");
        recs[i].on_demand_as_of = now;
        if (od[i].n_products > 1) /* a different price would have failed the query (pricing.c) */
            ib_debug("prices: %zu products matched %s in %s, all at $%.10g/h", (size_t)od[i].n_products,
                     od[i].instance_type, od[i].region, od[i].usd_per_hour);
    }
    /* spot */
    rep->spot_asked = n_sp ? n_ec2 * n_regions : 0;
    for (size_t r = 0; r < n_sp; r++) {
        ec2_spot_query_sort(&sp[r]);
        for (size_t t = 0; t < n_types; t++) {
            price_record *rec = &recs[t * n_regions + r];
            if (instance_type_is_sagemaker(rec->instance_type)) continue;
            ib_error ferr = {0};
            size_t n_run;
            const ec2_spot_entry *run = ec2_spot_query_run(&sp[r], rec->instance_type, &n_run);
            if (e_sp[r].code || fill_spot(rec, run, n_run, now, &ferr) != 0) {
                st[t * n_regions + r].spot = -1;
                rep->spot_failed++;
                first_error(rep->spot_error, sizeof rep->spot_error, e_sp[r].code ? &e_sp[r] : &ferr);
            } else {
                st[t * n_regions + r].spot = 1;
            }
        }
    }
    /* placement scores: absent with a note when the caller lacks ec2:GetSpotPlacementScores */
    size_t unmatched = take_scores(recs, n_regions, regions, ec2_rec, sc, e_sc, n_sc, zm, n_zm, rep);
    /* Per-AZ scores name zone IDs (use1-az4); prices name zones (us-east-1a).  Without
     * DescribeAvailabilityZones the two cannot be joined: say why those scores are missing. */
    for (size_t r = 0; r < n_zm && unmatched && !rep->placement_note[0]; r++)
        if (e_zm[r].code)
            snprintf(rep->placement_note, sizeof rep->placement_note, "per-AZ spot placement scores not shown: %.200s",
                     e_zm[r].msg);
    rc = 0;
out:
    for (size_t k = 0; k < np; k++)
        if (pagers[k].ctx != zm) free(pagers[k].ctx);
    for (size_t r = 0; r < n_sp; r++) ec2_spot_query_free(&sp[r]);
    for (size_t q = 0; q < n_sc; q++) ec2_score_query_free(&sc[q]);
    free(od);
    free(sp);
    free(sc);
    free(zm);
    free(e_od);
    free(e_sp);
    free(e_sc);
    free(e_zm);
    free(types);
    free(regions);
    free(ec2_rec);
    return rc;
}
