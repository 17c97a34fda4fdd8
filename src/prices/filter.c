/* prices/filter.c: `prices` as a shopping list.  Filters on the type's hardware (accelerator and
 * count, vCPUs, memory, memory per accelerator) and on the price of the markets shown, then a sort
 * order, over a set already fetched: every source (live, cache, snapshot) gets the same rules.
 *
 * A record whose type has no hardware in the catalogue (a type newer than the snapshot, priced
 * live or from the cache) can be judged by no hardware criterion: it is left out by the first one
 * set and counted, so the caller can say so; it never passes silently. */
#include "instbench/prices.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const prices_sort_names[] = {"type", "price", "spot", "savings", NULL};

const spot_price *prices_cheapest_zone(const price_record *r, int with_local)
{
    const spot_price *best = NULL;
    for (size_t i = 0; i < r->n_spot; i++)
        if (prices_zone_counts(r->spot[i].az, with_local) && (!best || r->spot[i].usd_per_hour < best->usd_per_hour))
            best = &r->spot[i];
    return best;
}

size_t prices_zones_left_out(const price_record *r, int with_local)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_spot; i++) n += !prices_zone_counts(r->spot[i].az, with_local);
    return n;
}

double prices_lowest_spot(const price_record *r, int with_local)
{
    const spot_price *best = r->spot_source[0] ? prices_cheapest_zone(r, with_local) : NULL;
    return best ? best->usd_per_hour : NAN;
}

double prices_highest_spot(const price_record *r, int with_local)
{
    double hi = NAN;
    for (size_t i = 0; r->spot_source[0] && i < r->n_spot; i++)
        if (prices_zone_counts(r->spot[i].az, with_local) && !(r->spot[i].usd_per_hour <= hi))
            hi = r->spot[i].usd_per_hour;
    return hi;
}

double prices_per_accelerator_hour(const price_record *r, double usd_per_hour)
{
    if (!prices_hardware_known(r) || !r->hw.accelerator[0] || r->hw.accelerator_count < 1) return NAN;
    return usd_per_hour / r->hw.accelerator_count;
}

double prices_cheapest_shown(const price_record *r, int want_on_demand, int want_spot, int with_local,
                             const char **market)
{
    const double od = want_on_demand ? r->on_demand_usd_per_hour : NAN,
                 spot = want_spot ? prices_lowest_spot(r, with_local) : NAN;
    const double v = isnan(od) || (!isnan(spot) && spot < od) ? spot : od;
    if (market) *market = isnan(v) ? "" : v == spot ? "spot" : "on-demand"; /* a tie reads spot */
    return v;
}

double prices_per_accelerator_gib(const price_record *r)
{
    if (!prices_hardware_known(r) || !r->hw.accelerator[0] || r->hw.accelerator_count < 1) return NAN;
    return r->hw.accelerator_memory_gib / r->hw.accelerator_count; /* NAN stays NAN */
}

double prices_spot_savings_pct(const price_record *r, int with_local)
{
    const double spot = prices_lowest_spot(r, with_local);
    if (isnan(spot) || !(r->on_demand_usd_per_hour > 0)) return NAN;
    return 100.0 * (1.0 - spot / r->on_demand_usd_per_hour);
}

/* The snapshot keeps accelerator memory in GiB to three decimals, so a total split over its
 * accelerators can miss the per-accelerator figure by a fraction of that; half a thousandth of a
 * GiB is below any real difference between accelerators. */
#define GIB_SLACK 0.0005

static int accelerator_match(const price_record *r, const prices_filter *f)
{
    for (size_t i = 0; i < f->n_accelerators; i++)
        if (r->hw.accelerator[0] && !strcasecmp(r->hw.accelerator, f->accelerators[i].name) &&
            (f->accelerators[i].count <= 0 || r->hw.accelerator_count == f->accelerators[i].count))
            return 1;
    return 0;
}

/* 1: R meets criterion C of F (or C is not set); 0: it does not; -1: its hardware is unknown. */
static int meets(const price_record *r, const prices_filter *f, prices_criterion c)
{
    switch (c) {
    case PRICES_BY_ACCELERATOR:
        if (!f->n_accelerators) return 1;
        return prices_hardware_known(r) ? accelerator_match(r, f) : -1;
    case PRICES_BY_VCPUS:
        if (f->min_vcpus <= 0) return 1;
        return prices_hardware_known(r) ? r->hw.vcpus >= f->min_vcpus : -1;
    case PRICES_BY_MEMORY:
        if (isnan(f->min_memory_gib)) return 1;
        return prices_hardware_known(r) ? r->hw.memory_gib + GIB_SLACK >= f->min_memory_gib : -1;
    case PRICES_BY_ACCELERATOR_MEMORY:
        if (isnan(f->min_accelerator_memory_gib)) return 1;
        if (!prices_hardware_known(r)) return -1;
        if (!r->hw.accelerator[0] || r->hw.accelerator_count < 1) return 0; /* no accelerator: none */
        if (isnan(r->hw.accelerator_memory_gib)) return -2;                 /* one, of unknown memory */
        return prices_per_accelerator_gib(r) + GIB_SLACK >= f->min_accelerator_memory_gib;
    case PRICES_BY_MAX_PRICE:
        if (isnan(f->max_usd_per_hour)) return 1;
        return prices_cheapest_shown(r, f->want_on_demand, f->want_spot, f->include_local_zones, NULL) <=
               f->max_usd_per_hour; /* NAN: 0 */
    case PRICES_BY_MAX_SPOT_PRICE: {
        if (isnan(f->max_spot_usd_per_hour)) return 1;
        double spot = prices_lowest_spot(r, f->include_local_zones);
        return !isnan(spot) && spot <= f->max_spot_usd_per_hour;
    }
    default: return 1;
    }
}

typedef struct keyed {
    double key;   /* ascending; NAN last */
    size_t index; /* the order the record came in: the tie-break */
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    int na = isnan(a->key), nb = isnan(b->key);
    if (na != nb) return na - nb;
    if (!na && a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int sort_set(price_set *s, prices_sort sort, int with_local)
{
    if (sort == PRICES_SORT_TYPE || s->n < 2) return 0;
    keyed *k = malloc(s->n * sizeof *k);
    price_record *out = malloc(s->n * sizeof *out);
    if (!k || !out) {
        free(k);
        free(out);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        const price_record *r = &s->items[i];
        k[i].index = i;
        switch (sort) {
        case PRICES_SORT_PRICE: k[i].key = r->on_demand_usd_per_hour; break;
        case PRICES_SORT_SPOT: k[i].key = prices_lowest_spot(r, with_local); break;
        /* descending: the negated percentage ascends (NAN: unknown, last) */
        case PRICES_SORT_SAVINGS: k[i].key = -prices_spot_savings_pct(r, with_local); break;
        default: k[i].key = NAN; break;
        }
    }
    qsort(k, s->n, sizeof *k, cmp_keyed);
    for (size_t i = 0; i < s->n; i++) out[i] = s->items[k[i].index];
    free(s->items);
    s->items = out;
    free(k);
    return 0;
}

int prices_filter_apply(price_set *s, const prices_filter *f, prices_filter_stats *st)
{
    prices_filter_stats local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    st->before = s->n;
    st->emptied_by = -1;
    for (int c = 0; c < PRICES_N_CRITERIA; c++) {
        size_t kept = 0, n = s->n;
        int *ok = malloc((n ? n : 1) * sizeof *ok);
        if (!ok) return -1;
        /* a record of unknown hardware goes at the first hardware criterion set: counted once */
        for (size_t i = 0; i < n; i++) {
            ok[i] = meets(&s->items[i], f, (prices_criterion)c);
            kept += ok[i] > 0;
            st->unknown_hardware += ok[i] == -1;
            st->unknown_accelerator_memory += ok[i] == -2;
        }
        st->removed[c] = n - kept;
        if (n && !kept) { /* leave the records that reached it, for the caller to say why */
            st->emptied_by = c;
            free(ok);
            return 0;
        }
        kept = 0;
        for (size_t i = 0; i < n; i++) {
            if (ok[i] > 0) s->items[kept++] = s->items[i];
            else free(s->items[i].spot);
        }
        s->n = kept;
        free(ok);
    }
    return sort_set(s, f->sort, f->include_local_zones);
}
