/* result_upload: a result sent to S3 instead of a local file (`measure --output s3://BUCKET/KEY`
 * or `--output 'https://...?X-Amz-Signature=...'`, a presigned PUT URL that needs no credentials, in
 * SigV4's form or S3's query-string form, `...?AWSAccessKeyId=...&Signature=...&Expires=...`).
 * Checked before the run: an s3:// destination by writing and removing a small marker object
 * beside it (proves PutObject is allowed; HeadBucket would only prove ListBucket), a presigned URL
 * by its shape and its expiry time.  After the run, when the upload still fails, result_save
 * keeps the result locally as without --output, so a long measurement is never lost to the
 * network.  A presigned URL's signature is never printed (aws_url_for_display). */
#define _GNU_SOURCE /* strptime, timegm */
#include "instbench/bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/aws.h"
#include "instbench/aws_services.h"

int result_output_is_remote(const char *output)
{
    return output &&
           (!strncmp(output, "s3://", 5) || !strncmp(output, "https://", 8) || !strncmp(output, "http://", 7));
}

/* The value of query parameter NAME in URL's query (between '?' and '#': a fragment is never sent)
 * into OUT, "" when absent; returns 1 when present. */
static int query_param(const char *url, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    size_t end = strcspn(url, "#");
    const char *q = memchr(url, '?', end);
    size_t n = strlen(name);
    for (const char *p = q; p && p < url + end; p = memchr(p + 1, '&', (size_t)(url + end - p - 1))) {
        if ((size_t)(url + end - p - 1) > n && !strncmp(p + 1, name, n) && p[1 + n] == '=') {
            const char *v = p + 2 + n;
            size_t vn = strcspn(v, "&#");
            snprintf(out, len, "%.*s", (int)(vn < len ? vn : len - 1), v);
            return 1;
        }
    }
    return 0;
}

/* Which form of presigned URL: S3's SigV4 query form (X-Amz-Signature, X-Amz-Date, X-Amz-Expires)
 * or its older query-string form (AWSAccessKeyId, Signature, Expires: what boto3's
 * generate_presigned_url gives with signature_version "s3"); 0 when neither is whole. */
enum { PRESIGNED_NONE = 0, PRESIGNED_V4 = 4, PRESIGNED_V2 = 2 };
static int presigned_form(const char *url)
{
    char v[8];
    if (query_param(url, "X-Amz-Signature", v, sizeof v) && query_param(url, "X-Amz-Date", v, sizeof v) &&
        query_param(url, "X-Amz-Expires", v, sizeof v))
        return PRESIGNED_V4;
    if (query_param(url, "Signature", v, sizeof v) && query_param(url, "AWSAccessKeyId", v, sizeof v) &&
        query_param(url, "Expires", v, sizeof v))
        return PRESIGNED_V2;
    return PRESIGNED_NONE;
}

/* When the URL stops working, from either form; 0 with ERR set when its times are malformed. */
static time_t presigned_expiry(const char *url, int form, const char *shown, ib_error *err)
{
    char date[32], expires[32];
    long secs;
    if (form == PRESIGNED_V2) {
        /* Expires: the end itself, in seconds since 1970 */
        query_param(url, "Expires", expires, sizeof expires);
        if (util_parse_int(expires, 1, 32503680000L, &secs) != 0) {
            ib_error_set(err, IB_EXIT_USAGE, "--output %s: malformed Expires", shown);
            return 0;
        }
        return (time_t)secs;
    }
    struct tm tm = {0};
    query_param(url, "X-Amz-Date", date, sizeof date);
    query_param(url, "X-Amz-Expires", expires, sizeof expires);
    if (!strptime(date, "%Y%m%dT%H%M%SZ", &tm) || util_parse_int(expires, 1, 604800, &secs) != 0) {
        ib_error_set(err, IB_EXIT_USAGE, "--output %s: malformed X-Amz-Date or X-Amz-Expires", shown);
        return 0;
    }
    return timegm(&tm) + secs;
}

/* A presigned URL: either form's query parameters present, in the query itself, not expired yet. */
static int check_presigned(const char *url, ib_error *err)
{
    char shown[1024];
    aws_url_for_display(url, shown, sizeof shown);
    int form = presigned_form(url);
    const char *frag = strchr(url, '#');
    if (!form && frag && strstr(frag, "Signature="))
        /* curl never sends the fragment: S3 would see no signature and answer 403 after the run */
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--output %s: the signature is in the URL's fragment (after '#'), which "
                            "is never sent; the presigned parameters belong in the query (after '?')",
                            shown);
    if (!form)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "--output %s is not a presigned S3 URL (neither X-Amz-Signature, "
                            "X-Amz-Date and X-Amz-Expires nor AWSAccessKeyId, Signature and Expires; make one with "
                            "`instbench presign --method PUT`)",
                            shown);
    time_t ends = presigned_expiry(url, form, shown, err), now = time(NULL);
    if (!ends) return -1;
    if (ends <= now)
        return ib_error_set(err, IB_EXIT_USAGE, "--output: the presigned URL expired %ld min ago (%s)",
                            (long)(now - ends) / 60, shown);
    if (ends - now < 3600)
        ib_warn("the presigned --output URL expires in %ld min: a longer run cannot deliver its result there",
                (long)(ends - now) / 60);
    return 0;
}

/* The query-string form signs the Content-Type the request carries (S3's string to sign has it):
 * the one the URL names in content-type=, percent-decoded, else none at all. */
static void v2_content_type(const char *url, char *out, size_t len)
{
    char raw[256];
    size_t o = 0;
    query_param(url, "content-type", raw, sizeof raw);
    for (const char *p = raw; *p && o + 1 < len; p++) {
        unsigned hi, lo;
        if (*p == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
            char c = (char)(hi << 4 | lo);
            out[o++] = c >= 0x20 && c != 0x7f ? c : '?';
            p += 2;
        } else {
            out[o++] = *p == '+' ? ' ' : *p;
        }
    }
    out[o] = '\0';
}

typedef struct s3_dest {
    aws_client *client;
    aws_s3 *s3;
    char bucket[64];
    char *key;
} s3_dest;

static void s3_dest_close(s3_dest *d)
{
    aws_s3_close(d->s3);
    aws_client_destroy(d->client);
    free(d->key);
    memset(d, 0, sizeof *d);
}

static int s3_dest_open(const char *uri, s3_dest *d, ib_error *err)
{
    memset(d, 0, sizeof *d);
    if (aws_s3_parse_uri(uri, d->bucket, &d->key, err) != 0 || aws_s3_connect(0, &d->client, &d->s3, err) != 0) {
        s3_dest_close(d);
        return -1;
    }
    return 0;
}

/* KEY itself, or under a prefix (a KEY ending in '/', or none) NAME, the result's generated name. */
static char *dest_key(const char *key, const char *name)
{
    size_t n = strlen(key);
    if (n && key[n - 1] != '/') return strdup(key);
    char *k = malloc(n + strlen(name) + 1);
    if (k) {
        memcpy(k, key, n);
        strcpy(k + n, name);
    }
    return k;
}

int result_check_remote(const char *output, ib_error *err)
{
    if (strncmp(output, "s3://", 5) != 0) return check_presigned(output, err);
    s3_dest d;
    if (s3_dest_open(output, &d, err) != 0) return -1;
    /* a marker beside the result: proves PutObject is allowed there, then removed */
    char rnd[13], *marker = NULL, *shown = NULL;
    util_random_hex(rnd, 12);
    const char *slash = strrchr(d.key, '/');
    size_t dir = slash ? (size_t)(slash - d.key + 1) : 0;
    marker = malloc(dir + 64);
    shown = malloc(strlen(d.bucket) + strlen(d.key) + 7);
    int rc = -1;
    if (!marker || !shown) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    } else {
        snprintf(marker, dir + 64, "%.*s.instbench-write-check-%s", (int)dir, d.key, rnd);
        /* a failure names what the user gave, not the marker */
        sprintf(shown, "s3://%s/%s", d.bucket, d.key);
        rc = aws_s3_write_check(d.s3, d.bucket, marker, shown, err);
        ib_error derr;
        if (rc == 0 && aws_s3_delete_object(d.s3, d.bucket, marker, &derr) != 0)
            ib_warn("the write check's marker s3://%s/%s could not be removed: %s", d.bucket, marker, derr.msg);
    }
    free(marker);
    free(shown);
    s3_dest_close(&d);
    return rc;
}

int result_upload(const char *output, const char *name, const char *json, char *saved, size_t saved_len, ib_error *err)
{
    if (strncmp(output, "s3://", 5) != 0) {
        aws_client *c = NULL;
        if (aws_client_create(NULL, NULL, &c, err) != 0) return -1;
        /* the SigV4 form signs only the host; the query-string form signs the Content-Type too */
        char type[256] = "application/json";
        if (presigned_form(output) == PRESIGNED_V2) v2_content_type(output, type, sizeof type);
        aws_header ct = {"Content-Type", type}; /* "": curl sends none */
        aws_request req = {.method = "PUT",
                           .service = "s3",
                           .region = "-",
                           .url = output,
                           .headers = &ct,
                           .n_headers = 1,
                           .body = json,
                           .body_len = strlen(json),
                           .presigned = 1};
        aws_response resp;
        int rc = aws_client_send(c, &req, &resp, err);
        aws_response_free(&resp);
        aws_client_destroy(c);
        aws_url_for_display(output, saved, saved_len);
        return rc;
    }
    s3_dest d;
    if (s3_dest_open(output, &d, err) != 0) return -1;
    char *key = dest_key(d.key, name);
    int rc = key ? aws_s3_put_object(d.s3, d.bucket, key, json, strlen(json), "application/json", err)
                 : ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (key) snprintf(saved, saved_len, "s3://%s/%s", d.bucket, key);
    free(key);
    s3_dest_close(&d);
    return rc;
}
