/* prices: on-demand and spot prices per (instance type, region), from live AWS -> cache -> the
 * snapshot shipped in configs/.  Every price carries its source and as-of time. */
#ifndef INSTBENCH_PRICES_H
#define INSTBENCH_PRICES_H

#include <stddef.h>
#include <time.h>
#include "instbench/util.h"

typedef enum prices_source {
    PRICES_SOURCE_AUTO = 0, PRICES_SOURCE_LIVE, PRICES_SOURCE_CACHE, PRICES_SOURCE_SNAPSHOT
} prices_source;

typedef struct spot_price {
    char az[32];
    double usd_per_hour;
    time_t timestamp;           /* AWS's timestamp for that price */
} spot_price;

typedef struct price_record {
    char instance_type[64];
    char region[32];
    double on_demand_usd_per_hour;   /* NAN when unknown */
    char on_demand_source[16];       /* "live" | "cache" | "snapshot" | "file" */
    time_t on_demand_as_of;
    spot_price *spot;                /* one per AZ, latest price each */
    size_t n_spot;
    char spot_source[16];
    time_t spot_as_of;
    int interruption_bucket;         /* 0..4 (<5%, 5-10%, 10-15%, 15-20%, >20%), -1 unknown */
    int savings_pct;                 /* advisor's savings vs on-demand, -1 unknown */
    int placement_score;             /* region-level 1..10, -1 unknown */
} price_record;

typedef struct price_set {
    price_record *items;
    size_t n;
    char snapshot_note[256];         /* "snapshot of 2026-11-21 (skypilot-catalog ...)" when used */
} price_set;

typedef struct prices_query {
    char **instance_types; size_t n_types;
    char **regions; size_t n_regions;
    int want_on_demand, want_spot;
    prices_source source;
    int cache_ttl_seconds;           /* 0 = default 24 h */
} prices_query;

int prices_get(const prices_query *q, price_set *out, ib_error *err);
/* Reads an "instbench.prices/v1" JSON file (what `instbench prices --format json` writes). */
int prices_load_file(const char *path, price_set *out, ib_error *err);
const price_record *prices_find(const price_set *s, const char *instance_type, const char *region);
const char *prices_interruption_label(int bucket);
void prices_free(price_set *s);

#endif
