/* prices: on-demand and spot prices per (instance type, region), from live AWS -> cache -> the
 * snapshot shipped in configs/.  Every price carries its source and as-of time. */
#ifndef INSTBENCH_PRICES_H
#define INSTBENCH_PRICES_H

#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "instbench/instance_type.h"
#include "instbench/output.h"
#include "instbench/util.h"

typedef enum prices_source {
    PRICES_SOURCE_AUTO = 0,
    PRICES_SOURCE_LIVE,
    PRICES_SOURCE_CACHE,
    PRICES_SOURCE_SNAPSHOT
} prices_source;
/* "auto", "live", "cache", "snapshot": in prices_source order, NULL-terminated (the one spelling
 * `prices --source` and `rank --prices` accept). */
extern const char *const prices_source_names[];

/* The most spot zones one (type, region) has in a prices file, the cache's included: far above any
 * region's (us-east-1: 6 Availability Zones and some 25 Local and Wavelength Zones).  A live answer
 * naming more is refused, as a file holding it would be. */
#define PRICES_MAX_ZONES 64

/* price_record.savings_pct when the Advisor gave no figure.  Its figures are whole percent and
 * negative where spot costs more than on-demand (-62 for p5.48xlarge in ca-central-1), so -1 is a
 * real one: "unknown" is a value no figure can take (the reader takes -1000..100). */
#define PRICES_SAVINGS_UNKNOWN INT_MIN

typedef struct spot_price {
    char az[32];
    double usd_per_hour;
    time_t timestamp;    /* AWS's timestamp for that price */
    int placement_score; /* per-AZ spot placement score 1..10, -1 unknown (JSON: optional) */
} spot_price;

typedef struct price_record {
    char instance_type[64];
    char region[32];
    double on_demand_usd_per_hour; /* NAN when unknown */
    char on_demand_source[16];     /* "live" | "cache" | "snapshot" | "file" */
    time_t on_demand_as_of;
    spot_price *spot; /* one per AZ, latest price each */
    size_t n_spot;
    char spot_source[16];
    time_t spot_as_of;
    int interruption_bucket; /* 0..4 (<5%, 5-10%, 10-15%, 15-20%, >20%), -1 unknown */
    int savings_pct;         /* advisor's savings vs on-demand, PRICES_SAVINGS_UNKNOWN unknown
                                        (negative: spot dearer than on-demand) */
    int placement_score;     /* region-level 1..10, -1 unknown */
    /* The type's hardware as a catalogue states it (the snapshot's "instance"); vcpus -1: unknown. */
    struct {
        int vcpus;
        double memory_gib;    /* NAN unknown */
        char accelerator[32]; /* "A10G"; "" for none */
        int accelerator_count;
        double accelerator_memory_gib; /* all accelerators together; NAN unknown */
    } hw;
    int od_live_answered; /* 1: live AWS answered the on-demand query (then NAN means AWS
                                        has no such product there); not part of the file format */
    int od_live_zero;     /* 1: ... and AWS lists the product there only at $0/h (no price) */
    int nodes;            /* instances priced together (`prices --nodes`), >= 1: the
                                        totals are nodes x the per-instance prices; written, never read */
} price_record;

typedef struct price_set {
    price_record *items;
    size_t n;
    char snapshot_note[256];   /* "snapshot of 2026-11-21 (skypilot-catalog ...)" when used */
    char snapshot_date[16];    /* "2026-11-21" when any price came from the snapshot, else "" */
    char snapshot_source[512]; /* where the snapshot's numbers came from, else "" */
    time_t generated_at;       /* when this set was made (0: unknown) */
    char placement_note[256];  /* why placement scores are absent ("" when present/not asked) */
    /* prices_get with --source auto: that live AWS was not asked, or did not answer, and why
     * ("live AWS was not asked (no AWS credentials)"); "" when it answered */
    char live_missing[256];
    int live_no_credentials; /* 1: no AWS credentials (the fix: give some) */
    /* How the set is shown (`prices` sets them; 0 elsewhere): whether Local and Wavelength Zones
     * count for the lowest spot price (they need an opt-in, so by default they do not), and whether
     * tables show the N-instance columns (--nodes given). */
    int include_local_zones;
    int nodes_asked;
} price_set;

typedef struct prices_query {
    char **instance_types;
    size_t n_types;
    char **regions;
    size_t n_regions;
    int want_on_demand, want_spot;
    prices_source source;
    int cache_ttl_seconds;     /* 0 = default 24 h */
    int page_size;             /* MaxResults per AWS page, 0 = the service maximum */
    int skip_placement_scores; /* 1: do not ask EC2 for spot placement scores */
    double timeout_s;          /* per AWS request attempt, 0 = default 20 s */
} prices_query;

/* ---- placement scores for a configuration (placement_live.c) ------------------------------ */
/* One GetSpotPlacementScores question: can REGION give CAPACITY instances of INSTANCE_TYPE (or of
 * the pool's types alongside it), in one zone when SINGLE_AZ (a cluster placement group lives in
 * one)?  The answers: the region's score (not single-AZ) or each zone's, by name and ID. */
typedef struct placement_ask {
    char region[32];
    char instance_type[64];
    int capacity;
    int single_az;
    /* out */
    int region_score; /* 1..10, -1 none */
    struct {
        char name[32];
        char id[32];
        int score;
    } zones[32];
    size_t n_zones;
    int failed; /* the call failed (note says why) */
} placement_ask;
/* The question N nodes are (placement_asks.c, pure; rank's rows and `prices --nodes` share it):
 * N instances of TYPE in one zone of REGION (TargetCapacity=N, SingleAvailabilityZone=true).
 * find: the index of that ask in ASKS, or N when absent; add: appends it unless there (ASKS has
 * room for one more) and returns its index. */
size_t prices_placement_find(const placement_ask *asks, size_t n, const char *region, const char *type, int capacity);
size_t prices_placement_add(placement_ask *asks, size_t *n, const char *region, const char *type, int capacity);
/* The zone of A's answer that AZ names (a zone name or a zone ID): its index, -1 when none. */
int prices_placement_zone(const placement_ask *a, const char *az);
/* Asks every ask live, in concurrent rounds, with the pool's types added to each (borrowed).
 * Returns 0, or -1 when no call could be made at all (no credentials, no client); NOTE says why
 * scores are missing either way ("" when all came). */
int prices_placement_live(placement_ask *asks, size_t n, char **pool, size_t n_pool, double timeout_s, char *note,
                          size_t note_len);

/* Resolves every (type, region) of q, each market from live AWS -> cache -> snapshot as q->source
 * allows (auto: all three; live: AWS only, failing if it fails; cache / snapshot: only that one).
 * Interruption buckets always come from the snapshot (Spot Advisor data).  Warnings (no
 * credentials, a failed service) go to stderr once each.  out->items is in q's order:
 * type-major (types[0] x every region, then types[1] ...). */
int prices_get(const prices_query *q, price_set *out, ib_error *err);
/* One warning per market for the records of OUT no source allowed by q could price (none when
 * nothing at all was priced: the caller says that in its own words).  Called on what will be
 * shown, after any filter, so a row left out never draws a warning. */
void prices_warn_missing(const prices_query *q, const price_set *out);
/* `prices --nodes`: a spot row of N > 1 nodes gets the placement score of N instances in one zone
 * (live, as rank asks it: placement_asks.c), never the 1-instance scores fetched with the prices;
 * without live AWS it has none, with a note in SET's placement_note (placement_live.c). */
void prices_node_scores(const prices_query *q, price_set *set);
/* Reads an "instbench.prices/v1" JSON file (what `instbench prices --format json` writes): a
 * regular file of at most PRICES_FILE_MAX_BYTES (util_read_file).  The snapshot's every type in
 * every region is 4.3 MB of it; live prices of every type AWS sells in every region, zones and all,
 * some tens of MB. */
#define PRICES_FILE_MAX_BYTES ((size_t)256 << 20)
int prices_load_file(const char *path, price_set *out, ib_error *err);
const price_record *prices_find(const price_set *s, const char *instance_type, const char *region);
const char *prices_interruption_label(int bucket);
/* ---- interruption.c: the Advisor bucket as a rate (the one mapping; rank's spot risk uses it) ---- */
#define PRICES_ADVISOR_WINDOW_H 720.0             /* the Advisor's trailing month, hours */
#define PRICES_SURVIVAL_HOURS 24.0                /* prices' "P(24 h UNINTERRUPTED)": a day-long run */
extern const double prices_interruption_share[5]; /* the share each bucket stands for: its midpoint */
/* A node's reclaim rate per hour for BUCKET, -ln(1 - share) / 720; NAN when unknown (< 0, > 4). */
double prices_interruption_rate(int bucket);
void prices_free(price_set *s);
/* The snapshot built into the binary (configs/prices-snapshot.json), parsed once. */
const price_set *prices_snapshot(ib_error *err);
/* $XDG_CACHE_HOME/instbench/prices, else $HOME/.cache/instbench/prices, for AWS's own endpoints;
 * .../prices/endpoint-<16 hex> when AWS_ENDPOINT_URL[_PRICING|_EC2] moves Pricing or EC2 elsewhere
 * (aws_endpoints_identity), so no endpoint's answers serve another's queries.  -1 when neither. */
int prices_cache_dir(char *out, size_t len);

/* ---- the catalogue: the names the sources know (catalogue.c) --------------------------------- */
/* The snapshot's instance types in natural order (names_instance_type_cmp) and its regions in name
 * order; the arrays live as long as the program.  0 when the snapshot is unusable. */
size_t prices_catalogue_types(const char *const **types);
size_t prices_catalogue_regions(const char *const **regions);
int prices_catalogue_has_type(const char *type);
/* TYPE's hardware as the snapshot states it: a record of TYPE (its .hw; a type's hardware is the
 * same in every region), or NULL when the snapshot does not list TYPE or has no hardware for it. */
const price_record *prices_catalogue_hardware(const char *type);
int prices_catalogue_has_region(const char *region);
/* The snapshot's types of TYPE's family (g5.96xlarge -> g5.xlarge ... g5.48xlarge), in natural
 * order, into OUT (up to CAP); returns how many there are (0: the snapshot has no such family). */
size_t prices_catalogue_family_sizes(const char *type, const char **out, size_t cap);
/* For a TYPE whose family the snapshot covers but which is not one of its sizes: the family's sizes
 * ", "-joined into OUT (what fits in LEN), and in *nearest the size nearest to TYPE (else the
 * nearest snapshot type, else NULL).  Returns how many sizes the family has (0: a family the
 * snapshot does not cover; OUT "" and *nearest NULL). */
size_t prices_catalogue_size_list(const char *type, char *out, size_t len, const char **nearest);
/* The snapshot's instance families (g5, p4d, c7i) in natural order; the array lives as long as the
 * program.  0 when the snapshot is unusable. */
size_t prices_catalogue_families(const char *const **families);
/* The regions where the snapshot prices TYPE in a market asked (WANT_OD: on-demand, WANT_SPOT: a
 * spot zone), in name order, into OUT (up to CAP); returns how many there are. */
size_t prices_catalogue_type_regions(const char *type, int want_od, int want_spot, const char **out, size_t cap);
/* The snapshot's spot zones (AZ IDs) in REGION, in name order, into OUT (up to CAP); returns how
 * many there are. */
size_t prices_catalogue_zones(const char *region, const char **out, size_t cap);
/* For "did you mean X?": the nearest snapshot type; the nearest region of the snapshot or of the
 * AWS regions instbench knows.  NULL when none is close. */
const char *prices_suggest_type(const char *name);
const char *prices_suggest_region(const char *name);
/* NAME holds a pattern character (* ? [): an fnmatch pattern over the snapshot's types. */
int prices_is_pattern(const char *name);
/* Names stay, patterns become the snapshot types they match; the result is deduplicated, in
 * natural order, malloc'd (util_free_strv).  A pattern matching nothing is IB_EXIT_USAGE with a
 * message that names the catalogue and, when one is close, a pattern that matches. */
int prices_expand_types(char *const *in, size_t n, char ***out, size_t *n_out, ib_error *err);
/* "all regions": the snapshot's, and with live AWS (WITH_LIVE) every other region of the
 * commercial partition instbench knows; in name order, malloc'd.  -1 on out of memory. */
int prices_all_regions(int with_live, char ***out, size_t *n_out);
/* Whether a name asked for in Q exists, after prices_get answered SET: KNOWN when a source
 * prices it or the catalogue (snapshot, cache, AWS's region list) has it; UNKNOWN when every
 * source asked could have known it and none does (the snapshot or cache alone, or live AWS
 * answering "no such product" in every region asked); UNDECIDED when live AWS was wanted but did
 * not answer, so a type newer than the snapshot cannot be ruled out. */
typedef enum prices_name_state {
    PRICES_NAME_UNDECIDED = -1,
    PRICES_NAME_UNKNOWN = 0,
    PRICES_NAME_KNOWN = 1
} prices_name_state;
prices_name_state prices_type_state(const prices_query *q, const price_set *set, const char *type);
prices_name_state prices_region_state(const price_set *set, const char *region);

/* The accelerators the snapshot's instance types carry ("A10G", "H100", "Trainium"), in name
 * order (strcmp); the array lives as long as the program.  0 when the snapshot is unusable. */
size_t prices_catalogue_accelerators(const char *const **names);
/* The catalogue's spelling of accelerator NAME, matched ignoring case ("a10g" -> "A10G"; exact
 * otherwise: "A100" is not "A100-80GB"), or NULL when no type of the snapshot has it. */
const char *prices_catalogue_accelerator(const char *name);
/* For "did you mean X?": the nearest accelerator name of the snapshot, or NULL. */
const char *prices_suggest_accelerator(const char *name);

/* ---- filters and sort orders over a fetched set (filter.c): `prices` as a shopping list ------ */
/* One --accelerator item: NAME (the catalogue's spelling) and, when COUNT > 0, exactly that many
 * per instance. */
typedef struct prices_accelerator_want {
    char name[32];
    int count; /* 0: any count */
} prices_accelerator_want;

typedef enum prices_sort {
    PRICES_SORT_TYPE = 0, /* the natural order of types, then regions as asked (as fetched) */
    PRICES_SORT_PRICE,    /* on-demand $/h ascending */
    PRICES_SORT_SPOT,     /* lowest spot $/h over the record's zones, ascending */
    PRICES_SORT_SAVINGS,  /* the row's own spot savings % descending */
} prices_sort;
/* "type", "price", "spot", "savings": in prices_sort order, NULL-terminated. */
extern const char *const prices_sort_names[];

/* The criteria, in the order they apply (a record must meet every one that is set). */
typedef enum prices_criterion {
    PRICES_BY_ACCELERATOR = 0,
    PRICES_BY_VCPUS,
    PRICES_BY_MEMORY,
    PRICES_BY_ACCELERATOR_MEMORY,
    PRICES_BY_MAX_PRICE,
    PRICES_BY_MAX_SPOT_PRICE,
    PRICES_N_CRITERIA
} prices_criterion;

typedef struct prices_filter {
    const prices_accelerator_want *accelerators; /* any of these; n_accelerators 0: no filter */
    size_t n_accelerators;
    int min_vcpus;                     /* 0: no filter */
    double min_memory_gib;             /* instance (host) memory; NAN: no filter */
    double min_accelerator_memory_gib; /* memory of EACH accelerator (the record's total / count); NAN: none */
    double max_usd_per_hour;           /* on-demand or lowest spot, of the markets shown, <= this; NAN: none */
    double max_spot_usd_per_hour;      /* lowest spot <= this; NAN: none */
    int want_on_demand, want_spot;     /* the markets shown (what --max-price looks at) */
    int include_local_zones;           /* Local and Wavelength Zones count for the lowest spot price */
    prices_sort sort;
} prices_filter;

typedef struct prices_filter_stats {
    size_t before;                     /* records in */
    size_t removed[PRICES_N_CRITERIA]; /* records each criterion left out (in order) */
    /* Records a hardware criterion left out because the catalogue has no hardware for their type
     * (never silently kept nor silently dropped: the caller says so), or because it lacks just the
     * accelerator memory (trn1: the source gives none). */
    size_t unknown_hardware, unknown_accelerator_memory;
    int emptied_by; /* the criterion that left nothing, -1 when none did */
} prices_filter_stats;

/* How many instances R prices together (its nodes, 1 when unset). */
static inline int prices_nodes(const price_record *r) { return r->nodes > 0 ? r->nodes : 1; }
/* A SageMaker instance type (ml.*): priced on-demand from AmazonSageMaker's training component;
 * no EC2 spot market (managed spot training publishes no hourly price). */
static inline int prices_is_sagemaker(const price_record *r) { return instance_type_is_sagemaker(r->instance_type); }
/* R's NODES instances as one data-parallel job stopped by the first reclaim: NODES x the node rate
 * (per hour; NAN without a bucket), and the probability of HOURS without one, e^(-rate x HOURS). */
double prices_job_interruption_rate(const price_record *r);
double prices_p_uninterrupted(const price_record *r, double hours);
/* Whether the catalogue states R's hardware (every hardware figure is unknown otherwise). */
static inline int prices_hardware_known(const price_record *r) { return r->hw.vcpus >= 1; }
/* Memory of each of R's accelerators in GiB: NAN when its hardware, its accelerator memory is
 * unknown, or it has no accelerator. */
double prices_per_accelerator_gib(const price_record *r);
/* What kind of zone a spot price is for, from the shape of its name or ID (AWS's ZoneType values):
 * an Availability Zone (use1-az2, us-east-1a), a Local Zone (use1-atl2-az1, us-east-1-atl-2a) or a
 * Wavelength Zone (use1-wl1-bos-wlz1, us-east-1-wl1-bos-wlz-1).  Local and Wavelength Zones need an
 * opt-in per account and sit in one city, so they are no region's "lowest" unless asked for. */
typedef enum prices_zone_kind {
    PRICES_ZONE_AVAILABILITY = 0,
    PRICES_ZONE_LOCAL,
    PRICES_ZONE_WAVELENGTH
} prices_zone_kind;
prices_zone_kind prices_zone_kind_of(const char *zone);
/* "availability-zone", "local-zone", "wavelength-zone" (EC2 DescribeAvailabilityZones' ZoneType). */
const char *prices_zone_kind_name(prices_zone_kind k);
/* " (LZ)" after a Local Zone, " (WLZ)" after a Wavelength Zone, "" otherwise: how every table marks
 * a zone that needs an opt-in (prices' SPOT AZ / IN AZ, rank's SPOT AZ). */
const char *prices_zone_marker(const char *zone);
/* Whether ZONE counts for a lowest or median spot price: an Availability Zone always, a Local or
 * Wavelength Zone only WITH_LOCAL (--include-local-zones). */
int prices_zone_counts(const char *zone, int with_local);
/* R's cheapest spot zone among those that count (prices_zone_counts; the first of equals), NULL
 * when it has none. */
const spot_price *prices_cheapest_zone(const price_record *r, int with_local);
/* How many of R's spot zones are left out of its lowest price (Local and Wavelength Zones without
 * WITH_LOCAL). */
size_t prices_zones_left_out(const price_record *r, int with_local);
/* The lowest spot price of R over the zones that count; NAN when it has none. */
double prices_lowest_spot(const price_record *r, int with_local);
/* The highest spot price of R over the zones that count; NAN when it has none. */
double prices_highest_spot(const price_record *r, int with_local);
/* R's lowest price in the markets shown (on-demand, lowest spot), NAN when it has none there;
 * *market (may be NULL) gets "on-demand" or "spot" ("" for none).  What --max-price judges. */
double prices_cheapest_shown(const price_record *r, int want_on_demand, int want_spot, int with_local,
                             const char **market);
/* Spot savings from R's own prices, in percent: 100 (1 - lowest spot / on-demand); NAN when either
 * is missing.  (The advisor's savings_pct is a region-wide average over its own period and can
 * contradict the two prices beside it.) */
double prices_spot_savings_pct(const price_record *r, int with_local);
/* USD_PER_HOUR of one R instance per accelerator-hour: divided by the catalogue's accelerator
 * count; NAN when the type has none or its hardware is unknown (or the price is NAN). */
double prices_per_accelerator_hour(const price_record *r, double usd_per_hour);
/* Keeps the records of S that meet F and orders them by F->sort (ties: the order they came in,
 * which is the natural type order, then the regions as asked).  When a criterion leaves nothing,
 * S is left holding the records that reached it (for the caller to say why) and st->emptied_by
 * names it.  0, or -1 when out of memory. */
int prices_filter_apply(price_set *s, const prices_filter *f, prices_filter_stats *st);
/* Whether SET has a price Q asked for: 0, or IB_EXIT_RUNTIME with one line on stderr saying where
 * nothing was found and, from the snapshot, the regions it does price the types in (shop.c). */
int prices_check_found(const prices_query *q, const price_set *set);
/* prices_filter_apply, said (shop.c): warnings for the rows hardware filters could not judge,
 * and when nothing is left one line on stderr naming the flag that emptied the list and what the
 * rows before it offer; ACCELERATORS: --accelerator as typed.  0, or IB_EXIT_RUNTIME. */
int prices_shop(price_set *set, const prices_filter *f, const char *accelerators);

/* ---- zone names and IDs (prices_zones.c) ------------------------------------------------------ */
/* Which zone ID each zone name of REGIONS stands for in the caller's own AWS account (EC2
 * DescribeAvailabilityZones, with the credentials prices use).  The mapping differs per account,
 * so nothing else may supply it: no table is shipped.  OUT (malloc'd) holds the well-formed pairs;
 * -1 with ERR when no region answered (no credentials, no permission, no network). */
typedef struct prices_zone {
    char region[32], name[32], id[32];
} prices_zone;
int prices_live_zones(const char *const *regions, size_t n_regions, double timeout_s, prices_zone **out, size_t *n_out,
                      ib_error *err);

/* ---- Capacity Blocks for ML and Savings Plans: the arithmetic (markets.c, pure) ------------ */
/* AWS sells a Capacity Block of 1..64 instances for 1-14 days in 1-day steps, then 7-day steps up
 * to 182 days, starting within 8 weeks (EC2's API reference, DescribeCapacityBlockOfferings). */
#define MARKETS_BLOCK_MAX_INSTANCES 64
#define MARKETS_BLOCK_MAX_LEAD_S (56L * 86400)
/* How far before now an offering's start may lie and still count as starting now (clocks differ);
 * one that started earlier is refused (prices_fetch_blocks). */
#define MARKETS_BLOCK_CLOCK_SLACK_S 600
/* --duration: "3d", "72h" or "72" (hours) into *hours; NULL, or why AWS does not sell it (the
 * message names the nearest durations it sells). */
const char *markets_block_duration_problem(const char *v, int *hours);
/* Whether AWS sells a block of HOURS. */
int markets_block_duration_ok(int hours);
/* --start-after / --end-before (0: not given) against NOW for a block of HOURS: 0, or -1 with the
 * reason in WHY (a start in the past or past 8 weeks, an end before the start, a window shorter
 * than the block). */
int markets_block_window_check(time_t now, time_t start_after, time_t end_before, int hours, char *why, size_t len);
/* What a block costs per hour: FEE / (INSTANCES x HOURS), and per accelerator when each instance
 * has ACCELERATORS (> 0; else NAN). */
double markets_block_usd_per_instance_hour(double fee, int instances, double hours);
double markets_block_usd_per_accelerator_hour(double fee, int instances, int accelerators, double hours);

/* A Savings Plan's money for NODES instances at RATE (USD per instance-hour) for a term of
 * DURATION_S: the commitment is RATE x NODES per hour for every hour of the term, used or not;
 * all upfront pays it all at the start, partial upfront half of it (AWS asks for at least half;
 * instbench assumes exactly half), no upfront none; the rest is billed hourly.  Amortised over
 * the term (upfront / term hours + recurring) it is the commitment again. */
typedef enum markets_payment { MARKETS_PAY_NONE = 0, MARKETS_PAY_PARTIAL, MARKETS_PAY_ALL } markets_payment;
typedef struct markets_plan_money {
    double term_hours;
    double commitment_usd_per_hour; /* RATE x NODES */
    double upfront_usd;             /* paid at the start */
    double recurring_usd_per_hour;  /* billed every hour of the term */
    double amortised_usd_per_hour;  /* upfront / term_hours + recurring */
    double term_usd;                /* everything the term costs */
} markets_plan_money;
void markets_plan_money_of(double rate, long long duration_s, markets_payment pay, int nodes, markets_plan_money *out);
/* The share of the term's hours a team must run for the plan to cost no more than paying
 * ALT_USD_PER_HOUR (on-demand, or spot risk-adjusted) for the hours it runs: RATE / ALT (above 1:
 * the plan never pays); NAN when ALT is unknown. */
double markets_break_even_utilisation(double rate, double alt_usd_per_hour);

/* ---- Capacity Block offerings and Savings Plan rates from live AWS (markets_live.c) ---------
 * Neither is in the snapshot or the cache: an offering is a quote for dates that pass, so only
 * AWS's answer now is shown.  Both return 1 with *why set (and nothing fetched) when live AWS
 * cannot be asked (no credentials), 0 when every query was answered, -1 with ERR when one failed. */
typedef struct market_block {
    char instance_type[64], region[32], az[32], offering_id[64];
    int instance_count;
    char ultraserver_type[64]; /* an UltraServer block: its type ("u-p6e-gb200x72"), "" none */
    int ultraserver_count;     /* and how many; instance_count counts their instances */
    double hours;              /* the block's length: EC2's hours + minutes */
    time_t start, end;
    double fee_usd;                                         /* upfront, the whole block */
    int accelerators;                                       /* per instance (the catalogue's), 0 unknown */
    double usd_per_instance_hour, usd_per_accelerator_hour; /* NAN unknown */
} market_block;
/* An EC2 UltraServer type as DescribeCapacityBlockOfferings names one: "u-" FAMILY "x" HOSTS
 * ("u-p6e-gb200x72", "u-trn2x64"), no size.  Asked by UltraserverType; its count is UltraServers. */
int prices_ultraserver_type_ok(const char *s);
typedef struct market_block_query {
    char *const *types;
    size_t n_types; /* an UltraServer type among them asks for UltraServers */
    char *const *regions;
    size_t n_regions;
    const int *counts; /* instances per type (n_types) */
    int hours;
    time_t start_after, end_before; /* 0: not given */
    double timeout_s;
} market_block_query;
int prices_fetch_blocks(const market_block_query *q, market_block **out, size_t *n, char *why, size_t why_len,
                        ib_error *err);

typedef struct market_plan_query {
    char *const *types;
    size_t n_types;
    char *const *regions;
    size_t n_regions;
    const char *plan_type; /* "Compute", "EC2Instance", "SageMaker" */
    const char *payment;   /* "No Upfront", "Partial Upfront", "All Upfront" */
    long long duration_s;
    double timeout_s;
} market_plan_query;
/* RATES[t * n_regions + r]: the plan's USD per instance-hour, NAN where AWS has no rate. */
int prices_fetch_plan_rates(const market_plan_query *q, double *rates, char *why, size_t why_len, ib_error *err);

/* ---- what `prices` writes: one set of column names in every format (prices_view.c) -------- */
/* `prices --market`'s choices, in its order. */
enum { PRICES_MARKET_ON_DEMAND, PRICES_MARKET_SPOT, PRICES_MARKET_BOTH, PRICES_MARKET_BLOCK, PRICES_MARKET_PLAN };
/* What a column's plain text is in JSON rows ("" is null everywhere): a string, a number, a UTC
 * time (the CSV's YYYY-MM-DDTHH:MM:SS, with its Z in JSON), or a number that may be a word
 * (break-even "never"). */
typedef enum prices_kind { PRICES_TEXT, PRICES_NUMBER, PRICES_TIME, PRICES_NUMBER_OR_WORD } prices_kind;
/* One column: KEY is the CSV header, the JSON row key and what --columns names; HEADER the
 * table's; OLD_KEY the table's key before the CSV's names became the keys (accepted until
 * 0.2, with a note), NULL when it had none or the same. */
typedef struct prices_column {
    const char *key, *header;
    output_align align;
    int priority; /* output_table_fit_columns: higher stays longer */
    prices_kind kind;
    const char *old_key;
} prices_column;
enum { PRICES_MAX_COLUMNS = 40 };
#define PRICES_ROWS_SCHEMA "instbench.price-rows/v1"
/* The columns of each market, in CSV order, ended by a NULL key: on-demand and spot
 * (prices_table.c), capacity-block and savings-plan (prices_market.c). */
extern const prices_column prices_columns[], prices_block_columns[], prices_plan_columns[];
/* KEY's column key among COLS: KEY itself, or the column's when KEY is its OLD_KEY (*OLD = 1);
 * NULL when no column has it. */
const char *prices_column_key(const prices_column *cols, const char *key, int *old);
/* Whether column KEY (on-demand and spot's view) is made of a market's prices: *OD set for an
 * on_demand_* column, *SPOT for a spot_* one, both for SAVINGS % (spot_min_savings_pct reads
 * both); left as they are otherwise.  Where the snapshot's origin is said: under such a column. */
void prices_column_markets(const char *key, int *od, int *spot);

/* Rows of a view, each cell twice: PLAIN (CSV, JSON rows: full-precision numbers, "" unknown)
 * and SHOWN (the table's, for people). */
typedef struct prices_grid {
    const prices_column *cols;
    size_t n_cols;
    char **plain, **shown; /* n_rows x n_cols, row-major */
    size_t n_rows, cap;
    const char *keys[PRICES_MAX_COLUMNS];
    int prio[PRICES_MAX_COLUMNS];
    const char *table_keys[PRICES_MAX_COLUMNS]; /* the last table's (it points at them) */
    int table_prio[PRICES_MAX_COLUMNS];
} prices_grid;
int prices_grid_init(prices_grid *g, const prices_column *cols);
/* Copies a row: PLAIN and SHOWN hold n_cols cells (NULL: ""); SHOWN, or one of its cells, NULL:
 * the plain text, "-" when empty. */
int prices_grid_add(prices_grid *g, const char *const *plain, const char *const *shown);
void prices_grid_free(prices_grid *g);
/* KEY's column index, -1 when none. */
int prices_grid_column(const prices_grid *g, const char *key);
/* The rows as a table T (output_table_init'd here; G must outlive it; the caller frees T, also on
 * failure) written to OUT: DEFAULTS' columns (keys, NULL-terminated, in that order), but REGION
 * when every row has the same one, which a line above the table says instead; or with PICKED
 * (--columns given) every column, of which the table's fitting shows those asked.  0 or -1. */
int prices_grid_write_table(const prices_grid *g, const char *const *defaults, int picked, output_table *t, FILE *out);
/* CSV of the columns KEYS names, in that order (N 0: every column, in CSV order). */
int prices_grid_write_csv(const prices_grid *g, char *const *keys, size_t n, FILE *out);
/* The instbench.price-rows/v1 document (schemas/price-rows-v1.json): the columns KEYS names (N 0:
 * all) as flat rows keyed like the CSV, typed by their kind; NOTE (or NULL): why there are none. */
int prices_grid_write_rows(const prices_grid *g, const char *market, time_t now, const char *note, char *const *keys,
                           size_t n, FILE *out);

/* What `prices` asked to see, for the on-demand and spot writers (prices_table.c). */
typedef struct prices_view {
    const char *format; /* "table", "csv", "json" */
    int want_on_demand, want_spot;
    time_t now;           /* dates the table's ages, the JSON's generated_at */
    char *const *columns; /* --columns (column keys, in order), n_columns 0: the format's own */
    size_t n_columns;
} prices_view;
/* S in V's format: the table (default columns, or --columns), the CSV (every column or
 * --columns), the instbench.prices/v1 document, or with --columns its rows (instbench.price-rows/v1). */
int prices_write(const price_set *s, const prices_view *v, FILE *out);
/* 1 when a price the table or file would show (on-demand with WANT_OD, spot with WANT_SPOT)
 * comes from the snapshot: only then is the snapshot's date and origin worth a note. */
int prices_shown_from_snapshot(const price_set *s, int want_od, int want_spot);

/* ---- prices --market capacity-block | savings-plan (prices_market.c) ----------------------- */
typedef struct prices_market_args {
    int market; /* PRICES_MARKET_BLOCK or PRICES_MARKET_PLAN */
    char *const *types;
    size_t n_types; /* expanded, natural order */
    char *const *regions;
    size_t n_regions;
    int (*nodes_of)(const char *type); /* --nodes for TYPE */
    int duration_hours;                /* capacity-block */
    time_t start_after, end_before;    /* capacity-block, 0: not given */
    int term_years;                    /* savings-plan: 1 or 3 */
    markets_payment payment;
    const char *plan_type;  /* "Compute", "EC2Instance", "SageMaker" */
    const char *plan_label; /* "Compute", "EC2 Instance", "SageMaker" */
    prices_source source;
    double timeout_s;
    const char *format;   /* "table", "json", "csv" */
    char *const *columns; /* --columns (column keys), n_columns 0: the format's own */
    size_t n_columns;
} prices_market_args;

/* A's types against its market, and what follows from them: with capacity-block a pattern's
 * matches AWS sells no block for are left out (NAMED: whether the user named TYPE itself, which is
 * refused instead; instance_type_capacity_block); with savings-plan the plan (PLAN: 0 compute, 1
 * ec2-instance, 2 sagemaker, -1 the types' own).  A then points at *KEPT (the caller frees it).
 * 0; IB_EXIT_USAGE with WHY; IB_EXIT_RUNTIME out of memory. */
int prices_market_prepare(prices_market_args *a, int plan, int (*named)(const char *type), char ***kept, char *why,
                          size_t len);
/* Writes the market's rows to OUT: 0, or -1 with ERR (exit 1: nothing found, AWS failed). */
int prices_market_run(const prices_market_args *a, FILE *out, ib_error *err);

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
