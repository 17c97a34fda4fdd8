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
/* "auto", "live", "cache", "snapshot": in prices_source order, NULL-terminated (the one spelling
 * `prices --source` and `rank --prices` accept). */
extern const char *const prices_source_names[];

typedef struct spot_price {
    char az[32];
    double usd_per_hour;
    time_t timestamp;           /* AWS's timestamp for that price */
    int placement_score;        /* per-AZ spot placement score 1..10, -1 unknown (JSON: optional) */
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
    int savings_pct;                 /* advisor's savings vs on-demand, -1 unknown (may be < -1:
                                        spot dearer than on-demand) */
    int placement_score;             /* region-level 1..10, -1 unknown */
    /* The type's hardware as a catalogue states it (the snapshot's "instance"); vcpus -1: unknown. */
    struct {
        int vcpus;
        double memory_gib;
        char accelerator[32];            /* "A10G"; "" for none */
        int accelerator_count;
        double accelerator_memory_gib;   /* all accelerators together; NAN unknown */
    } hw;
} price_record;

typedef struct price_set {
    price_record *items;
    size_t n;
    char snapshot_note[256];         /* "snapshot of 2026-11-21 (skypilot-catalog ...)" when used */
    char snapshot_date[16];          /* "2026-11-21" when any price came from the snapshot, else "" */
    char snapshot_source[512];       /* where the snapshot's numbers came from, else "" */
    time_t generated_at;             /* when this set was made (0: unknown) */
    char placement_note[256];        /* why placement scores are absent ("" when present/not asked) */
} price_set;

typedef struct prices_query {
    char **instance_types; size_t n_types;
    char **regions; size_t n_regions;
    int want_on_demand, want_spot;
    prices_source source;
    int cache_ttl_seconds;           /* 0 = default 24 h */
    int page_size;                   /* MaxResults per AWS page, 0 = the service maximum */
    int skip_placement_scores;       /* 1: do not ask EC2 for spot placement scores */
    double timeout_s;                /* per AWS request attempt, 0 = default 20 s */
} prices_query;

/* Resolves every (type, region) of q, each market from live AWS -> cache -> snapshot as q->source
 * allows (auto: all three; live: AWS only, failing if it fails; cache / snapshot: only that one).
 * Interruption buckets always come from the snapshot (Spot Advisor data).  Warnings (no
 * credentials, a failed service, missing prices) go to stderr once each.  out->items is in
 * q's order: type-major (types[0] x every region, then types[1] ...). */
int prices_get(const prices_query *q, price_set *out, ib_error *err);
/* Reads an "instbench.prices/v1" JSON file (what `instbench prices --format json` writes). */
int prices_load_file(const char *path, price_set *out, ib_error *err);
const price_record *prices_find(const price_set *s, const char *instance_type, const char *region);
const char *prices_interruption_label(int bucket);
void prices_free(price_set *s);
/* The snapshot built into the binary (configs/prices-snapshot.json), parsed once. */
const price_set *prices_snapshot(ib_error *err);
/* $XDG_CACHE_HOME/instbench/prices, else $HOME/.cache/instbench/prices.  -1 when neither. */
int prices_cache_dir(char *out, size_t len);

/* ---- the instbench.prices/v1 file format (prices_json.c; format documented there) ---------- */
/* Parses a prices document held in memory; `what` names it in error messages.  Rejects wrong
 * schema, missing fields, negative/NaN/absurd prices with the JSON path of the offending value. */
int prices_parse_json(const char *text, size_t len, const char *what, price_set *out, ib_error *err);
/* Serialises a set (pretty-printed, trailing newline); malloc'd string, NULL on out-of-memory. */
char *prices_to_json(const price_set *s);
/* A record with every value unknown (NAN / -1 / ""). */
void price_record_init(price_record *r);
/* Largest $/h accepted anywhere: the biggest EC2 instances cost a few hundred dollars an hour. */
#define PRICES_MAX_USD_PER_HOUR 2000.0

#endif
