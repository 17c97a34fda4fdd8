/* rank/ask.c: what ranking needs from AWS, asked through prices/: the prices of the
 * configurations, the live quotes of the markets bought ahead, the placement scores a price set
 * cannot answer, and the account's zone names.  The one file of rank/ that causes a request; the
 * rest is pure.  Offline (--source cache, snapshot or a file) it asks nothing and the rows say
 * why they lack what it would have asked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/instance_type.h"
#include "instbench/rank.h"
#include "rank/internal.h"

static int asks_live(const char *source) { return !source || !strcmp(source, "auto") || !strcmp(source, "live"); }

/* Every market whose price C needs has a user price, so no AWS price is needed for it.  A savings
 * plan needs the on-demand price too (its break-even, PLAN PAYS vs OD), ranked or not. */
static int user_priced(const rank_config *c, const rank_options *o)
{
    double p;
    time_t t;
    const int wanted[2] = {(o->markets & (RANK_MARKETS_ON_DEMAND | RANK_MARKETS_PLAN)) != 0,
                           (o->markets & RANK_MARKETS_SPOT) != 0};
    for (int m = 0; m < 2; m++)
        if (wanted[m] && !(m == RANK_SPOT && instance_type_is_sagemaker(c->instance_type)) &&
            !rank_user_price_for(c, (rank_market)m, o, &p, &t))
            return 0;
    return 1;
}

int rank_load_prices(const char *source, const rank_config *c, size_t n, const rank_options *o, price_set *ps,
                     char *origin, size_t olen, ib_error *err)
{
    const char *src = source ? source : "auto";
    int s = 0;
    while (prices_source_names[s] && strcmp(src, prices_source_names[s])) s++;
    if (!prices_source_names[s]) { /* not a source: a prices file */
        if (prices_load_file(src, ps, err) != 0) return -1;
        snprintf(origin, olen, "file %s", src);
        return 0;
    }
    prices_query q = {0};
    q.instance_types = calloc(n + 1, sizeof *q.instance_types);
    q.regions = calloc(n + 1, sizeof *q.regions);
    if (!q.instance_types || !q.regions) {
        free(q.instance_types), free(q.regions);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (user_priced(&c[i], o)) continue; /* nothing to fetch for it */
        int seen_t = !c[i].instance_type[0], seen_r = !c[i].region[0];
        for (size_t k = 0; k < q.n_types && !seen_t; k++) seen_t = !strcmp(q.instance_types[k], c[i].instance_type);
        for (size_t k = 0; k < q.n_regions && !seen_r; k++) seen_r = !strcmp(q.regions[k], c[i].region);
        if (!seen_t) q.instance_types[q.n_types++] = (char *)c[i].instance_type;
        if (!seen_r) q.regions[q.n_regions++] = (char *)c[i].region;
    }
    /* a plan's break-even is against the on-demand price */
    q.want_on_demand = (o->markets & (RANK_MARKETS_ON_DEMAND | RANK_MARKETS_PLAN)) != 0;
    q.want_spot = (o->markets & RANK_MARKETS_SPOT) != 0;
    q.source = (prices_source)s;
    int rc = 0;
    memset(ps, 0, sizeof *ps);
    if (q.n_types && q.n_regions) {
        rc = prices_get(&q, ps, err);
        if (rc == 0) prices_warn_missing(&q, ps);
    }
    if (rc != 0 && q.source == PRICES_SOURCE_LIVE) { /* the message names the flag that asked for live */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "--source live: %.1000s", err->msg);
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    free(q.instance_types);
    free(q.regions);
    /* Each row names its price source already; the snapshot's provenance is for -v. */
    if (rc == 0 && ps->snapshot_note[0]) ib_debug("prices: %s", ps->snapshot_note);
    if (olen) origin[0] = '\0';
    return rc;
}

/* The distinct (type, region, nodes) of the configurations a market bought ahead can price (not
 * SageMaker's ml.* types), into TYPES, REGIONS and COUNTS (room for N each). */
static size_t quote_keys(const rank_config *c, size_t n, char **types, char **regions, int *counts)
{
    size_t nq = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].instance_type[0] || !c[i].region[0] || instance_type_is_sagemaker(c[i].instance_type)) continue;
        int dup = 0;
        for (size_t k = 0; k < nq && !dup; k++)
            dup = !strcmp(types[k], c[i].instance_type) && !strcmp(regions[k], c[i].region) && counts[k] == c[i].nodes;
        if (dup) continue;
        types[nq] = (char *)c[i].instance_type;
        regions[nq] = (char *)c[i].region;
        counts[nq++] = (int)c[i].nodes;
    }
    return nq;
}

int rank_load_quotes(const char *source, const char *plan_type, const char *payment, const rank_config *c, size_t n,
                     rank_options *o, rank_block_quote **blocks, rank_plan_quote **plans, char *missing, size_t mlen,
                     ib_error *err)
{
    int want_b = (o->markets & RANK_MARKETS_BLOCK) != 0, want_p = (o->markets & RANK_MARKETS_PLAN) != 0;
    *blocks = NULL, *plans = NULL;
    missing[0] = '\0';
    if (!want_b && !want_p) return 0;
    if (source && !asks_live(source)) {
        snprintf(missing, mlen,
                 "Capacity Block offerings and Savings Plan rates are live only (--source %s does "
                 "not ask AWS)",
                 source);
        return 0;
    }
    /* one query per distinct (type, nodes) in each region: the types and counts, with counts per type */
    size_t cap = n ? n : 1, nq = 0;
    char **types = calloc(cap, sizeof *types), **regions = calloc(cap, sizeof *regions);
    int *counts = calloc(cap, sizeof *counts);
    int rc = 0;
    if (!types || !regions || !counts) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    size_t got_b = 0, got_p = 0;
    nq = quote_keys(c, n, types, regions, counts);
    *blocks = calloc(1, sizeof **blocks);
    *plans = calloc(nq ? nq : 1, sizeof **plans);
    if (!*blocks || !*plans) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    char why[320] = "";
    /* one batch per region (its queries go out together, aws_paginate_many): the (type, nodes) pairs
       for blocks, the distinct types for plans */
    char **bt = calloc(nq ? nq : 1, sizeof *bt), **pt = calloc(nq ? nq : 1, sizeof *pt);
    int *bc = calloc(nq ? nq : 1, sizeof *bc);
    double *rates = calloc(nq ? nq : 1, sizeof *rates);
    if (!bt || !pt || !bc || !rates) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t k = 0; k < nq && !rc; k++) {
        int first = 1;
        for (size_t j = 0; j < k && first; j++) first = strcmp(regions[j], regions[k]) != 0;
        if (!first) continue; /* this region's batch went out with its first query */
        char *region[1] = {regions[k]};
        size_t nbq = 0, npq = 0;
        for (size_t j = k; j < nq; j++) {
            if (strcmp(regions[j], regions[k])) continue;
            if (counts[j] >= 1 && counts[j] <= MARKETS_BLOCK_MAX_INSTANCES) bt[nbq] = types[j], bc[nbq++] = counts[j];
            int dup = 0;
            for (size_t i = 0; i < npq && !dup; i++) dup = !strcmp(pt[i], types[j]);
            if (!dup) pt[npq++] = types[j];
        }
        if (want_b && nbq) {
            market_block_query bq = {bt, nbq, region, 1, bc, (int)o->block_hours, 0, 0, 0};
            market_block *mb = NULL;
            size_t nb = 0;
            int r = prices_fetch_blocks(&bq, &mb, &nb, why, sizeof why, err);
            if (r < 0) rc = -1;
            if (r == 1) want_b = 0;
            rank_block_quote *grown = nb ? realloc(*blocks, (got_b + nb) * sizeof **blocks) : *blocks;
            if (!grown) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            else *blocks = grown;
            for (size_t i = 0; grown && i < nb; i++) {
                rank_block_quote *q = &(*blocks)[got_b++];
                memset(q, 0, sizeof *q);
                snprintf(q->instance_type, sizeof q->instance_type, "%s", mb[i].instance_type);
                snprintf(q->region, sizeof q->region, "%s", mb[i].region);
                snprintf(q->az, sizeof q->az, "%s", mb[i].az);
                q->nodes = mb[i].instance_count;
                q->hours = mb[i].hours;
                q->fee_usd = mb[i].fee_usd;
                q->start = mb[i].start;
            }
            free(mb);
        }
        if (!rc && want_p && npq) {
            /* the term in seconds: 1y 31536000, 3y 94608000 (8760 and 26280 hours) */
            market_plan_query pq = {pt, npq, region, 1, plan_type, payment, (long long)o->plan_term_hours * 3600, 0};
            int r = prices_fetch_plan_rates(&pq, rates, why, sizeof why, err);
            if (r < 0) rc = -1;
            if (r == 1) want_p = 0;
            for (size_t i = 0; r == 0 && i < npq; i++) {
                if (isnan(rates[i])) continue;
                rank_plan_quote *q = &(*plans)[got_p++];
                snprintf(q->instance_type, sizeof q->instance_type, "%s", pt[i]);
                snprintf(q->region, sizeof q->region, "%s", regions[k]);
                q->usd_per_hour = rates[i];
            }
        }
        if (why[0] && !missing[0]) snprintf(missing, mlen, "%s", why);
    }
    free(bt), free(pt), free(bc), free(rates);
    o->blocks = *blocks, o->n_blocks = got_b;
    o->plans = *plans, o->n_plans = got_p;
out:
    free(types), free(regions), free(counts);
    return rc;
}

void rank_ask_placement(const char *source, char **pool, size_t n_pool, const rank_config *c, rank_row *rows,
                        size_t n_rows)
{
    const char *src = source ? source : "auto";
    placement_ask *asks = NULL;
    size_t n = rank_placement_plan(c, rows, n_rows, n_pool, &asks);
    if (n == 0) return;
    char note[320] = "";
    if (!asks_live(src)) {
        for (size_t i = 0; i < n; i++) asks[i].failed = 1;
        snprintf(note, sizeof note, "asked live only (not with --source %s)", src);
    } else {
        prices_placement_live(asks, n, pool, n_pool, 0, note, sizeof note);
    }
    rank_placement_apply(c, rows, n_rows, asks, n, pool, n_pool);
    /* in words a newcomer reads: which rows lack the figure, and why (the mechanics with -v) */
    if (note[0]) {
        if (ib_log_level >= 2)
            ib_debug("spot placement scores for %zu multi-node or pooled ask%s: %s", n, n == 1 ? "" : "s", note);
        else ib_info("PLACEMENT is ? on multi-node spot rows: %s", note);
    }
    free(asks);
}

size_t rank_ask_zones(const char *const *regions, size_t n_regions, prices_zone **live)
{
    size_t n_live = 0;
    ib_error zerr = {0};
    *live = NULL;
    if (prices_live_zones(regions, n_regions, 0, live, &n_live, &zerr) != 0)
        ib_debug("--az: zone names not mapped through live AWS: %s", zerr.msg);
    return n_live;
}
