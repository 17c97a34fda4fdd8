/* prices_cache: live prices kept on disk so a second run within the TTL needs no AWS call.
 * Layout: <cache dir>/<region>/<instance type>.json, each an instbench.prices/v1 document with one
 * record whose sources say "live" and whose as_of times are the fetch times; the TTL is measured
 * from those.  The cache dir is keyed by who answered: AWS's own endpoints use
 * <base>/instbench/prices (where every cache before the key lived: those files count as AWS's),
 * an AWS_ENDPOINT_URL[_PRICING|_EC2] elsewhere (moto, LocalStack, a proxy) uses
 * <base>/instbench/prices/endpoint-<16 hex> (aws_endpoints_identity), so an answer from one is
 * never served as the other's.  Files are replaced atomically (temp + rename), so concurrent
 * runs never read half a file, but not fsync'd (util_write_file_replaceable: 20+ fsyncs were most
 * of a prices run's own time): a crash may lose one, and a corrupt file is reported and ignored,
 * and the next live fetch overwrites it.
 *
 * The cache is trusted as ssh trusts its files: a file is read only when it and the directories
 * instbench made above it belong to this user (or root) and are writable by no one else; other
 * files are ignored with a warning (and replaced by the next live fetch).  What is read is
 * validated as any prices file is (prices_parse_json).  instbench writes its files 0644 and its
 * directories without group or other write permission. */
#include "prices/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instbench/names.h"

#define CACHE_MAX_BYTES (1 << 20) /* one record is a few KiB */

/* The services whose answers the cache keeps: on-demand from Pricing, spot from EC2. */
static const char *const cache_services[] = {"PRICING", "EC2"};

/* The cache dir for the endpoints in effect; *made: how many directories instbench made from
 * <base>/instbench down to it (2: prices; 3: prices/endpoint-<hex>). */
static int cache_dir(char *out, size_t len, int *made)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char id[32];
    int custom = aws_endpoints_identity(cache_services, 2, id, sizeof id);
    if (custom < 0) return -1; /* an endpoint URL too long to tell apart: no cache */
    const char *sep = custom ? "/endpoint-" : "";
    int w;
    /* XDG says a relative XDG_CACHE_HOME is invalid and must be ignored. */
    if (xdg && xdg[0] == '/') w = snprintf(out, len, "%s/instbench/prices%s%s", xdg, sep, id);
    else if (home && home[0]) w = snprintf(out, len, "%s/.cache/instbench/prices%s%s", home, sep, id);
    else return -1;
    if (made) *made = custom ? 3 : 2;
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

int prices_cache_dir(char *out, size_t len) { return cache_dir(out, len, NULL); }

/* The file for r; *up: the directories instbench made above it (its region's included). */
static int cache_file(const price_record *r, char *out, size_t len, int *up)
{
    char dir[PATH_MAX];
    /* Names become path components: only AWS's shapes, so nothing escapes the cache dir. */
    if (!names_instance_type_ok(r->instance_type) || !names_region_ok(r->region)) return -1;
    if (cache_dir(dir, sizeof dir, up) != 0) return -1;
    *up += 1;
    int w = snprintf(out, len, "%s/%s/%s.json", dir, r->region, r->instance_type);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

/* Whom the cache trusts, as ssh trusts its files: owned by this user (or root) and writable by no
 * one else.  Otherwise another user could plant prices.  "" when trusted, else why not. */
static void distrust(const struct stat *st, const char *what, char *why, size_t len)
{
    why[0] = '\0';
    if (st->st_uid != geteuid() && st->st_uid != 0)
        snprintf(why, len, "%s is owned by uid %ld, not by you", what, (long)st->st_uid);
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, len, "%s is writable by %s (chmod go-w fixes it)", what,
                 st->st_mode & S_IWOTH ? "everyone" : "its group");
}

/* The UP directories instbench made above a cache file (<region>, [endpoint-<hex>,] prices,
 * instbench): whoever can write one of them can replace the file. */
static void distrust_dirs(const char *path, int up_dirs, char *why, size_t len)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < up_dirs && !why[0]; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = '\0';
        struct stat st;
        if (stat(dir, &st) == 0) distrust(&st, "its directory", why, len);
        if (why[0]) snprintf(why + strlen(why), len - strlen(why), ": %s", dir);
    }
}

/* Reads a cache file the cache may trust: a regular file (not a link), owned and writable as
 * distrust() wants, in directories likewise.  0 read; 1 absent; -1 refused or unreadable (WHY). */
static int read_trusted(const char *path, int up, char **text, size_t *len, char *why, size_t wlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        snprintf(why, wlen, "%s", errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return -1;
    }
    struct stat st;
    why[0] = '\0';
    if (fstat(fd, &st) != 0) snprintf(why, wlen, "%s", strerror(errno));
    else if (!S_ISREG(st.st_mode)) snprintf(why, wlen, "it is not a regular file");
    else if (st.st_size > CACHE_MAX_BYTES) snprintf(why, wlen, "it is too large for a cache file");
    else distrust(&st, "it", why, wlen);
    if (!why[0]) distrust_dirs(path, up, why, wlen);
    char *buf = why[0] ? NULL : malloc((size_t)st.st_size + 1);
    ssize_t n = 0;
    if (!why[0] && !buf) snprintf(why, wlen, "out of memory");
    if (buf && (n = read(fd, buf, (size_t)st.st_size)) != (ssize_t)st.st_size)
        snprintf(why, wlen, "%s", n < 0 ? strerror(errno) : "it changed while being read");
    close(fd);
    if (why[0]) {
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = (size_t)n;
    return 0;
}

/* Loads the cached record for r; 0 found, 1 absent, -1 untrusted or corrupt (warned unless QUIET). */
static int cache_read(const price_record *r, const char *path, int up, int quiet, price_set *set,
                      const price_record **rec)
{
    char *text = NULL, why[PATH_MAX + 128];
    size_t len = 0;
    int rc = read_trusted(path, up, &text, &len, why, sizeof why);
    if (rc == 1) return 1;
    if (rc != 0) {
        if (!quiet) ib_warn("ignoring price cache file %s: %s", path, why);
        return -1;
    }
    ib_error err = {0};
    /* Validated as any prices file is: names, finite positive prices, times, sources. */
    rc = prices_parse_json(text, len, path, set, &err);
    free(text);
    if (rc != 0) {
        if (!quiet) ib_warn("ignoring corrupt price cache file (%s); it will be rewritten", err.msg);
        return -1;
    }
    *rec = prices_find(set, r->instance_type, r->region);
    if (!*rec || set->n != 1) {
        if (!quiet)
            ib_warn("ignoring price cache file %s: it does not hold exactly %s in %s", path, r->instance_type,
                    r->region);
        prices_free(set);
        return -1;
    }
    return 0;
}

int prices_cache_has(const char *type, const char *region)
{
    price_record r;
    char path[PATH_MAX];
    price_set set;
    const price_record *c = NULL;
    int up;
    price_record_init(&r);
    snprintf(r.instance_type, sizeof r.instance_type, "%s", type);
    snprintf(r.region, sizeof r.region, "%s", region);
    if (cache_file(&r, path, sizeof path, &up) != 0 || cache_read(&r, path, up, 1, &set, &c) != 0) return 0;
    /* an empty spot answer is cached too: only a price says AWS has the product */
    int has = !isnan(c->on_demand_usd_per_hour) || c->n_spot > 0;
    prices_free(&set);
    return has;
}

static int fresh(time_t as_of, int ttl_s, time_t now)
{
    /* A time in the future (clock skew, edited file) is not trusted as fresh. */
    return as_of <= now + PRICES_CLOCK_SKEW_S && now - as_of <= ttl_s;
}

void prices_cache_lookup(price_record *r, int want_od, int want_spot, int ttl_s, time_t now, int *got_od, int *got_spot)
{
    char path[PATH_MAX];
    int up;
    *got_od = *got_spot = 0;
    if (cache_file(r, path, sizeof path, &up) != 0) return;
    price_set set;
    const price_record *c = NULL;
    if (cache_read(r, path, up, 0, &set, &c) != 0) return;
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

/* Whatever the umask, what instbench wrote is writable by this user only, so the next read trusts
 * it: the file and the UP_DIRS directories distrust_dirs() checks, when they are this user's. */
static void tighten(const char *path, int up_dirs)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (int up = 0; up <= up_dirs; up++) {
        struct stat st;
        if (stat(p, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)))
            chmod(p, st.st_mode & 07755);
        char *slash = strrchr(p, '/');
        if (!slash || slash == p) break;
        *slash = '\0';
    }
}

void prices_cache_store(const price_record *r, int has_od, int has_spot)
{
    char path[PATH_MAX];
    int up;
    if (!has_od && !has_spot) return;
    if (cache_file(r, path, sizeof path, &up) != 0) return;
    price_set old;
    const price_record *c = NULL;
    int have_old = cache_read(r, path, up, 1, &old, &c) == 0; /* an untrusted file is replaced */

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
        rec.spot = sp->spot; /* borrowed for the write below */
        rec.n_spot = sp->n_spot;
        rec.spot_as_of = sp->spot_as_of;
        rec.placement_score = sp->placement_score;
        strcpy(rec.spot_source, "live");
    }
    price_set one = {.items = &rec, .n = 1, .generated_at = time(NULL)};
    char *txt = prices_to_json(&one);
    ib_error err = {0};
    /* A link planted in the cache is never written through (the writer would keep it and replace
     * what it points to): the cache's own file takes its place. */
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && unlink(path) != 0)
        ib_warn("price cache: cannot remove the symbolic link %s: %s", path, strerror(errno));
    if (!txt) ib_warn("price cache: out of memory");
    else if (util_write_file_replaceable(path, txt, strlen(txt), &err) != 0) /* validated when read */
        ib_warn("price cache not written (%s); prices still come from AWS", err.msg);
    else tighten(path, up);
    free(txt);
    if (have_old) prices_free(&old);
}
