/* cmd/rank_s3: `rank s3://BUCKET/PREFIX/`: the objects under a prefix read into memory and handed
 * to rank's loader (rank_sink_object), with the rules of a directory: *.json and *.jsonl objects,
 * plain or gzip-compressed (*.gz, decompressed by the loader as a local file is),
 * keys with a hidden part (".x") left out, the 64 MiB per-object cap (known from the listing, so
 * a bigger object is not fetched), each result counted once by the loader (across local and S3
 * inputs).  The listing is read a page at a time, each page's next listed while its objects are
 * fetched; objects are fetched concurrently in batches bounded by bytes (and by the page), so
 * memory is one batch and two pages, and never written to a local path: keys are untrusted
 * ("../", control characters) and only ever shown, escaped. */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "instbench/aws.h"
#include "instbench/aws_services.h"
#include "instbench/rank.h"

#define RANK_S3_MAX_OBJECT (64u << 20) /* as a local result file */
/* GETs in flight: objects of a few KiB are latency-bound, so a round trip should carry many (1,000
 * objects take 8 round trips at 128, the AWS CLI's 10 at a time take 100).  Memory: the bodies of
 * one batch, at most RANK_S3_BATCH_BYTES of listed sizes (or one object of up to 64 MiB), plus two
 * listing pages of up to 1,000 keys, plus one object's decompressed copy (64 MiB at most). */
#define RANK_S3_CONCURRENCY 128
#define RANK_S3_BATCH_BYTES (128u << 20)
/* What a GET may bring beyond the size its listing gave: the memory bound above holds only if the
 * endpoint sends what it listed (a hostile one listing 2 bytes and sending 64 MiB to each of 128
 * GETs would make 8 GiB), but an object rewritten between the listing and the GET (a .jsonl
 * appended to) may rightly have grown a little. */
#define RANK_S3_GROWTH (1u << 20)

struct rank_s3 {
    aws_client *client;
    aws_s3 *s3;
    ib_error open_err; /* why no client could be made (every s3:// input is skipped with it) */
    int opened;
};

int rank_s3_check_inputs(char *const *paths, size_t n, ib_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(paths[i], "s3://", 5) != 0) continue;
        char bucket[64], *key = NULL;
        if (aws_s3_parse_uri(paths[i], bucket, &key, err) != 0) return -1;
        free(key);
    }
    return 0;
}

static int s3_open(rank_s3 *r)
{
    if (r->opened) return r->s3 ? 0 : -1;
    r->opened = 1;
    return aws_s3_connect(RANK_S3_CONCURRENCY, &r->client, &r->s3, &r->open_err);
}

/* A directory walk's rules, by key: result names (rank_is_result_name), no part of the key below
 * the prefix hidden. */
static int wanted(const char *key, const char *prefix)
{
    if (!rank_is_result_name(key)) return 0;
    /* from the part the prefix's last '/' begins: what the user named is theirs to name */
    const char *last = strrchr(prefix, '/');
    for (const char *p = key + (last ? (size_t)(last - prefix + 1) : 0); p; p = strchr(p, '/')) {
        if (*p == '/') p++;
        if (*p == '.') return 0;
    }
    return 1;
}

/* Fetches OBJS[0..N) together (ALONG: a pager whose next page is listed in the same flight, or
 * NULL) and hands each to the loader. */
static void read_batch(rank_s3 *r, const char *bucket, const aws_s3_object *objs, size_t n, aws_s3_pager *along,
                       rank_sink *sink)
{
    char **keys = calloc(n + 1, sizeof *keys), **bodies = calloc(n + 1, sizeof *bodies);
    size_t *lens = calloc(n + 1, sizeof *lens), *caps = calloc(n + 1, sizeof *caps);
    ib_error *errs = calloc(n + 1, sizeof *errs);
    int *too_big = calloc(n + 1, sizeof *too_big);
    if (keys && bodies && lens && caps && errs && too_big) {
        for (size_t i = 0; i < n; i++) {
            keys[i] = objs[i].key;
            const size_t listed = (size_t)objs[i].size; /* <= RANK_S3_MAX_OBJECT: read_page's rule */
            caps[i] = listed + RANK_S3_GROWTH < RANK_S3_MAX_OBJECT ? listed + RANK_S3_GROWTH : RANK_S3_MAX_OBJECT;
        }
        aws_s3_get_objects(r->s3, bucket, keys, n, caps, bodies, lens, errs, too_big, along);
        for (size_t i = 0; i < n; i++) {
            size_t wn = strlen(bucket) + strlen(keys[i]) + 8;
            char *where = malloc(wn);
            if (where) snprintf(where, wn, "s3://%s/%s", bucket, keys[i]);
            if (errs[i].code && too_big[i]) {
                char why[sizeof errs[i].msg + 160];
                snprintf(why, sizeof why,
                         "%s; it was listed as %lld bytes: the endpoint sends more than it lists, "
                         "or the object grew after it was listed (run again)",
                         errs[i].msg, objs[i].size);
                rank_sink_skip(sink, where ? where : keys[i], why);
            } else if (errs[i].code) rank_sink_skip(sink, where ? where : keys[i], errs[i].msg);
            else rank_sink_object(sink, where ? where : keys[i], keys[i], bodies[i], lens[i]);
            free(where);
            free(bodies[i]);
        }
    }
    free(keys);
    free(bodies);
    free(lens);
    free(caps);
    free(errs);
    free(too_big);
}

/* One listed page's result objects, fetched in batches of at most RANK_S3_BATCH_BYTES listed bytes
 * (a page holds at most 1,000 keys); the pager's next page is listed along with the first batch.
 * Returns how many result objects the page named. */
static size_t read_page(rank_s3 *r, const char *bucket, const char *prefix, const aws_s3_listing *page,
                        aws_s3_pager *pg, rank_sink *sink)
{
    size_t found = 0, n = 0;
    /* the kept objects, in key order (S3 lists in byte order, as a directory is sorted) */
    aws_s3_object *keep = calloc(page->n ? page->n : 1, sizeof *keep);
    size_t plen = prefix ? strlen(prefix) : 0;
    for (size_t i = 0; keep && i < page->n; i++) {
        if (plen && strncmp(page->objs[i].key, prefix, plen)) {
            /* S3 lists only under the prefix: a key outside it is the endpoint's error, never read */
            char where[1200];
            snprintf(where, sizeof where, "s3://%s/%.1100s", bucket, page->objs[i].key);
            rank_sink_skip(sink, where, "outside the prefix asked for: the listing named a key it should not have");
            continue;
        }
        if (!wanted(page->objs[i].key, prefix)) continue;
        found++;
        if ((unsigned long long)page->objs[i].size > RANK_S3_MAX_OBJECT) {
            char where[1200];
            snprintf(where, sizeof where, "s3://%s/%.1100s", bucket, page->objs[i].key);
            rank_sink_skip(sink, where, "too large to be a result file (more than 64 MiB)");
            continue;
        }
        keep[n++] = page->objs[i];
    }
    size_t bytes = 0, from = 0;
    for (size_t i = 0; keep && i <= n; i++) {
        if (i == n || (i > from && bytes + (size_t)keep[i].size > RANK_S3_BATCH_BYTES)) {
            if (i > from) read_batch(r, bucket, keep + from, i - from, from == 0 && pg->more ? pg : NULL, sink);
            from = i;
            bytes = 0;
        }
        if (i < n) bytes += (size_t)keep[i].size;
    }
    free(keep);
    return found;
}

void rank_s3_read(void *ctx, const char *uri, rank_sink *sink)
{
    rank_s3 *r = ctx;
    char bucket[64], *prefix = NULL;
    ib_error err;
    if (aws_s3_parse_uri(uri, bucket, &prefix, &err) != 0) { /* checked before: only a bug lands here */
        rank_sink_skip(sink, uri, err.msg);
        return;
    }
    if (s3_open(r) != 0) {
        rank_sink_skip(sink, uri, r->open_err.msg);
        free(prefix);
        return;
    }
    aws_s3_pager pg;
    aws_s3_pager_init(&pg, bucket, prefix, 0, 0);
    size_t found = 0;
    int failed = aws_s3_pager_next(r->s3, &pg, &err) != 0, listed = 0;
    while (!failed) {
        listed = 1;                    /* a page of the listing was read: a failure now leaves it partial */
        aws_s3_listing page = pg.page; /* taken: the next page may land in pg.page meanwhile */
        memset(&pg.page, 0, sizeof pg.page);
        int pages = pg.pages;
        found += read_page(r, bucket, prefix, &page, &pg, sink);
        aws_s3_listing_free(&page);
        if (pg.err.code) {
            err = pg.err;
            failed = 1;
        } else if (pg.pages == pages) { /* no batch took the next page along */
            if (!pg.more) break;
            failed = aws_s3_pager_next(r->s3, &pg, &err) != 0;
        }
    }
    /* A listing that fails before its first page is an input that cannot be read (skipped, as an
     * unreadable directory is); one that stops after some pages (the page bound, a failure later
     * on) has listed part of the prefix, and ranking that part would look like the whole. */
    if (failed && listed) {
        char why[sizeof err.msg + 96];
        snprintf(why, sizeof why, "listed only in part, so nothing is ranked: %s", err.msg);
        rank_sink_fail(sink, uri, why);
    } else if (failed) rank_sink_skip(sink, uri, err.msg);
    else if (!found) rank_sink_skip(sink, uri, "no .json or .jsonl objects (plain or .gz) under this prefix");
    aws_s3_pager_free(&pg);
    free(prefix);
}

rank_s3 *rank_s3_new(void) { return calloc(1, sizeof(rank_s3)); }

void rank_s3_free(rank_s3 *r)
{
    if (!r) return;
    aws_s3_close(r->s3);
    aws_client_destroy(r->client);
    free(r);
}
