/* prices/shop.c: what `prices` found, said.  Nothing found for what was asked: one line saying
 * where it looked and what it has instead.  The shopping list (prices_filter_apply does the
 * filtering): a warning for rows a hardware filter could not judge, and when a filter leaves no
 * row, one line naming the flag and what the rows that reached it offer instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "instbench/instance_type.h"
#include "instbench/prices.h"
#include "prices/internal.h"

static int wanted_price(const prices_query *q, const price_record *r)
{
    /* a spot answer with no zone (live AWS: no such product) is no price */
    return (q->want_on_demand && !isnan(r->on_demand_usd_per_hour)) || (q->want_spot && r->spot_source[0] && r->n_spot);
}

/* For a pair the snapshot has no price for: where it does price TYPE in the markets asked
 * ("c7i.large in ap-northeast-1, ..., us-west-2", or "... in no region"), appended to OUT after a
 * "; " when OUT holds another type's already. */
static void snapshot_regions_of(const prices_query *q, const char *type, char *out, size_t len)
{
    const char *regions[64];
    size_t n = prices_catalogue_type_regions(type, q->want_on_demand, q->want_spot, regions, 64), used = strlen(out);
    used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s in ", used ? "; " : "", type);
    for (size_t i = 0; i < n && i < 64 && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", regions[i]);
    if (!n && used < len) snprintf(out + used, len - used, "no region");
}

int prices_check_found(const prices_query *q, const price_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (wanted_price(q, &set->items[i])) return 0;
    char types[96], regions[96], cache[512] = "the cache";
    if (q->n_types == 1) snprintf(types, sizeof types, "%s", q->instance_types[0]);
    else snprintf(types, sizeof types, "%zu instance types", q->n_types);
    if (q->n_regions == 1) snprintf(regions, sizeof regions, "%s", q->regions[0]);
    else snprintf(regions, sizeof regions, "%zu regions", q->n_regions);
    if (prices_cache_dir(cache, sizeof cache) != 0) snprintf(cache, sizeof cache, "the cache");
    const char *market = q->want_on_demand && q->want_spot ? "" : q->want_spot ? "spot " : "on-demand ";
    switch (q->source) {
    case PRICES_SOURCE_CACHE:
        fprintf(stderr,
                "instbench prices: no %sprice for %s in %s in %s younger than the TTL: fill it with "
                "--source live (needs AWS credentials) or use --source auto or snapshot\n",
                market, types, regions, cache);
        break;
    case PRICES_SOURCE_SNAPSHOT: {
        /* every type asked is the snapshot's (the caller checked the names): what is missing is the region */
        char where[1024] = "";
        for (size_t t = 0; t < q->n_types && t < 3; t++)
            snapshot_regions_of(q, q->instance_types[t], where, sizeof where);
        fprintf(stderr,
                "instbench prices: the shipped snapshot has no %sprice for %s in %s; it has %s%s: pick one of "
                "those regions, or use --source live\n",
                market, types, regions, where, q->n_types > 3 ? " (and more types)" : "");
        break;
    }
    default: {
        /* auto without an answer from live AWS: it never said "no such product", so do not claim it */
        int answered = 0, sagemaker = 0;
        for (size_t i = 0; i < set->n; i++) answered |= set->items[i].od_live_answered;
        for (size_t t = 0; t < q->n_types; t++) sagemaker |= instance_type_is_sagemaker(q->instance_types[t]);
        if (q->source == PRICES_SOURCE_AUTO && !answered && set->live_missing[0]) {
            fprintf(stderr, "instbench prices: no %sprice for %s in %s in the cache or the snapshot, and %s%s; %s\n",
                    market, types, regions, set->live_missing,
                    sagemaker ? ": SageMaker ml.* prices come from live AWS only" : "",
                    set->live_no_credentials ? "give instbench AWS credentials (a profile, AWS_ACCESS_KEY_ID and "
                                               "AWS_SECRET_ACCESS_KEY, an instance role; -v says where it looked) "
                                               "and run it again"
                                             : "run it again when AWS answers (the warning above says why it did not)");
            break;
        }
        /* AWS's answer is final (docs/usage.md, prices): with auto it overrides what the cache and
         * the snapshot hold, and the line says so; a product listed only at $0/h is said as such */
        size_t zero = 0, held = 0, ans = 0;
        const price_set *snap = q->source == PRICES_SOURCE_AUTO ? prices_snapshot(NULL) : NULL;
        for (size_t i = 0; i < set->n; i++) {
            const price_record *r = &set->items[i];
            if (!r->od_live_answered || !q->want_on_demand) continue;
            ans++;
            zero += r->od_live_zero;
            const price_record *s = snap ? prices_find(snap, r->instance_type, r->region) : NULL;
            held += q->source == PRICES_SOURCE_AUTO &&
                    ((s && !isnan(s->on_demand_usd_per_hour)) || prices_cache_has(r->instance_type, r->region));
        }
        const char *what = !ans          ? "no such product there (check the instance type and region)"
                           : zero == 0   ? "AWS answered that it has no such product there (check the instance type "
                                           "and region)"
                           : zero == ans ? "AWS lists that product there only at $0/h, which is no price"
                                         : "AWS answered that it has no such product there, or lists it only at $0/h, "
                                           "which is no price";
        fprintf(stderr, "instbench prices: no %sprice for %s in %s from %s: %s%s\n", market, types, regions,
                q->source == PRICES_SOURCE_LIVE ? "AWS" : "AWS, the cache or the snapshot", what,
                held ? "; AWS's answer overrides the older price the cache or the snapshot holds" : "");
        break;
    }
    }
    return IB_EXIT_RUNTIME;
}

/* The first hardware criterion set: the flag that leaves out a type of unknown hardware. */
static const char *first_hw_flag(const prices_filter *f)
{
    return f->n_accelerators                       ? "--accelerator"
           : f->min_vcpus > 0                      ? "--min-vcpus"
           : !isnan(f->min_memory_gib)             ? "--min-memory"
           : !isnan(f->min_accelerator_memory_gib) ? "--min-accelerator-memory"
                                                   : NULL;
}

/* Up to a few distinct instance types of SET for which WHICH holds, "a, b, c and 2 more". */
static void some_types(const price_set *set, int (*which)(const price_record *), char *out, size_t len)
{
    size_t n = 0, used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < set->n; i++) {
        const price_record *r = &set->items[i];
        if (!which(r)) continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = which(&set->items[k]) && !strcmp(set->items[k].instance_type, r->instance_type);
        if (seen) continue;
        if (n < 4 && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s", n ? ", " : "", r->instance_type);
        n++;
    }
    if (n > 4 && used < len) snprintf(out + used, len - used, " and %zu more", n - 4);
}

static int hw_unknown(const price_record *r) { return !prices_hardware_known(r); }
static int acc_memory_unknown(const price_record *r)
{
    return prices_hardware_known(r) && r->hw.accelerator[0] && isnan(r->hw.accelerator_memory_gib);
}

/* "--min-vcpus 512": the flag that emptied the list, with its value as given. */
static void criterion_flag(const prices_filter *f, int c, const char *accelerators, char *out, size_t len)
{
    switch (c) {
    case PRICES_BY_ACCELERATOR: snprintf(out, len, "--accelerator %s", accelerators); break;
    case PRICES_BY_VCPUS: snprintf(out, len, "--min-vcpus %d", f->min_vcpus); break;
    case PRICES_BY_MEMORY: snprintf(out, len, "--min-memory %g", f->min_memory_gib); break;
    case PRICES_BY_ACCELERATOR_MEMORY:
        snprintf(out, len, "--min-accelerator-memory %g", f->min_accelerator_memory_gib);
        break;
    case PRICES_BY_MAX_PRICE: snprintf(out, len, "--max-price %g", f->max_usd_per_hour); break;
    default: snprintf(out, len, "--max-spot-price %g", f->max_spot_usd_per_hour); break;
    }
}

/* One line: which filter left no row, and what the rows that reached it offer instead.  SET holds
 * those rows (prices_filter_apply leaves them). */
static void emptied_line(const prices_filter *f, const price_set *set, const prices_filter_stats *st,
                         const char *accelerators, char *out, size_t len)
{
    char flag[160], names[320], what[320] = "";
    int c = st->emptied_by;
    size_t n = set->n, known = 0;
    const price_record *best = NULL;
    double best_v = NAN;
    const char *best_market = "";
    criterion_flag(f, c, accelerators, flag, sizeof flag);
    for (size_t i = 0; i < n; i++) known += !hw_unknown(&set->items[i]);
    if (c <= PRICES_BY_ACCELERATOR_MEMORY && !known) {
        some_types(set, hw_unknown, names, sizeof names);
        snprintf(out, len,
                 "%s leaves no row: the catalogue has no hardware for the %s before it (%s), and a "
                 "hardware filter keeps only what it can check",
                 flag, n == 1 ? "row" : "rows", names);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const price_record *r = &set->items[i];
        double v = NAN;
        const char *market = "";
        switch (c) {
        case PRICES_BY_VCPUS: v = hw_unknown(r) ? NAN : r->hw.vcpus; break;
        case PRICES_BY_MEMORY: v = hw_unknown(r) ? NAN : r->hw.memory_gib; break;
        case PRICES_BY_ACCELERATOR_MEMORY: v = prices_per_accelerator_gib(r); break;
        case PRICES_BY_MAX_PRICE: /* what --max-price would have to reach; the lowest is best: negated */
            v = -prices_cheapest_shown(r, f->want_on_demand, f->want_spot, f->include_local_zones, &market);
            break;
        case PRICES_BY_MAX_SPOT_PRICE: v = -prices_lowest_spot(r, f->include_local_zones), market = "spot"; break;
        default: break;
        }
        if (!isnan(v) && (!best || v > best_v)) best = r, best_v = v, best_market = market;
    }
    switch (c) {
    case PRICES_BY_ACCELERATOR: {
        /* the counts the asked accelerators come in ("A10G:2": 1 x A10G, 4 x A10G, 8 x A10G), else
         * what the rows carry instead */
        int named = 0;
        for (size_t i = 0; i < n && !named; i++)
            for (size_t a = 0; a < f->n_accelerators && !named; a++)
                named = !hw_unknown(&set->items[i]) && !strcmp(set->items[i].hw.accelerator, f->accelerators[a].name);
        size_t used = 0, shown = 0, more = 0;
        for (size_t i = 0; i < n; i++) {
            const price_record *r = &set->items[i];
            int asked = 0;
            for (size_t a = 0; a < f->n_accelerators && !asked; a++)
                asked = !strcmp(r->hw.accelerator, f->accelerators[a].name);
            if (hw_unknown(r) || (named && !asked)) continue;
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++) {
                const price_record *o = &set->items[k];
                seen = !hw_unknown(o) && !strcmp(o->hw.accelerator, r->hw.accelerator) &&
                       (!r->hw.accelerator[0] || o->hw.accelerator_count == r->hw.accelerator_count);
            }
            if (seen) continue;
            if (shown == 8 || used + 40 >= sizeof what) {
                more++;
                continue;
            }
            if (r->hw.accelerator[0])
                used += (size_t)snprintf(what + used, sizeof what - used, "%s%d x %s", shown ? ", " : "",
                                         r->hw.accelerator_count, r->hw.accelerator);
            else used += (size_t)snprintf(what + used, sizeof what - used, "%sno accelerator", shown ? ", " : "");
            shown++;
        }
        if (more) snprintf(what + used, sizeof what - used, " and %zu more", more);
        if (!named) {
            snprintf(out, len, "%s leaves no row: the %zu %s before it %s %s", flag, n, n == 1 ? "row" : "rows",
                     n == 1 ? "has" : "have", what);
            break;
        }
        char asked[128] = "";
        for (size_t a = 0, u = 0, k = 0; a < f->n_accelerators && u < sizeof asked; a++) {
            int dup = 0;
            for (size_t b = 0; b < a && !dup; b++) dup = !strcmp(f->accelerators[b].name, f->accelerators[a].name);
            if (!dup)
                u += (size_t)snprintf(asked + u, sizeof asked - u, "%s%s", k++ ? " or " : "", f->accelerators[a].name);
        }
        snprintf(out, len, "%s leaves no row: among the %zu %s before it, %s %s only as %s", flag, n,
                 n == 1 ? "row" : "rows", asked, strstr(asked, " or ") ? "come" : "comes", what);
        break;
    }
    case PRICES_BY_VCPUS:
        snprintf(out, len, "%s leaves no row: the most among the %zu before it is %.0f (%s)", flag, n, best_v,
                 best->instance_type);
        break;
    case PRICES_BY_MEMORY:
        snprintf(out, len, "%s leaves no row: the most among the %zu before it is %g GiB (%s)", flag, n, best_v,
                 best->instance_type);
        break;
    case PRICES_BY_ACCELERATOR_MEMORY:
        if (best)
            snprintf(out, len, "%s leaves no row: the most per accelerator among the %zu before it is %.2f GiB (%s)",
                     flag, n, best_v, best->instance_type);
        else
            snprintf(out, len, "%s leaves no row: none of the %zu before it has an accelerator of known memory", flag,
                     n);
        break;
    default:
        if (best) {
            /* the price as the tables write money; the flag's value exactly (the price reads back to
             * itself), since a value rounded like the money could still leave it out */
            char money[48], at_least[48];
            output_fmt_usd(money, sizeof money, -best_v);
            util_fmt_double(at_least, sizeof at_least, -best_v);
            snprintf(out, len,
                     "%s leaves no row: the cheapest of the %zu before it is %s in %s at %s/h %s; raise %s to "
                     "at least %s",
                     flag, n, best->instance_type, best->region, money, best_market,
                     c == PRICES_BY_MAX_PRICE ? "--max-price" : "--max-spot-price", at_least);
        } else
            snprintf(out, len, "%s leaves no row: none of the %zu before it has a %sprice", flag, n,
                     c == PRICES_BY_MAX_SPOT_PRICE ? "spot " : "");
        break;
    }
}

int prices_shop(price_set *set, const prices_filter *f, const char *accelerators)
{
    char unknown[320] = "", unknown_acc[320] = "";
    const char *hw_flag = first_hw_flag(f);
    if (hw_flag) some_types(set, hw_unknown, unknown, sizeof unknown);
    if (!isnan(f->min_accelerator_memory_gib)) some_types(set, acc_memory_unknown, unknown_acc, sizeof unknown_acc);
    prices_filter_stats st;
    if (prices_filter_apply(set, f, &st) != 0) {
        fprintf(stderr, "instbench prices: out of memory\n");
        return IB_EXIT_RUNTIME;
    }
    if (st.unknown_hardware && st.emptied_by < 0)
        ib_warn("%zu row%s left out by %s: the catalogue has no hardware for %s, so hardware filters cannot "
                "judge %s",
                st.unknown_hardware, st.unknown_hardware == 1 ? "" : "s", hw_flag, unknown,
                st.unknown_hardware == 1 ? "it" : "them");
    if (st.unknown_accelerator_memory && st.emptied_by != PRICES_BY_ACCELERATOR_MEMORY)
        ib_warn("%zu row%s left out by --min-accelerator-memory: the catalogue gives no accelerator memory for %s",
                st.unknown_accelerator_memory, st.unknown_accelerator_memory == 1 ? "" : "s", unknown_acc);
    if (st.emptied_by >= 0) {
        char line[768];
        emptied_line(f, set, &st, accelerators, line, sizeof line);
        fprintf(stderr, "instbench prices: %s\n", line);
        return IB_EXIT_RUNTIME;
    }
    size_t out = st.before - set->n;
    if (out) ib_info("%zu of %zu row%s left out by the filters", out, st.before, st.before == 1 ? "" : "s");
    return 0;
}
