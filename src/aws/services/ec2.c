/* ec2: the EC2 query-API calls instbench needs, with XML responses parsed by expat.
 *
 * Protocol: POST / to https://ec2.REGION.amazonaws.com (or AWS_ENDPOINT_URL[_EC2]), form-encoded
 * body Action=...&Version=2016-11-15&..., signed for service "ec2" in REGION.  Responses:
 *   <DescribeSpotPriceHistoryResponse><spotPriceHistorySet><item><instanceType/>
 *     <productDescription/><spotPrice/><timestamp/><availabilityZone/></item>...</spotPriceHistorySet>
 *     <nextToken/></DescribeSpotPriceHistoryResponse>
 *   <GetSpotPlacementScoresResponse><spotPlacementScoreSet><item><region/>[<availabilityZoneId/>]
 *     <score/></item>...</spotPlacementScoreSet><nextToken/></GetSpotPlacementScoresResponse>
 *   <DescribeAvailabilityZonesResponse><availabilityZoneInfo><item><zoneName/><zoneId/>...
 *
 * DescribeSpotPriceHistory with StartTime=now returns, per (type, AZ), the price in effect now
 * (AWS includes the last change before StartTime); we still keep only the newest per (type, AZ)
 * in case a page carries history.  The XML reader and the request are shared with ec2_launch.c
 * (ec2_xml.c). */
#include "internal.h"

#include "instbench/aws_values.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SANE_USD_PER_HOUR 2000.0

/* The most one answer of each call may be, over 10 times the largest AWS sends, so that a hostile
 * endpoint holds (requests in flight: 64 for prices) x this in memory, not 64 MiB each.  AWS's
 * largest: 1,000 spot prices (MaxResults) of about 330 bytes as AWS indents them
 * (tests/data/prices/describe_spot_price_history.xml); 1,000 scores of about 150; the 64 zones
 * zone_item takes, of under 1 KB with every member AWS lists for a zone. */
#define SPOT_MAX_PAGE ((size_t)4 << 20)
#define SCORES_MAX_PAGE ((size_t)2 << 20)
#define ZONES_MAX_PAGE ((size_t)1 << 20)

/* A spot price as EC2 writes it ("1.234500"): a plain decimal, at least rank's floor of $1e-6. */
static int parse_price(const char *s, double *out) { return util_aws_decimal(s, 1e-6, MAX_SANE_USD_PER_HOUR, out); }

/* ---- DescribeSpotPriceHistory ---------------------------------------------------------------- */

enum { SP_TYPE, SP_DESC, SP_PRICE, SP_TIME, SP_AZ };

/* Entries are found by (type, AZ) in a hash table, not by a scan: a server naming a new AZ in
 * every item would make a scan quadratic in its answer.  The hash is seeded per query (FNV-1a
 * from a random basis), so a server cannot pick names that all land in one chain. */
static size_t spot_hash(const ec2_spot_query *q, const char *type, const char *az)
{
    unsigned long long h = q->seed;
    for (const char *p = type; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL; /* "ab"+"c" and "a"+"bc" apart (a clash costs time only) */
    for (const char *p = az; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of (TYPE, AZ): its entry's, or the empty one where it would go.  n_index is a power of
 * two at least twice n_entries + 1, so a probe always ends. */
static size_t *spot_slot(ec2_spot_query *q, const char *type, const char *az)
{
    size_t mask = q->n_index - 1;
    for (size_t i = spot_hash(q, type, az) & mask;; i = (i + 1) & mask) {
        size_t k = q->index[i];
        if (!k || (!strcmp(q->entries[k - 1].instance_type, type) && !strcmp(q->entries[k - 1].az, az)))
            return &q->index[i];
    }
}

/* Room in the table for one more entry (made on the first, rebuilt twice as large when half
 * full): -1 when out of memory.  Made anew, it is sized for the entries already kept (a sort drops
 * it: ec2_spot_query_sort), since a table they would fill makes spot_slot probe forever. */
static int spot_index_grow(ec2_spot_query *q)
{
    if (q->n_index && 2 * (q->n_entries + 2) <= q->n_index) return 0;
    if (!q->n_index) {
        char hex[17];
        util_random_hex(hex, 16);
        q->seed = strtoull(hex, NULL, 16) | 1;
    }
    size_t n = q->n_index ? 2 * q->n_index : 64;
    while (n < 2 * (q->n_entries + 2)) n *= 2;
    size_t *idx = calloc(n, sizeof *idx);
    if (!idx) return -1;
    free(q->index);
    q->index = idx;
    q->n_index = n;
    for (size_t k = 0; k < q->n_entries; k++) *spot_slot(q, q->entries[k].instance_type, q->entries[k].az) = k + 1;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* 1 when TYPE is one Q asks for (or Q names none), 0 when not, -1 when out of memory: a search of
 * the types sorted once, not a scan of them per item (items and types both run to thousands). */
static int spot_asked(ec2_spot_query *q, const char *type)
{
    if (!q->n_types) return 1;
    if (!q->asked) {
        if (!(q->asked = malloc(q->n_types * sizeof *q->asked))) return -1;
        memcpy(q->asked, q->instance_types, q->n_types * sizeof *q->asked);
        qsort(q->asked, q->n_types, sizeof *q->asked, cmp_name);
    }
    return bsearch(&type, q->asked, q->n_types, sizeof *q->asked, cmp_name) != NULL;
}

static int spot_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    ec2_spot_query *q = ctx;
    double price;
    time_t ts;
    if (!v[SP_TYPE][0] || !v[SP_AZ][0])
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "EC2 DescribeSpotPriceHistory: item without instanceType/availabilityZone");
    if (parse_price(v[SP_PRICE], &price) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: implausible spotPrice \"%.40s\"",
                            v[SP_PRICE]);
    if (util_aws_time(v[SP_TIME], &ts) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: bad timestamp \"%.40s\"", v[SP_TIME]);
    if (v[SP_DESC][0] && strcmp(v[SP_DESC], "Linux/UNIX") != 0) return 0;
    if (strlen(v[SP_TYPE]) >= 64 || strlen(v[SP_AZ]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: name too long");
    int asked = spot_asked(q, v[SP_TYPE]);
    if (!asked) return 0;
    if (asked < 0 || spot_index_grow(q) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
    size_t *slot = spot_slot(q, v[SP_TYPE], v[SP_AZ]);
    if (*slot) {
        ec2_spot_entry *e = &q->entries[*slot - 1];
        if (ts > e->timestamp) {
            e->timestamp = ts;
            e->usd_per_hour = price;
        }
        return 0;
    }
    if (q->max_entries && q->n_entries >= q->max_entries)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "EC2 DescribeSpotPriceHistory: more than %zu (instance type, zone) prices in %s for %zu "
                            "instance type%s, more zones than any region has",
                            q->max_entries, q->region, q->n_types, q->n_types == 1 ? "" : "s");
    if (q->n_entries == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 32;
        ec2_spot_entry *ne = realloc(q->entries, nc * sizeof *ne);
        if (!ne) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
        q->entries = ne;
        q->cap = nc;
    }
    *slot = q->n_entries + 1;
    ec2_spot_entry *e = &q->entries[q->n_entries++];
    memset(e, 0, sizeof *e);
    strcpy(e->instance_type, v[SP_TYPE]);
    strcpy(e->az, v[SP_AZ]);
    e->usd_per_hour = price;
    e->timestamp = ts;
    return 0;
}

int aws_ec2_parse_spot_page(const char *xml, size_t len, ec2_spot_query *q, char **next, ib_error *err)
{
    static const ec2_xml_spec spec = {
        .root = "DescribeSpotPriceHistoryResponse",
        .item = "spotPriceHistorySet/item",
        .fields = {"instanceType", "productDescription", "spotPrice", "timestamp", "availabilityZone"},
        .on_item = spot_item,
        .what = "EC2 DescribeSpotPriceHistory"};
    if (ec2_xml_parse(&spec, q, xml, len, next, err) != 0) return -1;
    q->pages++;
    return 0;
}

static int cmp_type_zone(const void *a, const void *b)
{
    const ec2_spot_entry *x = a, *y = b;
    int c = strcmp(x->instance_type, y->instance_type);
    return c ? c : strcmp(x->az, y->az);
}

void ec2_spot_query_sort(ec2_spot_query *q)
{
    if (q->n_entries > 1) qsort(q->entries, q->n_entries, sizeof *q->entries, cmp_type_zone);
    free(q->index);
    q->index = NULL;
    q->n_index = 0;
}

const ec2_spot_entry *ec2_spot_query_run(const ec2_spot_query *q, const char *type, size_t *n)
{
    size_t lo = 0, hi = q->n_entries;
    while (lo < hi) { /* the first entry not before TYPE, in cmp_type_zone's order */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(q->entries[mid].instance_type, type) < 0) lo = mid + 1;
        else hi = mid;
    }
    size_t end = lo;
    while (end < q->n_entries && !strcmp(q->entries[end].instance_type, type)) end++;
    *n = end - lo;
    return q->entries + lo;
}

void ec2_spot_query_free(ec2_spot_query *q)
{
    free(q->entries);
    free(q->index);
    free(q->asked);
    q->entries = NULL;
    q->index = NULL;
    q->asked = NULL;
    q->n_entries = q->cap = q->n_index = 0;
}

typedef struct spot_ctx {
    ec2_spot_query *qs;
    int page_size;
} spot_ctx;

/* MaxResults as sent: DescribeSpotPriceHistory takes 5..1000. */
static int spot_page_size(const spot_ctx *sc)
{
    return sc->page_size <= 0 || sc->page_size > 1000 ? 1000 : sc->page_size < 5 ? 5 : sc->page_size;
}

/* An honest answer is at most max_entries prices (spot_item refuses more), so its pages follow the
 * question: 900 types of 30 zones at 5 a page are over 5,000.  The default bound on top leaves room
 * for pages AWS sends short or empty. */
static int spot_max_pages(void *ctx, size_t i)
{
    const spot_ctx *sc = ctx;
    size_t most = sc->qs[i].max_entries, ps = (size_t)spot_page_size(sc);
    if (!most) return 0;
    size_t pages = most / ps + (most % ps != 0) + AWS_PAGER_MAX_PAGES;
    return pages > INT_MAX ? INT_MAX : (int)pages;
}

static int spot_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body, ib_error *err)
{
    spot_ctx *sc = ctx;
    ec2_spot_query *q = &sc->qs[i];
    size_t len = 0, cap = 0;
    char name[48], val[32];
    int bad = aws_query_append(body, &len, &cap, "Action", "DescribeSpotPriceHistory") ||
              aws_query_append(body, &len, &cap, "Version", EC2_API_VERSION);
    for (size_t t = 0; t < q->n_types && !bad; t++) {
        snprintf(name, sizeof name, "InstanceType.%zu", t + 1);
        bad = aws_query_append(body, &len, &cap, name, q->instance_types[t]);
    }
    util_utc_iso8601(q->start_time ? q->start_time : time(NULL), val);
    bad = bad || aws_query_append(body, &len, &cap, "ProductDescription.1", "Linux/UNIX") ||
          aws_query_append(body, &len, &cap, "StartTime", val);
    snprintf(val, sizeof val, "%d", spot_page_size(sc));
    bad = bad || aws_query_append(body, &len, &cap, "MaxResults", val);
    if (token) bad = bad || aws_query_append(body, &len, &cap, "NextToken", token);
    if (bad) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
    return ec2_request(q->region, *body, req, url, err, "EC2 DescribeSpotPriceHistory");
}

static int spot_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    spot_ctx *sc = ctx;
    return aws_ec2_parse_spot_page(body, len, &sc->qs[i], next, err);
}

int aws_ec2_spot_pager(ec2_spot_query *qs, int page_size, aws_pager *out, ib_error *err)
{
    spot_ctx *sc = malloc(sizeof *sc);
    if (!sc) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
    sc->qs = qs;
    sc->page_size = page_size;
    aws_pager p = {.ctx = sc,
                   .what = "EC2 DescribeSpotPriceHistory",
                   .build = spot_build,
                   .parse = spot_parse,
                   .max_pages_of = spot_max_pages,
                   .max_body = SPOT_MAX_PAGE};
    *out = p;
    return 0;
}

/* ---- GetSpotPlacementScores ------------------------------------------------------------------ */
/* A deliberate mirror of DescribeSpotPriceHistory above: every EC2 call here is one aws_pager
 * (query struct, item callback, request builder, page parser, pager factory), so the two read
 * alike; what differs is the API's parameters and answer. */

/* AWS names the member <region>; accept <regionName> too (some emulators write that). */
enum { SC_REGION, SC_AZ, SC_SCORE, SC_REGION_NAME };

/* The most scores a query's answer holds: per region asked, its own and one per zone, of at most as
 * many zones as a zone map takes.  Past it the query fails at once, so what is kept is bounded by
 * the question, not by the pages an endpoint sends. */
static size_t scores_most(const ec2_score_query *q)
{
    return (q->n_regions ? q->n_regions : 1) *
           (1 + sizeof((ec2_zone_map *)0)->zones / sizeof(((ec2_zone_map *)0)->zones[0]));
}

static int score_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    ec2_score_query *q = ctx;
    long s;
    if (!v[SC_REGION][0]) memcpy(v[SC_REGION], v[SC_REGION_NAME], EC2_XML_VALUE_MAX);
    if (!v[SC_REGION][0] || strlen(v[SC_REGION]) >= 32 || strlen(v[SC_AZ]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: item without a valid region");
    if (util_parse_int(v[SC_SCORE], 1, 10, &s) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: score \"%.20s\" not in 1..10",
                            v[SC_SCORE]);
    if (q->n_scores >= scores_most(q))
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "EC2 GetSpotPlacementScores: more than %zu scores for %zu region%s, more zones than any "
                            "region has",
                            scores_most(q), q->n_regions, q->n_regions == 1 ? "" : "s");
    if (q->n_scores == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 16;
        ec2_score *ns = realloc(q->scores, nc * sizeof *ns);
        if (!ns) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: out of memory");
        q->scores = ns;
        q->cap = nc;
    }
    ec2_score *e = &q->scores[q->n_scores++];
    strcpy(e->region, v[SC_REGION]);
    strcpy(e->az_id, v[SC_AZ]);
    e->score = (int)s;
    return 0;
}

int aws_ec2_parse_scores_page(const char *xml, size_t len, ec2_score_query *q, char **next, ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "GetSpotPlacementScoresResponse",
                                      .item = "spotPlacementScoreSet/item",
                                      .fields = {"region", "availabilityZoneId", "score", "regionName"},
                                      .on_item = score_item,
                                      .what = "EC2 GetSpotPlacementScores"};
    return ec2_xml_parse(&spec, q, xml, len, next, err);
}

void ec2_score_query_free(ec2_score_query *q)
{
    free(q->scores);
    q->scores = NULL;
    q->n_scores = q->cap = 0;
}

typedef struct score_ctx {
    ec2_score_query *qs;
    const char *via_region;
} score_ctx;

static int score_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body, ib_error *err)
{
    score_ctx *sc = ctx;
    ec2_score_query *q = &sc->qs[i];
    /* The wire names are the members' locationName (InstanceType.N, RegionName.N), as botocore's
     * EC2 serializer writes them, not the API reference's member names (InstanceTypes). */
    size_t len = 0, cap = 0, nt = 1;
    char name[48], capacity[16];
    snprintf(capacity, sizeof capacity, "%d", q->target_capacity > 0 ? q->target_capacity : 1);
    int bad = aws_query_append(body, &len, &cap, "Action", "GetSpotPlacementScores") ||
              aws_query_append(body, &len, &cap, "Version", EC2_API_VERSION) ||
              aws_query_append(body, &len, &cap, "InstanceType.1", q->instance_type);
    for (size_t k = 0; k < q->n_pool && !bad; k++) {
        int dup = !strcmp(q->pool[k], q->instance_type);
        for (size_t j = 0; j < k && !dup; j++) dup = !strcmp(q->pool[j], q->pool[k]);
        if (dup) continue;
        snprintf(name, sizeof name, "InstanceType.%zu", ++nt);
        bad = aws_query_append(body, &len, &cap, name, q->pool[k]);
    }
    bad = bad || aws_query_append(body, &len, &cap, "TargetCapacity", capacity) ||
          aws_query_append(body, &len, &cap, "TargetCapacityUnitType", "units") ||
          aws_query_append(body, &len, &cap, "SingleAvailabilityZone", q->single_az ? "true" : "false") ||
          aws_query_append(body, &len, &cap, "MaxResults", "1000");
    for (size_t r = 0; r < q->n_regions && !bad; r++) {
        snprintf(name, sizeof name, "RegionName.%zu", r + 1);
        bad = aws_query_append(body, &len, &cap, name, q->regions[r]);
    }
    if (token) bad = bad || aws_query_append(body, &len, &cap, "NextToken", token);
    if (bad) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: out of memory");
    return ec2_request(sc->via_region, *body, req, url, err, "EC2 GetSpotPlacementScores");
}

static int score_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    score_ctx *sc = ctx;
    return aws_ec2_parse_scores_page(body, len, &sc->qs[i], next, err);
}

int aws_ec2_scores_pager(ec2_score_query *qs, const char *via_region, aws_pager *out, ib_error *err)
{
    score_ctx *sc = malloc(sizeof *sc);
    if (!sc) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: out of memory");
    sc->qs = qs;
    sc->via_region = via_region;
    aws_pager p = {.ctx = sc,
                   .what = "EC2 GetSpotPlacementScores",
                   .build = score_build,
                   .parse = score_parse,
                   .max_body = SCORES_MAX_PAGE};
    *out = p;
    return 0;
}

/* ---- DescribeAvailabilityZones ---------------------------------------------------------------- */

static int zone_item(void *ctx, char v[][EC2_XML_VALUE_MAX], ib_error *err)
{
    ec2_zone_map *m = ctx;
    if (!v[0][0] || !v[1][0] || strlen(v[0]) >= 32 || strlen(v[1]) >= 32) return 0;
    if (m->n >= sizeof m->zones / sizeof m->zones[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeAvailabilityZones: too many zones");
    strcpy(m->zones[m->n].name, v[0]);
    strcpy(m->zones[m->n].id, v[1]);
    m->n++;
    return 0;
}

int aws_ec2_parse_zones(const char *xml, size_t len, ec2_zone_map *m, ib_error *err)
{
    static const ec2_xml_spec spec = {.root = "DescribeAvailabilityZonesResponse",
                                      .item = "availabilityZoneInfo/item",
                                      .fields = {"zoneName", "zoneId"},
                                      .on_item = zone_item,
                                      .what = "EC2 DescribeAvailabilityZones"};
    return ec2_xml_parse(&spec, m, xml, len, NULL, err);
}

static int zones_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body, ib_error *err)
{
    ec2_zone_map *m = &((ec2_zone_map *)ctx)[i];
    size_t len = 0, cap = 0;
    if (aws_query_append(body, &len, &cap, "Action", "DescribeAvailabilityZones") ||
        aws_query_append(body, &len, &cap, "Version", EC2_API_VERSION))
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeAvailabilityZones: out of memory");
    return ec2_request(m->region, *body, req, url, err, "EC2 DescribeAvailabilityZones");
}

static int zones_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    *next = NULL;
    ec2_zone_map *m = &((ec2_zone_map *)ctx)[i];
    m->n = 0;
    return aws_ec2_parse_zones(body, len, m, err);
}

int aws_ec2_zones_pager(ec2_zone_map *maps, aws_pager *out, ib_error *err)
{
    aws_pager p = {.ctx = maps,
                   .what = "EC2 DescribeAvailabilityZones",
                   .build = zones_build,
                   .parse = zones_parse,
                   .max_pages = 1,
                   .max_body = ZONES_MAX_PAGE};
    *out = p; /* ctx is the caller's array: nothing to free */
    return 0;
}

size_t aws_ec2_zone_maps(aws_client *c, ec2_zone_map *maps, size_t n, ib_error *errs)
{
    aws_pager p;
    aws_ec2_zones_pager(maps, &p, NULL);
    return aws_paginate_many(c, &p, n, errs);
}
