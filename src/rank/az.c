/* rank/az.c: --region and --az, checked against what the prices know.  A zone is named two ways
 * (us-east-1a, use1-az2) and which ID a name stands for differs per AWS account, so --az is
 * paired with its other form from the results' own records or the account's live answer before
 * it is looked for; a zone nothing knows, in either form, is refused with the nearest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/names.h"
#include "instbench/rank.h"
#include "instbench/suggest.h"
#include "rank/internal.h"

int rank_check_region(const char *region, const price_set *ps, ib_error *err)
{
    char dym[128];
    if (!region || prices_region_state(ps, region) != PRICES_NAME_UNKNOWN) return 0;
    return ib_error_set(err, IB_EXIT_USAGE, "--region: '%s' is not an AWS region (and no source has a price there)%s",
                        region, suggest_did_you_mean(prices_suggest_region(region), dym, sizeof dym));
}

/* The regions the configurations are priced in by AWS (distinct, at most CAP). */
static size_t priced_regions(const rank_config *c, size_t n, const char **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].instance_type[0] || !c[i].region[0]) continue;
        int seen = 0;
        for (size_t j = 0; j < k && !seen; j++) seen = !strcmp(out[j], c[i].region);
        if (!seen && k < cap) out[k++] = c[i].region;
    }
    return k;
}

/* Every zone the prices and the snapshot know in REGION (both forms as they come), distinct. */
static size_t zones_known(const price_set *ps, const char *region, const prices_zone *live, size_t n_live,
                          const char **out, size_t cap)
{
    size_t k = prices_catalogue_zones(region, out, cap);
    if (k > cap) k = cap;
    for (size_t i = 0; ps && i < ps->n; i++)
        for (size_t z = 0; z < ps->items[i].n_spot && !strcmp(ps->items[i].region, region); z++) {
            const char *az = ps->items[i].spot[z].az;
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) seen = !strcmp(out[j], az);
            if (!seen && k < cap) out[k++] = az;
        }
    for (size_t i = 0; i < n_live && k + 2 <= cap; i++)
        if (!strcmp(live[i].region, region)) out[k++] = live[i].name, out[k++] = live[i].id;
    return k;
}

/* Some ranked region knows --az, as given or in its other form. */
static int zone_known(const rank_options *o, const price_set *ps, const char *const *regions, size_t n_reg,
                      const prices_zone *live, size_t n_live)
{
    const char *known[256];
    for (size_t r = 0; r < n_reg; r++) {
        size_t k = zones_known(ps, regions[r], live, n_live, known, 256);
        for (size_t i = 0; i < k; i++)
            if (!strcmp(known[i], o->az) || (o->az_alt[0] && !strcmp(known[i], o->az_alt))) return 1;
    }
    return 0;
}

/* Do the prices name REGION's spot zones by ID only (the snapshot, a cache or file made from it)? */
static int ids_only(const price_set *ps, const char *region)
{
    size_t ids = 0, names = 0;
    for (size_t i = 0; ps && i < ps->n; i++)
        for (size_t z = 0; z < ps->items[i].n_spot && !strcmp(ps->items[i].region, region); z++)
            names_zone_is_id(ps->items[i].spot[z].az) ? ids++ : names++;
    return ids > 0 && names == 0;
}

/* --az given as a name the prices cannot be matched to offline: the one line saying how to fix it. */
static int az_name_unmapped(const char *az, const char *region, const char *const *known, size_t n_known, ib_error *err)
{
    char ids[160] = "";
    for (size_t i = 0, u = 0; i < n_known && u + 24 < sizeof ids; i++)
        if (names_zone_is_id(known[i])) u += (size_t)snprintf(ids + u, sizeof ids - u, "%s%s", u ? ", " : "", known[i]);
    return ib_error_set(err, IB_EXIT_USAGE,
                        "--az: %s is a zone name, but these prices name %s's spot zones by ID "
                        "(%s), and which ID a name stands for differs per AWS account, so it cannot be mapped "
                        "offline: give the zone ID (`aws ec2 describe-availability-zones --region %s`, or a result "
                        "measured there: instance.availability_zone_id) or use --source live",
                        az, region, ids[0] ? ids : "none", region);
}

/* A zone name of a region none of the configurations is priced in: the nearest region's zone when
 * the region is a typo (us-esat-1a), else where the rows are priced. */
static int zone_elsewhere(const char *az, const char *zone_region, const char *const *regions, size_t n_reg,
                          const price_set *ps, ib_error *err)
{
    char dym[128], fixed[64];
    const char *near =
        prices_region_state(ps, zone_region) == PRICES_NAME_UNKNOWN ? prices_suggest_region(zone_region) : NULL;
    snprintf(fixed, sizeof fixed, "%s%s", near ? near : "", az + strlen(zone_region));
    if (near)
        return ib_error_set(err, IB_EXIT_USAGE, "--az: '%s' is not a zone of an AWS region%s", az,
                            suggest_did_you_mean(fixed, dym, sizeof dym));
    return ib_error_set(err, IB_EXIT_USAGE,
                        "--az: %s is a zone of %s, but the configurations are priced in "
                        "%s%s; --region %s prices them there",
                        az, zone_region, regions[0], n_reg > 1 ? " and other regions" : "", zone_region);
}

int rank_resolve_az(rank_options *o, int ask_live, const rank_results *res, const rank_config *c, size_t n,
                    const price_set *ps, ib_error *err)
{
    if (!o->az[0]) return 0;
    const char *regions[64], *known[256];
    size_t n_reg = priced_regions(c, n, regions, 64);
    if (!n_reg) return 0; /* nothing to price by AWS: the rows say why */
    char dym[128], zone_region[32] = "";
    int is_id = names_zone_is_id(o->az);
    if (!is_id && names_region_of_zone(o->az, zone_region, sizeof zone_region) == 0) {
        int ranked = 0;
        for (size_t r = 0; r < n_reg && !ranked; r++) ranked = !strcmp(regions[r], zone_region);
        if (!ranked) return zone_elsewhere(o->az, zone_region, regions, n_reg, ps, err);
    }
    if (rank_zone_alias(res, o->az, o->az_alt, sizeof o->az_alt) < 0)
        ib_info("--az %s: results from different AWS accounts pair it with different zones; not using them", o->az);
    prices_zone *live = NULL;
    size_t n_live = 0;
    if (!o->az_alt[0] && ask_live) {
        n_live = rank_ask_zones(regions, n_reg, &live);
        for (size_t i = 0; i < n_live && !o->az_alt[0]; i++) {
            const char *other = !strcmp(live[i].name, o->az) ? live[i].id
                                : !strcmp(live[i].id, o->az) ? live[i].name
                                                             : NULL;
            if (other) snprintf(o->az_alt, sizeof o->az_alt, "%s", other);
        }
    }
    int rc = 0;
    if (!zone_known(o, ps, regions, n_reg, live, n_live)) {
        /* nothing in any ranked region knows the zone, in either form */
        const char *region = is_id ? regions[0] : zone_region;
        size_t k = zones_known(ps, region, live, n_live, known, 256);
        if (!is_id && !o->az_alt[0] && ids_only(ps, region)) rc = az_name_unmapped(o->az, region, known, k, err);
        else
            rc = ib_error_set(err, IB_EXIT_USAGE, "--az: '%s' is not a zone of %s that the prices know%s", o->az,
                              is_id && n_reg > 1 ? "the regions ranked" : region,
                              suggest_did_you_mean(suggest_closest(o->az, known, k), dym, sizeof dym));
    }
    free(live);
    return rc;
}
