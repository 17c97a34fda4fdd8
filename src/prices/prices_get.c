/* prices_get: resolves each (instance type, region) and market from the sources the query
 * allows, in order live AWS -> on-disk cache -> the shipped snapshot, so every price carries the
 * best source available and says which one it is. */
#include "instbench/prices.h"
#include "prices/internal.h"
#include "instbench/instance_type.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TTL_S (24 * 3600)

static int copy_snapshot_spot(price_record *r, const price_record *s)
{
    spot_price *z = NULL;
    if (s->n_spot) {
        z = malloc(s->n_spot * sizeof *z);
        if (!z) return -1;
        memcpy(z, s->spot, s->n_spot * sizeof *z);
    }
    free(r->spot);
    r->spot = z;
    r->n_spot = s->n_spot;
    r->spot_as_of = s->spot_as_of;
    strcpy(r->spot_source, "snapshot");
    return 0;
}

/* The type's hardware from any snapshot record of it: hardware is a fact of the type, so a region
 * the snapshot has no row for (p5e.48xlarge in us-east-1) still gets it. */
static const price_record *snapshot_hardware(const price_set *snap, const char *type)
{
    for (size_t i = 0; snap && i < snap->n; i++)
        if (prices_hardware_known(&snap->items[i]) && !strcmp(snap->items[i].instance_type, type))
            return &snap->items[i];
    return NULL;
}

static void note_snapshot(price_set *out, const price_set *snap)
{
    if (out->snapshot_date[0]) return;
    snprintf(out->snapshot_date, sizeof out->snapshot_date, "%s", snap->snapshot_date);
    snprintf(out->snapshot_source, sizeof out->snapshot_source, "%s", snap->snapshot_source);
    snprintf(out->snapshot_note, sizeof out->snapshot_note, "%s", snap->snapshot_note);
}

int prices_live_client(double timeout_s, aws_client **c, int *no_credentials, ib_error *err)
{
    aws_credentials cred;
    *c = NULL;
    *no_credentials = 0;
    if (aws_credentials_resolve(&cred, err) != 0) {
        *no_credentials = 1;
        return -1;
    }
    /* 64 in flight: a 10-type x 2-region run is 44 independent requests (20 GetProducts, 20
     * placement scores, 2 spot histories, 2 zone lists), all in one round trip; a 40 x 4 run is
     * ~330, so ~6 rounds.  Connections are kept for the NextToken pages that follow. */
    aws_client_options opt = {.connect_timeout_s = 3,
                              .total_timeout_s = timeout_s > 0 ? timeout_s : 20,
                              .max_attempts = 0,
                              .max_concurrency = 64,
                              .refresh = aws_credentials_refresh};
    int rc = aws_client_create(&opt, &cred, c, err);
    memset(&cred, 0, sizeof cred); /* the client keeps its own copy */
    return rc;
}

/* Live AWS for every record; marks in st what it settled.  -1 only when q->source is live and
 * something failed (the message names the service and the reason). */
static int from_live(const prices_query *q, price_set *out, live_status *st, time_t now, ib_error *err)
{
    int strict = q->source == PRICES_SOURCE_LIVE, no_cred;
    ib_error cerr = {0};
    aws_client *c = NULL;
    if (prices_live_client(q->timeout_s, &c, &no_cred, &cerr) != 0) {
        /* strict failures name no flag: each command says which of its flags asked for live */
        if (strict) return ib_error_set(err, IB_EXIT_RUNTIME, "%s", cerr.msg);
        if (no_cred) {
            /* the usual case off AWS: said with -v only (issue 41: a line on every call was noise;
             * the table's sources line already says each price's source and the snapshot's date) */
            ib_debug("no AWS credentials: prices from the cache and the snapshot");
            ib_debug("%s", cerr.msg);
            snprintf(out->live_missing, sizeof out->live_missing, "live AWS was not asked (no AWS credentials)");
            out->live_no_credentials = 1;
        } else {
            ib_warn("AWS client unavailable (%s); using the cache and the price snapshot", cerr.msg);
            snprintf(out->live_missing, sizeof out->live_missing,
                     "live AWS was not asked (AWS client unavailable: %.160s)", cerr.msg);
        }
        return 0;
    }
    live_report rep;
    int rc = prices_live_fetch(c, out->items, q->n_types, q->n_regions, q->want_on_demand, q->want_spot,
                               !q->skip_placement_scores, q->page_size, now, st, &rep);
    aws_client_destroy(c);
    if (rc != 0) {
        if (strict) return ib_error_set(err, IB_EXIT_RUNTIME, "live prices: %s", rep.od_error);
        ib_warn("live prices unavailable (%s); using the cache and the price snapshot", rep.od_error);
        snprintf(out->live_missing, sizeof out->live_missing, "live AWS did not answer (%.160s)", rep.od_error);
        return 0;
    }
    if (strict && (rep.od_failed || rep.spot_failed))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s", rep.od_failed ? rep.od_error : rep.spot_error);
    if (rep.od_failed) {
        ib_warn("%zu of %zu on-demand queries failed (%s); using the cache or the snapshot for those", rep.od_failed,
                rep.od_asked, rep.od_error);
        snprintf(out->live_missing, sizeof out->live_missing,
                 "live AWS did not answer %zu of %zu on-demand queries (%.160s)", rep.od_failed, rep.od_asked,
                 rep.od_error);
    }
    if (rep.spot_failed)
        ib_warn("spot prices failed for %zu of %zu (type, region) pairs (%s); using the cache or the snapshot "
                "for those",
                rep.spot_failed, rep.spot_asked, rep.spot_error);
    if (rep.placement_note[0]) {
        snprintf(out->placement_note, sizeof out->placement_note, "%s", rep.placement_note);
        ib_info("note: %s", rep.placement_note);
    }
    for (size_t i = 0; i < out->n; i++) {
        price_record *r = &out->items[i];
        prices_cache_store(r, st[i].od == 1 && !isnan(r->on_demand_usd_per_hour), st[i].spot == 1);
    }
    return 0;
}

/* The snapshot (~0.8 MB of JSON, ~30 ms to parse and check) is parsed on a thread of its own
 * while the live requests wait on the network, so a live run does not pay for it afterwards. */
static void *parse_snapshot(void *unused)
{
    (void)unused;
    prices_snapshot(NULL);
    return NULL;
}

const char *const prices_source_names[] = {"auto", "live", "cache", "snapshot", NULL};

int prices_get(const prices_query *q, price_set *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = q->n_types * q->n_regions;
    if (n == 0) return ib_error_set(err, IB_EXIT_USAGE, "prices: no instance types or regions asked for");
    time_t now = time(NULL);
    out->generated_at = now;
    out->items = calloc(n, sizeof *out->items);
    live_status *st = calloc(n, sizeof *st);
    if (!out->items || !st) {
        free(st);
        prices_free(out);
        return ib_error_set(err, IB_EXIT_RUNTIME, "prices: out of memory");
    }
    out->n = n;
    for (size_t t = 0; t < q->n_types; t++)
        for (size_t r = 0; r < q->n_regions; r++) {
            price_record *rec = &out->items[t * q->n_regions + r];
            price_record_init(rec);
            snprintf(rec->instance_type, sizeof rec->instance_type, "%s", q->instance_types[t]);
            snprintf(rec->region, sizeof rec->region, "%s", q->regions[r]);
        }

    prices_source src = q->source;
    int ttl = q->cache_ttl_seconds > 0 ? q->cache_ttl_seconds : DEFAULT_TTL_S;
    if (src == PRICES_SOURCE_AUTO || src == PRICES_SOURCE_LIVE) {
        pthread_t parser;
        int parsing = pthread_create(&parser, NULL, parse_snapshot, NULL) == 0;
        int rc = from_live(q, out, st, now, err);
        if (parsing) pthread_join(parser, NULL);
        if (rc != 0) {
            free(st);
            prices_free(out);
            return -1;
        }
    }

    ib_error serr = {0};
    const price_set *snap = prices_snapshot(&serr);
    if (!snap && (src == PRICES_SOURCE_AUTO || src == PRICES_SOURCE_SNAPSHOT))
        ib_warn("%s", serr.msg); /* a build defect; say so rather than pretend */

    for (size_t i = 0; i < n; i++) {
        price_record *r = &out->items[i];
        r->od_live_answered = st[i].od == 1;
        int need_od = q->want_on_demand && st[i].od != 1;
        /* ml.* (SageMaker) types have no EC2 spot market */
        int need_spot = q->want_spot && st[i].spot != 1 && !instance_type_is_sagemaker(r->instance_type);
        if ((need_od || need_spot) && (src == PRICES_SOURCE_AUTO || src == PRICES_SOURCE_CACHE)) {
            int got_od, got_spot;
            prices_cache_lookup(r, need_od, need_spot, ttl, now, &got_od, &got_spot);
            need_od = need_od && !got_od;
            need_spot = need_spot && !got_spot;
        }
        const price_record *s = snap ? prices_find(snap, r->instance_type, r->region) : NULL;
        /* the type's hardware: a catalogue fact, not a price */
        const price_record *h = s && prices_hardware_known(s) ? s : snapshot_hardware(snap, r->instance_type);
        if (h) r->hw = h->hw;
        int use_snap = src == PRICES_SOURCE_AUTO || src == PRICES_SOURCE_SNAPSHOT;
        if (s && use_snap && need_od && !isnan(s->on_demand_usd_per_hour)) {
            r->on_demand_usd_per_hour = s->on_demand_usd_per_hour;
            r->on_demand_as_of = s->on_demand_as_of;
            strcpy(r->on_demand_source, "snapshot");
            note_snapshot(out, snap);
        }
        if (s && use_snap && need_spot && s->spot_source[0]) {
            if (copy_snapshot_spot(r, s) != 0) {
                free(st);
                prices_free(out);
                return ib_error_set(err, IB_EXIT_RUNTIME, "prices: out of memory");
            }
            note_snapshot(out, snap);
        }
        /* The Spot Advisor's interruption bucket has no API: it always comes from the snapshot. */
        if (s && s->interruption_bucket >= 0 && q->want_spot) {
            r->interruption_bucket = s->interruption_bucket;
            r->savings_pct = s->savings_pct;
            note_snapshot(out, snap);
        }
    }

    free(st);
    return 0;
}

void prices_warn_missing(const prices_query *q, const price_set *out)
{
    /* One line per market for whatever no allowed source could price (when nothing at all was
     * found, the caller says so in one line instead). */
    const size_t n = out->n;
    const prices_source src = q->source;
    size_t miss_od = 0, miss_spot = 0, found = 0;
    for (size_t i = 0; i < n; i++)
        found += (q->want_on_demand && !isnan(out->items[i].on_demand_usd_per_hour)) ||
                 (q->want_spot && out->items[i].spot_source[0] && out->items[i].n_spot);
    char ex_od[160] = "", ex_spot[160] = "";
    for (size_t i = 0; i < n; i++) {
        const price_record *r = &out->items[i];
        if (q->want_on_demand && isnan(r->on_demand_usd_per_hour) && !miss_od++)
            snprintf(ex_od, sizeof ex_od, "%s in %s", r->instance_type, r->region);
        if (q->want_spot && !r->spot_source[0] && !instance_type_is_sagemaker(r->instance_type) && !miss_spot++)
            snprintf(ex_spot, sizeof ex_spot, "%s in %s", r->instance_type, r->region);
    }
    static const char *const src_names[] = {"live AWS, the cache or the snapshot", "live AWS",
                                            "the cache (younger than the TTL)", "the snapshot"};
    if (!found) miss_od = miss_spot = 0;
    /* auto without live AWS's answer: say which sources were asked, and why live AWS was not */
    const int unasked = src == PRICES_SOURCE_AUTO && out->live_missing[0];
    const char *from = unasked ? "the cache or the snapshot" : src_names[src];
    if (miss_od)
        ib_warn("no on-demand price from %s for %zu of %zu (type, region) pairs (e.g. %s)%s%s", from, miss_od, n, ex_od,
                unasked ? "; " : "", unasked ? out->live_missing : "");
    if (miss_spot)
        ib_warn("no spot prices from %s for %zu of %zu (type, region) pairs (e.g. %s)%s%s", from, miss_spot, n, ex_spot,
                unasked ? "; " : "", unasked ? out->live_missing : "");
}
