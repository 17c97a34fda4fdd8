/* s3: the S3 calls instbench makes (PutObject, GetObject, ListObjectsV2, HeadBucket) and presigned
 * URLs, on the shared signed transport.
 *
 * Requests are header-signed for service "s3" with S3's rules: the path is signed as sent (not
 * normalised, not encoded twice) and the payload hash travels as x-amz-content-sha256.  Keys go on
 * the wire percent-encoded byte by byte (RFC 3986 unreserved and '/' kept), as botocore sends them.
 * A request to the wrong region is answered 301 PermanentRedirect (or 400
 * AuthorizationHeaderMalformed for a wrong signing region) with x-amz-bucket-region: it is sent once
 * more there (to the endpoint built for that region, signed afresh), and the bucket's region is
 * remembered for the rest of the command.  A Location is never followed; what is not followed (a
 * region not known, a second redirect, other 3xx) fails saying where it points and what to set.
 * ListObjectsV2 asks for encoding-type=url, so keys with characters XML 1.0 cannot carry arrive
 * percent-encoded; s3_list_page.c decodes them, and they stay untrusted bytes for the caller. */
#include "instbench/aws_services.h"
#include "instbench/names.h"
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S3_MAX_KNOWN 32 /* bucket regions remembered per command */
#define S3_DEFAULT_MAX_PAGES 10000
#define S3_DEFAULT_MAX_OBJECTS 1000000

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

static const char *bucket_region(const aws_s3 *s, const char *bucket)
{
    for (size_t i = 0; i < s->n_known; i++)
        if (!strcmp(s->known[i].bucket, bucket)) return s->known[i].region;
    return s->region;
}

/* 1 once the bucket's region is known to be right: a request there succeeded or redirected. */
static int region_confirmed(const aws_s3 *s, const char *bucket)
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
static int s3_url(const aws_s3 *s, const char *bucket, const char *key, const char *region, const char *query,
                  char **url, char *host_out, size_t host_len, ib_error *err)
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

static int is_region_redirect(const aws_response *r);

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
static int s3_fail(const aws_s3 *s, const s3_call *k, const char *region, const aws_response *r, const ib_error *terr,
                   ib_error *err)
{
    char where[1024], cs[160];
    s3_uri(k, where, sizeof where);
    const char *code = r->error_code;
    long st = r->status;
    code_status(r, cs, sizeof cs);
    if ((st >= 300 && st < 400) || is_region_redirect(r)) return s3_redirect_fail(s, k, where, region, r, err);
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

static int is_region_redirect(const aws_response *r)
{
    /* a HEAD answer has no body, so no code: its status and the header have to do */
    return r->bucket_region[0] &&
           ((r->status == 301 || r->status == 307) ||
            (r->status == 400 && (!strcmp(r->error_code, "AuthorizationHeaderMalformed") || !r->error_code[0])));
}

static int s3_send(aws_s3 *s, const s3_call *k, aws_response *resp, ib_error *err)
{
    aws_header hs[1];
    size_t nh = 0;
    if (k->content_type) hs[nh++] = (aws_header){"Content-Type", (char *)k->content_type};
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *region = bucket_region(s, k->bucket);
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
            if (k->bucket && k->bucket[0] && !region_confirmed(s, k->bucket)) {
                char here[sizeof s->region]; /* REGION may point into the table remember_region writes */
                snprintf(here, sizeof here, "%s", region);
                remember_region(s, k->bucket, here);
            }
            return 0;
        }
        /* followed once: a second redirect means the server disagrees with itself */
        if (attempt == 0 && is_region_redirect(resp) && strcmp(resp->bucket_region, region) != 0 &&
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

int aws_s3_get_object(aws_s3 *s, const char *bucket, const char *key, size_t max_bytes, char **body, size_t *len,
                      ib_error *err)
{
    *body = NULL;
    *len = 0;
    s3_call k = {.method = "GET", .bucket = bucket, .key = key, .max_body = max_bytes, .what = "GetObject"};
    aws_response r;
    if (s3_send(s, &k, &r, err) != 0) return -1;
    *body = r.body;
    *len = r.body_len;
    return 0;
}

/* the listing's pager (below), for a page listed along with GETs */
static int pager_stop(aws_s3_pager *p);
static int list_page_in_flight(aws_s3 *s, aws_s3_pager *p, aws_request *req, char **url, ib_error *err);
static void list_page_answered(aws_s3 *s, aws_s3_pager *p, aws_response *r, const ib_error *terr);

size_t aws_s3_get_objects(aws_s3 *s, const char *bucket, char *const *keys, size_t n, const size_t *max_bytes,
                          char **bodies, size_t *lens, ib_error *errs, aws_s3_pager *along)
{
    if (n == 0 && !(along && along->more)) return 0;
    memset(errs, 0, n * sizeof *errs);
    memset(bodies, 0, n * sizeof *bodies);
    memset(lens, 0, n * sizeof *lens);
    /* Until a request to the bucket has succeeded (a listing usually has), the first GET goes
     * alone: a region redirect is learnt once, not once per object. */
    size_t first = n && !region_confirmed(s, bucket) ? 1 : 0;
    size_t failed = first && aws_s3_get_object(s, bucket, keys[0], max_bytes[0], &bodies[0], &lens[0], &errs[0]) != 0;
    const char *region = bucket_region(s, bucket);
    /* slot 0 .. m-1: the GETs; slot m: the next listing page, when one rides along */
    aws_request *reqs = calloc(n + 1, sizeof *reqs);
    aws_response *resps = calloc(n + 1, sizeof *resps);
    ib_error *terrs = calloc(n + 1, sizeof *terrs);
    char **urls = calloc(n + 1, sizeof *urls);
    size_t *idx = calloc(n + 1, sizeof *idx); /* request slot -> key index */
    size_t m = 0;
    int oom = !reqs || !resps || !terrs || !urls || !idx;
    for (size_t i = first; i < n; i++) {
        if (oom) {
            ib_error_set(&errs[i], IB_EXIT_RUNTIME, "out of memory");
            failed++;
        } else if (s3_url(s, bucket, keys[i], region, NULL, &urls[m], NULL, 0, &errs[i]) != 0) {
            failed++;
        } else {
            reqs[m] = (aws_request){
                .method = "GET", .service = "s3", .region = region, .url = urls[m], .s3 = 1, .max_body = max_bytes[i]};
            idx[m++] = i;
        }
    }
    int listing = 0;
    if (along && along->more) {
        if (!oom) {
            listing = list_page_in_flight(s, along, &reqs[m], &urls[m], &along->err) == 0;
        } else {
            ib_error_set(&along->err, IB_EXIT_RUNTIME, "out of memory");
            pager_stop(along);
        }
    }
    if (m + (size_t)listing) aws_client_send_many(s->c, reqs, m + (size_t)listing, resps, terrs);
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        if (terrs[j].code == 0 && resps[j].status >= 200 && resps[j].status < 300) {
            bodies[i] = resps[j].body;
            lens[i] = resps[j].body_len;
            resps[j].body = NULL;
        } else if (is_region_redirect(&resps[j])) {
            /* the bucket moved under us (or a stale region): that object alone, through s3_send */
            failed += aws_s3_get_object(s, bucket, keys[i], max_bytes[i], &bodies[i], &lens[i], &errs[i]) != 0;
        } else {
            s3_call call = {.method = "GET", .bucket = bucket, .key = keys[i], .what = "GetObject"};
            s3_fail(s, &call, region, &resps[j], &terrs[j], &errs[i]);
            failed++;
        }
        aws_response_free(&resps[j]);
        free(urls[j]);
    }
    if (listing) {
        list_page_answered(s, along, &resps[m], &terrs[m]);
        aws_response_free(&resps[m]);
        free(urls[m]);
    }
    free(reqs);
    free(resps);
    free(terrs);
    free(urls);
    free(idx);
    return failed;
}

int aws_s3_bucket_region(aws_s3 *s, const char *bucket, char region[32], ib_error *err)
{
    s3_call k = {.method = "HEAD", .bucket = bucket, .what = "HeadBucket"};
    aws_response r;
    if (s3_send(s, &k, &r, err) != 0) return -1;
    snprintf(region, 32, "%s", r.bucket_region[0] ? r.bucket_region : bucket_region(s, bucket));
    if (r.bucket_region[0] && aws_region_known(r.bucket_region)) remember_region(s, bucket, r.bucket_region);
    aws_response_free(&r);
    return 0;
}

/* ---- ListObjectsV2 paging (the page parser is s3_list_page.c) ---------------------------- */

static char *list_query(const aws_s3_pager *p)
{
    char *q = NULL;
    size_t ql = 0, qc = 0;
    int ok = 1;
    if (p->token) {
        ok = ok && aws_str_append(&q, &ql, &qc, "continuation-token=") == 0 &&
             aws_uri_append(&q, &ql, &qc, p->token, 0) == 0;
        ok = ok && aws_str_append(&q, &ql, &qc, "&") == 0;
    }
    ok = ok && aws_str_append(&q, &ql, &qc, "encoding-type=url&list-type=2") == 0;
    if (p->page_size > 0) {
        char mk[32];
        snprintf(mk, sizeof mk, "&max-keys=%d", p->page_size > 1000 ? 1000 : p->page_size);
        ok = ok && aws_str_append(&q, &ql, &qc, mk) == 0;
    }
    if (p->prefix[0])
        ok = ok && aws_str_append(&q, &ql, &qc, "&prefix=") == 0 && aws_uri_append(&q, &ql, &qc, p->prefix, 0) == 0;
    if (!ok) free(q);
    return ok ? q : NULL;
}

void aws_s3_pager_init(aws_s3_pager *p, const char *bucket, const char *prefix, int page_size, int max_pages)
{
    memset(p, 0, sizeof *p);
    snprintf(p->bucket, sizeof p->bucket, "%s", bucket);
    p->prefix = prefix ? prefix : "";
    p->page_size = page_size;
    p->max_pages = max_pages > 0 ? max_pages : S3_DEFAULT_MAX_PAGES;
    p->more = 1;
}

void aws_s3_pager_free(aws_s3_pager *p)
{
    free(p->token);
    p->token = NULL;
    aws_s3_listing_free(&p->page);
    p->more = 0;
}

/* Ends the pager with ERR's message (already set); -1. */
static int pager_stop(aws_s3_pager *p)
{
    aws_s3_pager_free(p);
    return -1;
}

/* Before a page is asked for: -1 (err set, pager ended) past max_pages, so a token that never
 * ends stops. */
static int pager_may_ask(aws_s3_pager *p, ib_error *err)
{
    if (p->pages < p->max_pages) return 0;
    ib_error_set(err, IB_EXIT_RUNTIME,
                 "S3 ListObjectsV2 s3://%s/%.1000s: still more after %d pages: "
                 "stopped (a continuation token that never ends?)",
                 p->bucket, p->prefix, p->max_pages);
    return pager_stop(p);
}

/* s3://bucket/prefix, what the caller asked for: two prefixes of one bucket fail apart. */
static const char *list_shown(const aws_s3_pager *p, char *shown, size_t n)
{
    snprintf(shown, n, "s3://%s/%.1000s", p->bucket, p->prefix);
    return shown;
}

/* A page's answer (2xx) into p->page, replacing the page before. */
static int pager_take(aws_s3_pager *p, const aws_response *r, ib_error *err)
{
    aws_s3_listing_free(&p->page);
    free(p->token);
    p->token = NULL;
    p->pages++;
    if (aws_s3_parse_list_page(r->body, r->body_len, &p->page, &p->token, err) != 0) {
        /* the parser knows no bucket; the message is escaped already, and again changes nothing */
        static const char lead[] = "S3 ListObjectsV2: ";
        if (!strncmp(err->msg, lead, sizeof lead - 1)) {
            char why[sizeof err->msg], shown[1200];
            snprintf(why, sizeof why, "%s", err->msg + sizeof lead - 1);
            ib_error_set(err, err->code, "S3 ListObjectsV2 %s: %s", list_shown(p, shown, sizeof shown), why);
        }
        return pager_stop(p);
    }
    p->page.pages = 1;
    p->more = p->token != NULL;
    return 0;
}

int aws_s3_pager_next(aws_s3 *s, aws_s3_pager *p, ib_error *err)
{
    if (!p->more) {
        aws_s3_listing_free(&p->page);
        return 0;
    }
    if (pager_may_ask(p, err) != 0) return -1;
    char *q = list_query(p);
    if (!q) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        return pager_stop(p);
    }
    char shown[1200];
    s3_call k = {.method = "GET",
                 .bucket = p->bucket,
                 .query = q,
                 .what = "ListObjectsV2",
                 .shown = list_shown(p, shown, sizeof shown)};
    aws_response r;
    int rc = s3_send(s, &k, &r, err);
    free(q);
    if (rc != 0) return pager_stop(p);
    rc = pager_take(p, &r, err);
    aws_response_free(&r);
    return rc;
}

/* The pager's next page as a request sent with others (aws_s3_get_objects): *URL the caller's to
 * free.  -1 (err set, pager ended) when it cannot be asked for. */
static int list_page_in_flight(aws_s3 *s, aws_s3_pager *p, aws_request *req, char **url, ib_error *err)
{
    if (pager_may_ask(p, err) != 0) return -1;
    char *q = list_query(p);
    const char *region = bucket_region(s, p->bucket);
    if (!q || s3_url(s, p->bucket, NULL, region, q, url, NULL, 0, err) != 0) {
        if (!q) ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        free(q);
        return pager_stop(p);
    }
    free(q);
    *req = (aws_request){.method = "GET", .service = "s3", .region = region, .url = *url, .s3 = 1};
    return 0;
}

/* Its answer: the page taken, or (a redirect) asked again alone through s3_send, or the pager
 * ended with S3's message in p->err. */
static void list_page_answered(aws_s3 *s, aws_s3_pager *p, aws_response *r, const ib_error *terr)
{
    if (terr->code == 0 && r->status >= 200 && r->status < 300) {
        pager_take(p, r, &p->err);
    } else if (is_region_redirect(r)) {
        aws_s3_pager_next(s, p, &p->err);
    } else {
        char shown[1200];
        s3_call k = {
            .method = "GET", .bucket = p->bucket, .what = "ListObjectsV2", .shown = list_shown(p, shown, sizeof shown)};
        s3_fail(s, &k, bucket_region(s, p->bucket), r, terr, &p->err);
        pager_stop(p);
    }
}

int aws_s3_list_objects(aws_s3 *s, const char *bucket, const char *prefix, int page_size, int max_pages,
                        size_t max_objects, aws_s3_listing *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (max_objects == 0) max_objects = S3_DEFAULT_MAX_OBJECTS;
    aws_s3_pager p;
    aws_s3_pager_init(&p, bucket, prefix, page_size, max_pages);
    while (p.more) {
        if (aws_s3_pager_next(s, &p, err) != 0) {
            aws_s3_listing_free(out);
            return -1;
        }
        out->pages = p.pages;
        for (size_t i = 0; i < p.page.n; i++) { /* the keys move to OUT */
            if (out->n >= max_objects) {
                aws_s3_pager_free(&p);
                aws_s3_listing_free(out);
                return ib_error_set(err, IB_EXIT_RUNTIME,
                                    "S3 ListObjectsV2 s3://%s/%.1000s: more than %zu "
                                    "objects: stopped",
                                    bucket, prefix ? prefix : "", max_objects);
            }
            int rc = s3_listing_push(out, p.page.objs[i].key, p.page.objs[i].size);
            p.page.objs[i].key = NULL;
            if (rc != 0) {
                aws_s3_pager_free(&p);
                aws_s3_listing_free(out);
                return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            }
        }
    }
    aws_s3_pager_free(&p);
    return 0;
}

/* ---- presigned URLs ------------------------------------------------------------------------ */

int aws_s3_presign(aws_s3 *s, const aws_credentials *cred, const char *method, const char *bucket, const char *key,
                   long expires_s, time_t when, char **url, ib_error *err)
{
    *url = NULL;
    if (strcmp(method, "GET") && strcmp(method, "PUT"))
        return ib_error_set(err, IB_EXIT_USAGE, "a presigned URL is for GET or PUT, not '%s'", method);
    const char *region = bucket_region(s, bucket);
    char host[1200], *base = NULL, *query = NULL;
    if (s3_url(s, bucket, key, region, NULL, &base, host, sizeof host, err) != 0) return -1;
    const char *path = strstr(base, "://") + 3;
    path += strcspn(path, "/");
    aws_presign_input in = {.method = method,
                            .host = host,
                            .path = path,
                            .service = "s3",
                            .region = region,
                            .when = when,
                            .expires_s = expires_s};
    if (aws_sigv4_presign(&in, cred, &query, err) != 0) {
        free(base);
        return -1;
    }
    size_t n = strlen(base) + strlen(query) + 2;
    *url = malloc(n);
    if (*url) snprintf(*url, n, "%s?%s", base, query);
    free(base);
    free(query);
    return *url ? 0 : ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
}
