/* aws_services: the service calls prices/ makes, apart from the client core (src/aws/services/):
 * Price List GetProducts (pricing.c), EC2 spot price history and spot placement scores (ec2.c),
 * S3 objects, listings and presigned URLs (s3.c),
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

/* ---- S3 (s3.c): objects, listings, bucket regions, presigned URLs --------------------------- */
/* One command's S3: the client, the region to start from, the endpoint and addressing style,
 * and the bucket regions learnt from redirects (remembered for the rest of the command).
 * Virtual-hosted style (https://BUCKET.s3.REGION.amazonaws.com/KEY) unless the endpoint is not
 * AWS's (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), the profile says `s3 = addressing_style = path`,
 * or the bucket name is no DNS label (dots, upper case): then path style (ENDPOINT/BUCKET/KEY). */
typedef struct aws_s3 aws_s3;
int aws_s3_open(aws_client *c, const char *region, aws_s3 **out, ib_error *err);
void aws_s3_close(aws_s3 *s);
/* An S3 session from the environment, as measure's upload and rank's reads need one: the
 * credential chain (refreshed as they expire), the configured region or else us-east-1 (whose
 * redirect then names the bucket's own), MAX_CONCURRENCY requests in flight (0: the client's
 * default).  On failure nothing is left open. */
int aws_s3_connect(int max_concurrency, aws_client **client, aws_s3 **s3, ib_error *err);

/* "s3://BUCKET[/KEY]": bucket into bucket (validated), the rest (possibly "") into key (malloc'd).
 * Exit 2 with a message for a missing or invalid bucket. */
int aws_s3_parse_uri(const char *uri, char bucket[64], char **key, ib_error *err);
/* S3's bucket naming rules (3-63 of a-z 0-9 . -, alphanumeric at both ends, no "..", not an IP). */
int aws_s3_bucket_name_valid(const char *bucket);

int aws_s3_put_object(aws_s3 *s, const char *bucket, const char *key, const void *body, size_t len,
                      const char *content_type, ib_error *err);
int aws_s3_delete_object(aws_s3 *s, const char *bucket, const char *key, ib_error *err);
/* The object into memory (malloc'd, NUL-terminated); more than max_bytes is an error. */
int aws_s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body,
                      size_t *len, ib_error *err);

/* GetObject for N keys together (the client's concurrency bounds what is in flight): bodies[i]
 * (malloc'd, NUL-terminated) and lens[i], or errs[i].code != 0.  Returns how many failed. */
size_t aws_s3_get_objects(aws_s3 *s, const char *bucket, char *const *keys, size_t n, size_t max_bytes,
                          char **bodies, size_t *lens, ib_error *errs);

typedef struct aws_s3_object {
    char *key;                /* decoded; untrusted (may hold control characters or "../") */
    long long size;
} aws_s3_object;
typedef struct aws_s3_listing {
    aws_s3_object *objs;
    size_t n, cap;
    int pages;
} aws_s3_listing;
/* ListObjectsV2 under prefix, following continuation tokens: page_size keys per page (max-keys,
 * 1..1000; 0: S3's 1000), at most max_pages pages (0: 10000) and max_objects keys (0: 1e6);
 * past either bound is an error, so a token that never ends stops. */
int aws_s3_list_objects(aws_s3 *s, const char *bucket, const char *prefix, int page_size, int max_pages,
                        size_t max_objects, aws_s3_listing *out, ib_error *err);
void aws_s3_listing_free(aws_s3_listing *l);
/* Parses one ListObjectsV2 page into out; *next gets NextContinuationToken (malloc'd) when the
 * listing is truncated.  Never crashes on malformed input. */
int aws_s3_parse_list_page(const char *xml, size_t len, aws_s3_listing *out, char **next, ib_error *err);

/* HeadBucket: 0 when the bucket exists and these credentials may use it; region gets the
 * bucket's region (x-amz-bucket-region, or the region asked when the server names none). */
int aws_s3_bucket_region(aws_s3 *s, const char *bucket, char region[32], ib_error *err);

/* A presigned URL (malloc'd) for METHOD ("GET"/"PUT") on s3://BUCKET/KEY, valid expires_s
 * (1..604800) from `when`, for the bucket's region (the s3 context's, or one learnt). */
int aws_s3_presign(aws_s3 *s, const aws_credentials *cred, const char *method, const char *bucket,
                   const char *key, long expires_s, time_t when, char **url, ib_error *err);

/* application/x-www-form-urlencoded value encoding as the EC2 query API wants it (RFC 3986
 * unreserved kept, everything else %XX).  Appends to a growing buffer; -1 on out of memory. */
int aws_query_append(char **buf, size_t *len, size_t *cap, const char *name, const char *value);
/* The same encoding of S alone (keep_slash: '/' kept, as S3 keys in a path), and S as is, appended
 * to a growing buffer (NUL-terminated); -1 on out of memory. */
int aws_uri_append(char **buf, size_t *len, size_t *cap, const char *s, int keep_slash);
int aws_str_append(char **buf, size_t *len, size_t *cap, const char *s);

#endif
