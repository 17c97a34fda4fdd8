/* prices_cache: live prices kept on disk so a second run within the TTL needs no AWS call.
 * Layout: <cache dir>/<region>/<instance type>.json, each an instbench.prices/v1 document with one
 * record whose sources say "live" and whose as_of times are the fetch times; the TTL is measured
 * from those.  Files are replaced atomically (temp + rename), so concurrent runs never read half a
 * file; a corrupt file is reported and ignored, and the next live fetch overwrites it. */
#include "prices/prices_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int prices_cache_dir(char *out, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    /* XDG says a relative XDG_CACHE_HOME is invalid and must be ignored. */
    if (xdg && xdg[0] == '/') w = snprintf(out, len, "%s/instbench/prices", xdg);
    else if (home && home[0]) w = snprintf(out, len, "%s/.cache/instbench/prices", home);
    else return -1;
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

/* Names become path components: allow only what AWS uses, so nothing escapes the cache dir. */
static int safe_name(const char *s)
{
    if (!s[0] || s[0] == '.') return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '-' || *p == '_'))
            return 0;
    return 1;
}

static int cache_file(const price_record *r, char *out, size_t len)
{
    char dir[PATH_MAX];
    if (!safe_name(r->instance_type) || !safe_name(r->region)) return -1;
    if (prices_cache_dir(dir, sizeof dir) != 0) return -1;
    int w = snprintf(out, len, "%s/%s/%s.json", dir, r->region, r->instance_type);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

/* Loads the cached record for r; 0 found, 1 absent, -1 corrupt (warned). */
static int cache_read(const price_record *r, const char *path, price_set *set, const price_record **rec)
{
    struct stat st;
    if (stat(path, &st) != 0) return 1;
    ib_error err = {0};
    if (prices_load_file(path, set, &err) != 0) {
        ib_warn("ignoring corrupt price cache file (%s); it will be rewritten", err.msg);
        return -1;
    }
    *rec = prices_find(set, r->instance_type, r->region);
    if (!*rec || set->n != 1) {
        ib_warn("ignoring price cache file %s: it does not hold exactly %s in %s", path, r->instance_type,
                r->region);
        prices_free(set);
        return -1;
    }
    return 0;
}

static int fresh(time_t as_of, int ttl_s, time_t now)
{
    /* A time in the future (clock skew, edited file) is not trusted as fresh. */
    return as_of <= now + 300 && now - as_of <= ttl_s;
}

void prices_cache_lookup(price_record *r, int want_od, int want_spot, int ttl_s, time_t now, int *got_od,
                         int *got_spot)
{
    char path[PATH_MAX];
    *got_od = *got_spot = 0;
    if (cache_file(r, path, sizeof path) != 0) return;
    price_set set;
    const price_record *c = NULL;
    if (cache_read(r, path, &set, &c) != 0) return;
    if (want_od && !isnan(c->on_demand_usd_per_hour) && fresh(c->on_demand_as_of, ttl_s, now)) {
        r->on_demand_usd_per_hour = c->on_demand_usd_per_hour;
        r->on_demand_as_of = c->on_demand_as_of;
        strcpy(r->on_demand_source, "cache");
        *got_od = 1;
    }
    if (want_spot && c->spot_source[0] && fresh(c->spot_as_of, ttl_s, now)) {
        spot_price *z = NULL;
        if (c->n_spot && !(z = malloc(c->n_spot * sizeof *z))) goto out;
        if (c->n_spot) memcpy(z, c->spot, c->n_spot * sizeof *z);
        free(r->spot);
        r->spot = z;
        r->n_spot = c->n_spot;
        r->spot_as_of = c->spot_as_of;
        strcpy(r->spot_source, "cache");
        if (c->placement_score > 0) r->placement_score = c->placement_score;
        *got_spot = 1;
    }
out:
    prices_free(&set);
}

void prices_cache_store(const price_record *r, int has_od, int has_spot)
{
    char path[PATH_MAX];
    if (!has_od && !has_spot) return;
    if (cache_file(r, path, sizeof path) != 0) return;
    price_set old;
    const price_record *c = NULL;
    int have_old = cache_read(r, path, &old, &c) == 0;

    price_record rec;
    price_record_init(&rec);
    strcpy(rec.instance_type, r->instance_type);
    strcpy(rec.region, r->region);
    const price_record *od = has_od ? r : (have_old ? c : NULL);
    const price_record *sp = has_spot ? r : (have_old ? c : NULL);
    if (od && !isnan(od->on_demand_usd_per_hour)) {
        rec.on_demand_usd_per_hour = od->on_demand_usd_per_hour;
        rec.on_demand_as_of = od->on_demand_as_of;
        strcpy(rec.on_demand_source, "live");
    }
    if (sp && sp->spot_source[0]) {
        rec.spot = sp->spot;           /* borrowed for the write below */
        rec.n_spot = sp->n_spot;
        rec.spot_as_of = sp->spot_as_of;
        rec.placement_score = sp->placement_score;
        strcpy(rec.spot_source, "live");
    }
    price_set one = {.items = &rec, .n = 1, .generated_at = time(NULL)};
    char *txt = prices_to_json(&one);
    ib_error err = {0};
    if (!txt) ib_warn("price cache: out of memory");
    else if (util_write_file_atomic(path, txt, strlen(txt), &err) != 0)
        ib_warn("price cache not written (%s); prices still come from AWS", err.msg);
    free(txt);
    if (have_old) prices_free(&old);
}
