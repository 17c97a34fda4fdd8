/* aws/sigv4: AWS Signature Version 4 as a pure function (no clock, no environment, no I/O).
 *
 * The canonical request is
 *   METHOD \n CanonicalURI \n CanonicalQuery \n CanonicalHeaders \n SignedHeaders \n HexSHA256(body)
 * and the string to sign is
 *   AWS4-HMAC-SHA256 \n YYYYMMDDTHHMMSSZ \n DATE/REGION/SERVICE/aws4_request \n HexSHA256(CR).
 * The signing key is HMAC chained over "AWS4"+secret, date, region, service, "aws4_request".
 * Driven byte for byte by the AWS SigV4 test suite (tests/aws/aws_sigv4_suite.c). */
#include "instbench/aws.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* A growable string; every append reports out-of-memory through ok=0 so callers check once. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int ok;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra)
{
    if (!b->ok) return;
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
        b->ok = 0;
        return;
    }
    b->p = np;
    b->cap = cap;
}

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    if (!b->ok) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static int is_unreserved(unsigned char c) { return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

/* RFC 3986 percent-encoding with upper-case hex: everything but unreserved (and '/' in paths). */
static void sb_put_encoded(sbuf *b, const char *s, size_t n, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            sb_putc(b, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            sb_putn(b, e, 3);
        }
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %XX in place; a malformed escape stays literal (it is then re-encoded as %25XX). */
static size_t percent_decode(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 && hexval((unsigned char)s[i + 2]) >= 0) {
            s[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
            i += 2;
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

/* Canonical URI.  With normalization (every service but S3) empty and "." segments vanish and
 * ".." removes its parent, a trailing slash survives when something is left; then each byte of
 * the path as sent is percent-encoded once, which is AWS's "double encoding" of the decoded path. */
static void canonical_uri(sbuf *b, const char *path, int normalize, int encoded)
{
    if (!path || !path[0]) {
        sb_putc(b, '/');
        return;
    }
    if (!normalize && encoded) {
        sb_puts(b, path);
        return;
    }
    if (!normalize) {
        sb_put_encoded(b, path, strlen(path), 1);
        return;
    }
    size_t n = strlen(path);
    /* segment starts/lengths kept as a stack; a path has at most n/1 segments. */
    size_t *st = malloc((n + 1) * sizeof *st), *ln = malloc((n + 1) * sizeof *ln), top = 0;
    if (!st || !ln) {
        free(st);
        free(ln);
        b->ok = 0;
        return;
    }
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && path[j] != '/') j++;
        size_t len = j - i;
        if (len == 0 || (len == 1 && path[i] == '.')) {
            /* empty or "." segment: dropped */
        } else if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (top) top--;
        } else {
            st[top] = i;
            ln[top] = len;
            top++;
        }
        i = j + 1;
    }
    sb_putc(b, '/');
    for (size_t k = 0; k < top; k++) {
        if (k) sb_putc(b, '/');
        sb_put_encoded(b, path + st[k], ln[k], 1);
    }
    if (top && path[n - 1] == '/') sb_putc(b, '/');
    free(st);
    free(ln);
}

typedef struct qparam {
    char *name, *value; /* encoded */
} qparam;

static int qparam_cmp(const void *a, const void *b)
{
    const qparam *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

/* Canonical query: each name and value decoded then strictly re-encoded, sorted by encoded name
 * then value in byte order (so "InstanceType.10" < "InstanceType.2"), joined with '&'. */
static void canonical_query(sbuf *b, const char *query)
{
    if (!query || !query[0]) return;
    size_t n = strlen(query), np = 1;
    for (size_t i = 0; i < n; i++) np += query[i] == '&';
    qparam *ps = calloc(np, sizeof *ps);
    char *tmp = malloc(n + 1);
    size_t cnt = 0;
    if (!ps || !tmp) goto oom;
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && query[j] != '&') j++;
        if (j > i) {
            size_t eq = i;
            while (eq < j && query[eq] != '=') eq++;
            sbuf nm = {0, 0, 0, 1}, vl = {0, 0, 0, 1};
            memcpy(tmp, query + i, eq - i);
            size_t dl = percent_decode(tmp, eq - i);
            sb_put_encoded(&nm, tmp, dl, 0);
            sb_puts(&nm, "");
            size_t vlen = eq < j ? j - eq - 1 : 0;
            if (vlen) memcpy(tmp, query + eq + 1, vlen);
            dl = percent_decode(tmp, vlen);
            sb_put_encoded(&vl, tmp, dl, 0);
            sb_puts(&vl, "");
            ps[cnt].name = nm.p;
            ps[cnt].value = vl.p;
            cnt++;
            if (!nm.ok || !vl.ok) goto oom;
        }
        i = j + 1;
    }
    qsort(ps, cnt, sizeof *ps, qparam_cmp);
    for (size_t k = 0; k < cnt; k++) {
        if (k) sb_putc(b, '&');
        sb_puts(b, ps[k].name);
        sb_putc(b, '=');
        sb_puts(b, ps[k].value);
    }
    goto done;
oom:
    b->ok = 0;
done:
    for (size_t k = 0; k < cnt; k++) {
        free(ps[k].name);
        free(ps[k].value);
    }
    free(ps);
    free(tmp);
}

typedef struct chdr {
    char *name;   /* lower-case */
    char *value;  /* trimmed, inner whitespace runs collapsed to one space */
    size_t order; /* position as sent: duplicates keep their order when joined */
} chdr;

static int chdr_cmp(const void *a, const void *b)
{
    const chdr *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    if (d)
        for (char *p = d; *p; p++) *p = (char)tolower((unsigned char)*p);
    return d;
}

/* Trimall: leading/trailing whitespace removed and runs (including folded line breaks) -> " ". */
static char *trimall_dup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (!d) return NULL;
    size_t o = 0;
    int pending_space = 0;
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            pending_space = o > 0;
        } else {
            if (pending_space) d[o++] = ' ';
            pending_space = 0;
            d[o++] = *p;
        }
    }
    d[o] = '\0';
    return d;
}

/* Headers the signer owns: a caller's copy would be signed twice. */
static int signer_owned(const char *lname)
{
    return !strcmp(lname, "x-amz-date") || !strcmp(lname, "x-amz-security-token") ||
           !strcmp(lname, "x-amz-content-sha256") || !strcmp(lname, "authorization");
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL);
    util_hex(md, 32, out);
}

static void hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

/* The request time as SigV4 writes it (20150830T123600Z); its first 8 characters are the date. */
static int amz_time(time_t when, char amz_date[17], ib_error *err)
{
    struct tm tm;
    if (!gmtime_r(&when, &tm)) return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: invalid request time");
    strftime(amz_date, 17, "%Y%m%dT%H%M%SZ", &tm);
    return 0;
}

/* The signature of a canonical request, for header-signed and presigned requests alike: the string
 * to sign (algorithm, time, SCOPE = date/region/service/aws4_request, the canonical request's
 * hash) into STS (the caller's, freed by it), then the signing key (HMAC chain over "AWS4"+secret,
 * date, region, service, "aws4_request") applied to it; hex into OUT.  -1 when out of memory. */
static int sign_canonical(const aws_credentials *cred, const char *amz_date, const char *region, const char *service,
                          const char *scope, const sbuf *cr, sbuf *sts, char out[65])
{
    char cr_hash[65], date[9];
    sha256_hex(cr->p, cr->len, cr_hash);
    sb_puts(sts, "AWS4-HMAC-SHA256\n");
    sb_puts(sts, amz_date);
    sb_putc(sts, '\n');
    sb_puts(sts, scope);
    sb_putc(sts, '\n');
    sb_puts(sts, cr_hash);
    if (!sts->ok) return -1;
    memcpy(date, amz_date, 8);
    date[8] = '\0';
    char kseed[4 + sizeof cred->secret_access_key];
    snprintf(kseed, sizeof kseed, "AWS4%s", cred->secret_access_key);
    unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
    hmac256(kseed, strlen(kseed), date, k1);
    hmac256(k1, 32, region, k2);
    hmac256(k2, 32, service, k3);
    hmac256(k3, 32, "aws4_request", k4);
    hmac256(k4, 32, sts->p, sig);
    util_hex(sig, 32, out);
    /* The secret-derived keys must not linger on the stack. */
    OPENSSL_cleanse(kseed, sizeof kseed);
    OPENSSL_cleanse(k1, 32);
    OPENSSL_cleanse(k2, 32);
    OPENSSL_cleanse(k3, 32);
    OPENSSL_cleanse(k4, 32);
    return 0;
}

static int set_add(aws_sign_output *out, const char *name, const char *value)
{
    aws_header *h = &out->add[out->n_add];
    h->name = strdup(name);
    h->value = strdup(value);
    if (!h->name || !h->value) {
        free(h->name);
        free(h->value);
        h->name = h->value = NULL;
        return -1;
    }
    out->n_add++;
    return 0;
}

int aws_sigv4_sign(const aws_sign_input *in, const aws_credentials *cred, aws_sign_output *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (!in || !cred || !in->method || !in->service || !in->region || !in->service[0] || !in->region[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: method, service and region are required");
    if (!cred->access_key_id[0] || !cred->secret_access_key[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: credentials have no access key id or secret");

    if (amz_time(in->when, out->amz_date, err) != 0) return -1;

    char payload_hash[65];
    sha256_hex(in->body ? in->body : "", in->body ? in->body_len : 0, payload_hash);
    int with_token = cred->session_token[0] != '\0';

    /* Headers to sign: the caller's (minus the signer's own) plus x-amz-date and, as flagged,
     * x-amz-content-sha256 and x-amz-security-token. */
    size_t cap = in->n_headers + 3, nh = 0;
    chdr *hs = calloc(cap, sizeof *hs);
    sbuf cr = {0, 0, 0, 1}, sts = {0, 0, 0, 1}, sh = {0, 0, 0, 1};
    int rc = -1;
    if (!hs) goto oom;
    for (size_t i = 0; i < in->n_headers; i++) {
        if (!in->headers[i].name || !in->headers[i].value) continue;
        char *ln = lower_dup(in->headers[i].name);
        if (!ln) goto oom;
        if (signer_owned(ln)) {
            free(ln);
            continue;
        }
        hs[nh].name = ln;
        hs[nh].value = trimall_dup(in->headers[i].value);
        hs[nh].order = nh;
        nh++;
        if (!hs[nh - 1].value) goto oom;
    }
    struct {
        const char *n, *v;
        int on;
    } own[] = {
        {"x-amz-date", out->amz_date, 1},
        {"x-amz-content-sha256", payload_hash, in->sign_body},
        {"x-amz-security-token", cred->session_token, with_token && !in->omit_session_token},
    };
    for (size_t k = 0; k < 3; k++) {
        if (!own[k].on) continue;
        hs[nh].name = strdup(own[k].n);
        hs[nh].value = trimall_dup(own[k].v);
        hs[nh].order = nh;
        nh++;
        if (!hs[nh - 1].name || !hs[nh - 1].value) goto oom;
    }
    qsort(hs, nh, sizeof *hs, chdr_cmp);

    /* Canonical request. */
    sb_puts(&cr, in->method);
    sb_putc(&cr, '\n');
    canonical_uri(&cr, in->path, in->normalize_path, in->path_encoded);
    sb_putc(&cr, '\n');
    canonical_query(&cr, in->query);
    sb_putc(&cr, '\n');
    for (size_t i = 0; i < nh; i++) {
        int first = i == 0 || strcmp(hs[i].name, hs[i - 1].name) != 0;
        if (first) {
            if (i) sb_putc(&cr, '\n');
            sb_puts(&cr, hs[i].name);
            sb_putc(&cr, ':');
            if (sh.len) sb_putc(&sh, ';');
            sb_puts(&sh, hs[i].name);
        } else {
            sb_putc(&cr, ',');
        }
        sb_puts(&cr, hs[i].value);
    }
    sb_puts(&cr, "\n\n");
    sb_puts(&cr, sh.p ? sh.p : "");
    sb_putc(&cr, '\n');
    sb_puts(&cr, payload_hash);
    if (!cr.ok || !sh.ok) goto oom;

    char scope[256];
    snprintf(scope, sizeof scope, "%.8s/%s/%s/aws4_request", out->amz_date, in->region, in->service);
    if (sign_canonical(cred, out->amz_date, in->region, in->service, scope, &cr, &sts, out->signature) != 0) goto oom;

    int w = snprintf(out->authorization, sizeof out->authorization,
                     "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s", cred->access_key_id, scope,
                     sh.p, out->signature);
    if (w < 0 || (size_t)w >= sizeof out->authorization) {
        ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: too many signed headers for the Authorization header");
        goto fail;
    }

    if (set_add(out, "X-Amz-Date", out->amz_date) != 0) goto oom;
    if (with_token && set_add(out, "X-Amz-Security-Token", cred->session_token) != 0) goto oom;
    if (in->sign_body && set_add(out, "x-amz-content-sha256", payload_hash) != 0) goto oom;

    out->canonical_request = cr.p;
    out->string_to_sign = sts.p;
    cr.p = sts.p = NULL;
    rc = 0;
    goto done;
oom:
    ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: out of memory");
fail:
    aws_sign_output_free(out);
done:
    for (size_t i = 0; hs && i < nh; i++) {
        free(hs[i].name);
        free(hs[i].value);
    }
    free(hs);
    free(cr.p);
    free(sts.p);
    free(sh.p);
    return rc;
}

void aws_sign_output_free(aws_sign_output *out)
{
    if (!out) return;
    free(out->canonical_request);
    free(out->string_to_sign);
    out->canonical_request = out->string_to_sign = NULL;
    for (size_t i = 0; i < out->n_add; i++) {
        free(out->add[i].name);
        free(out->add[i].value);
        out->add[i].name = out->add[i].value = NULL;
    }
    out->n_add = 0;
}

/* "name=value" with both strictly percent-encoded (botocore's percent_encode_sequence). */
static void sb_put_param(sbuf *b, const char *name, const char *value)
{
    if (b->len) sb_putc(b, '&');
    sb_put_encoded(b, name, strlen(name), 0);
    sb_putc(b, '=');
    sb_put_encoded(b, value, strlen(value), 0);
}

int aws_sigv4_presign(const aws_presign_input *in, const aws_credentials *cred, char **query_out, ib_error *err)
{
    *query_out = NULL;
    if (!in || !cred || !in->method || !in->host || !in->path || !in->service || !in->region || !in->region[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: method, host, path and region are required");
    if (in->expires_s < 1 || in->expires_s > 604800)
        return ib_error_set(err, IB_EXIT_USAGE, "a presigned URL lasts 1 s to 7 days (604800 s); got %ld s",
                            in->expires_s);
    if (!cred->access_key_id[0] || !cred->secret_access_key[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: credentials have no access key id or secret");
    char amz_date[17], scope[256], credential[512], expires[24], sig[65];
    if (amz_time(in->when, amz_date, err) != 0) return -1;
    snprintf(scope, sizeof scope, "%.8s/%s/%s/aws4_request", amz_date, in->region, in->service);
    snprintf(credential, sizeof credential, "%s/%s", cred->access_key_id, scope);
    snprintf(expires, sizeof expires, "%ld", in->expires_s);

    sbuf q = {0, 0, 0, 1}, cr = {0, 0, 0, 1}, sts = {0, 0, 0, 1};
    sb_put_param(&q, "X-Amz-Algorithm", "AWS4-HMAC-SHA256");
    sb_put_param(&q, "X-Amz-Credential", credential);
    sb_put_param(&q, "X-Amz-Date", amz_date);
    sb_put_param(&q, "X-Amz-Expires", expires);
    sb_put_param(&q, "X-Amz-SignedHeaders", "host");
    if (cred->session_token[0]) sb_put_param(&q, "X-Amz-Security-Token", cred->session_token);

    sb_puts(&cr, in->method);
    sb_putc(&cr, '\n');
    canonical_uri(&cr, in->path, 0, 1);
    sb_putc(&cr, '\n');
    canonical_query(&cr, q.p);
    sb_puts(&cr, "\nhost:");
    sb_puts(&cr, in->host);
    sb_puts(&cr, "\n\nhost\nUNSIGNED-PAYLOAD");
    if (!cr.ok || !q.ok) goto oom;
    if (sign_canonical(cred, amz_date, in->region, in->service, scope, &cr, &sts, sig) != 0) goto oom;
    sb_put_param(&q, "X-Amz-Signature", sig);
    if (!q.ok) goto oom;
    free(cr.p);
    free(sts.p);
    *query_out = q.p;
    return 0;
oom:
    free(q.p);
    free(cr.p);
    free(sts.p);
    return ib_error_set(err, IB_EXIT_RUNTIME, "sigv4: out of memory");
}
