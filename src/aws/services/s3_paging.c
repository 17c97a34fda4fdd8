/* s3_paging: ListObjectsV2, a page at a time (aws_s3_pager_*) or whole (aws_s3_list_objects), and
 * aws_s3_get_objects, whose batch of GETs may carry the pager's next page along.  Its own file to
 * keep s3.c, whose requests it sends (s3_internal.h), under the 800-line limit; GetObjects is here
 * because the page it carries is the pager's, and the files may not depend on each other both ways.
 * ListObjectsV2 asks for encoding-type=url, so keys with characters XML 1.0 cannot carry arrive
 * percent-encoded; s3_list_page.c decodes them, and they stay untrusted bytes for the caller.
 * Bounded: at most max_pages pages (a token that never ends stops), max_objects keys a listing. */
#include "instbench/aws_services.h"
#include "s3_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S3_DEFAULT_MAX_PAGES 10000
#define S3_DEFAULT_MAX_OBJECTS 1000000

/* ---- ListObjectsV2 paging (the page parser is s3_list_page.c) ---------------------------- */

static char *list_query(const aws_s3_pager *p)
{
    char *q = NULL;
    size_t ql = 0, qc = 0;
    int ok = 1;
    if (p->token) {
        ok = ok && aws_str_append(&q, &ql, &qc, "continuation-token=") == 0 &&
             aws_uri_append(&q, &ql, &qc, p->token, 0) == 0;
        ok = ok && aws_str_append(&q, &ql, &qc, "&") == 0;
    }
    ok = ok && aws_str_append(&q, &ql, &qc, "encoding-type=url&list-type=2") == 0;
    if (p->page_size > 0) {
        char mk[32];
        snprintf(mk, sizeof mk, "&max-keys=%d", p->page_size > 1000 ? 1000 : p->page_size);
        ok = ok && aws_str_append(&q, &ql, &qc, mk) == 0;
    }
    if (p->prefix[0])
        ok = ok && aws_str_append(&q, &ql, &qc, "&prefix=") == 0 && aws_uri_append(&q, &ql, &qc, p->prefix, 0) == 0;
    if (!ok) free(q);
    return ok ? q : NULL;
}

void aws_s3_pager_init(aws_s3_pager *p, const char *bucket, const char *prefix, int page_size, int max_pages)
{
    memset(p, 0, sizeof *p);
    snprintf(p->bucket, sizeof p->bucket, "%s", bucket);
    p->prefix = prefix ? prefix : "";
    p->page_size = page_size;
    p->max_pages = max_pages > 0 ? max_pages : S3_DEFAULT_MAX_PAGES;
    p->more = 1;
}

void aws_s3_pager_free(aws_s3_pager *p)
{
    free(p->token);
    p->token = NULL;
    aws_s3_listing_free(&p->page);
    p->more = 0;
}

/* Ends the pager with ERR's message (already set); -1. */
static int pager_stop(aws_s3_pager *p)
{
    aws_s3_pager_free(p);
    return -1;
}

/* Before a page is asked for: -1 (err set, pager ended) past max_pages, so a token that never
 * ends stops. */
static int pager_may_ask(aws_s3_pager *p, ib_error *err)
{
    if (p->pages < p->max_pages) return 0;
    ib_error_set(err, IB_EXIT_RUNTIME,
                 "S3 ListObjectsV2 s3://%s/%.1000s: still more after %d pages: "
                 "stopped (a continuation token that never ends?)",
                 p->bucket, p->prefix, p->max_pages);
    return pager_stop(p);
}

/* s3://bucket/prefix, what the caller asked for: two prefixes of one bucket fail apart. */
static const char *list_shown(const aws_s3_pager *p, char *shown, size_t n)
{
    snprintf(shown, n, "s3://%s/%.1000s", p->bucket, p->prefix);
    return shown;
}

/* A page's answer (2xx) into p->page, replacing the page before. */
static int pager_take(aws_s3_pager *p, const aws_response *r, ib_error *err)
{
    aws_s3_listing_free(&p->page);
    free(p->token);
    p->token = NULL;
    p->pages++;
    if (aws_s3_parse_list_page(r->body, r->body_len, &p->page, &p->token, err) != 0) {
        /* the parser knows no bucket; the message is escaped already, and again changes nothing */
        static const char lead[] = "S3 ListObjectsV2: ";
        if (!strncmp(err->msg, lead, sizeof lead - 1)) {
            char why[sizeof err->msg], shown[1200];
            snprintf(why, sizeof why, "%s", err->msg + sizeof lead - 1);
            ib_error_set(err, err->code, "S3 ListObjectsV2 %s: %s", list_shown(p, shown, sizeof shown), why);
        }
        return pager_stop(p);
    }
    p->page.pages = 1;
    p->more = p->token != NULL;
    return 0;
}

int aws_s3_pager_next(aws_s3 *s, aws_s3_pager *p, ib_error *err)
{
    if (!p->more) {
        aws_s3_listing_free(&p->page);
        return 0;
    }
    if (pager_may_ask(p, err) != 0) return -1;
    char *q = list_query(p);
    if (!q) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        return pager_stop(p);
    }
    char shown[1200];
    s3_call k = {.method = "GET",
                 .bucket = p->bucket,
                 .query = q,
                 .what = "ListObjectsV2",
                 .shown = list_shown(p, shown, sizeof shown)};
    aws_response r;
    int rc = s3_send(s, &k, &r, err);
    free(q);
    if (rc != 0) return pager_stop(p);
    rc = pager_take(p, &r, err);
    aws_response_free(&r);
    return rc;
}

/* The pager's next page as a request sent with others (aws_s3_get_objects): *URL the caller's to
 * free.  -1 (err set, pager ended) when it cannot be asked for. */
static int list_page_in_flight(aws_s3 *s, aws_s3_pager *p, aws_request *req, char **url, ib_error *err)
{
    if (pager_may_ask(p, err) != 0) return -1;
    char *q = list_query(p);
    const char *region = s3_bucket_region(s, p->bucket);
    if (!q || s3_url(s, p->bucket, NULL, region, q, url, NULL, 0, err) != 0) {
        if (!q) ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        free(q);
        return pager_stop(p);
    }
    free(q);
    *req = (aws_request){.method = "GET", .service = "s3", .region = region, .url = *url, .s3 = 1};
    return 0;
}

/* Its answer: the page taken, or (a redirect) asked again alone through s3_send, or the pager
 * ended with S3's message in p->err. */
static void list_page_answered(aws_s3 *s, aws_s3_pager *p, aws_response *r, const ib_error *terr)
{
    if (terr->code == 0 && r->status >= 200 && r->status < 300) {
        pager_take(p, r, &p->err);
    } else if (s3_is_region_redirect(r)) {
        aws_s3_pager_next(s, p, &p->err);
    } else {
        char shown[1200];
        s3_call k = {
            .method = "GET", .bucket = p->bucket, .what = "ListObjectsV2", .shown = list_shown(p, shown, sizeof shown)};
        s3_fail(s, &k, s3_bucket_region(s, p->bucket), r, terr, &p->err);
        pager_stop(p);
    }
}

int aws_s3_list_objects(aws_s3 *s, const char *bucket, const char *prefix, int page_size, int max_pages,
                        size_t max_objects, aws_s3_listing *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (max_objects == 0) max_objects = S3_DEFAULT_MAX_OBJECTS;
    aws_s3_pager p;
    aws_s3_pager_init(&p, bucket, prefix, page_size, max_pages);
    while (p.more) {
        if (aws_s3_pager_next(s, &p, err) != 0) {
            aws_s3_listing_free(out);
            return -1;
        }
        out->pages = p.pages;
        for (size_t i = 0; i < p.page.n; i++) { /* the keys move to OUT */
            if (out->n >= max_objects) {
                aws_s3_pager_free(&p);
                aws_s3_listing_free(out);
                return ib_error_set(err, IB_EXIT_RUNTIME,
                                    "S3 ListObjectsV2 s3://%s/%.1000s: more than %zu "
                                    "objects: stopped",
                                    bucket, prefix ? prefix : "", max_objects);
            }
            int rc = s3_listing_push(out, p.page.objs[i].key, p.page.objs[i].size);
            p.page.objs[i].key = NULL;
            if (rc != 0) {
                aws_s3_pager_free(&p);
                aws_s3_listing_free(out);
                return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            }
        }
    }
    aws_s3_pager_free(&p);
    return 0;
}

/* ---- GETs, with the next listing page along ------------------------------------------------ */

size_t aws_s3_get_objects(aws_s3 *s, const char *bucket, char *const *keys, size_t n, const size_t *max_bytes,
                          char **bodies, size_t *lens, ib_error *errs, int *too_big, aws_s3_pager *along)
{
    if (n == 0 && !(along && along->more)) return 0;
    memset(errs, 0, n * sizeof *errs);
    memset(bodies, 0, n * sizeof *bodies);
    memset(lens, 0, n * sizeof *lens);
    if (too_big) memset(too_big, 0, n * sizeof *too_big);
    /* Until a request to the bucket has succeeded (a listing usually has), the first GET goes
     * alone: a region redirect is learnt once, not once per object. */
    size_t first = n && !s3_region_confirmed(s, bucket) ? 1 : 0;
    size_t failed = first && s3_get_object(s, bucket, keys[0], max_bytes[0], &bodies[0], &lens[0],
                                           too_big ? &too_big[0] : NULL, &errs[0]) != 0;
    const char *region = s3_bucket_region(s, bucket);
    /* slot 0 .. m-1: the GETs; slot m: the next listing page, when one rides along */
    aws_request *reqs = calloc(n + 1, sizeof *reqs);
    aws_response *resps = calloc(n + 1, sizeof *resps);
    ib_error *terrs = calloc(n + 1, sizeof *terrs);
    char **urls = calloc(n + 1, sizeof *urls);
    size_t *idx = calloc(n + 1, sizeof *idx); /* request slot -> key index */
    size_t m = 0;
    int oom = !reqs || !resps || !terrs || !urls || !idx;
    for (size_t i = first; i < n; i++) {
        if (oom) {
            ib_error_set(&errs[i], IB_EXIT_RUNTIME, "out of memory");
            failed++;
        } else if (s3_url(s, bucket, keys[i], region, NULL, &urls[m], NULL, 0, &errs[i]) != 0) {
            failed++;
        } else {
            reqs[m] = (aws_request){
                .method = "GET", .service = "s3", .region = region, .url = urls[m], .s3 = 1, .max_body = max_bytes[i]};
            idx[m++] = i;
        }
    }
    int listing = 0;
    if (along && along->more) {
        if (!oom) {
            listing = list_page_in_flight(s, along, &reqs[m], &urls[m], &along->err) == 0;
        } else {
            ib_error_set(&along->err, IB_EXIT_RUNTIME, "out of memory");
            pager_stop(along);
        }
    }
    if (m + (size_t)listing) aws_client_send_many(s->c, reqs, m + (size_t)listing, resps, terrs);
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        if (terrs[j].code == 0 && resps[j].status >= 200 && resps[j].status < 300) {
            bodies[i] = resps[j].body;
            lens[i] = resps[j].body_len;
            resps[j].body = NULL;
        } else if (s3_is_region_redirect(&resps[j])) {
            /* the bucket moved under us (or a stale region): that object alone, through s3_send */
            failed += s3_get_object(s, bucket, keys[i], max_bytes[i], &bodies[i], &lens[i],
                                    too_big ? &too_big[i] : NULL, &errs[i]) != 0;
        } else {
            s3_call call = {.method = "GET", .bucket = bucket, .key = keys[i], .what = "GetObject"};
            s3_fail(s, &call, region, &resps[j], &terrs[j], &errs[i]);
            if (too_big) too_big[i] = resps[j].too_big;
            failed++;
        }
        aws_response_free(&resps[j]);
        free(urls[j]);
    }
    if (listing) {
        list_page_answered(s, along, &resps[m], &terrs[m]);
        aws_response_free(&resps[m]);
        free(urls[m]);
    }
    free(reqs);
    free(resps);
    free(terrs);
    free(urls);
    free(idx);
    return failed;
}
