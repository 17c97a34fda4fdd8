/* markets_live: Capacity Block offerings and Savings Plan rates, straight from AWS, all queries
 * in the same concurrent rounds (aws_paginate_many). */
#include "prices/internal.h"
#include "instbench/aws_services.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A client, or 1 with WHY when there are no credentials (offline: not an error), -1 with ERR. */
static int client(double timeout_s, aws_client **c, const char *what, char *why, size_t why_len, ib_error *err)
{
    int no_cred;
    ib_error cerr = {0};
    if (prices_live_client(timeout_s, c, &no_cred, &cerr) == 0) return 0;
    if (no_cred) {
        snprintf(why, why_len,
                 "%s come from live AWS only and no AWS credentials were found (-v says where "
                 "instbench looked)",
                 what);
        return 1;
    }
    *err = cerr;
    return -1;
}

/* Pager P's N queries, all in the same rounds: 0, or -1 with the first that failed in ERR. */
static int paginate_all(aws_client *c, const aws_pager *p, size_t n, ib_error *err)
{
    ib_error *errs = calloc(n ? n : 1, sizeof *errs);
    if (!errs) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    aws_paginate_many(c, p, n, errs);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (errs[i].code) {
            *err = errs[i];
            rc = -1;
        }
    free(errs);
    return rc;
}

int prices_ultraserver_type_ok(const char *s)
{
    /* u-<family>x<hosts>: the family as instance families are spelt, the hosts a whole number */
    if (!s || strncmp(s, "u-", 2) || strlen(s) >= 64 || strchr(s, '.')) return 0;
    const char *x = strrchr(s, 'x');
    if (!x || x == s + 2 || !x[1] || strspn(x + 1, "0123456789") != strlen(x + 1)) return 0;
    for (const char *p = s + 2; p < x; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) return 0;
    return 1;
}

static int cmp_offering_id(const void *a, const void *b)
{
    return strcmp((*(const market_block *const *)a)->offering_id, (*(const market_block *const *)b)->offering_id);
}

/* An offering ID listed twice among ROWS (sorted, not scanned: an endpoint picks how many), or NULL.
 * It is AWS's key for one block, which has one zone, start and fee: twice, the answer cannot say
 * which is the block's, and the rows would show it twice over. */
static const market_block *repeated_offering(const market_block *rows, size_t n, int *oom)
{
    const market_block **by_id = malloc((n ? n : 1) * sizeof *by_id), *twice = NULL;
    *oom = !by_id;
    if (!by_id) return NULL;
    for (size_t i = 0; i < n; i++) by_id[i] = &rows[i];
    qsort(by_id, n, sizeof *by_id, cmp_offering_id);
    for (size_t i = 1; i < n && !twice; i++)
        if (by_id[i]->offering_id[0] && !strcmp(by_id[i]->offering_id, by_id[i - 1]->offering_id)) twice = by_id[i];
    free(by_id);
    return twice;
}

int prices_fetch_blocks(const market_block_query *q, market_block **out, size_t *n_out, char *why, size_t why_len,
                        ib_error *err)
{
    *out = NULL;
    *n_out = 0;
    aws_client *c = NULL;
    int rc = client(q->timeout_s, &c, "Capacity Block offerings", why, why_len, err);
    if (rc) return rc;
    size_t n = q->n_types * q->n_regions;
    ec2_block_query *qs = calloc(n ? n : 1, sizeof *qs);
    if (!qs) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    for (size_t t = 0; t < q->n_types; t++)
        for (size_t r = 0; r < q->n_regions; r++) {
            ec2_block_query *b = &qs[t * q->n_regions + r];
            snprintf(b->region, sizeof b->region, "%s", q->regions[r]);
            b->instance_type = q->types[t];
            b->instance_count = q->counts[t];
            if (prices_ultraserver_type_ok(q->types[t])) {
                b->ultraserver_type = q->types[t];
                b->ultraserver_count = q->counts[t];
            }
            b->duration_hours = q->hours;
            b->start_after = q->start_after;
            b->end_before = q->end_before;
        }
    aws_pager p;
    aws_ec2_blocks_pager(qs, &p, err);
    if ((rc = paginate_all(c, &p, n, err)) != 0) goto done;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += qs[i].n;
    market_block *rows = calloc(total ? total : 1, sizeof *rows);
    if (!rows) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    time_t now = time(NULL);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < qs[i].n; k++) {
            const ec2_block_offering *o = &qs[i].offerings[k];
            /* An offering that already started would be sold for hours already past: AWS quotes the
             * fee for the whole block, so it is refused (left out, said) rather than shown as "now"
             * and priced over hours nobody can use.  A few minutes of clock difference pass. */
            if (o->start < now - MARKETS_BLOCK_CLOCK_SLACK_S) {
                char when[32];
                util_utc_iso8601(o->start, when);
                ib_warn("Capacity Block offering %s in %s started at %s, before now: left out (its fee is for the "
                        "whole block, hours already past included)",
                        o->id, o->az, when);
                continue;
            }
            market_block *m = &rows[(*n_out)++];
            snprintf(m->instance_type, sizeof m->instance_type, "%s", o->instance_type);
            snprintf(m->region, sizeof m->region, "%s", qs[i].region);
            snprintf(m->az, sizeof m->az, "%s", o->az);
            snprintf(m->offering_id, sizeof m->offering_id, "%s", o->id);
            m->instance_count = o->instance_count;
            snprintf(m->ultraserver_type, sizeof m->ultraserver_type, "%s", o->ultraserver_type);
            m->ultraserver_count = o->ultraserver_count;
            m->hours = o->duration_hours + o->duration_minutes / 60.0;
            m->start = o->start;
            m->end = o->end;
            m->fee_usd = o->upfront_fee;
            const price_record *hw = prices_catalogue_hardware(o->instance_type);
            m->accelerators = hw && hw->hw.accelerator[0] ? hw->hw.accelerator_count : 0;
            m->usd_per_instance_hour = markets_block_usd_per_instance_hour(m->fee_usd, m->instance_count, m->hours);
            m->usd_per_accelerator_hour =
                markets_block_usd_per_accelerator_hour(m->fee_usd, m->instance_count, m->accelerators, m->hours);
            /* a block quoted in another currency would print as dollars: left out, said */
            if (strcmp(o->currency, "USD") != 0) {
                ib_warn("Capacity Block offering %s in %s is quoted in %s, not USD: left out", o->id, o->az,
                        o->currency);
                (*n_out)--;
            }
        }
    int oom;
    const market_block *twice = repeated_offering(rows, *n_out, &oom);
    if (oom || twice) {
        rc = oom ? ib_error_set(err, IB_EXIT_RUNTIME, "out of memory")
                 : ib_error_set(err, IB_EXIT_RUNTIME,
                                "EC2 DescribeCapacityBlockOfferings: offering %s (%s in %s) listed twice: the answer "
                                "does not say which is the block's (is the endpoint AWS?)",
                                twice->offering_id, twice->instance_type, twice->az);
        free(rows);
        *n_out = 0;
        goto done;
    }
    *out = rows;
done:
    for (size_t i = 0; qs && i < n; i++) ec2_block_query_free(&qs[i]);
    free(qs);
    aws_client_destroy(c);
    return rc;
}

int prices_fetch_plan_rates(const market_plan_query *q, double *rates, char *why, size_t why_len, ib_error *err)
{
    size_t n = q->n_types * q->n_regions;
    for (size_t i = 0; i < n; i++) rates[i] = NAN;
    aws_client *c = NULL;
    int rc = client(q->timeout_s, &c, "Savings Plan rates", why, why_len, err);
    if (rc) return rc;
    sp_query *qs = calloc(n ? n : 1, sizeof *qs);
    if (!qs) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    for (size_t t = 0; t < q->n_types; t++)
        for (size_t r = 0; r < q->n_regions; r++) {
            sp_query *s = &qs[t * q->n_regions + r];
            s->instance_type = q->types[t];
            s->region = q->regions[r];
            s->plan_type = q->plan_type;
            s->payment = q->payment;
            s->duration_s = q->duration_s;
        }
    aws_pager p;
    aws_savingsplans_pager(qs, &p, err);
    if ((rc = paginate_all(c, &p, n, err)) != 0) goto done;
    for (size_t i = 0; i < n; i++) {
        /* one rate per (type, region, plan, payment, term); should AWS answer several, the lowest is
           the one a plan would charge */
        for (size_t k = 0; k < qs[i].n; k++)
            if (isnan(rates[i]) || qs[i].rates[k].usd_per_hour < rates[i]) rates[i] = qs[i].rates[k].usd_per_hour;
    }
done:
    for (size_t i = 0; qs && i < n; i++) sp_query_free(&qs[i]);
    free(qs);
    aws_client_destroy(c);
    return rc;
}
