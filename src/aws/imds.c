/* aws/imds: the EC2 instance metadata service, IMDSv2 (a session token from PUT /latest/api/token,
 * then GETs carrying it).  Honours AWS_EC2_METADATA_SERVICE_ENDPOINT, _ENDPOINT_MODE=IPv6,
 * AWS_EC2_METADATA_DISABLED=true, AWS_EC2_METADATA_V1_DISABLED=true and AWS_METADATA_SERVICE_TIMEOUT
 * (seconds, default 1): off EC2 the token request fails within about that long. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/internal.h"
#include "instbench/aws_ids.h"
#include "instbench/imds.h"
#include "instbench/names.h"

#define IMDS_TOKEN_TTL "21600"

struct aws_imds_session {
    char base[512];
    const char *base_var;   /* AWS_EC2_METADATA_SERVICE_ENDPOINT when it gave BASE */
    char token_header[160]; /* "X-aws-ec2-metadata-token: ..." or "" for IMDSv1 */
    double timeout_s;
    long status; /* the last GET's HTTP status, 0 when none came */
};

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && !strcasecmp(v, "true");
}

int aws_imds_open(aws_imds_session **out, ib_error *err)
{
    *out = NULL;
    if (env_true("AWS_EC2_METADATA_DISABLED"))
        return ib_error_set(err, IB_EXIT_RUNTIME, "IMDS is disabled (AWS_EC2_METADATA_DISABLED=true)");
    aws_imds_session *s = calloc(1, sizeof *s);
    if (!s) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    const char *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    const char *mode = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
    if (ep && ep[0]) {
        snprintf(s->base, sizeof s->base, "%s", ep);
        s->base_var = "AWS_EC2_METADATA_SERVICE_ENDPOINT";
    } else if (mode && !strcasecmp(mode, "IPv6")) snprintf(s->base, sizeof s->base, "http://[fd00:ec2::254]");
    else snprintf(s->base, sizeof s->base, "http://169.254.169.254");
    size_t n = strlen(s->base);
    while (n > 0 && s->base[n - 1] == '/') s->base[--n] = '\0';
    s->timeout_s = 1.0;
    const char *t = getenv("AWS_METADATA_SERVICE_TIMEOUT");
    if (t && t[0]) {
        double v;
        if (util_parse_double(t, 0.05, 60, &v) == 0) s->timeout_s = v;
        else ib_warn("ignoring AWS_METADATA_SERVICE_TIMEOUT='%s' (want seconds, 0.05-60)", t);
    }

    char url[600];
    snprintf(url, sizeof url, "%s/latest/api/token", s->base);
    const char *hdr[] = {"X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL};
    aws_plain_request pr = {"PUT", url, hdr, 1, s->timeout_s, s->timeout_s, s->base_var};
    long status = 0;
    char *body = NULL;
    size_t blen = 0;
    ib_error perr;
    int hr = aws_plain_http(&pr, &status, &body, &blen, &perr);
    if (hr == -3) {
        /* a server there, misnamed: not "not on EC2", and no answer to take for one */
        ib_error_set(err, IB_EXIT_RUNTIME, "IMDS: %s", perr.msg);
        free(s);
        return -2;
    }
    if (hr != 0) {
        char shown[600];
        aws_url_for_display(s->base, shown, sizeof shown);
        if (hr == -2) ib_error_set(err, IB_EXIT_RUNTIME, "IMDS token request to %s: %s", shown, perr.msg);
        else ib_error_set(err, IB_EXIT_RUNTIME, "IMDS not reachable at %s (%s): not on EC2?", shown, perr.msg);
        free(s);
        return hr;
    }
    if (status == 200 && blen > 0 && blen < 120 && !strpbrk(body, "\r\n")) {
        snprintf(s->token_header, sizeof s->token_header, "X-aws-ec2-metadata-token: %s", body);
    } else if ((status == 403 || status == 404 || status == 405) && !env_true("AWS_EC2_METADATA_V1_DISABLED")) {
        /* an IMDS without session support: fall back to IMDSv1 as the AWS CLI does */
        s->token_header[0] = '\0';
    } else {
        /* a 200 without a token in it is no IMDS (a proxy's page at that address, say) */
        char shown[600], what[96] = "";
        if (status == 200) snprintf(what, sizeof what, " with no session token in it (%zu bytes): not on EC2?", blen);
        ib_error_set(err, IB_EXIT_RUNTIME, "IMDS token request to %s failed: HTTP %ld%s",
                     aws_url_for_display(s->base, shown, sizeof shown), status, what);
        free(body);
        free(s);
        return -1;
    }
    free(body);
    *out = s;
    return 0;
}

int aws_imds_get(aws_imds_session *s, const char *path, char **body, ib_error *err)
{
    *body = NULL;
    char url[1024];
    snprintf(url, sizeof url, "%s/latest/%s", s->base, path);
    const char *hdr[] = {s->token_header};
    aws_plain_request pr = {"GET", url, hdr, s->token_header[0] ? 1 : 0, s->timeout_s, s->timeout_s, s->base_var};
    long status = 0;
    size_t blen = 0;
    ib_error perr;
    int hr = aws_plain_http(&pr, &status, body, &blen, &perr);
    s->status = status;
    if (hr != 0) {
        ib_error_set(err, IB_EXIT_RUNTIME, "IMDS %s: %s", path, perr.msg);
        return hr == -3 ? -2 : hr;
    }
    if (status != 200) {
        free(*body);
        *body = NULL;
        return ib_error_set(err, IB_EXIT_RUNTIME, "IMDS %s: HTTP %ld", path, status);
    }
    return 0;
}

void aws_imds_close(aws_imds_session *s)
{
    if (!s) return;
    memset(s->token_header, 0, sizeof s->token_header);
    free(s);
}

/* A name from the metadata service, as it may be printed: no control characters, cut short. */
static const char *printable(const char *in, char *out, size_t cap)
{
    size_t i = 0;
    for (; in[i] && i + 1 < cap; i++) out[i] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = '\0';
    return out;
}

static int get_into(aws_imds_session *s, const char *path, char *dst, size_t cap, ib_error *err)
{
    char *b = NULL;
    if (aws_imds_get(s, path, &b, err) != 0) return -1;
    size_t n = strcspn(b, "\r\n");
    if (n >= cap) n = cap - 1;
    memcpy(dst, b, n);
    dst[n] = '\0';
    free(b);
    return 0;
}

/* A malformed answer: -2 with the message. */
static int malformed(ib_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int malformed(ib_error *err, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ib_error_set(err, IB_EXIT_RUNTIME, "%s", msg);
    return -2;
}

/* One identity value: a single line (a final newline allowed) shorter than CAP that OK accepts.
 * 0 ok; -1 no answer (ERR says why); -2 a malformed answer (ERR names the path and quotes it). */
static int get_checked(aws_imds_session *s, const char *path, char *dst, size_t cap, int (*ok)(const char *),
                       const char *what, ib_error *err)
{
    char *b = NULL;
    int r = aws_imds_get(s, path, &b, err);
    if (r != 0) return r; /* -2: an answer over the cap is a malformed one */
    size_t n = strcspn(b, "\r\n");
    int one_line = b[n + strspn(b + n, "\r\n")] == '\0';
    int rc = 0;
    if (n >= cap || !one_line) {
        rc = malformed(err, "IMDS %s: the answer (%zu bytes%s) is not %s", path, strlen(b),
                       one_line ? "" : ", several lines", what);
    } else {
        memcpy(dst, b, n);
        dst[n] = '\0';
        if (!ok(dst)) rc = malformed(err, "IMDS %s: '%s' is not %s", path, dst, what);
    }
    free(b);
    if (rc) dst[0] = '\0';
    return rc;
}

/* "spot", "on-demand", "scheduled", ...: one lower-case word (dashes allowed). */
static int lifecycle_ok(const char *s)
{
    if (!s[0]) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || *s == '-')) return 0;
    return 1;
}

static int instance_id_ok(const char *s) { return aws_instance_id_valid(s); }

int aws_imds_identity(aws_instance_identity *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    aws_imds_session *s;
    int open_rc = aws_imds_open(&s, err);
    if (open_rc != 0) return open_rc;
    ib_error opt; /* optional fields: no answer falls back, a malformed one still fails */
    int rc = get_checked(s, "meta-data/instance-type", out->instance_type, sizeof out->instance_type,
                         names_instance_type_ok, "an instance type", err);
    if (rc == 0)
        rc = get_checked(s, "meta-data/placement/availability-zone", out->availability_zone,
                         sizeof out->availability_zone, names_zone_ok, "an availability zone", err);
    if (rc == 0) {
        int r = get_checked(s, "meta-data/placement/region", out->region, sizeof out->region, names_region_ok,
                            "a region", &opt);
        if (r == -2) rc = malformed(err, "%s", opt.msg);
        /* older IMDS versions lack placement/region: the zone names it (us-west-2-lax-1a -> us-west-2) */
        else if (r == -1 && names_region_of_zone(out->availability_zone, out->region, sizeof out->region) != 0)
            rc = malformed(err, "IMDS meta-data/placement/availability-zone: '%s' names no region",
                           out->availability_zone);
    }
    if (rc == 0 && !names_zone_in_region(out->availability_zone, out->region))
        rc = malformed(err, "IMDS meta-data/placement/availability-zone: '%s' is not a zone of region '%s'",
                       out->availability_zone, out->region);
    /* The zone's ID (use1-az2): the same physical zone in every account, where the name is this
     * account's own label for it.  Optional; a malformed answer still fails like the others. */
    if (rc == 0 &&
        get_checked(s, "meta-data/placement/availability-zone-id", out->availability_zone_id,
                    sizeof out->availability_zone_id, names_zone_is_id, "an availability zone ID", &opt) == -2)
        rc = malformed(err, "%s", opt.msg);
    /* The instance id is informational (never stored in a result): a malformed one is just unknown. */
    if (rc == 0)
        get_checked(s, "meta-data/instance-id", out->instance_id, sizeof out->instance_id, instance_id_ok,
                    "an instance id", &opt);
    /* "spot" or "on-demand"; another word (e.g. "scheduled") is kept here and priced by no market */
    if (rc == 0 && get_checked(s, "meta-data/instance-life-cycle", out->lifecycle, sizeof out->lifecycle, lifecycle_ok,
                               "a lifecycle (spot or on-demand)", &opt) == -2)
        rc = malformed(err, "%s", opt.msg);
    aws_imds_close(s);
    if (rc != 0) memset(out, 0, sizeof *out);
    return rc;
}

int aws_imds_role_credentials(aws_credentials *out, ib_error *err)
{
    aws_imds_session *s;
    if (aws_imds_open(&s, err) != 0) return -1;
    int rc = -1;
    char role[256] = "", path[400];
    char *body = NULL;
    cJSON *j = NULL;
    /* no role is a 404 (or an empty list); any other failure says what it was */
    int listed = get_into(s, "meta-data/iam/security-credentials/", role, sizeof role, err) == 0;
    if ((listed && !role[0]) || (!listed && s->status == 404))
        ib_error_set(err, IB_EXIT_RUNTIME, "IMDS: no instance role attached");
    if (!listed || !role[0]) goto out;
    snprintf(path, sizeof path, "meta-data/iam/security-credentials/%s", role);
    if (aws_imds_get(s, path, &body, err) != 0) goto out;
    j = cJSON_Parse(body);
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Code"));
    const char *ak = cJSON_GetStringValue(cJSON_GetObjectItem(j, "AccessKeyId"));
    const char *sk = cJSON_GetStringValue(cJSON_GetObjectItem(j, "SecretAccessKey"));
    const char *tk = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Token"));
    const char *ex = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Expiration"));
    if (!j || (code && strcmp(code, "Success")) || !ak || !sk || !ak[0] || !sk[0]) {
        char srole[64], scode[64];
        ib_error_set(err, IB_EXIT_RUNTIME, "IMDS role '%s': malformed credentials document%s%s",
                     printable(role, srole, sizeof srole), code ? ", Code " : "",
                     code ? printable(code, scode, sizeof scode) : "");
        goto out;
    }
    if (aws_credentials_set(out, ak, sk, tk, "imds", err) != 0) goto out;
    if (ex && util_parse_iso8601(ex, &out->expiration) != 0) out->expiration = 0;
    rc = 0;
out:
    if (body) {
        memset(body, 0, strlen(body));
        free(body);
    }
    cJSON_Delete(j);
    aws_imds_close(s);
    return rc;
}
