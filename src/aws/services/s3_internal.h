/* The S3 client's private pieces (s3.c), shared by its other files (s3_paging.c, s3_presign.c):
 * the client's state, one request's description, and the request path every call goes through. */
#ifndef INSTBENCH_AWS_SERVICES_S3_INTERNAL_H
#define INSTBENCH_AWS_SERVICES_S3_INTERNAL_H

#include "internal.h"

#define S3_MAX_KNOWN 32 /* bucket regions remembered per command */

struct aws_s3 {
    aws_client *c;
    char region[32];
    char style[8];       /* "path" | "virtual" | "auto" (config) */
    int custom_endpoint; /* AWS_ENDPOINT_URL[_S3] names a host that is not AWS's */
    char region_var[24]; /* what sets REGION, named when a bucket is elsewhere ("": the caller's) */
    struct {
        char bucket[64];
        char region[32];
    } known[S3_MAX_KNOWN];
    size_t n_known;
};

/* One request (s3_send), and what messages call it. */
typedef struct s3_call {
    const char *method;
    const char *bucket;
    const char *key; /* NULL: the bucket */
    const char *query;
    const char *body;
    size_t body_len;
    const char *content_type;
    size_t max_body;
    const char *what;  /* "PutObject" */
    const char *shown; /* the URI messages name when not s3://bucket/key (the write check's) */
} s3_call;

/* The region requests for BUCKET go to: the one remembered for it, or the client's. */
const char *s3_bucket_region(const aws_s3 *s, const char *bucket);
/* 1 once the bucket's region is known to be right: a request there succeeded or redirected. */
int s3_region_confirmed(const aws_s3 *s, const char *bucket);
/* The URL of bucket/key (key NULL: the bucket itself) in region, with query appended when given;
 * host_out (when not NULL) gets the Host header it implies (a presigned URL's: an endpoint with a
 * user name or password is refused).  *url is malloc'd. */
int s3_url(const aws_s3 *s, const char *bucket, const char *key, const char *region, const char *query, char **url,
           char *host_out, size_t host_len, ib_error *err);
/* 1 when R says the bucket is in another region (a 301/307, or a 400 for the signing region, with
 * x-amz-bucket-region). */
int s3_is_region_redirect(const aws_response *r);
/* K's failure in err (-1): one message per failure a user can act on; the transport's otherwise. */
int s3_fail(const aws_s3 *s, const s3_call *k, const char *region, const aws_response *r, const ib_error *terr,
            ib_error *err);
/* K sent, a region redirect followed once: 0 with RESP a 2xx answer (the caller frees it), or -1
 * with err set (RESP's body freed, its too_big kept). */
int s3_send(aws_s3 *s, const s3_call *k, aws_response *resp, ib_error *err);
/* aws_s3_get_object, and *too_big (when not NULL): 1 when the object was longer than max_bytes. */
int s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body, size_t *len,
                  int *too_big, ib_error *err);

#endif
