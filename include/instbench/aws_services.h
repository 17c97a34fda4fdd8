/* aws_services: the service calls prices/ makes, apart from the client core (src/aws/services/):
 * Price List GetProducts (pricing.c), EC2 spot price history and spot placement scores (ec2.c),
 * and the batched paginator they share (paginate.c).
 * Every call takes many independent queries at once: all first pages go out together, then all
 * second pages, so a run costs about (longest pagination chain) x (latency), not (requests) x it. */
#ifndef INSTBENCH_AWS_SERVICES_H
#define INSTBENCH_AWS_SERVICES_H

#include <stddef.h>
#include <time.h>
#include "instbench/aws.h"

/* ---- batched pagination -------------------------------------------------------------------- */
typedef struct aws_pager {
    void *ctx;
    const char *what;   /* "Pricing GetProducts": names the service call in error messages */
    /* The request for query i, page after `token` (NULL: first page).  *url and *body are
     * malloc'd by build and freed by the pager after the send. */
    int (*build)(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                 ib_error *err);
    /* Consumes one page of query i; sets *next (malloc'd) when another page follows. */
    int (*parse)(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err);
    int max_pages;      /* per query; a token loop past this is an error (0: 200) */
    const char *(*name_of)(void *ctx, size_t i);   /* optional: `what` per query */
} aws_pager;

/* Runs n paginated queries; errs[i].code != 0 says why query i failed.  Returns how many failed. */
size_t aws_paginate_many(aws_client *c, const aws_pager *p, size_t n, ib_error *errs);

/* Several kinds of paginated queries in the same rounds (pricing, spot, scores together):
 * pagers[k] runs counts[k] queries; errs[k] has counts[k] entries.  Returns how many failed. */
size_t aws_paginate_multi(aws_client *c, const aws_pager *pagers, const size_t *counts, size_t n_pagers,
                          ib_error *const *errs);

/* ---- Price List Query API: GetProducts ----------------------------------------------------- */
typedef struct pricing_item {
    char instance_type[64];   /* "g5.xlarge" (AmazonEC2) or "ml.g5.xlarge" (AmazonSageMaker training) */
    char region[32];          /* regionCode */
    double usd_per_hour;      /* out: on-demand USD/h, NAN when no product matched */
    int n_products;           /* out: products seen that matched */
    int pages;                /* out */
} pricing_item;

/* GetProducts for each item, to combine with other pagers in aws_paginate_multi (page_size:
 * MaxResults 1..100; 0: 100); ctx is malloc'd (free()). */
int aws_pricing_pager(pricing_item *items, size_t n, int page_size, aws_pager *out, ib_error *err);
/* Request body for one page (exposed for tests); malloc'd. */
char *aws_pricing_request_body(const pricing_item *it, int page_size, const char *token);
/* Parses one GetProducts response into it (keeping the best matching price); *next gets the
 * NextToken (malloc'd) or NULL.  Never crashes on malformed input (fuzzed). */
int aws_pricing_parse_page(const char *body, size_t len, pricing_item *it, char **next, ib_error *err);

/* ---- EC2 DescribeSpotPriceHistory ---------------------------------------------------------- */
typedef struct ec2_spot_entry {
    char instance_type[64];
    char az[32];
    double usd_per_hour;
    time_t timestamp;
} ec2_spot_entry;

typedef struct ec2_spot_query {
    char region[32];
    char **instance_types;    /* borrowed */
    size_t n_types;
    time_t start_time;        /* StartTime: AWS then returns the price in effect at that time */
    ec2_spot_entry *entries;  /* out: the latest price per (instance type, AZ); malloc'd */
    size_t n_entries, cap;
    int pages;
} ec2_spot_query;

int aws_ec2_spot_pager(ec2_spot_query *qs, int page_size, aws_pager *out, ib_error *err);
int aws_ec2_parse_spot_page(const char *xml, size_t len, ec2_spot_query *q, char **next, ib_error *err);
void ec2_spot_query_free(ec2_spot_query *q);

/* ---- EC2 GetSpotPlacementScores ------------------------------------------------------------ */
typedef struct ec2_score {
    char region[32];
    char az_id[32];           /* "" for a region-level score */
    int score;                /* 1..10 */
} ec2_score;

typedef struct ec2_score_query {
    char instance_type[64];
    char **regions;           /* borrowed */
    size_t n_regions;
    int single_az;            /* SingleAvailabilityZone=true: one score per AZ ID */
    ec2_score *scores;        /* out, malloc'd */
    size_t n_scores, cap;
} ec2_score_query;

/* Calls are sent to `via_region`'s EC2 endpoint (the API answers for every listed region). */
int aws_ec2_scores_pager(ec2_score_query *qs, const char *via_region, aws_pager *out, ib_error *err);
int aws_ec2_parse_scores_page(const char *xml, size_t len, ec2_score_query *q, char **next, ib_error *err);
void ec2_score_query_free(ec2_score_query *q);

/* ---- EC2 DescribeAvailabilityZones: zone name <-> zone ID (placement scores use IDs) -------- */
typedef struct ec2_zone_map {
    char region[32];
    struct { char name[32]; char id[32]; } zones[64];
    size_t n;
} ec2_zone_map;
size_t aws_ec2_zone_maps(aws_client *c, ec2_zone_map *maps, size_t n, ib_error *errs);
int aws_ec2_zones_pager(ec2_zone_map *maps, aws_pager *out, ib_error *err);
int aws_ec2_parse_zones(const char *xml, size_t len, ec2_zone_map *m, ib_error *err);

/* application/x-www-form-urlencoded value encoding as the EC2 query API wants it (RFC 3986
 * unreserved kept, everything else %XX).  Appends to a growing buffer; -1 on out of memory. */
int aws_query_append(char **buf, size_t *len, size_t *cap, const char *name, const char *value);

#endif
