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
 * in case a page carries history. */
#include "instbench/aws_services.h"

#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EC2_API_VERSION "2016-11-15"
#define MAX_SANE_USD_PER_HOUR 2000.0
#define XML_MAX_FIELDS 6
#define XML_VALUE_MAX 256

/* ---- a small reader for EC2's "set of flat items" responses -------------------------------- */

typedef struct xml_items {
    const char *root;                 /* expected root element */
    const char *set;                  /* the list element under the root */
    const char *fields[XML_MAX_FIELDS];
    int (*on_item)(void *ctx, char values[][XML_VALUE_MAX], ib_error *err);
    void *ctx;
    const char *what;                 /* "EC2 DescribeSpotPriceHistory" */
    /* state */
    XML_Parser parser;
    int depth, in_set, in_item, field, in_token;
    char values[XML_MAX_FIELDS][XML_VALUE_MAX];
    size_t vlen[XML_MAX_FIELDS];
    char next_token[4096];
    size_t token_len;
    int failed, saw_root;
    ib_error *err;
} xml_items;

static void xml_fail(xml_items *x, const char *why)
{
    if (!x->failed) ib_error_set(x->err, IB_EXIT_RUNTIME, "%s: %s", x->what, why);
    x->failed = 1;
    XML_StopParser(x->parser, XML_FALSE);
}

static void XMLCALL xml_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    xml_items *x = ud;
    x->depth++;
    if (x->failed) return;
    if (x->depth == 1) {
        if (strcmp(name, x->root) != 0) {
            char why[160];
            snprintf(why, sizeof why, "unexpected XML document <%.60s>, expected <%s>", name, x->root);
            xml_fail(x, why);
            return;
        }
        x->saw_root = 1;
    } else if (x->depth == 2) {
        x->in_set = !strcmp(name, x->set);
        x->in_token = !strcmp(name, "nextToken");
        x->token_len = 0;
        x->next_token[0] = '\0';
    } else if (x->depth == 3 && x->in_set) {
        if (strcmp(name, "item") == 0) {
            x->in_item = 1;
            for (int i = 0; i < XML_MAX_FIELDS; i++) x->values[i][0] = '\0', x->vlen[i] = 0;
        }
    } else if (x->depth == 4 && x->in_item) {
        x->field = -1;
        for (int i = 0; i < XML_MAX_FIELDS && x->fields[i]; i++)
            if (!strcmp(name, x->fields[i])) x->field = i;
    }
}

static void XMLCALL xml_end(void *ud, const XML_Char *name)
{
    xml_items *x = ud;
    if (!x->failed) {
        if (x->depth == 4) x->field = -1;
        else if (x->depth == 3 && x->in_item) {
            x->in_item = 0;
            if (x->on_item(x->ctx, x->values, x->err) != 0) {
                x->failed = 1;
                XML_StopParser(x->parser, XML_FALSE);
            }
        } else if (x->depth == 2) {
            x->in_set = 0;
            x->in_token = 0;
        }
    }
    x->depth--;
}

static void XMLCALL xml_text(void *ud, const XML_Char *s, int len)
{
    xml_items *x = ud;
    if (x->failed || len <= 0) return;
    if (x->depth == 2 && x->in_token) {
        if (x->token_len + (size_t)len >= sizeof x->next_token) {
            xml_fail(x, "nextToken too long");
            return;
        }
        memcpy(x->next_token + x->token_len, s, (size_t)len);
        x->token_len += (size_t)len;
        x->next_token[x->token_len] = '\0';
    } else if (x->depth == 4 && x->in_item && x->field >= 0) {
        int f = x->field;
        if (x->vlen[f] + (size_t)len >= XML_VALUE_MAX) {
            xml_fail(x, "value too long in an item");
            return;
        }
        memcpy(x->values[f] + x->vlen[f], s, (size_t)len);
        x->vlen[f] += (size_t)len;
        x->values[f][x->vlen[f]] = '\0';
    }
}

/* Parses a whole response; *next (malloc'd) gets nextToken when the caller wants it. */
static int xml_items_parse(xml_items *x, const char *xml, size_t len, char **next, ib_error *err)
{
    if (next) *next = NULL;
    x->err = err;
    x->parser = XML_ParserCreate("UTF-8");
    if (!x->parser) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", x->what);
    XML_SetUserData(x->parser, x);
    XML_SetElementHandler(x->parser, xml_start, xml_end);
    XML_SetCharacterDataHandler(x->parser, xml_text);
    x->field = -1;
    int ok = 1;
    /* Feed in bounded chunks: XML_Parse takes an int length. */
    size_t off = 0;
    do {
        size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
        int final = off + chunk == len;
        if (XML_Parse(x->parser, xml + off, (int)chunk, final) != XML_STATUS_OK) {
            ok = 0;
            break;
        }
        off += chunk;
    } while (off < len);
    if (!ok && !x->failed)
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: malformed XML response (%s at line %lu)", x->what,
                     XML_ErrorString(XML_GetErrorCode(x->parser)),
                     (unsigned long)XML_GetCurrentLineNumber(x->parser));
    XML_ParserFree(x->parser);
    x->parser = NULL;
    if (!ok || x->failed) return -1;
    if (!x->saw_root) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: empty response", x->what);
    if (next && x->next_token[0]) {
        *next = strdup(x->next_token);
        if (!*next) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", x->what);
    }
    return 0;
}

/* ---- shared request building -------------------------------------------------------------- */

static const aws_header form_headers[] = {
    {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
};

static int ec2_request(const char *region, char *body, aws_request *req, char **url, ib_error *err,
                       const char *what)
{
    char ep[512];
    if (aws_endpoint_url("EC2", region, ep, sizeof ep) != 0 || !ep[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: no endpoint for region %s", what, region);
    size_t n = strlen(ep) + 2;
    *url = malloc(n);
    if (!*url) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
    snprintf(*url, n, "%s%s", ep, ep[strlen(ep) - 1] == '/' ? "" : "/");
    req->method = "POST";
    req->service = "ec2";
    req->region = region;
    req->url = *url;
    req->headers = form_headers;
    req->n_headers = 1;
    req->body = body;
    req->body_len = strlen(body);
    return 0;
}

static int parse_price(const char *s, double *out)
{
    char *end;
    if (!s[0]) return -1;
    double v = strtod(s, &end);
    if (*end != '\0' || !isfinite(v) || v <= 0 || v > MAX_SANE_USD_PER_HOUR) return -1;
    *out = v;
    return 0;
}

/* ---- DescribeSpotPriceHistory ---------------------------------------------------------------- */

enum { SP_TYPE, SP_DESC, SP_PRICE, SP_TIME, SP_AZ };

static int spot_item(void *ctx, char v[][XML_VALUE_MAX], ib_error *err)
{
    ec2_spot_query *q = ctx;
    double price;
    time_t ts;
    if (!v[SP_TYPE][0] || !v[SP_AZ][0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: item without instanceType/availabilityZone");
    if (parse_price(v[SP_PRICE], &price) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: implausible spotPrice \"%.40s\"",
                            v[SP_PRICE]);
    if (util_parse_iso8601(v[SP_TIME], &ts) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: bad timestamp \"%.40s\"", v[SP_TIME]);
    if (v[SP_DESC][0] && strcmp(v[SP_DESC], "Linux/UNIX") != 0) return 0;
    if (strlen(v[SP_TYPE]) >= 64 || strlen(v[SP_AZ]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: name too long");
    int asked = q->n_types == 0;
    for (size_t i = 0; i < q->n_types && !asked; i++) asked = !strcmp(q->instance_types[i], v[SP_TYPE]);
    if (!asked) return 0;
    for (size_t i = 0; i < q->n_entries; i++) {
        ec2_spot_entry *e = &q->entries[i];
        if (!strcmp(e->instance_type, v[SP_TYPE]) && !strcmp(e->az, v[SP_AZ])) {
            if (ts > e->timestamp) {
                e->timestamp = ts;
                e->usd_per_hour = price;
            }
            return 0;
        }
    }
    if (q->n_entries == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 32;
        ec2_spot_entry *ne = realloc(q->entries, nc * sizeof *ne);
        if (!ne) return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 DescribeSpotPriceHistory: out of memory");
        q->entries = ne;
        q->cap = nc;
    }
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
    xml_items x = {.root = "DescribeSpotPriceHistoryResponse", .set = "spotPriceHistorySet",
                   .fields = {"instanceType", "productDescription", "spotPrice", "timestamp", "availabilityZone"},
                   .on_item = spot_item, .ctx = q, .what = "EC2 DescribeSpotPriceHistory"};
    if (xml_items_parse(&x, xml, len, next, err) != 0) return -1;
    q->pages++;
    return 0;
}

void ec2_spot_query_free(ec2_spot_query *q)
{
    free(q->entries);
    q->entries = NULL;
    q->n_entries = q->cap = 0;
}

typedef struct spot_ctx {
    ec2_spot_query *qs;
    int page_size;
} spot_ctx;

static int spot_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                      ib_error *err)
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
    /* DescribeSpotPriceHistory takes MaxResults 5..1000. */
    int ps = sc->page_size <= 0 || sc->page_size > 1000 ? 1000 : sc->page_size < 5 ? 5 : sc->page_size;
    snprintf(val, sizeof val, "%d", ps);
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
    aws_pager p = {sc, "EC2 DescribeSpotPriceHistory", spot_build, spot_parse, 0, NULL};
    *out = p;
    return 0;
}

/* ---- GetSpotPlacementScores ------------------------------------------------------------------ */
/* A deliberate mirror of DescribeSpotPriceHistory above: every EC2 call here is one aws_pager
 * (query struct, item callback, request builder, page parser, pager factory), so the two read
 * alike; what differs is the API's parameters and answer. */

/* AWS names the member <region>; accept <regionName> too (some emulators write that). */
enum { SC_REGION, SC_AZ, SC_SCORE, SC_REGION_NAME };

static int score_item(void *ctx, char v[][XML_VALUE_MAX], ib_error *err)
{
    ec2_score_query *q = ctx;
    long s;
    if (!v[SC_REGION][0]) memcpy(v[SC_REGION], v[SC_REGION_NAME], XML_VALUE_MAX);
    if (!v[SC_REGION][0] || strlen(v[SC_REGION]) >= 32 || strlen(v[SC_AZ]) >= 32)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: item without a valid region");
    if (util_parse_int(v[SC_SCORE], 1, 10, &s) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "EC2 GetSpotPlacementScores: score \"%.20s\" not in 1..10",
                            v[SC_SCORE]);
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
    xml_items x = {.root = "GetSpotPlacementScoresResponse", .set = "spotPlacementScoreSet",
                   .fields = {"region", "availabilityZoneId", "score", "regionName"},
                   .on_item = score_item, .ctx = q, .what = "EC2 GetSpotPlacementScores"};
    return xml_items_parse(&x, xml, len, next, err);
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

static int score_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                       ib_error *err)
{
    score_ctx *sc = ctx;
    ec2_score_query *q = &sc->qs[i];
    size_t len = 0, cap = 0;
    char name[48];
    int bad = aws_query_append(body, &len, &cap, "Action", "GetSpotPlacementScores") ||
              aws_query_append(body, &len, &cap, "Version", EC2_API_VERSION) ||
              aws_query_append(body, &len, &cap, "InstanceTypes.1", q->instance_type) ||
              aws_query_append(body, &len, &cap, "TargetCapacity", "1") ||
              aws_query_append(body, &len, &cap, "TargetCapacityUnitType", "units") ||
              aws_query_append(body, &len, &cap, "SingleAvailabilityZone", q->single_az ? "true" : "false") ||
              aws_query_append(body, &len, &cap, "MaxResults", "1000");
    for (size_t r = 0; r < q->n_regions && !bad; r++) {
        snprintf(name, sizeof name, "RegionNames.%zu", r + 1);
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
    aws_pager p = {sc, "EC2 GetSpotPlacementScores", score_build, score_parse, 0, NULL};
    *out = p;
    return 0;
}

/* ---- DescribeAvailabilityZones ---------------------------------------------------------------- */

static int zone_item(void *ctx, char v[][XML_VALUE_MAX], ib_error *err)
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
    xml_items x = {.root = "DescribeAvailabilityZonesResponse", .set = "availabilityZoneInfo",
                   .fields = {"zoneName", "zoneId"}, .on_item = zone_item, .ctx = m,
                   .what = "EC2 DescribeAvailabilityZones"};
    return xml_items_parse(&x, xml, len, NULL, err);
}

static int zones_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                       ib_error *err)
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
    aws_pager p = {maps, "EC2 DescribeAvailabilityZones", zones_build, zones_parse, 1, NULL};
    *out = p;   /* ctx is the caller's array: nothing to free */
    return 0;
}

size_t aws_ec2_zone_maps(aws_client *c, ec2_zone_map *maps, size_t n, ib_error *errs)
{
    aws_pager p = {maps, "EC2 DescribeAvailabilityZones", zones_build, zones_parse, 1, NULL};
    return aws_paginate_many(c, &p, n, errs);
}
