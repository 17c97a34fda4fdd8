/* prices_json: the "instbench.prices/v1" file format, read and written.  One format serves
 * `instbench prices --format json`, the on-disk cache, the shipped snapshot and `rank --prices`.
 *
 *   {"schema": "instbench.prices/v1",
 *    "generated_at": "2026-11-22T00:10:45Z",
 *    "snapshot": {"date": "2026-11-21" | null, "source": "..." | null},  -- set when any price is from it
 *    "placement_note": "..."                                        -- optional: why scores are absent
 *    "include_local_zones": false,        -- derived: whether spot.min_* count Local/Wavelength Zones
 *    "prices": [
 *      {"instance_type": "g5.xlarge", "region": "us-east-1",
 *       "nodes": 1, "total_accelerators": 1 | null,
 *       "on_demand": {"usd_per_hour": 1.006 | null, "source": "live|cache|snapshot|file" | null,
 *                     "as_of": "ISO8601" | null,
 *                     "usd_per_accelerator_hour": ... | null, "total_usd_per_hour": ... | null},
 *       "spot": {"source": "..." | null, "as_of": "ISO8601" | null,
 *                "min_usd_per_hour": 0.41 | null, "min_availability_zone": "us-east-1a" | null,
 *                "min_zone_type": "availability-zone" | null,
 *                "max_usd_per_hour": ... | null, "min_usd_per_accelerator_hour": ... | null,
 *                "min_total_usd_per_hour": ... | null, "min_savings_pct": ... | null,
 *                "zones": [{"availability_zone": "us-east-1a", "zone_type": "availability-zone",
 *                           "usd_per_hour": 0.41, "timestamp": "ISO8601",
 *                           "placement_score": 9 | null}]},
 *       "interruption": {"bucket": 0 | null, "label": "<5%" | null, "savings_pct": 70 | null},
 *       "placement_score": 7 | null,
 *       "instance": {"vcpus": 4 | null, "memory_gib": 16 | null, "accelerator": "A10G" | null,
 *                    "accelerator_count": 1 | null, "accelerator_memory_gib": 22.35 | null}}]}
 *
 * Objects and arrays are always there (empty when there is nothing), so jq and json_normalize
 * walk every record alike; null is an unknown scalar.  Earlier writers put null in place of a
 * whole on_demand, spot, interruption or instance object, and left out a zone's placement_score:
 * both are still read.  The fields after a market's source (min_*, max_*, totals, per-accelerator
 * prices, zone_type, nodes, total_accelerators) are derived for readers and ignored when read:
 * min_* range over Availability Zones only unless `--include-local-zones` (the set's
 * include_local_zones), and totals are nodes x the per-instance figure.
 *
 * Prices are USD per instance-hour; a price must be finite, > 0 and <= PRICES_MAX_USD_PER_HOUR.
 * Instance types, regions and zones (names or IDs) must look like AWS's (instbench/names.h): they
 * are shown, matched and used in cache paths.  A key given twice anywhere refuses the document
 * (cJSON would take the first value, jq and Python the last).  interruption.bucket is the Spot
 * Instance Advisor's frequency-of-interruption range 0..4 (<5%, 5-10%, 10-15%, 15-20%, >20%);
 * savings_pct is its saving vs on-demand in percent (<= 100; negative when spot costs more; or
 * null), given only with a bucket.  A (instance_type, region) pair appears at most once. */
#include "instbench/prices.h"
#include "instbench/names.h"
#include "prices/internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PRICES_SCHEMA "instbench.prices/v1"

/* Error paths ("prices[3].spot.zones[1].usd_per_hour") are built with snprintf into fixed buffers;
 * a truncated path would only shorten a message, so gcc's truncation warning is noise here. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static const char *const interruption_labels[] = {"<5%", "5-10%", "10-15%", "15-20%", ">20%"};

const char *prices_interruption_label(int bucket)
{
    if (bucket < 0 || bucket > 4) return "unknown";
    return interruption_labels[bucket];
}

void price_record_init(price_record *r)
{
    memset(r, 0, sizeof *r);
    r->on_demand_usd_per_hour = NAN;
    r->interruption_bucket = -1;
    r->savings_pct = PRICES_SAVINGS_UNKNOWN;
    r->placement_score = -1;
    r->hw.vcpus = -1;
    /* unknown until a catalogue or file says: 0 would be written as a size the reader refuses */
    r->hw.memory_gib = NAN;
    r->hw.accelerator_memory_gib = NAN;
    r->nodes = 1;
}

void prices_free(price_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->items[i].spot);
    free(s->items);
    memset(s, 0, sizeof *s);
}

const price_record *prices_find(const price_set *s, const char *instance_type, const char *region)
{
    if (!s || !instance_type || !region) return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->items[i].instance_type, instance_type) && !strcmp(s->items[i].region, region))
            return &s->items[i];
    return NULL;
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct reader {
    const char *what; /* file name or "cache", for messages */
    ib_error *err;
} reader;

static int bad(reader *rd, const char *path, const char *why)
{
    return ib_error_set(rd->err, IB_EXIT_RUNTIME, "%s: %s: %s", rd->what, path, why);
}

/* Copies a required string member into dst; rejects absent, non-string, empty or too long. */
static int get_string(reader *rd, const cJSON *obj, const char *key, const char *path, char *dst, size_t cap)
{
    char p[160];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return bad(rd, p, "missing");
    if (!cJSON_IsString(v) || !v->valuestring) return bad(rd, p, "must be a string");
    size_t n = strlen(v->valuestring);
    if (n == 0) return bad(rd, p, "must not be empty");
    if (n >= cap) return bad(rd, p, "too long");
    memcpy(dst, v->valuestring, n + 1);
    return 0;
}

/* A required name member (instance type, region, zone) that OK accepts: price files and the cache
 * come from outside, and these names are shown, used in cache paths and matched against results. */
static int get_name(reader *rd, const cJSON *obj, const char *key, const char *path, char *dst, size_t cap,
                    int (*ok)(const char *), const char *what)
{
    char p[160], why[160];
    if (get_string(rd, obj, key, path, dst, cap) != 0) return -1;
    if (ok(dst)) return 0;
    snprintf(p, sizeof p, "%s.%s", path, key);
    snprintf(why, sizeof why, "'%s' is not %s", dst, what);
    return bad(rd, p, why);
}

static int get_time(reader *rd, const cJSON *obj, const char *key, const char *path, time_t *out)
{
    char buf[64], p[160];
    if (get_string(rd, obj, key, path, buf, sizeof buf) != 0) return -1;
    snprintf(p, sizeof p, "%s.%s", path, key);
    if (util_parse_iso8601(buf, out) != 0) return bad(rd, p, "not an ISO 8601 UTC time");
    return 0;
}

static int get_price(reader *rd, const cJSON *obj, const char *key, const char *path, double *out)
{
    char p[160], why[96];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return bad(rd, p, "missing");
    if (!cJSON_IsNumber(v)) return bad(rd, p, "must be a number");
    double x = v->valuedouble;
    if (!isfinite(x)) return bad(rd, p, "not a finite number");
    if (x <= 0) {
        snprintf(why, sizeof why, "price %g is not positive", x);
        return bad(rd, p, why);
    }
    if (x > PRICES_MAX_USD_PER_HOUR) {
        snprintf(why, sizeof why, "price %g USD/h is absurd (limit %g)", x, PRICES_MAX_USD_PER_HOUR);
        return bad(rd, p, why);
    }
    *out = x;
    return 0;
}

/* An optional integer in [lo, hi]: absent or null leaves *out untouched. */
static int get_opt_int(reader *rd, const cJSON *obj, const char *key, const char *path, int lo, int hi, int *out)
{
    char p[160], why[64];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble))
        return bad(rd, p, "must be an integer");
    if (v->valuedouble < lo || v->valuedouble > hi) {
        snprintf(why, sizeof why, "out of range %d..%d", lo, hi);
        return bad(rd, p, why);
    }
    *out = (int)v->valuedouble;
    return 0;
}

static int valid_source(const char *s)
{
    return !strcmp(s, "live") || !strcmp(s, "cache") || !strcmp(s, "snapshot") || !strcmp(s, "file");
}

/* KEY of OBJ is absent or null. */
static int absent(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return !v || cJSON_IsNull(v);
}

static int read_on_demand(reader *rd, const cJSON *od, const char *path, price_record *r)
{
    if (!cJSON_IsObject(od)) return bad(rd, path, "must be an object or null");
    if (absent(od, "usd_per_hour")) return 0; /* no price: source and as_of say nothing */
    if (get_price(rd, od, "usd_per_hour", path, &r->on_demand_usd_per_hour) != 0) return -1;
    if (get_string(rd, od, "source", path, r->on_demand_source, sizeof r->on_demand_source) != 0) return -1;
    if (!valid_source(r->on_demand_source)) return bad(rd, path, "source must be live|cache|snapshot|file");
    return get_time(rd, od, "as_of", path, &r->on_demand_as_of);
}

static int read_spot(reader *rd, const cJSON *sp, const char *path, price_record *r)
{
    char p[160];
    if (!cJSON_IsObject(sp)) return bad(rd, path, "must be an object or null");
    if (absent(sp, "source")) { /* not asked, or nothing known: no zone may claim a price */
        const cJSON *zones = cJSON_GetObjectItemCaseSensitive(sp, "zones");
        snprintf(p, sizeof p, "%s.zones", path);
        if (zones && !cJSON_IsArray(zones)) return bad(rd, p, "must be an array");
        if (cJSON_GetArraySize(zones) > 0) return bad(rd, p, "zones without a spot source");
        return 0;
    }
    if (get_string(rd, sp, "source", path, r->spot_source, sizeof r->spot_source) != 0) return -1;
    if (!valid_source(r->spot_source)) return bad(rd, path, "source must be live|cache|snapshot|file");
    if (get_time(rd, sp, "as_of", path, &r->spot_as_of) != 0) return -1;
    const cJSON *zones = cJSON_GetObjectItemCaseSensitive(sp, "zones");
    snprintf(p, sizeof p, "%s.zones", path);
    if (!zones) return bad(rd, p, "missing");
    if (!cJSON_IsArray(zones)) return bad(rd, p, "must be an array");
    int nz = cJSON_GetArraySize(zones);
    if (nz > PRICES_MAX_ZONES) {
        char why[48];
        snprintf(why, sizeof why, "more than %d zones", PRICES_MAX_ZONES);
        return bad(rd, p, why);
    }
    if (nz == 0) return 0;
    r->spot = calloc((size_t)nz, sizeof *r->spot);
    if (!r->spot) return bad(rd, p, "out of memory");
    const cJSON *z;
    cJSON_ArrayForEach(z, zones)
    {
        snprintf(p, sizeof p, "%s.zones[%zu]", path, r->n_spot);
        spot_price *s = &r->spot[r->n_spot++];
        s->placement_score = -1;
        if (!cJSON_IsObject(z)) return bad(rd, p, "must be an object");
        if (get_name(rd, z, "availability_zone", p, s->az, sizeof s->az, names_zone_ok, "an availability zone") != 0)
            return -1;
        if (get_price(rd, z, "usd_per_hour", p, &s->usd_per_hour) != 0) return -1;
        if (get_time(rd, z, "timestamp", p, &s->timestamp) != 0) return -1;
        if (get_opt_int(rd, z, "placement_score", p, 1, 10, &s->placement_score) != 0) return -1;
        for (size_t k = 0; k + 1 < r->n_spot; k++)
            if (!strcmp(r->spot[k].az, s->az)) return bad(rd, p, "availability zone listed twice");
    }
    return 0;
}

static int read_interruption(reader *rd, const cJSON *in, const char *path, price_record *r)
{
    char p[160];
    if (!cJSON_IsObject(in)) return bad(rd, path, "must be an object or null");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(in, "bucket");
    snprintf(p, sizeof p, "%s.bucket", path);
    if (!b) return bad(rd, p, "missing");
    if (cJSON_IsNull(b)) {
        /* Unknown bucket: nothing else of the advisor's is known.  Its feed gives a type's bucket
         * and savings together ({"r", "s"} per type and region) or neither, so a savings figure
         * without a bucket is no Advisor entry: refused like the label, not kept (the writer ties
         * savings to the bucket, as the snapshot does) nor dropped without a word. */
        static const char *const with_bucket[] = {"label", "savings_pct"};
        for (size_t i = 0; i < 2; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, with_bucket[i]);
            snprintf(p, sizeof p, "%s.%s", path, with_bucket[i]);
            if (v && !cJSON_IsNull(v))
                return bad(rd, p, "given without a bucket (the Spot Advisor states both: give the bucket, or null)");
        }
        return 0;
    }
    if (get_opt_int(rd, in, "bucket", path, 0, 4, &r->interruption_bucket) != 0) return -1;
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(in, "label");
    if (label &&
        !(cJSON_IsString(label) && !strcmp(label->valuestring, prices_interruption_label(r->interruption_bucket)))) {
        snprintf(p, sizeof p, "%s.label", path);
        return bad(rd, p, "does not match the bucket");
    }
    /* Negative when spot costs more than on-demand (the advisor reports -62 for some p5 regions). */
    return get_opt_int(rd, in, "savings_pct", path, -1000, 100, &r->savings_pct);
}

/* An optional number in (0, hi]: absent or null leaves *out untouched. */
static int get_opt_size(reader *rd, const cJSON *obj, const char *key, const char *path, double hi, double *out)
{
    char p[160];
    snprintf(p, sizeof p, "%s.%s", path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > hi)
        return bad(rd, p, "must be a positive size");
    *out = v->valuedouble;
    return 0;
}

/* An accelerator model as catalogues name it ("A10G", "H100", "Trainium"): shown in tables. */
static int accelerator_ok(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != ' ' && *s != '.') return 0;
    return 1;
}

static int read_hardware(reader *rd, const cJSON *hw, const char *path, price_record *r)
{
    if (!cJSON_IsObject(hw)) return bad(rd, path, "must be an object or null");
    int vcpus = -1;
    if (get_opt_int(rd, hw, "vcpus", path, 1, 1 << 16, &vcpus) != 0 ||
        get_opt_size(rd, hw, "memory_gib", path, 1 << 20, &r->hw.memory_gib) != 0 ||
        get_opt_int(rd, hw, "accelerator_count", path, 0, 256, &r->hw.accelerator_count) != 0 ||
        get_opt_size(rd, hw, "accelerator_memory_gib", path, 1 << 20, &r->hw.accelerator_memory_gib) != 0)
        return -1;
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(hw, "accelerator");
    if (acc && !cJSON_IsNull(acc) &&
        get_name(rd, hw, "accelerator", path, r->hw.accelerator, sizeof r->hw.accelerator, accelerator_ok,
                 "an accelerator model") != 0)
        return -1;
    r->hw.vcpus = vcpus;
    return 0;
}

static int read_record(reader *rd, const cJSON *it, size_t idx, price_record *r)
{
    char path[64];
    snprintf(path, sizeof path, "prices[%zu]", idx);
    if (!cJSON_IsObject(it)) return bad(rd, path, "must be an object");
    if (get_name(rd, it, "instance_type", path, r->instance_type, sizeof r->instance_type, names_instance_type_ok,
                 "an instance type") != 0 ||
        get_name(rd, it, "region", path, r->region, sizeof r->region, names_region_ok, "a region") != 0)
        return -1;

    char p[160];
    const cJSON *od = cJSON_GetObjectItemCaseSensitive(it, "on_demand");
    snprintf(p, sizeof p, "%s.on_demand", path);
    if (!od) return bad(rd, p, "missing (use null when unknown)");
    if (!cJSON_IsNull(od) && read_on_demand(rd, od, p, r) != 0) return -1;

    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "spot");
    snprintf(p, sizeof p, "%s.spot", path);
    if (!sp) return bad(rd, p, "missing (use null when unknown)");
    if (!cJSON_IsNull(sp) && read_spot(rd, sp, p, r) != 0) return -1;

    const cJSON *in = cJSON_GetObjectItemCaseSensitive(it, "interruption");
    snprintf(p, sizeof p, "%s.interruption", path);
    if (in && !cJSON_IsNull(in) && read_interruption(rd, in, p, r) != 0) return -1;

    const cJSON *hw = cJSON_GetObjectItemCaseSensitive(it, "instance");
    snprintf(p, sizeof p, "%s.instance", path);
    if (hw && !cJSON_IsNull(hw) && read_hardware(rd, hw, p, r) != 0) return -1;

    return get_opt_int(rd, it, "placement_score", path, 1, 10, &r->placement_score);
}

int prices_parse_json(const char *text, size_t len, const char *what, price_set *out, ib_error *err)
{
    reader rd = {what ? what : "prices", err};
    memset(out, 0, sizeof *out);
    if (util_json_escaped_nul(text, len))
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: \\u0000 in a string (JSON readers disagree on what follows it)",
                            rd.what);
    if (util_json_depth(text, len) > UTIL_JSON_MAX_DEPTH) /* valid JSON cJSON will not read: say why */
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: nested deeper than %d levels (a prices file is 4)", rd.what,
                            UTIL_JSON_MAX_DEPTH);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: not valid JSON", rd.what);
    int rc = -1;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    char dup[160];
    if (!cJSON_IsObject(root)) {
        bad(&rd, "$", "must be a JSON object");
        goto done;
    }
    if (util_json_duplicate_key(root, dup, sizeof dup)) { /* readers would disagree on its value */
        bad(&rd, dup, "this key is given twice");
        goto done;
    }
    if (cJSON_IsString(schema) && !strcmp(schema->valuestring, PRICES_ROWS_SCHEMA)) {
        /* `prices --format json --columns ...`: picked columns, without the zones and sources a
         * price is read with */
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "%s: is the rows `prices --columns` picked (\"" PRICES_ROWS_SCHEMA "\"), "
                     "not a prices document: write one with `instbench prices --format json` without --columns",
                     rd.what);
        goto done;
    }
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, PRICES_SCHEMA) != 0) {
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: schema is %s%s%s, expected \"" PRICES_SCHEMA "\"", rd.what,
                     cJSON_IsString(schema) ? "\"" : "", cJSON_IsString(schema) ? schema->valuestring : "missing",
                     cJSON_IsString(schema) ? "\"" : "");
        goto done;
    }
    if (get_time(&rd, root, "generated_at", "$", &out->generated_at) != 0) goto done;

    const cJSON *snap = cJSON_GetObjectItemCaseSensitive(root, "snapshot");
    if (snap && !cJSON_IsNull(snap) && !(cJSON_IsObject(snap) && absent(snap, "date"))) {
        if (!cJSON_IsObject(snap)) {
            bad(&rd, "$.snapshot", "must be an object or null");
            goto done;
        }
        if (get_string(&rd, snap, "date", "$.snapshot", out->snapshot_date, sizeof out->snapshot_date) != 0 ||
            get_string(&rd, snap, "source", "$.snapshot", out->snapshot_source, sizeof out->snapshot_source) != 0)
            goto done;
        time_t t;
        if (util_parse_iso8601(out->snapshot_date, &t) != 0) {
            bad(&rd, "$.snapshot.date", "not a date (YYYY-MM-DD)");
            goto done;
        }
        snprintf(out->snapshot_note, sizeof out->snapshot_note, "snapshot of %s (%.200s)", out->snapshot_date,
                 out->snapshot_source);
    }
    const cJSON *pn = cJSON_GetObjectItemCaseSensitive(root, "placement_note");
    if (cJSON_IsString(pn)) snprintf(out->placement_note, sizeof out->placement_note, "%s", pn->valuestring);

    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "prices");
    if (!arr) {
        bad(&rd, "$.prices", "missing");
        goto done;
    }
    if (!cJSON_IsArray(arr)) {
        bad(&rd, "$.prices", "must be an array");
        goto done;
    }
    int n = cJSON_GetArraySize(arr);
    if (n > 0) {
        out->items = calloc((size_t)n, sizeof *out->items);
        if (!out->items) {
            ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", rd.what);
            goto done;
        }
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        price_record *r = &out->items[out->n];
        price_record_init(r);
        out->n++; /* counted before filling so prices_free releases a half-read record */
        if (read_record(&rd, it, out->n - 1, r) != 0) goto done;
        for (size_t k = 0; k + 1 < out->n; k++)
            if (!strcmp(out->items[k].instance_type, r->instance_type) && !strcmp(out->items[k].region, r->region)) {
                char p[64];
                snprintf(p, sizeof p, "prices[%zu]", out->n - 1);
                bad(&rd, p, "instance type and region listed twice");
                goto done;
            }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0) prices_free(out);
    return rc;
}

/* A prices file's times say when its prices were read: one ahead of this clock by more than the
 * skew the cache allows (prices_cache.c) is no such time (an edited file's 9999-12-31, which would
 * show as "<1 min" old), so the file is refused naming it, as the cache ignores such a record. */
static int future_time(const price_set *s, time_t now, const char *path, ib_error *err)
{
    const time_t limit = now + PRICES_CLOCK_SKEW_S;
    char field[96] = "", when[32], clock[32];
    time_t t = 0;
    if (s->generated_at > limit) t = s->generated_at, snprintf(field, sizeof field, "generated_at");
    for (size_t i = 0; i < s->n && !field[0]; i++) {
        const price_record *r = &s->items[i];
        if (!isnan(r->on_demand_usd_per_hour) && r->on_demand_as_of > limit)
            t = r->on_demand_as_of, snprintf(field, sizeof field, "prices[%zu].on_demand.as_of", i);
        else if (r->spot_source[0] && r->spot_as_of > limit)
            t = r->spot_as_of, snprintf(field, sizeof field, "prices[%zu].spot.as_of", i);
    }
    if (!field[0]) return 0;
    util_utc_iso8601(t, when);
    util_utc_iso8601(now, clock);
    return ib_error_set(err, IB_EXIT_RUNTIME,
                        "%s: %s: %s is in the future (this clock says %s; up to %d minutes ahead pass as clock "
                        "skew): not a time prices were read",
                        path, field, when, clock, PRICES_CLOCK_SKEW_S / 60);
}

int prices_load_file(const char *path, price_set *out, ib_error *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    if (util_read_file(path, PRICES_FILE_MAX_BYTES, &text, &len, err) != 0) return -1;
    int rc = prices_parse_json(text, len, path, out, err);
    free(text);
    if (rc == 0 && future_time(out, time(NULL), path, err) != 0) {
        prices_free(out);
        rc = -1;
    }
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

static void add_time(cJSON *obj, const char *key, time_t t)
{
    char buf[32];
    util_utc_iso8601(t, buf);
    cJSON_AddStringToObject(obj, key, buf);
}

/* A number, or null when V is NAN (unknown): JSON has no NaN. */
static void add_number(cJSON *obj, const char *key, double v)
{
    if (isnan(v)) cJSON_AddNullToObject(obj, key);
    else cJSON_AddNumberToObject(obj, key, v);
}

static void add_string(cJSON *obj, const char *key, const char *s)
{
    if (s && s[0]) cJSON_AddStringToObject(obj, key, s);
    else cJSON_AddNullToObject(obj, key);
}


static void add_on_demand(cJSON *o, const price_record *r)
{
    cJSON *od = cJSON_AddObjectToObject(o, "on_demand");
    const double p = r->on_demand_usd_per_hour;
    add_number(od, "usd_per_hour", p);
    add_string(od, "source", isnan(p) ? NULL : r->on_demand_source[0] ? r->on_demand_source : "file");
    if (isnan(p)) cJSON_AddNullToObject(od, "as_of");
    else add_time(od, "as_of", r->on_demand_as_of);
    add_number(od, "usd_per_accelerator_hour", prices_per_accelerator_hour(r, p));
    add_number(od, "total_usd_per_hour", prices_nodes(r) * p);
}

static void add_spot(cJSON *o, const price_record *r, int with_local)
{
    cJSON *sp = cJSON_AddObjectToObject(o, "spot");
    const int known = r->spot_source[0] || r->n_spot;
    add_string(sp, "source", known ? r->spot_source[0] ? r->spot_source : "file" : NULL);
    if (known) add_time(sp, "as_of", r->spot_as_of);
    else cJSON_AddNullToObject(sp, "as_of");
    const spot_price *lo = r->spot_source[0] ? prices_cheapest_zone(r, with_local) : NULL;
    const double min = lo ? lo->usd_per_hour : NAN;
    add_number(sp, "min_usd_per_hour", min);
    add_string(sp, "min_availability_zone", lo ? lo->az : NULL);
    add_string(sp, "min_zone_type", lo ? prices_zone_kind_name(prices_zone_kind_of(lo->az)) : NULL);
    add_number(sp, "max_usd_per_hour", prices_highest_spot(r, with_local));
    add_number(sp, "min_usd_per_accelerator_hour", prices_per_accelerator_hour(r, min));
    add_number(sp, "min_total_usd_per_hour", prices_nodes(r) * min);
    add_number(sp, "min_savings_pct", prices_spot_savings_pct(r, with_local));
    cJSON *zones = cJSON_AddArrayToObject(sp, "zones");
    for (size_t i = 0; i < r->n_spot; i++) {
        cJSON *z = cJSON_CreateObject();
        cJSON_AddStringToObject(z, "availability_zone", r->spot[i].az);
        cJSON_AddStringToObject(z, "zone_type", prices_zone_kind_name(prices_zone_kind_of(r->spot[i].az)));
        cJSON_AddNumberToObject(z, "usd_per_hour", r->spot[i].usd_per_hour);
        add_time(z, "timestamp", r->spot[i].timestamp);
        add_number(z, "placement_score", r->spot[i].placement_score >= 1 ? r->spot[i].placement_score : NAN);
        cJSON_AddItemToArray(zones, z);
    }
}

static void add_interruption(cJSON *o, const price_record *r)
{
    cJSON *in = cJSON_AddObjectToObject(o, "interruption");
    const int known = r->interruption_bucket >= 0;
    add_number(in, "bucket", known ? r->interruption_bucket : NAN);
    add_string(in, "label", known ? prices_interruption_label(r->interruption_bucket) : NULL);
    add_number(in, "savings_pct", known && r->savings_pct != PRICES_SAVINGS_UNKNOWN ? r->savings_pct : NAN);
    /* derived for readers (prices/interruption.c), ignored when read: the bucket as a node's rate,
     * the NODES-node job's, and that job's chance of a day without an interruption */
    add_number(in, "rate_per_node_hour", prices_interruption_rate(r->interruption_bucket));
    add_number(in, "job_rate_per_hour", prices_job_interruption_rate(r));
    add_number(in, "p_no_interruption_24h", prices_p_uninterrupted(r, PRICES_SURVIVAL_HOURS));
}

static void add_hardware(cJSON *o, const price_record *r)
{
    cJSON *hw = cJSON_AddObjectToObject(o, "instance");
    const int known = prices_hardware_known(r);
    add_number(hw, "vcpus", known ? r->hw.vcpus : NAN);
    add_number(hw, "memory_gib", known ? r->hw.memory_gib : NAN);
    add_string(hw, "accelerator", known ? r->hw.accelerator : NULL);
    add_number(hw, "accelerator_count", known ? r->hw.accelerator_count : NAN);
    add_number(hw, "accelerator_memory_gib", known ? r->hw.accelerator_memory_gib : NAN);
}

static cJSON *record_to_json(const price_record *r, int with_local)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "instance_type", r->instance_type);
    cJSON_AddStringToObject(o, "region", r->region);
    cJSON_AddNumberToObject(o, "nodes", prices_nodes(r));
    add_number(o, "total_accelerators",
               prices_hardware_known(r) ? (double)prices_nodes(r) * r->hw.accelerator_count : NAN);
    add_on_demand(o, r);
    add_spot(o, r, with_local);
    add_interruption(o, r);
    add_number(o, "placement_score", r->placement_score >= 1 ? r->placement_score : NAN);
    add_hardware(o, r);
    return o;
}

char *prices_to_json(const price_set *s)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", PRICES_SCHEMA);
    add_time(root, "generated_at", s->generated_at ? s->generated_at : time(NULL));
    if (s->snapshot_date[0]) {
        cJSON *sn = cJSON_AddObjectToObject(root, "snapshot");
        cJSON_AddStringToObject(sn, "date", s->snapshot_date);
        cJSON_AddStringToObject(sn, "source", s->snapshot_source);
    } else { /* an object either way: null only for the unknown scalars */
        cJSON *sn = cJSON_AddObjectToObject(root, "snapshot");
        cJSON_AddNullToObject(sn, "date");
        cJSON_AddNullToObject(sn, "source");
    }
    if (s->placement_note[0]) cJSON_AddStringToObject(root, "placement_note", s->placement_note);
    cJSON_AddBoolToObject(root, "include_local_zones", s->include_local_zones != 0); /* what spot.min_* range over */
    cJSON *arr = cJSON_AddArrayToObject(root, "prices");
    for (size_t i = 0; i < s->n; i++) cJSON_AddItemToArray(arr, record_to_json(&s->items[i], s->include_local_zones));
    char *txt = util_json_print(root);
    cJSON_Delete(root);
    return txt;
}
