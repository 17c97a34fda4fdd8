/* Internal to src/prices/: the three sources prices_get merges (live, cache, snapshot). */
#ifndef INSTBENCH_PRICES_INTERNAL_H
#define INSTBENCH_PRICES_INTERNAL_H

#include "instbench/aws.h"
#include "instbench/prices.h"

/* The snapshot (prices_snapshot()) and the cache's directory are in instbench/prices.h. */

/* How far ahead of this clock a time read from a file (the cache's, a prices file's) may be and
 * still be taken for a time prices were read: a few minutes of skew between machines. */
#define PRICES_CLOCK_SKEW_S 300

/* ---- cache (prices_cache.c): one instbench.prices/v1 file per (region, type) ------------- */
/* Fills r's on-demand/spot from the cache when younger than ttl_s (as of now); sets *got_od /
 * *got_spot.  A missing file is a quiet miss; a corrupt one a warning and a miss. */
void prices_cache_lookup(price_record *r, int want_od, int want_spot, int ttl_s, time_t now, int *got_od,
                         int *got_spot);
/* Stores what was fetched live (has_od / has_spot), keeping the other market already cached.
 * Failures are warnings: the cache is an optimisation, never a reason to fail. */
void prices_cache_store(const price_record *r, int has_od, int has_spot);
/* The cache holds a price for TYPE in REGION (fresh or not): a live run once found that product. */
int prices_cache_has(const char *type, const char *region);

/* ---- live (prices_live.c) ---------------------------------------------------------------- */
/* A client for live AWS with the credential chain's credentials (prices_get.c); -1 with ERR and
 * *NO_CREDENTIALS set when none were found. */
int prices_live_client(double timeout_s, aws_client **c, int *no_credentials, ib_error *err);
typedef struct live_status {
    int od; /* 1 fetched (value or a definite "no such product"), -1 failed, 0 not asked */
    int spot;
} live_status;

typedef struct live_report {
    char od_error[1024]; /* first failure per service, "" when none */
    size_t od_failed, od_asked;
    char spot_error[1024];
    size_t spot_failed, spot_asked;
    char placement_note[256]; /* why scores are absent, "" when they came */
} live_report;

/* recs: n_types x n_regions records (type-major), instance_type/region filled.  Fetches what is
 * wanted in one set of concurrent rounds and fills values with source "live". */
int prices_live_fetch(aws_client *c, price_record *recs, size_t n_types, size_t n_regions, int want_od, int want_spot,
                      int want_scores, int page_size, time_t now, live_status *st, live_report *rep);

#endif
