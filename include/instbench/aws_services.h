/* aws_services: the service calls prices/ makes, apart from the client core (src/aws/services/):
 * Price List GetProducts (pricing.c), EC2 spot price history and spot placement scores (ec2.c),
 * S3 objects, listings and presigned URLs (s3.c), the sweep's EC2 (ec2_launch.c) and SSM (ssm.c)
 * calls,
 * and the batched paginator they share (paginate.c).
 * Every call takes many independent queries at once: all first pages go out together, then all
 * second pages, so a run costs about (longest pagination chain) x (latency), not (requests) x it. */
#ifndef INSTBENCH_AWS_SERVICES_H
#define INSTBENCH_AWS_SERVICES_H

#include <stddef.h>
#include <time.h>
#include "instbench/aws.h"

/* ---- batched pagination -------------------------------------------------------------------- */
/* A query's pages unless its pager says otherwise: a NextToken chain past it is taken for one that
 * never ends. */
#define AWS_PAGER_MAX_PAGES 200

typedef struct aws_pager {
    void *ctx;
    const char *what; /* "Pricing GetProducts": names the service call in error messages */
    /* The request for query i, page after `token` (NULL: first page).  *url and *body are
     * malloc'd by build and freed by the pager after the send. */
    int (*build)(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body, ib_error *err);
    /* Consumes one page of query i; sets *next (malloc'd) when another page follows. */
    int (*parse)(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err);
    int max_pages; /* per query; a token loop past this is an error (0: AWS_PAGER_MAX_PAGES) */
    const char *(*name_of)(void *ctx, size_t i); /* optional: `what` per query */
    /* Optional: query i's own bound on pages (0: max_pages), for a call whose honest answer takes
     * more pages the more the query asks (spot prices of many types at a small page size). */
    int (*max_pages_of)(void *ctx, size_t i);
    /* The most one answer of this call may be, in bytes, put on every request the pager sends,
     * over whatever build set (0: the transport's own 64 MiB), batched with other calls or not: set
     * once beside the call's other bounds, not in each build function, where a new call could
     * forget it. */
    size_t max_body;
} aws_pager;

/* Runs n paginated queries; errs[i].code != 0 says why query i failed.  Returns how many failed. */
size_t aws_paginate_many(aws_client *c, const aws_pager *p, size_t n, ib_error *errs);

/* Several kinds of paginated queries in the same rounds (pricing, spot, scores together):
 * pagers[k] runs counts[k] queries; errs[k] has counts[k] entries.  Returns how many failed. */
size_t aws_paginate_multi(aws_client *c, const aws_pager *pagers, const size_t *counts, size_t n_pagers,
                          ib_error *const *errs);

/* ---- Price List Query API: GetProducts ----------------------------------------------------- */
typedef struct pricing_item {
    char instance_type[64]; /* "g5.xlarge" (AmazonEC2) or "ml.g5.xlarge" (AmazonSageMaker training) */
    char region[32];        /* regionCode */
    double usd_per_hour;    /* out: on-demand USD/h, NAN when no product matched */
    int n_products;         /* out: products seen that matched, with a price (all at usd_per_hour) */
    int n_zero;             /* out: products that matched with an hourly price of $0 only (no price) */
    char sku[64];           /* out: the SKU usd_per_hour was read from */
    int pages;              /* out */
} pricing_item;

/* GetProducts for each item, to combine with other pagers in aws_paginate_multi (page_size:
 * MaxResults 1..100; 0: 100); ctx is malloc'd (free()). */
int aws_pricing_pager(pricing_item *items, size_t n, int page_size, aws_pager *out, ib_error *err);
/* Request body for one page (exposed for tests); malloc'd. */
char *aws_pricing_request_body(const pricing_item *it, int page_size, const char *token);
/* Parses one GetProducts response into it (the matching product's price; -1 when two matching
 * products differ in price: ambiguous, err names both SKUs); *next gets the NextToken (malloc'd)
 * or NULL.  Never crashes on malformed input (fuzzed). */
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
    char **instance_types; /* borrowed */
    size_t n_types;
    time_t start_time;       /* StartTime: AWS then returns the price in effect at that time */
    ec2_spot_entry *entries; /* out: the latest price per (instance type, AZ); malloc'd */
    size_t n_entries, cap;
    int pages;
    size_t *index, n_index; /* entries by (type, AZ): slot -> entry + 1, 0 empty; the parser's */
    unsigned long long seed;
    char **asked; /* instance_types sorted, made by the parser on its first item; the parser's */
    /* More entries than this fail the query at once (0: no bound): what the caller keeps is bounded
     * by it, not by the pages an endpoint sends. */
    size_t max_entries;
} ec2_spot_query;

int aws_ec2_spot_pager(ec2_spot_query *qs, int page_size, aws_pager *out, ib_error *err);
int aws_ec2_parse_spot_page(const char *xml, size_t len, ec2_spot_query *q, char **next, ib_error *err);
/* Sorts q's entries by instance type, then AZ (strcmp), once every page is read, so that a type's
 * entries are one run found by a search; the parser's index goes (another page would rebuild it). */
void ec2_spot_query_sort(ec2_spot_query *q);
/* After ec2_spot_query_sort: the run of q's entries of instance type TYPE (in AZ order), its first
 * and in *n how many (0: none).  A search per type, not a scan: a region's answer holds up to
 * types x 64 entries. */
const ec2_spot_entry *ec2_spot_query_run(const ec2_spot_query *q, const char *type, size_t *n);
void ec2_spot_query_free(ec2_spot_query *q);

/* ---- EC2 GetSpotPlacementScores ------------------------------------------------------------ */
typedef struct ec2_score {
    char region[32];
    char az_id[32]; /* "" for a region-level score */
    int score;      /* 1..10 */
} ec2_score;

typedef struct ec2_score_query {
    char instance_type[64];
    /* More types the user would accept, asked together with instance_type (AWS: with one or two
     * types "the returned placement score will always be low"; it recommends at least three).
     * Borrowed; duplicates of instance_type are not sent twice. */
    char **pool;
    size_t n_pool;
    int target_capacity; /* TargetCapacity in units (instances): a row's node count; 0 = 1 */
    char **regions;      /* borrowed */
    size_t n_regions;
    int single_az;     /* SingleAvailabilityZone=true: one score per AZ ID */
    ec2_score *scores; /* out, malloc'd */
    size_t n_scores, cap;
} ec2_score_query;

/* Calls are sent to `via_region`'s EC2 endpoint (the API answers for every listed region). */
int aws_ec2_scores_pager(ec2_score_query *qs, const char *via_region, aws_pager *out, ib_error *err);
int aws_ec2_parse_scores_page(const char *xml, size_t len, ec2_score_query *q, char **next, ib_error *err);
void ec2_score_query_free(ec2_score_query *q);

/* ---- EC2 DescribeAvailabilityZones: zone name <-> zone ID (placement scores use IDs) -------- */
typedef struct ec2_zone_map {
    char region[32];
    struct {
        char name[32];
        char id[32];
    } zones[64];
    size_t n;
} ec2_zone_map;
size_t aws_ec2_zone_maps(aws_client *c, ec2_zone_map *maps, size_t n, ib_error *errs);
int aws_ec2_zones_pager(ec2_zone_map *maps, aws_pager *out, ib_error *err);
int aws_ec2_parse_zones(const char *xml, size_t len, ec2_zone_map *m, ib_error *err);

/* ---- EC2 DescribeCapacityBlockOfferings (ec2_blocks.c): Capacity Blocks for ML ------------- */
/* One offering as EC2 states it: a block of instance_count instances of instance_type in az,
 * from start to end, for upfront_fee (currency, "USD"), paid up front, never interrupted. */
typedef struct ec2_block_offering {
    char id[64];
    char instance_type[64];
    char az[32];
    char currency[8];
    int instance_count;
    int duration_hours, duration_minutes; /* the block lasts hours + minutes */
    time_t start, end;
    double upfront_fee;
    char ultraserver_type[64]; /* an UltraServer offering: its type ("u-p6e-gb200x72"), "" none */
    int ultraserver_count;     /* and how many; instance_count is their instances together */
} ec2_block_offering;

typedef struct ec2_block_query {
    char region[32];
    const char *instance_type;    /* borrowed */
    int instance_count;           /* 1..64 */
    const char *ultraserver_type; /* borrowed; set: UltraserverType + UltraserverCount are asked
                                       instead of the two above, and only its offerings kept */
    int ultraserver_count;
    int duration_hours;             /* CapacityDurationHours: 24 x (1..14, or 7-day steps to 182) */
    time_t start_after, end_before; /* StartDateRange / EndDateRange, 0: not sent */
    ec2_block_offering *offerings;  /* out, malloc'd */
    size_t n, cap;
} ec2_block_query;

/* One query per (type, region), the pages of all of them together (aws_paginate_many). */
int aws_ec2_blocks_pager(ec2_block_query *qs, aws_pager *out, ib_error *err);
/* Request body of one page (exposed for tests); malloc'd. */
char *aws_ec2_blocks_request_body(const ec2_block_query *q, const char *token);
/* One answer page into q; an implausible fee, date or count is an error naming it. */
int aws_ec2_parse_blocks_page(const char *xml, size_t len, ec2_block_query *q, char **next, ib_error *err);
void ec2_block_query_free(ec2_block_query *q);

/* ---- Savings Plans DescribeSavingsPlansOfferingRates (savingsplans.c; REST-JSON) ------------ */
/* POST /DescribeSavingsPlansOfferingRates to https://savingsplans.amazonaws.com (the service is
 * global; signed for "savingsplans" in us-east-1), or AWS_ENDPOINT_URL[_SAVINGSPLANS]. */
typedef struct sp_rate {
    double usd_per_hour;  /* the plan's rate for one instance-hour */
    long long duration_s; /* the term: 31536000 (1 year) or 94608000 (3 years) */
    char offering_id[64];
    char usage_type[96];
} sp_rate;

typedef struct sp_query {
    const char *instance_type; /* borrowed: "p5.48xlarge" or "ml.p5.48xlarge" */
    const char *region;        /* borrowed */
    const char *plan_type;     /* "Compute", "EC2Instance", "SageMaker" */
    const char *payment;       /* "No Upfront", "Partial Upfront", "All Upfront" */
    long long duration_s;      /* only rates of this term are kept */
    sp_rate *rates;            /* out: Linux/UNIX, shared tenancy, USD; malloc'd */
    size_t n, cap;
} sp_query;

int aws_savingsplans_pager(sp_query *qs, aws_pager *out, ib_error *err);
char *aws_savingsplans_request_body(const sp_query *q, const char *token);
int aws_savingsplans_parse_page(const char *body, size_t len, sp_query *q, char **next, ib_error *err);
void sp_query_free(sp_query *q);

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
/* The variable that sets the session's region (aws_s3_connect: AWS_REGION, or AWS_DEFAULT_REGION
 * where that gave it), named in a message about a bucket in another region that was not
 * followed ("set AWS_REGION=eu-west-1"); none (NULL or ""): the caller's own region, not named. */
void aws_s3_set_region_var(aws_s3 *s, const char *variable);

/* "s3://BUCKET[/KEY]": bucket into bucket (validated), the rest (possibly "") into key (malloc'd).
 * Exit 2 with a message for a missing or invalid bucket. */
int aws_s3_parse_uri(const char *uri, char bucket[64], char **key, ib_error *err);
/* S3's bucket naming rules for general purpose buckets (3-63 of a-z 0-9 . -, alphanumeric at
 * both ends, no "..", not an IP, none of the reserved prefixes and suffixes: xn--, sthree-,
 * amzn-s3-demo-, -s3alias, --ol-s3, .mrap, --table-s3, and --x-s3, a directory bucket, which is
 * not supported): the rule BUCKET breaks, as a clause for a message, or NULL when it is valid. */
const char *aws_s3_bucket_name_problem(const char *bucket);
int aws_s3_bucket_name_valid(const char *bucket);

int aws_s3_put_object(aws_s3 *s, const char *bucket, const char *key, const void *body, size_t len,
                      const char *content_type, ib_error *err);
int aws_s3_delete_object(aws_s3 *s, const char *bucket, const char *key, ib_error *err);
/* The write check before a run: an empty object MARKER put into BUCKET, whose failure is said
 * about SHOWN (the s3:// URI the user gave), not about the marker, no object the user named:
 * "S3 write check (PutObject) s3://b/dir/: access denied (AccessDenied, HTTP 403): ...".  The
 * caller removes the marker (aws_s3_delete_object). */
int aws_s3_write_check(aws_s3 *s, const char *bucket, const char *marker, const char *shown, ib_error *err);
/* The object into memory (malloc'd, NUL-terminated); more than max_bytes is an error. */
int aws_s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body, size_t *len,
                      ib_error *err);

typedef struct aws_s3_object {
    char *key; /* decoded; untrusted (may hold control characters or "../") */
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

/* A listing read a page at a time (ListObjectsV2 with continuation tokens), so that a caller can
 * fetch one page's objects while the next page is listed (aws_s3_get_objects' ALONG).  Memory is
 * one page (up to 1,000 keys), whatever the prefix holds; at most max_pages pages are asked for. */
typedef struct aws_s3_pager {
    char bucket[64];
    const char *prefix; /* the caller's, alive as long as the pager */
    int page_size, max_pages, pages;
    char *token;         /* the next page's continuation token */
    int more;            /* a page is still to be listed (0 also once it failed) */
    aws_s3_listing page; /* the page listed last; its keys the caller's to take (NULL them) */
    ib_error err;        /* why the pager ended early, from a page listed along with GETs */
} aws_s3_pager;
/* page_size and max_pages as aws_s3_list_objects takes them. */
void aws_s3_pager_init(aws_s3_pager *p, const char *bucket, const char *prefix, int page_size, int max_pages);
/* Lists the next page alone into p->page (emptied when there is none): 0, or -1 with err (the
 * pager ended: more is 0). */
int aws_s3_pager_next(aws_s3 *s, aws_s3_pager *p, ib_error *err);
void aws_s3_pager_free(aws_s3_pager *p);

/* GetObject for N keys together (the client's concurrency bounds what is in flight): bodies[i]
 * (malloc'd, NUL-terminated, at most max_bytes[i] bytes) and lens[i], or errs[i].code != 0, with
 * too_big[i] (when too_big is not NULL) 1 when that object was longer than max_bytes[i].  ALONG
 * (NULL: none): a pager whose next page, if any, is listed in the same flight (into along->page; a
 * failure ends the pager, the reason in along->err).  Returns how many GETs failed. */
size_t aws_s3_get_objects(aws_s3 *s, const char *bucket, char *const *keys, size_t n, const size_t *max_bytes,
                          char **bodies, size_t *lens, ib_error *errs, int *too_big, aws_s3_pager *along);

/* HeadBucket: 0 when the bucket exists and these credentials may use it; region gets the
 * bucket's region (x-amz-bucket-region, or the region asked when the server names none). */
int aws_s3_bucket_region(aws_s3 *s, const char *bucket, char region[32], ib_error *err);

/* A presigned URL (malloc'd) for METHOD ("GET"/"PUT") on s3://BUCKET/KEY, valid expires_s
 * (1..604800) from `when`, for the bucket's region (the s3 context's, or one learnt). */
int aws_s3_presign(aws_s3 *s, const aws_credentials *cred, const char *method, const char *bucket, const char *key,
                   long expires_s, time_t when, char **url, ib_error *err);

/* ---- SSM GetParameter (ssm.c; JSON protocol, X-Amz-Target: AmazonSSM.GetParameter) --------- */
/* The value of parameter NAME in REGION (the sweep's AMI: a public /aws/service/... parameter),
 * endpoint https://ssm.REGION.amazonaws.com or AWS_ENDPOINT_URL[_SSM].
 * 0: found; 1: ParameterNotFound (err says which name); -1: any other failure. */
int aws_ssm_get_parameter(aws_client *c, const char *region, const char *name, char *value, size_t value_len,
                          ib_error *err);

/* ---- EC2 calls of the sweep (ec2_launch.c): launch, watch, terminate, placement groups ------- */
typedef struct ec2_tag {
    char key[128];
    char value[256];
} ec2_tag;
/* The tags an instance's answer is read for (ec2_instance.sweep_tag / candidate_tag); sweep.h's
 * SWEEP_TAG_SWEEP / SWEEP_TAG_CANDIDATE are these. */
#define EC2_TAG_SWEEP "instbench:sweep"
#define EC2_TAG_CANDIDATE "instbench:candidate"

typedef struct ec2_launch {
    const char *region;
    const char *instance_type;
    const char *image_id;
    int count;                     /* MinCount = MaxCount: all N nodes of a candidate or none */
    int spot;                      /* InstanceMarketOptions: spot, one-time, terminate on
                                       interruption */
    double spot_max_price;         /* spot: SpotOptions.MaxPrice in USD per hour (> 0; written
                                       rounded down to 1e-6, so EC2 never bills above it); 0 or
                                       NAN: none (EC2 then caps at on-demand) */
    const char *subnet_id;         /* NULL: EC2 picks (default VPC) */
    const char *security_group_id; /* NULL: the VPC's default group */
    const char *placement_group;   /* NULL: none; a cluster group for multi-node candidates */
    const char *user_data;         /* plain text, base64-encoded by the call */
    const char *client_token;      /* idempotency token (<= 64 ASCII): a retried request never
                                       launches twice */
    const ec2_tag *tags;           /* on the instances and their volumes (TagSpecification) */
    size_t n_tags;
    int root_volume_gb;               /* 0: the AMI's default; else /dev/sda1 (the root device of
                                       Ubuntu's and the Deep Learning AMIs), gp3, deleted with
                                       the instance */
    int dry_run;                      /* DryRun=true: only the permission check */
    const char *capacity_reservation; /* cr-...: into this Capacity Block the user bought
                                          (InstanceMarketOptions.MarketType=capacity-block and
                                          CapacityReservationSpecification's target); NULL: none */
    const struct ec2_nic *nics;       /* n_nics > 0: NetworkInterface.N, each in subnet_id with
                                       security_group_id (then neither is sent at the top level,
                                       where EC2 refuses them beside interfaces) */
    size_t n_nics;
} ec2_launch;
/* One network interface asked at launch (NetworkInterface.N): the EFA layout of sweep/efa.c. */
#define EC2_NICS_MAX 64
typedef struct ec2_nic {
    int card;      /* NetworkCardIndex */
    int device;    /* DeviceIndex */
    char type[12]; /* InterfaceType: "interface" (ENA), "efa" (EFA with ENA), "efa-only" */
    int public_ip; /* AssociatePublicIpAddress=true (EC2 allows it only on a lone interface) */
} ec2_nic;
/* Always InstanceInitiatedShutdownBehavior=terminate, so `shutdown -h` on the instance ends it. */

typedef struct ec2_instance {
    char id[32];
    char type[64];
    char state[24]; /* pending | running | shutting-down | terminated |
                                       stopping | stopped */
    char az[32];
    char subnet_id[32];
    char private_ip[48];
    int launch_index;           /* amiLaunchIndex: the node's rank within its RunInstances */
    int spot;                   /* instanceLifecycle = spot */
    char state_reason_code[64]; /* "Server.SpotInstanceTermination", "Client.UserInitiatedShutdown" */
    char state_reason_message[256];
    time_t launch_time;
    time_t transition_time; /* when it last changed state, from StateTransitionReason ("User
                                       initiated (2026-11-25 21:45:00 GMT)"); 0 when it names none */
    char sweep_tag[64];     /* the instbench:sweep tag's value, "" if none */
    char candidate_tag[96]; /* the instbench:candidate tag's value */
} ec2_instance;

typedef struct ec2_instances {
    ec2_instance *v;
    size_t n, cap;
} ec2_instances;
/* The time a StateTransitionReason names ("... (YYYY-MM-DD HH:MM:SS GMT)"), 0 when none. */
time_t aws_ec2_transition_time(const char *reason);
void ec2_instances_free(ec2_instances *l);

/* RunInstances.  0: launched (out gets the instances, as RunInstances answers: ids, launch
 * indexes, private IPs) or, with dry_run, AWS answered DryRunOperation (permitted).  -1: refused;
 * aws_code gets AWS's error code ("InsufficientInstanceCapacity", "VcpuLimitExceeded",
 * "UnauthorizedOperation", ...; "" for a transport failure) so the caller can tell capacity
 * (try another zone) from quota (stop) from everything else. */
int aws_ec2_run_instances(aws_client *c, const ec2_launch *l, ec2_instances *out, char aws_code[64], ib_error *err);
/* DescribeInstances, every page: the instances IDS (n_ids > 0; an ID EC2 does not know yet,
 * eventual consistency, is left out rather than an error) or, with n_ids == 0, every instance
 * whose tag TAG_KEY has TAG_VALUE (terminated ones included: the caller filters). */
int aws_ec2_describe_instances(aws_client *c, const char *region, char *const *ids, size_t n_ids, const char *tag_key,
                               const char *tag_value, ec2_instances *out, ib_error *err);
/* DescribeInstances of the instances a RunInstances with CLIENT_TOKEN launched (filter
 * client-token) that also carry the tag TAG_KEY=TAG_VALUE (terminated ones included): a launch
 * whose answer was lost is found by the token it was sent with. */
int aws_ec2_instances_by_client_token(aws_client *c, const char *region, const char *client_token, const char *tag_key,
                                      const char *tag_value, ec2_instances *out, ib_error *err);
/* MaxResults per DescribeInstances page (5..1000, clamped; default 1000): tests page small. */
void aws_ec2_set_describe_page_size(int n);
/* One RunInstances (run_response) or DescribeInstances answer, appended to out; *next (when
 * given) gets nextToken.  Never crashes on malformed input (fuzzed). */
int aws_ec2_parse_instances(const char *xml, size_t len, int run_response, ec2_instances *out, char **next,
                            ib_error *err);
/* TerminateInstances for IDS (at most 1000 per call; batched beyond).  An ID already gone
 * (InvalidInstanceID.NotFound) is not a failure. */
int aws_ec2_terminate_instances(aws_client *c, const char *region, char *const *ids, size_t n, ib_error *err);

/* Cluster placement groups: created tagged, found by tag, deleted.  Creating one that exists
 * (InvalidPlacementGroup.Duplicate: a retried create) and deleting one that does not
 * (InvalidPlacementGroup.Unknown) are not failures; deleting one still in use is (the caller waits
 * for its instances to be terminated first). */
int aws_ec2_create_placement_group(aws_client *c, const char *region, const char *name, const ec2_tag *tags,
                                   size_t n_tags, ib_error *err);
int aws_ec2_delete_placement_group(aws_client *c, const char *region, const char *name, ib_error *err);
typedef struct ec2_placement_group {
    char name[256];
    char state[16];
} ec2_placement_group;
/* Every placement group whose tag TAG_KEY has TAG_VALUE (*out malloc'd). */
int aws_ec2_placement_groups_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                                    ec2_placement_group **out, size_t *n, ib_error *err);

/* The default VPC of REGION: its id, its default security group, and its default subnets (one
 * per zone: the zones a launch can fall back to on InsufficientInstanceCapacity).  *subnets
 * malloc'd.  No default VPC is an error that says so. */
typedef struct ec2_subnet {
    char id[32];
    char az[32];
} ec2_subnet;
int aws_ec2_default_network(aws_client *c, const char *region, char vpc_id[32], char sg_id[32], ec2_subnet **subnets,
                            size_t *n, ib_error *err);

/* One Capacity Reservation as DescribeCapacityReservations states it (CapacityReservationId.1). */
typedef struct ec2_capacity_reservation {
    char id[32];
    char instance_type[64];
    char az[32];
    char state[24];            /* active | scheduled | payment-pending | expired | cancelled | ... */
    char reservation_type[24]; /* "capacity-block" for a Capacity Block, "default" otherwise */
    int total, available;      /* instances */
    time_t start, end;         /* 0: none given */
} ec2_capacity_reservation;
/* 0, or -1 with ERR (an ID EC2 does not know: InvalidCapacityReservationId.NotFound, named). */
int aws_ec2_capacity_reservation(aws_client *c, const char *region, const char *id, ec2_capacity_reservation *out,
                                 ib_error *err);

/* ---- the EFA network of a multi-node sweep candidate (ec2_network.c) ------------------------ */
/* What DescribeInstanceTypes says of a type's network (networkInfo). */
#define EC2_CARDS_MAX 64
typedef struct ec2_type_network {
    char type[64];
    int efa_supported;                      /* efaSupported */
    int max_efa_interfaces;                 /* efaInfo/maximumEfaInterfaces, 0 when absent */
    int max_network_cards;                  /* maximumNetworkCards (1 when absent) */
    int card_max_interfaces[EC2_CARDS_MAX]; /* networkCards/item: maximumNetworkInterfaces by
                                                 networkCardIndex; 0 when the card is not listed */
    char arch[16];                          /* processorInfo/supportedArchitectures: "arm64" or "x86_64"
                                       (i386 alongside counts as x86_64); "" when absent or other */
    unsigned card_types[EC2_CARDS_MAX];     /* networkCards/item/interfaceTypeSet: EC2_IF_* bits
                                                 by networkCardIndex; 0: the answer did not say */
} ec2_type_network;
/* The interface types a network card takes (NetworkCardInfo.InterfaceTypes): ENA ("interface"),
 * EFA with ENA ("efa"), EFA alone ("efa-only"); EC2_IF_STATED: the card's answer listed its types
 * (a value this list does not know, "secondary", adds only that bit). */
#define EC2_IF_ENA 1u
#define EC2_IF_EFA 2u
#define EC2_IF_EFA_ONLY 4u
#define EC2_IF_STATED 8u
/* DescribeInstanceTypes for TYPES (InstanceType.N, at most 100): out[i] for types[i].  A type EC2
 * does not answer for is an error naming it (not offered in REGION, or a typo the catalogue let by). */
int aws_ec2_type_networks(aws_client *c, const char *region, char *const *types, size_t n, ec2_type_network *out,
                          ib_error *err);
/* One DescribeInstanceTypes answer into out (types given: which slot each belongs in); fuzzed. */
int aws_ec2_parse_type_networks(const char *xml, size_t len, char *const *types, size_t n, ec2_type_network *out,
                                int *seen, ib_error *err);

/* DescribeSecurityGroupRules of group SG_ID: *in_self / *out_self 1 when it has a rule of every
 * protocol (-1) from / to itself (referencedGroupInfo = SG_ID): what EFA needs. */
int aws_ec2_group_self_rules(aws_client *c, const char *region, const char *sg_id, int *in_self, int *out_self,
                             ib_error *err);
/* CreateSecurityGroup NAME in VPC_ID, tagged, then every protocol from and to itself, in and out
 * (AuthorizeSecurityGroupIngress/Egress; a rule already there is not a failure).  A retried
 * create (InvalidGroup.Duplicate) finds the group by name.  id: the group's sg-... */
int aws_ec2_create_self_group(aws_client *c, const char *region, const char *vpc_id, const char *name,
                              const char *description, const ec2_tag *tags, size_t n_tags, char id[32], ib_error *err);
/* DeleteSecurityGroup.  0: gone (InvalidGroup.NotFound counts); -1: code gets AWS's code
 * ("DependencyViolation" while a terminated instance's interfaces still hold it). */
int aws_ec2_delete_security_group(aws_client *c, const char *region, const char *id, char code[64], ib_error *err);
/* The ids of every security group whose tag TAG_KEY has TAG_VALUE (*ids malloc'd, [n][32]). */
int aws_ec2_security_groups_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                                   char (**ids)[32], size_t *n, ib_error *err);

/* Elastic IPs: an instance with more than one network interface gets no public IPv4 address, so
 * the sweep gives its primary interface one (to reach S3), released at the end. */
typedef struct ec2_address {
    char allocation_id[64];
    char public_ip[48];
    char association_id[64]; /* "" when not associated */
} ec2_address;
/* AllocateAddress (Domain vpc), tagged (TagSpecification elastic-ip). */
int aws_ec2_allocate_address(aws_client *c, const char *region, const ec2_tag *tags, size_t n_tags, ec2_address *out,
                             ib_error *err);
/* AssociateAddress of ALLOCATION_ID to network interface ENI_ID; code gets AWS's code on failure. */
int aws_ec2_associate_address(aws_client *c, const char *region, const char *allocation_id, const char *eni_id,
                              char code[64], ib_error *err);
/* ReleaseAddress.  0: released or already gone (InvalidAllocationID.NotFound); -1: code gets AWS's
 * code (InvalidIPAddress.InUse while the address is still associated). */
int aws_ec2_release_address(aws_client *c, const char *region, const char *allocation_id, char code[64], ib_error *err);
/* DisassociateAddress (an association already gone is not a failure). */
int aws_ec2_disassociate_address(aws_client *c, const char *region, const char *association_id, ib_error *err);
/* Every Elastic IP whose tag TAG_KEY has TAG_VALUE (*out malloc'd). */
int aws_ec2_addresses_by_tag(aws_client *c, const char *region, const char *tag_key, const char *tag_value,
                             ec2_address **out, size_t *n, ib_error *err);
/* The primary network interface (network card 0, device 0; the one holding the instance's
 * primary private address PRIVATE_IP) of INSTANCE_ID (DescribeNetworkInterfaces,
 * attachment.instance-id).  0: eni gets it; 1: not attached yet (try later); -1: failure. */
int aws_ec2_primary_interface(aws_client *c, const char *region, const char *instance_id, const char *private_ip,
                              char eni[32], ib_error *err);

/* The architecture of an AMI (DescribeImages): "x86_64" or "arm64". */
int aws_ec2_image_arch(aws_client *c, const char *region, const char *image_id, char arch[16], ib_error *err);

/* application/x-www-form-urlencoded value encoding as the EC2 query API wants it (RFC 3986
 * unreserved kept, everything else %XX).  Appends to a growing buffer; -1 on out of memory. */
int aws_query_append(char **buf, size_t *len, size_t *cap, const char *name, const char *value);
/* The same encoding of S alone (keep_slash: '/' kept, as S3 keys in a path), and S as is, appended
 * to a growing buffer (NUL-terminated); -1 on out of memory. */
int aws_uri_append(char **buf, size_t *len, size_t *cap, const char *s, int keep_slash);
int aws_str_append(char **buf, size_t *len, size_t *cap, const char *s);

#endif
