/* s3: the S3 calls instbench makes (PutObject, GetObject, DeleteObject, HeadBucket) on the shared
 * signed transport, and what every S3 request goes through (s3_internal.h): bucket names, the URL,
 * region redirects and S3's error messages.  ListObjectsV2's paging (and the GETs a page is sent
 * along with) is s3_paging.c, its page parser s3_list_page.c, presigned URLs s3_presign.c: files
 * of their own, to keep each under the 800-line limit.
 *
 * Requests are header-signed for service "s3" with S3's rules: the path is signed as sent (not
 * normalised, not encoded twice) and the payload hash travels as x-amz-content-sha256.  Keys go on
 * the wire percent-encoded byte by byte (RFC 3986 unreserved and '/' kept), as botocore sends them.
 * A request to the wrong region is answered 301 PermanentRedirect (or 400
 * AuthorizationHeaderMalformed for a wrong signing region) with x-amz-bucket-region: it is sent once
 * more there (to the endpoint built for that region, signed afresh), and the bucket's region is
 * remembered for the rest of the command.  A Location is never followed; what is not followed (a
 * region not known, a second redirect, other 3xx) fails saying where it points and what to set. */
#include "instbench/aws_services.h"
#include "instbench/names.h"
#include "s3_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- names and URLs ------------------------------------------------------------------------ */

/* S3's naming rules for general purpose buckets (docs.aws.amazon.com/AmazonS3/latest/userguide/
 * bucketnamingrules.html): the rule B breaks, or NULL.  The reserved prefixes and suffixes refused
 * here name nothing this client can reach (punycode labels, Multi-Region Access Points, which need
 * SigV4A, directory and table buckets).  Access point aliases ('-s3alias', Object Lambda's
 * '--ol-s3') are taken: S3 accepts one wherever a bucket name goes in an object request, signed
 * as for a bucket (botocore does the same), and a user may be given only the alias.  The "-an"
 * suffix of the account regional namespace is a bucket, and allowed. */
#define DIRECTORY_BUCKET                                                                                 \
    "a directory bucket (its name ends with '--x-s3'): directory buckets (S3 Express One Zone) are not " \
    "supported, use a general purpose bucket"
static const char *const reserved_prefix[][2] = {
    {"xn--", "S3's naming rules forbid the prefix 'xn--'"},
    {"sthree-", "S3's naming rules reserve the prefix 'sthree-'"},
    {"amzn-s3-demo-", "S3's naming rules reserve the prefix 'amzn-s3-demo-' for AWS's examples"},
};
static const char *const reserved_suffix[][2] = {
    {".mrap", "S3's naming rules reserve the suffix '.mrap' for Multi-Region Access Points (signed with SigV4A, "
              "which instbench does not do)"},
    {"--x-s3", DIRECTORY_BUCKET},
    {"--table-s3", "S3's naming rules reserve the suffix '--table-s3' for table buckets"},
};

const char *aws_s3_bucket_name_problem(const char *b)
{
    size_t n = b ? strlen(b) : 0;
    if (n < 3 || n > 63) return "a bucket name has 3 to 63 characters";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        if (!(islower(c) || isdigit(c) || c == '.' || c == '-')) return "a bucket name has only a-z, 0-9, '.' and '-'";
        if (c == '.' && b[i + 1] == '.') return "a bucket name has no two dots in a row";
    }
    if (!isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1]))
        return "a bucket name starts and ends with a letter or digit";
    int dots = 0, digits_only = 1;
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '.') dots++;
        else if (!isdigit((unsigned char)b[i])) digits_only = 0;
    }
    if (dots == 3 && digits_only) return "a bucket name is not an IP address"; /* "192.168.5.4" */
    for (size_t i = 0; i < sizeof reserved_prefix / sizeof *reserved_prefix; i++)
        if (!strncmp(b, reserved_prefix[i][0], strlen(reserved_prefix[i][0]))) return reserved_prefix[i][1];
    for (size_t i = 0; i < sizeof reserved_suffix / sizeof *reserved_suffix; i++) {
        size_t sn = strlen(reserved_suffix[i][0]);
        if (n >= sn && !strcmp(b + n - sn, reserved_suffix[i][0])) return reserved_suffix[i][1];
    }
    return NULL;
}

int aws_s3_bucket_name_valid(const char *b) { return aws_s3_bucket_name_problem(b) == NULL; }

int aws_s3_parse_uri(const char *uri, char bucket[64], char **key, ib_error *err)
{
    *key = NULL;
    bucket[0] = '\0';
    if (!uri || strncmp(uri, "s3://", 5) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "'%s' is not an S3 URI (s3://BUCKET/KEY)", uri ? uri : "");
    const char *b = uri + 5;
    size_t bn = strcspn(b, "/");
    if (bn == 0) return ib_error_set(err, IB_EXIT_USAGE, "'%s' names no bucket (s3://BUCKET/KEY)", uri);
    if (bn > 63) return ib_error_set(err, IB_EXIT_USAGE, "'%s': a bucket name has at most 63 characters", uri);
    memcpy(bucket, b, bn);
    bucket[bn] = '\0';
    const char *problem = aws_s3_bucket_name_problem(bucket);
    if (problem) {
        if (!strcmp(problem, DIRECTORY_BUCKET)) ib_error_set(err, IB_EXIT_USAGE, "'%s' is %s", bucket, problem);
        else ib_error_set(err, IB_EXIT_USAGE, "'%s' is not a valid bucket name: %s", bucket, problem);
        bucket[0] = '\0';
        return -1;
    }
    const char *k = b[bn] == '/' ? b + bn + 1 : b + bn;
    if (strlen(k) > S3_MAX_KEY) {
        bucket[0] = '\0';
        return ib_error_set(err, IB_EXIT_USAGE, "'%s': a key has at most %d bytes", uri, S3_MAX_KEY);
    }
    *key = strdup(k);
    if (!*key) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    return 0;
}

static int is_aws_host(const char *endpoint)
{
    const char *h = strstr(endpoint, "://");
    h = h ? h + 3 : endpoint;
    size_t n = strcspn(h, ":/");
    static const char *const domains[] = {".amazonaws.com", ".amazonaws.com.cn"};
    for (size_t i = 0; i < 2; i++) {
        size_t dn = strlen(domains[i]);
        if (n > dn && !strncasecmp(h + n - dn, domains[i], dn)) return 1;
    }
    return 0;
}

int aws_s3_open(aws_client *c, const char *region, aws_s3 **out, ib_error *err)
{
    *out = NULL;
    aws_s3 *s = calloc(1, sizeof *s);
    if (!s) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    s->c = c;
    snprintf(s->region, sizeof s->region, "%s", region && region[0] ? region : "us-east-1");
    const char *style = aws_s3_addressing_style_config(err);
    if (!style) {
        free(s);
        return -1;
    }
    snprintf(s->style, sizeof s->style, "%s", style);
    char ep[1024];
    if (aws_endpoint_url("S3", s->region, ep, sizeof ep) != 0) {
        char why[200];
        ib_error_set(err, IB_EXIT_USAGE, "no S3 endpoint: %s",
                     aws_endpoint_problem("S3", s->region, sizeof ep, why, sizeof why));
        free(s);
        return -1;
    }
    s->custom_endpoint = !is_aws_host(ep);
    *out = s;
    return 0;
}

void aws_s3_close(aws_s3 *s) { free(s); }

int aws_s3_connect(int max_concurrency, aws_client **client, aws_s3 **s3, ib_error *err)
{
    *client = NULL;
    *s3 = NULL;
    aws_credentials cred;
    char region[32];
    ib_error rerr;
    char from[4200];
    if (aws_credentials_resolve(&cred, err) != 0) return -1;
    if (aws_region_resolve_from(region, from, sizeof from, &rerr) != 0) snprintf(region, sizeof region, "us-east-1");
    aws_client_options opt = {.refresh = aws_credentials_refresh, .max_concurrency = max_concurrency};
    int rc = aws_client_create(&opt, &cred, client, err);
    memset(&cred, 0, sizeof cred);
    if (rc == 0 && aws_s3_open(*client, region, s3, err) == 0) {
        /* AWS_REGION overrides every other source (and us-east-1, the default) */
        aws_s3_set_region_var(*s3, !strcmp(from, "AWS_DEFAULT_REGION") ? from : "AWS_REGION");
        return 0;
    }
    aws_client_destroy(*client);
    *client = NULL;
    return -1;
}

void aws_s3_set_region_var(aws_s3 *s, const char *variable)
{
    snprintf(s->region_var, sizeof s->region_var, "%s", variable ? variable : "");
}

const char *s3_bucket_region(const aws_s3 *s, const char *bucket)
{
    for (size_t i = 0; i < s->n_known; i++)
        if (!strcmp(s->known[i].bucket, bucket)) return s->known[i].region;
    return s->region;
}

/* 1 once the bucket's region is known to be right: a request there succeeded or redirected. */
int s3_region_confirmed(const aws_s3 *s, const char *bucket)
{
    for (size_t i = 0; i < s->n_known; i++)
        if (!strcmp(s->known[i].bucket, bucket)) return 1;
    return 0;
}

static void remember_region(aws_s3 *s, const char *bucket, const char *region)
{
    for (size_t i = 0; i < s->n_known; i++)
        if (!strcmp(s->known[i].bucket, bucket)) {
            snprintf(s->known[i].region, sizeof s->known[i].region, "%s", region);
            return;
        }
    size_t i = s->n_known < S3_MAX_KNOWN ? s->n_known++ : S3_MAX_KNOWN - 1;
    snprintf(s->known[i].bucket, sizeof s->known[i].bucket, "%s", bucket);
    snprintf(s->known[i].region, sizeof s->known[i].region, "%s", region);
}

/* Virtual-hosted only where it works: a DNS label without dots (TLS certificates cover one level
 * below s3.REGION.amazonaws.com), and not against a custom endpoint unless asked for. */
static int use_virtual(const aws_s3 *s, const char *bucket)
{
    if (!strcmp(s->style, "path") || strchr(bucket, '.') || !aws_s3_bucket_name_valid(bucket)) return 0;
    if (!strcmp(s->style, "virtual")) return 1;
    return !s->custom_endpoint;
}

/* The URL of bucket/key (key NULL: the bucket itself) in region, with query appended when given;
 * host_out (when not NULL) gets the Host header it implies, path_out the encoded path. */
int s3_url(const aws_s3 *s, const char *bucket, const char *key, const char *region, const char *query, char **url,
           char *host_out, size_t host_len, ib_error *err)
{
    char ep[1024];
    *url = NULL;
    char why[800];
    if (aws_endpoint_url("S3", region, ep, sizeof ep) != 0)
        return ib_error_set(err, IB_EXIT_USAGE, "no S3 endpoint: %s",
                            aws_endpoint_problem("S3", region, sizeof ep, why, sizeof why));
    if (aws_endpoint_url_problem("s3", ep, why, sizeof why)) return ib_error_set(err, IB_EXIT_USAGE, "%s", why);
    const char *sep = strstr(ep, "://");
    size_t authn = strcspn(sep + 3, "/");
    char scheme_host[1200];
    /* A presigned URL (HOST_OUT) would hand an endpoint's "user:pw@" to whoever gets it, as
     * botocore's does; a signed request's Host has none (botocore's neither), and it stays here. */
    if (host_out && memchr(sep + 3, '@', strcspn(sep + 3, "/?#"))) {
        const char *v = aws_endpoint_var_of("s3", ep, why, sizeof why);
        return ib_error_set(err, IB_EXIT_USAGE,
                            "%s '%s' has a user name or password before the host: a presigned "
                            "URL would hand it to whoever gets the URL, and AWS needs none; remove it",
                            v ? v : "the S3 endpoint URL", aws_url_origin(ep, scheme_host, sizeof scheme_host));
    }
    char *u = NULL;
    size_t len = 0, cap = 0;
    int virt = use_virtual(s, bucket), ok = 1;
    if (virt)
        snprintf(scheme_host, sizeof scheme_host, "%.*s%s.%.*s", (int)(sep + 3 - ep), ep, bucket, (int)authn, sep + 3);
    else snprintf(scheme_host, sizeof scheme_host, "%.*s", (int)(sep + 3 - ep + authn), ep);
    ok = ok && aws_str_append(&u, &len, &cap, scheme_host) == 0;
    ok = ok && aws_str_append(&u, &len, &cap, sep + 3 + authn) == 0; /* an endpoint's own base path */
    if (!virt) {
        ok = ok && aws_str_append(&u, &len, &cap, "/") == 0;
        ok = ok && aws_uri_append(&u, &len, &cap, bucket, 0) == 0;
    }
    if (key) {
        ok = ok && aws_str_append(&u, &len, &cap, "/") == 0;
        ok = ok && aws_uri_append(&u, &len, &cap, key, 1) == 0;
    } else if (virt) {
        ok = ok && aws_str_append(&u, &len, &cap, "/") == 0;
    }
    if (query && query[0]) {
        ok = ok && aws_str_append(&u, &len, &cap, "?") == 0;
        ok = ok && aws_str_append(&u, &len, &cap, query) == 0;
    }
    if (!ok) {
        free(u);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    if (host_out) {
        const char *h = strstr(scheme_host, "://") + 3;
        snprintf(host_out, host_len, "%s", h);
    }
    *url = u;
    return 0;
}

/* ---- requests with region redirects and S3's error messages ------------------------------- */

/* "s3://bucket/key" for messages (ib_error_set escapes control characters when shown). */
static void s3_uri(const s3_call *k, char *out, size_t n)
{
    if (k->shown) snprintf(out, n, "%.1000s", k->shown);
    else snprintf(out, n, "s3://%s%s%.900s", k->bucket, k->key ? "/" : "", k->key ? k->key : "");
}

/* "NoSuchBucket, HTTP 404", or "HTTP 404" when the answer had no code (HEAD has no body). */
static const char *code_status(const aws_response *r, char *out, size_t n)
{
    if (r->error_code[0]) snprintf(out, n, "%s, HTTP %ld", r->error_code, r->status);
    else snprintf(out, n, "HTTP %ld", r->status);
    return out;
}

/* A redirect or a wrong-region answer that s3_send did not follow (it follows once a region it
 * knows, to the endpoint it builds itself, never a Location): where it points, and what to set. */
static int s3_redirect_fail(const aws_s3 *s, const s3_call *k, const char *where, const char *region,
                            const aws_response *r, ib_error *err)
{
    char cs[160], to[512] = "", elsewhere[160] = "", fix[96] = "";
    code_status(r, cs, sizeof cs);
    if (r->location[0]) aws_url_for_display(r->location, to, sizeof to);
    const char *br = names_region_ok(r->bucket_region) ? r->bucket_region : "";
    if (br[0] && strcmp(br, region)) {
        snprintf(elsewhere, sizeof elsewhere, "the bucket is in %s, not %s", br, region);
        if (s->region_var[0]) snprintf(fix, sizeof fix, ": set %s=%s", s->region_var, br);
    } else if (br[0]) {
        snprintf(elsewhere, sizeof elsewhere, "the bucket is in %s, the region asked, yet S3 redirects", br);
    }
    if (!elsewhere[0] && !to[0])
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "S3 %s %s: redirected (%s) with neither a Location nor the bucket's region: check the "
                            "endpoint URL and the region (%s)",
                            k->what, where, cs, region);
    return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: %s%s%s%s%s (%s)%s", k->what, where, elsewhere,
                        elsewhere[0] && to[0] ? "; " : "", to[0] ? "redirected to " : "", to,
                        to[0] ? ", not followed" : "", cs, fix);
}

/* No HTTP answer (refused, DNS, a timeout, a server speaking the other protocol): the endpoint
 * asked, the variable that set it and the transport's reason, not the transport's message, whose
 * URL is the request's (for the write check, the hidden marker object's). */
static int s3_no_answer(const s3_call *k, const char *where, const char *region, const aws_response *r, ib_error *err)
{
    char ep[1024] = "", origin[512], var[96], at[700] = "";
    if (aws_endpoint_url("S3", region, ep, sizeof ep) == 0 &&
        !strstr(r->error_message, aws_url_origin(ep, origin, sizeof origin))) {
        const char *v = aws_endpoint_var_of("s3", ep, var, sizeof var);
        snprintf(at, sizeof at, "S3 endpoint %s%s%s%s: ", origin, v ? " (" : "", v ? v : "", v ? ")" : "");
    } /* else a scheme mismatch, which names the endpoint and its variable itself */
    return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: %s%s (%d attempt%s)", k->what, where, at, r->error_message,
                        r->attempts, r->attempts == 1 ? "" : "s");
}

/* One message per failure a user can act on; the transport's message otherwise. */
int s3_fail(const aws_s3 *s, const s3_call *k, const char *region, const aws_response *r, const ib_error *terr,
            ib_error *err)
{
    char where[1024], cs[160];
    s3_uri(k, where, sizeof where);
    const char *code = r->error_code;
    long st = r->status;
    code_status(r, cs, sizeof cs);
    if ((st >= 300 && st < 400) || s3_is_region_redirect(r)) return s3_redirect_fail(s, k, where, region, r, err);
    if (!strcmp(code, "NoSuchBucket") || (st == 404 && !code[0] && !k->key))
        return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: no such bucket (%s)", k->what, where,
                            code[0] ? cs : "NoSuchBucket, HTTP 404");
    if (!strcmp(code, "NoSuchKey") || (st == 404 && !code[0]))
        return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: no such object (%s)", k->what, where,
                            code[0] ? cs : "NoSuchKey, HTTP 404");
    if (!strcmp(code, "AccessDenied") || (st == 403 && !code[0]))
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "S3 %s %s: access denied (%s): the credentials lack the permission, or the bucket "
                            "is another account's%s%s",
                            k->what, where, cs, r->error_message[0] ? ": " : "", r->error_message);
    if (!strcmp(code, "SlowDown") || st == 503)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "S3 %s %s: S3 asks to slow down (%s) after %d attempt%s: "
                            "try again later",
                            k->what, where, cs, r->attempts, r->attempts == 1 ? "" : "s");
    if (code[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: %s%s%s (HTTP %ld)", k->what, where, code,
                            r->error_message[0] ? ": " : "", r->error_message, st);
    if (terr->code && !st && r->error_message[0]) return s3_no_answer(k, where, region, r, err);
    if (terr->code) return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: %s", k->what, where, terr->msg);
    return ib_error_set(err, IB_EXIT_RUNTIME, "S3 %s %s: HTTP %ld", k->what, where, st);
}

int s3_is_region_redirect(const aws_response *r)
{
    /* a HEAD answer has no body, so no code: its status and the header have to do */
    return r->bucket_region[0] &&
           ((r->status == 301 || r->status == 307) ||
            (r->status == 400 && (!strcmp(r->error_code, "AuthorizationHeaderMalformed") || !r->error_code[0])));
}

int s3_send(aws_s3 *s, const s3_call *k, aws_response *resp, ib_error *err)
{
    aws_header hs[1];
    size_t nh = 0;
    if (k->content_type) hs[nh++] = (aws_header){"Content-Type", (char *)k->content_type};
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *region = s3_bucket_region(s, k->bucket);
        char *url = NULL;
        if (s3_url(s, k->bucket, k->key, region, k->query, &url, NULL, 0, err) != 0) return -1;
        aws_request req = {.method = k->method,
                           .service = "s3",
                           .region = region,
                           .url = url,
                           .headers = hs,
                           .n_headers = nh,
                           .body = k->body,
                           .body_len = k->body_len,
                           .s3 = 1,
                           .max_body = k->max_body};
        ib_error terr = {0};
        memset(resp, 0, sizeof *resp);
        int rc = aws_client_send(s->c, &req, resp, &terr);
        free(url);
        if (rc == 0 && resp->status >= 200 && resp->status < 300) {
            if (k->bucket && k->bucket[0] && !s3_region_confirmed(s, k->bucket)) {
                char here[sizeof s->region]; /* REGION may point into the table remember_region writes */
                snprintf(here, sizeof here, "%s", region);
                remember_region(s, k->bucket, here);
            }
            return 0;
        }
        /* followed once: a second redirect means the server disagrees with itself */
        if (attempt == 0 && s3_is_region_redirect(resp) && strcmp(resp->bucket_region, region) != 0 &&
            aws_region_known(resp->bucket_region)) {
            ib_debug("s3: bucket %s is in %s, not %s: asking there", k->bucket, resp->bucket_region, region);
            remember_region(s, k->bucket, resp->bucket_region);
            aws_response_free(resp);
            continue;
        }
        s3_fail(s, k, region, resp, &terr, err);
        aws_response_free(resp);
        return -1;
    }
    return -1;
}

/* A PutObject; WHAT and SHOWN name it in messages (s3_call). */
static int put(aws_s3 *s, const char *bucket, const char *key, const void *body, size_t len, const char *content_type,
               const char *what, const char *shown, ib_error *err)
{
    s3_call k = {.method = "PUT",
                 .bucket = bucket,
                 .key = key,
                 .body = body ? body : "",
                 .body_len = len,
                 .content_type = content_type ? content_type : "application/octet-stream",
                 .what = what,
                 .shown = shown};
    aws_response r;
    if (s3_send(s, &k, &r, err) != 0) return -1;
    aws_response_free(&r);
    return 0;
}

int aws_s3_put_object(aws_s3 *s, const char *bucket, const char *key, const void *body, size_t len,
                      const char *content_type, ib_error *err)
{
    return put(s, bucket, key, body, len, content_type, "PutObject", NULL, err);
}

int aws_s3_write_check(aws_s3 *s, const char *bucket, const char *marker, const char *shown, ib_error *err)
{
    return put(s, bucket, marker, "", 0, "text/plain", "write check (PutObject)", shown, err);
}

int aws_s3_delete_object(aws_s3 *s, const char *bucket, const char *key, ib_error *err)
{
    s3_call k = {.method = "DELETE", .bucket = bucket, .key = key, .what = "DeleteObject"};
    aws_response r;
    if (s3_send(s, &k, &r, err) != 0) return -1;
    aws_response_free(&r);
    return 0;
}

int s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body, size_t *len,
                  int *too_big, ib_error *err)
{
    *body = NULL;
    *len = 0;
    s3_call k = {.method = "GET", .bucket = bucket, .key = key, .max_body = max_bytes, .what = "GetObject"};
    aws_response r = {0};
    int rc = s3_send(s, &k, &r, err);
    if (too_big) *too_big = rc != 0 && r.too_big;
    if (rc != 0) return -1;
    *body = r.body;
    *len = r.body_len;
    return 0;
}

int aws_s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body, size_t *len,
                      ib_error *err)
{
    return s3_get_object(s, bucket, key, max_bytes, body, len, NULL, err);
}

int aws_s3_bucket_region(aws_s3 *s, const char *bucket, char region[32], ib_error *err)
{
    s3_call k = {.method = "HEAD", .bucket = bucket, .what = "HeadBucket"};
    aws_response r;
    if (s3_send(s, &k, &r, err) != 0) return -1;
    snprintf(region, 32, "%s", r.bucket_region[0] ? r.bucket_region : s3_bucket_region(s, bucket));
    if (r.bucket_region[0] && aws_region_known(r.bucket_region)) remember_region(s, bucket, r.bucket_region);
    aws_response_free(&r);
    return 0;
}
