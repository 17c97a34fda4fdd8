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

/* The quotes asked so far: the offerings and rates found, and the gaps where none could be asked. */
typedef struct quotes {
    rank_block_quote *b;
    size_t nb, cap_b;
    rank_plan_quote *p;
    size_t np, cap_p;
} quotes;

static void *grown(void *v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return v;
    size_t c = *cap ? *cap : 4;
    while (c < need) c *= 2;
    void *g = realloc(v, c * size);
    if (g) *cap = c;
    return g;
}

static rank_block_quote *new_block(quotes *q)
{
    rank_block_quote *g = grown(q->b, &q->cap_b, q->nb + 1, sizeof *q->b);
    if (!g) return NULL;
    q->b = g;
    memset(&g[q->nb], 0, sizeof *g);
    return &g[q->nb++];
}

static rank_plan_quote *new_plan(quotes *q)
{
    rank_plan_quote *g = grown(q->p, &q->cap_p, q->np + 1, sizeof *q->p);
    if (!g) return NULL;
    q->p = g;
    memset(&g[q->np], 0, sizeof *g);
    return &g[q->np++];
}

static const char *const quote_market[2] = {"Capacity Block offerings", "Savings Plan rates"};
static const char *const quote_flag[2] = {"capacity-block", "savings-plan"};

/* A gap of market M (0 blocks, 1 plans) for REGION ("" every region), WHY its rows' reason. */
static int add_gap(quotes *q, int m, const char *region, const char *why, ib_error *err)
{
    char *r, *w;
    size_t rl, wl;
    if (m == 0) {
        rank_block_quote *b = new_block(q);
        if (!b) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        r = b->region, rl = sizeof b->region, w = b->why, wl = sizeof b->why;
    } else {
        rank_plan_quote *p = new_plan(q);
        if (!p) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        r = p->region, rl = sizeof p->region, w = p->why, wl = sizeof p->why;
        p->usd_per_hour = NAN;
    }
    snprintf(r, rl, "%s", region);
    snprintf(w, wl, "%s", why);
    return 0;
}

/* A live request of market M in REGION failed with ERR: with --source live an error naming the
 * market and the flag (-1); else a gap its rows give as their reason, said once here (0). */
static int quote_failed(quotes *q, int m, const char *region, int strict, ib_error *err)
{
    char why[320];
    if (strict) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "--source live: %s in %s (--market %s) could not be asked: %.900s", quote_market[m],
                 region, quote_flag[m], err->msg);
        snprintf(err->msg, sizeof err->msg, "%s", msg);
        if (!err->code) err->code = IB_EXIT_RUNTIME;
        return -1;
    }
    snprintf(why, sizeof why, "%s in %s not known: the live request failed (%.220s)", quote_market[m], region,
             err->msg);
    ib_warn("%s; those rows are unpriced (--source live would make this an error)", why);
    ib_error ok = {0};
    *err = ok;
    return add_gap(q, m, region, why, err);
}

int rank_load_quotes(const char *source, const char *plan_type, const char *payment, const rank_config *c, size_t n,
                     rank_options *o, rank_block_quote **blocks, rank_plan_quote **plans, char *missing, size_t mlen,
                     ib_error *err)
{
    int want_b = (o->markets & RANK_MARKETS_BLOCK) != 0, want_p = (o->markets & RANK_MARKETS_PLAN) != 0;
    int strict = source && !strcmp(source, "live");
    quotes qs = {0};
    *blocks = NULL, *plans = NULL;
    if (mlen) missing[0] = '\0';
    o->blocks = NULL, o->n_blocks = 0;
    o->plans = NULL, o->n_plans = 0;
    if (!want_b && !want_p) return 0;
    /* Neither is sold for a machine off EC2 or a SageMaker type: nothing to ask, and no row to
     * call unpriced (rank_score lists none; the hint says why). */
    int any_ec2 = 0;
    for (size_t i = 0; i < n && !any_ec2; i++)
        any_ec2 = c[i].instance_type[0] && !instance_type_is_sagemaker(c[i].instance_type);
    if (!any_ec2) return 0;
    int rc = 0;
    if (source && !asks_live(source)) {
        char why[320];
        for (int m = 0; m < 2 && !rc; m++) {
            if (!(m == 0 ? want_b : want_p)) continue;
            snprintf(why, sizeof why, "%s are live only (--source %s does not ask AWS)", quote_market[m], source);
            rc = add_gap(&qs, m, "", why, err);
        }
        if (!rc)
            ib_warn("%s%s%s are live only (--source %s does not ask AWS): those rows are unpriced",
                    want_b ? quote_market[0] : "", want_b && want_p ? " and " : "", want_p ? quote_market[1] : "",
                    source);
        goto out;
    }
    /* one query per distinct (type, nodes) in each region: the types and counts, with counts per type */
    size_t cap = n ? n : 1, nq = 0;
    char **types = calloc(cap, sizeof *types), **regions = calloc(cap, sizeof *regions);
    int *counts = calloc(cap, sizeof *counts);
    /* one batch per region (its queries go out together, aws_paginate_many): the (type, nodes) pairs
       for blocks, the distinct types for plans */
    char **bt = calloc(cap, sizeof *bt), **pt = calloc(cap, sizeof *pt);
    int *bc = calloc(cap, sizeof *bc);
    double *rates = calloc(cap, sizeof *rates);
    if (!types || !regions || !counts || !bt || !pt || !bc || !rates)
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    else nq = quote_keys(c, n, types, regions, counts);
    /* no credentials: one reason per market, for every region, said once (offline is the usual case) */
    char no_cred[2][320] = {"", ""};
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
            int r = prices_fetch_blocks(&bq, &mb, &nb, no_cred[0], sizeof no_cred[0], err);
            if (r < 0) rc = quote_failed(&qs, 0, regions[k], strict, err);
            if (r == 1) want_b = 0;
            for (size_t i = 0; !rc && i < nb; i++) {
                rank_block_quote *q = new_block(&qs);
                if (!q) {
                    rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
                    break;
                }
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
            int r = prices_fetch_plan_rates(&pq, rates, no_cred[1], sizeof no_cred[1], err);
            if (r < 0) rc = quote_failed(&qs, 1, regions[k], strict, err);
            if (r == 1) want_p = 0;
            for (size_t i = 0; r == 0 && !rc && i < npq; i++) {
                if (isnan(rates[i])) continue;
                rank_plan_quote *q = new_plan(&qs);
                if (!q) {
                    rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
                    break;
                }
                snprintf(q->instance_type, sizeof q->instance_type, "%s", pt[i]);
                snprintf(q->region, sizeof q->region, "%s", regions[k]);
                q->usd_per_hour = rates[i];
            }
        }
    }
    for (int m = 0; m < 2 && !rc; m++)
        if (no_cred[m][0]) rc = add_gap(&qs, m, "", no_cred[m], err);
    if (!rc && no_cred[0][0] && no_cred[1][0])
        ib_warn("%s and %s come from live AWS only and no AWS credentials were found (-v says where instbench "
                "looked): those rows are unpriced",
                quote_market[0], quote_market[1]);
    else if (!rc && (no_cred[0][0] || no_cred[1][0]))
        ib_warn("%s: those rows are unpriced", no_cred[0][0] ? no_cred[0] : no_cred[1]);
    free(types), free(regions), free(counts);
    free(bt), free(pt), free(bc), free(rates);
out:
    if (rc) {
        free(qs.b), free(qs.p);
        return rc;
    }
    *blocks = qs.b, *plans = qs.p;
    o->blocks = qs.b, o->n_blocks = qs.nb;
    o->plans = qs.p, o->n_plans = qs.np;
    return 0;
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
