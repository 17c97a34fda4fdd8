/* aws: a small, strict AWS client.  SigV4 signing (pure), credential/region resolution, endpoints,
 * and a libcurl transport with retries and concurrency.  Service calls: instbench/aws_services.h */
#ifndef INSTBENCH_AWS_H
#define INSTBENCH_AWS_H

#include <stddef.h>
#include <time.h>
#include "instbench/util.h"

/* ---- credentials and region -------------------------------------------------------------- */
typedef struct aws_credentials {
    char access_key_id[128];
    char secret_access_key[128];
    char session_token[4096]; /* "" when none */
    time_t expiration;        /* 0 when they do not expire */
    char source[32];          /* "env" | "profile:NAME" | "process:NAME" | "container" | "imds" */
} aws_credentials;

/* The chain, as the AWS CLI resolves it: env -> shared files (AWS_PROFILE: keys, or the profile's
 * credential_process) -> container -> IMDS.
 * Returns -1 with a message naming what was tried when none is found. */
int aws_credentials_resolve(aws_credentials *out, ib_error *err);
/* AWS_REGION, AWS_DEFAULT_REGION, profile `region`, IMDS.  0 found; 1 none anywhere (ERR says
 * where it looked); -1 a source is wrong (a value that is no region, IB_EXIT_USAGE; the config
 * file refused: aws_config_load). */
int aws_region_resolve(char out[32], ib_error *err);
/* The same, and where the region came from into FROM (LEN bytes), for messages about its value:
 * "AWS_REGION", "AWS_DEFAULT_REGION", "the region of profile 'NAME' in PATH", "instance metadata". */
int aws_region_resolve_from(char out[32], char *from, size_t len, ib_error *err);
/* 1 when REGION is an AWS region instbench knows by name (src/aws/regions.c), else 0. */
int aws_region_known(const char *region);
/* Those regions, in name order, into OUT (up to CAP; returns how many there are): every one, or
 * the commercial partition's only (not GovCloud, China or the European Sovereign Cloud, which need
 * accounts of their own). */
size_t aws_regions_list(int commercial_only, const char **out, size_t cap);
/* The refresh half of the chain, the client's credentials provider (aws_client_options.refresh):
 * re-fetches container, IMDS or credential_process credentials (those with an Expiration) when
 * they expire within 5 minutes, or always with force.  0: cred holds usable credentials; 1: its source (env, profile) cannot be refreshed;
 * -1: failed (message). */
typedef int (*aws_credentials_refresh_fn)(aws_credentials *cred, int force, ib_error *err);
int aws_credentials_refresh(aws_credentials *cred, int force, ib_error *err);
/* "AKIA****MPLE": safe to print. */
void aws_mask_key_id(const char *key_id, char out[32]);

/* ---- signing (pure function, driven by the AWS SigV4 test suite) -------------------------- */
typedef struct aws_header {
    char *name;
    char *value;
} aws_header;

typedef struct aws_sign_input {
    const char *method;        /* "GET" */
    const char *path;          /* raw path as in the request line, without query */
    const char *query;         /* raw query string after '?', or NULL */
    const aws_header *headers; /* as sent (host included); duplicates allowed */
    size_t n_headers;
    const void *body;
    size_t body_len;
    const char *service; /* signing name: "pricing", "ec2" */
    const char *region;
    time_t when;            /* request time (UTC) */
    int normalize_path;     /* 1 for every service but S3 */
    int sign_body;          /* add x-amz-content-sha256 */
    int omit_session_token; /* add X-Amz-Security-Token after signing (suite flag) */
    int path_encoded;       /* S3: path is already URI-encoded; signed as sent (with
                                        normalize_path 0), not encoded a second time */
} aws_sign_input;

typedef struct aws_sign_output {
    char *canonical_request; /* malloc'd */
    char *string_to_sign;    /* malloc'd */
    char signature[65];
    char authorization[1024];
    char amz_date[17]; /* 20150830T123600Z */
    aws_header add[3]; /* headers to add: X-Amz-Date, [X-Amz-Security-Token], [x-amz-content-sha256] */
    size_t n_add;
} aws_sign_output;

int aws_sigv4_sign(const aws_sign_input *in, const aws_credentials *cred, aws_sign_output *out, ib_error *err);
void aws_sign_output_free(aws_sign_output *out);

/* A presigned query-string request (S3's form, as botocore's S3SigV4QueryAuth makes it): only
 * `host` signed, payload UNSIGNED-PAYLOAD, X-Amz-Security-Token when the credentials carry one.
 * Returns the query string to append after '?' (malloc'd), in botocore's order: X-Amz-Algorithm,
 * -Credential, -Date, -Expires, -SignedHeaders, [-Security-Token], -Signature.  Pure, like
 * aws_sigv4_sign: the time is the caller's. */
typedef struct aws_presign_input {
    const char *method;  /* "GET" | "PUT" */
    const char *host;    /* Host header as sent: "bucket.s3.us-west-2.amazonaws.com", "127.0.0.1:9000" */
    const char *path;    /* URI-encoded path as sent ("/bucket/my%20key") */
    const char *service; /* "s3" */
    const char *region;
    time_t when;
    long expires_s; /* X-Amz-Expires: 1..604800 */
} aws_presign_input;
int aws_sigv4_presign(const aws_presign_input *in, const aws_credentials *cred, char **query_out, ib_error *err);

/* ---- endpoints ----------------------------------------------------------------------------- */
/* https://api.pricing.us-east-1.amazonaws.com, https://ec2.REGION.amazonaws.com, unless
 * AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL overrides it (as in the AWS SDKs). */
int aws_endpoint_url(const char *service_env_id /* "PRICING", "EC2" */, const char *region, char *out, size_t out_len);
/* The override alone: 1 with its URL (trailing '/' trimmed) when AWS_ENDPOINT_URL_<SERVICE> or
 * AWS_ENDPOINT_URL moves the service (and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is not true), 0 with
 * "" for AWS's own endpoint, -1 when the URL does not fit. */
int aws_endpoint_override(const char *service_env_id, char *out, size_t out_len);
/* Why aws_endpoint_url or aws_endpoint_override found no URL for SERVICE_ENV_ID in REGION that fits
 * OUT_LEN bytes, into WHY (returned), for a message: the variable actually set, named, and its
 * length against the limit ("AWS_ENDPOINT_URL is too long: 70000 bytes, over the limit of 511 ..."). */
const char *aws_endpoint_problem(const char *service_env_id, const char *region, size_t out_len, char *why,
                                 size_t why_len);
/* The variable (AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL, the one in force) whose endpoint
 * URL is URL's start, into VAR (returned), for messages about where a request went; NULL when
 * none (AWS's own endpoint, a presigned URL given as such).  SERVICE is the signing name ("s3"). */
const char *aws_endpoint_var_of(const char *service, const char *url, char *var, size_t len);
/* What is wrong with URL as SERVICE's endpoint (the signing name, "s3"): no http:// or https://
 * before a host ("localhost:4566", a common slip), said naming the variable that set it
 * ("AWS_ENDPOINT_URL 'localhost:4566' is not an endpoint URL: ..."), into WHY; NULL when none. */
const char *aws_endpoint_url_problem(const char *service, const char *url, char *why, size_t len);
/* Who answers for these services, for caches that must not mix AWS's answers with another
 * endpoint's (a moto or LocalStack server): 0 and "" when every one is AWS's own endpoint, else 1
 * and 16 lower-case hex digits, the start of SHA-256("ID1=URL1\nID2=URL2\n...") over the
 * overrides in the order given ("" for a service left at AWS's).  out holds >= 17; -1 on error. */
int aws_endpoints_identity(const char *const *service_env_ids, size_t n, char *out, size_t out_len);
/* URL as it may be printed: userinfo ("user:password@", e.g. in AWS_ENDPOINT_URL) replaced by
 * "***@", the values of a presigned URL's X-Amz-Signature, X-Amz-Security-Token and
 * X-Amz-Credential by "***", control characters by '?'.  Returns out.  Every URL in a message or log goes through it. */
const char *aws_url_for_display(const char *url, char *out, size_t len);
/* scheme://host[:port] of URL as it may be printed (aws_url_for_display: no userinfo), into OUT. */
const char *aws_url_origin(const char *url, char *out, size_t len);

/* ---- transport ----------------------------------------------------------------------------- */
typedef struct aws_client_options {
    double connect_timeout_s; /* default 3 */
    double total_timeout_s;   /* default 30 per attempt */
    int max_attempts;         /* default 3 (standard retry mode); AWS_MAX_ATTEMPTS overrides */
    int max_concurrency;      /* requests in flight together, default 16 */
    /* Asked before each signing and once after an expired-token error; NULL: the credentials
     * are used as given.  A provider, so the transport knows no credential source. */
    aws_credentials_refresh_fn refresh;
} aws_client_options;

typedef struct aws_client aws_client;
int aws_client_create(const aws_client_options *opt, const aws_credentials *cred, aws_client **out, ib_error *err);
void aws_client_destroy(aws_client *c);

/* The S3 addressing style configured for the current profile (`s3 =` block, `addressing_style`
 * key, as botocore reads it): "path", "virtual" or "auto" (also when unset or unknown); NULL with
 * ERR set when the config file is refused (not a regular file, too large: aws_config_load). */
const char *aws_s3_addressing_style_config(ib_error *err);

typedef struct aws_request {
    const char *method;        /* "POST" / "GET" */
    const char *service;       /* signing name */
    const char *region;        /* signing region */
    const char *url;           /* full URL (endpoint + path + query) */
    const aws_header *headers; /* extra headers (Content-Type, X-Amz-Target) */
    size_t n_headers;
    const char *body;
    size_t body_len;
    int s3;          /* S3's signing: path signed as sent, x-amz-content-sha256 */
    int presigned;   /* the URL carries its own signature (a presigned S3 URL):
                                        sent as is, unsigned; needs no credentials */
    size_t max_body; /* response bytes accepted; 0: 64 MiB */
} aws_request;

typedef struct aws_response {
    long status; /* HTTP status of the last attempt, 0 on transport failure */
    char *body;  /* malloc'd, NUL-terminated */
    size_t body_len;
    int attempts;
    char error_code[128]; /* AWS error code parsed from a 4xx/5xx body, "" if none */
    /* AWS's message beside error_code; with status 0 (no HTTP answer: refused, DNS, a timeout,
     * a server speaking the other protocol) the transport's reason, which names no URL path */
    char error_message[512];
    char bucket_region[32]; /* S3's x-amz-bucket-region header, "" if none */
    char location[1024];    /* a 3xx answer's Location header, never followed; "" if none */
    int too_big;            /* a 2xx answer longer than the request's max_body: refused, not retried */
} aws_response;

/* Sends n independent requests concurrently (bounded by max_concurrency), signing each attempt
 * and retrying throttling/5xx/connection errors with exponential backoff and full jitter.
 * errs[i] says why request i failed (service and reason); returns the number that failed. */
int aws_client_send_many(aws_client *c, const aws_request *reqs, size_t n, aws_response *resps, ib_error *errs);
int aws_client_send(aws_client *c, const aws_request *req, aws_response *resp, ib_error *err);
void aws_response_free(aws_response *r);

#endif
