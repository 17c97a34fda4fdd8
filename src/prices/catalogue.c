/* prices/catalogue.c: the names the price sources know, so that a misspelt instance type, region
 * or zone is answered with "did you mean X?" instead of an empty table.
 *
 * Offline the catalogue is the embedded snapshot (its instance types, regions and zone IDs) and
 * the AWS regions src/aws/regions.c names; the cache adds what a live run stored.  A name absent
 * from all of these may still be real (a type newer than the snapshot, or not an accelerated
 * one): only an answer from live AWS, or a source that cannot know more (the snapshot alone),
 * makes it unknown. */
#include "instbench/prices.h"
#include "prices/internal.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "instbench/aws.h"
#include "instbench/names.h"
#include "instbench/suggest.h"

/* Unique names of the snapshot, built once; the strings are the snapshot's own. */
static struct {
    int state;          /* 0 not built, 1 built, -1 no snapshot or out of memory */
    const char **types; /* natural order */
    size_t n_types;
    const char **families; /* "g5", "p4d": the types' part before the size, natural order */
    size_t n_families;
    const char **regions; /* name order */
    size_t n_regions;
    const char **accelerators; /* name order; types without one add none */
    size_t n_accelerators;
} cat;

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Sorts V with CMP and drops repeats (by strcmp); returns the new count. */
static size_t sort_unique(const char **v, size_t n, int (*cmp)(const void *, const void *))
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i], v[k - 1])) v[k++] = v[i];
    return k;
}

/* A type's family as its own string: "g5.xlarge" -> "g5" (kept in a table that lives as long as
 * the program; families are few). */
static const char *family_of(const char *type, char (*store)[64], size_t i)
{
    const char *dot = strrchr(type, '.');
    size_t n = dot ? (size_t)(dot - type) : strlen(type);
    if (n >= 64) n = 63;
    memcpy(store[i], type, n);
    store[i][n] = '\0';
    return store[i];
}

static int build(void)
{
    if (cat.state) return cat.state;
    ib_error err = {0};
    const price_set *snap = prices_snapshot(&err);
    cat.state = -1;
    if (!snap) return -1;
    size_t n = snap->n ? snap->n : 1;
    static char(*fam_store)[64];
    cat.types = calloc(n, sizeof *cat.types);
    cat.families = calloc(n, sizeof *cat.families);
    cat.regions = calloc(n, sizeof *cat.regions);
    cat.accelerators = calloc(n, sizeof *cat.accelerators);
    fam_store = calloc(n, sizeof *fam_store);
    if (!cat.types || !cat.families || !cat.regions || !cat.accelerators || !fam_store) return -1;
    size_t n_acc = 0;
    for (size_t i = 0; i < snap->n; i++) {
        cat.types[i] = snap->items[i].instance_type;
        cat.regions[i] = snap->items[i].region;
        cat.families[i] = family_of(snap->items[i].instance_type, fam_store, i);
        if (snap->items[i].hw.accelerator[0]) cat.accelerators[n_acc++] = snap->items[i].hw.accelerator;
    }
    cat.n_accelerators = sort_unique(cat.accelerators, n_acc, cmp_str);
    cat.n_types = sort_unique(cat.types, snap->n, names_instance_type_qsort_cmp);
    cat.n_families = sort_unique(cat.families, snap->n, names_instance_type_qsort_cmp);
    cat.n_regions = sort_unique(cat.regions, snap->n, cmp_str);
    cat.state = 1;
    return 1;
}

size_t prices_catalogue_types(const char *const **types)
{
    *types = build() > 0 ? cat.types : NULL;
    return *types ? cat.n_types : 0;
}

size_t prices_catalogue_regions(const char *const **regions)
{
    *regions = build() > 0 ? cat.regions : NULL;
    return *regions ? cat.n_regions : 0;
}

static int listed(const char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(v[i], name)) return 1;
    return 0;
}

int prices_catalogue_has_type(const char *type) { return build() > 0 && listed(cat.types, cat.n_types, type); }

const price_record *prices_catalogue_hardware(const char *type)
{
    ib_error err = {0};
    const price_set *snap = type ? prices_snapshot(&err) : NULL;
    for (size_t i = 0; snap && i < snap->n; i++)
        if (!strcmp(snap->items[i].instance_type, type) && prices_hardware_known(&snap->items[i]))
            return &snap->items[i];
    return NULL;
}

size_t prices_catalogue_family_sizes(const char *type, const char **out, size_t cap)
{
    const char *dot = type ? strrchr(type, '.') : NULL;
    size_t n = 0, fam = dot ? (size_t)(dot - type) : 0;
    for (size_t i = 0; dot && build() > 0 && i < cat.n_types; i++)
        if (!strncmp(cat.types[i], type, fam + 1)) {
            if (n < cap) out[n] = cat.types[i];
            n++;
        }
    return n;
}

size_t prices_catalogue_size_list(const char *type, char *out, size_t len, const char **nearest)
{
    const char *sizes[64];
    size_t n = prices_catalogue_family_sizes(type, sizes, 64);
    size_t shown = n < 64 ? n : 64;
    *nearest = NULL;
    if (len) out[0] = '\0';
    if (!n) return 0;
    /* a size of its own family first: p4d.12xlarge means p4d.24xlarge, not g4dn.12xlarge */
    *nearest = suggest_closest(type, sizes, shown);
    if (!*nearest) *nearest = prices_suggest_type(type);
    for (size_t i = 0, u = 0; i < shown && u + 40 < len; i++)
        u += (size_t)snprintf(out + u, len - u, "%s%s", i ? ", " : "", sizes[i]);
    return n;
}

size_t prices_catalogue_families(const char *const **families)
{
    *families = build() > 0 ? cat.families : NULL;
    return *families ? cat.n_families : 0;
}

size_t prices_catalogue_type_regions(const char *type, int want_od, int want_spot, const char **out, size_t cap)
{
    ib_error err = {0};
    const price_set *snap = prices_snapshot(&err);
    size_t n = 0;
    for (size_t i = 0; snap && i < snap->n; i++) {
        const price_record *r = &snap->items[i];
        if (strcmp(r->instance_type, type) ||
            !((want_od && !isnan(r->on_demand_usd_per_hour)) || (want_spot && r->n_spot)))
            continue;
        if (n < cap) out[n] = r->region;
        n++;
    }
    qsort(out, n < cap ? n : cap, sizeof *out, cmp_str);
    return n;
}

int prices_catalogue_has_region(const char *region)
{
    return build() > 0 && listed(cat.regions, cat.n_regions, region);
}

size_t prices_catalogue_zones(const char *region, const char **out, size_t cap)
{
    ib_error err = {0};
    const price_set *snap = prices_snapshot(&err);
    size_t n = 0;
    for (size_t i = 0; snap && i < snap->n; i++) {
        const price_record *r = &snap->items[i];
        if (strcmp(r->region, region)) continue;
        for (size_t z = 0; z < r->n_spot; z++) {
            if (listed(out, n < cap ? n : cap, r->spot[z].az)) continue;
            if (n < cap) out[n] = r->spot[z].az;
            n++;
        }
    }
    if (n <= cap) qsort(out, n, sizeof *out, cmp_str);
    return n;
}

size_t prices_catalogue_accelerators(const char *const **names)
{
    *names = build() > 0 ? cat.accelerators : NULL;
    return *names ? cat.n_accelerators : 0;
}

const char *prices_catalogue_accelerator(const char *name)
{
    for (size_t i = 0; name && build() > 0 && i < cat.n_accelerators; i++)
        if (!strcasecmp(cat.accelerators[i], name)) return cat.accelerators[i];
    return NULL;
}

const char *prices_suggest_accelerator(const char *name)
{
    return build() > 0 ? suggest_closest(name, cat.accelerators, cat.n_accelerators) : NULL;
}

const char *prices_suggest_type(const char *name)
{
    return build() > 0 ? suggest_closest(name, cat.types, cat.n_types) : NULL;
}

const char *prices_suggest_region(const char *name)
{
    /* The snapshot's regions first: of two equally near, the one with prices is the likelier. */
    const char *all[128];
    size_t n = 0;
    if (build() > 0)
        for (size_t i = 0; i < cat.n_regions && n < 64; i++) all[n++] = cat.regions[i];
    n += aws_regions_list(0, all + n, sizeof all / sizeof *all - n);
    if (n > sizeof all / sizeof *all) n = sizeof all / sizeof *all;
    return suggest_closest(name, all, n);
}

int prices_is_pattern(const char *name) { return strpbrk(name, "*?[") != NULL; }

/* A pattern that matches nothing, as a family typo: "g5x.*" -> "g5.*" (the whole pattern is
 * compared, as families alone are too short to guess from), when that one matches. */
static void suggest_pattern(const char *pattern, char *out, size_t len)
{
    out[0] = '\0';
    const char *dot = strrchr(pattern, '.');
    if (!dot) return;
    char cands[64][96];
    const char *v[64];
    size_t n = 0;
    for (size_t f = 0; f < cat.n_families && n < 64; f++) {
        snprintf(cands[n], sizeof cands[n], "%s%s", cat.families[f], dot);
        for (size_t i = 0; i < cat.n_types; i++)
            if (!fnmatch(cands[n], cat.types[i], 0)) {
                v[n] = cands[n];
                n++;
                break;
            }
    }
    const char *near = suggest_closest(pattern, v, n);
    if (near) snprintf(out, len, "%s", near);
}

/* What a pattern that matched nothing is told: the catalogue it was matched against, and the
 * nearest pattern that matches. */
static int no_match(const char *pattern, ib_error *err)
{
    char near[160], fams[512] = "";
    suggest_pattern(pattern, near, sizeof near);
    for (size_t i = 0, used = 0; i < cat.n_families && used + 16 < sizeof fams; i++)
        used += (size_t)snprintf(fams + used, sizeof fams - used, "%s%s", i ? ", " : "", cat.families[i]);
    return ib_error_set(err, IB_EXIT_USAGE,
                        "'%s' matches no instance type of the price snapshot (patterns match its %zu types, "
                        "families %s)%s%s%s",
                        pattern, cat.n_types, fams, near[0] ? "; did you mean '" : "", near, near[0] ? "'?" : "");
}

int prices_expand_types(char *const *in, size_t n, char ***out, size_t *n_out, ib_error *err)
{
    *out = NULL;
    *n_out = 0;
    int patterns = 0;
    for (size_t i = 0; i < n; i++) patterns |= prices_is_pattern(in[i]);
    if (patterns && build() < 0) return ib_error_set(err, IB_EXIT_RUNTIME, "the price snapshot is unusable");
    size_t cap = n + (patterns ? cat.n_types * n : 0);
    const char **v = calloc(cap ? cap : 1, sizeof *v);
    if (!v) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!prices_is_pattern(in[i])) {
            v[k++] = in[i];
            continue;
        }
        size_t before = k;
        for (size_t t = 0; t < cat.n_types; t++)
            if (!fnmatch(in[i], cat.types[t], 0)) v[k++] = cat.types[t];
        if (k == before) {
            free(v);
            return no_match(in[i], err);
        }
    }
    k = sort_unique(v, k, names_instance_type_qsort_cmp);
    char **dup = calloc(k ? k : 1, sizeof *dup);
    size_t made = 0;
    while (dup && made < k && (dup[made] = util_strdup(v[made]))) made++;
    free(v);
    if (!dup || made < k) {
        util_free_strv(dup, made);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    *out = dup;
    *n_out = k;
    return 0;
}

int prices_all_regions(int with_live, char ***out, size_t *n_out)
{
    const char *v[160];
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    if (build() > 0)
        for (size_t i = 0; i < cat.n_regions && n < 80; i++) v[n++] = cat.regions[i];
    if (with_live) {
        size_t m = aws_regions_list(1, v + n, sizeof v / sizeof *v - n);
        n += m < sizeof v / sizeof *v - n ? m : sizeof v / sizeof *v - n;
    }
    n = sort_unique(v, n, cmp_str);
    char **dup = calloc(n ? n : 1, sizeof *dup);
    size_t made = 0;
    while (dup && made < n && (dup[made] = util_strdup(v[made]))) made++;
    if (!dup || made < n) {
        util_free_strv(dup, made);
        return -1;
    }
    *out = dup;
    *n_out = n;
    return 0;
}

/* Any price for TYPE (REGION when not NULL) in SET. */
static int priced(const price_set *set, const char *type, const char *region)
{
    for (size_t i = 0; i < set->n; i++) {
        const price_record *r = &set->items[i];
        if ((type && strcmp(r->instance_type, type)) || (region && strcmp(r->region, region))) continue;
        /* live marks "no such product" answers with its source too: a price is a number */
        if (!isnan(r->on_demand_usd_per_hour) || (r->spot_source[0] && r->n_spot)) return 1;
    }
    return 0;
}

prices_name_state prices_type_state(const prices_query *q, const price_set *set, const char *type)
{
    if (prices_catalogue_has_type(type) || priced(set, type, NULL)) return PRICES_NAME_KNOWN;
    int cache = q->source == PRICES_SOURCE_AUTO || q->source == PRICES_SOURCE_CACHE;
    for (size_t r = 0; cache && r < q->n_regions; r++)
        if (prices_cache_has(type, q->regions[r])) return PRICES_NAME_KNOWN;
    if (q->source == PRICES_SOURCE_SNAPSHOT || q->source == PRICES_SOURCE_CACHE) return PRICES_NAME_UNKNOWN;
    /* live: unknown only when AWS itself said "no such product" in every region asked */
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->items[i].instance_type, type) && !set->items[i].od_live_answered) return PRICES_NAME_UNDECIDED;
    return PRICES_NAME_UNKNOWN;
}

prices_name_state prices_region_state(const price_set *set, const char *region)
{
    if (aws_region_known(region) || prices_catalogue_has_region(region) || priced(set, NULL, region))
        return PRICES_NAME_KNOWN;
    return PRICES_NAME_UNKNOWN;
}
