/* aws/endpoints: where each service lives, and the SDKs' endpoint overrides.  The override only
 * moves the URL; callers keep signing with the real service name and region. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "instbench/aws.h"
#include "instbench/util.h"

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && !strcasecmp(v, "true");
}

/* The variable that moves SERVICE_ENV_ID ("AWS_ENDPOINT_URL_EC2" or "AWS_ENDPOINT_URL") into VAR,
 * its value returned; NULL when none does. */
static const char *override_var(const char *service_env_id, char *var, size_t len)
{
    if (env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) return NULL;
    snprintf(var, len, "AWS_ENDPOINT_URL_%s", service_env_id);
    const char *v = getenv(var);
    if (v && v[0]) return v;
    snprintf(var, len, "AWS_ENDPOINT_URL");
    v = getenv(var);
    return v && v[0] ? v : NULL;
}

int aws_endpoint_override(const char *service_env_id, char *out, size_t out_len)
{
    if (!service_env_id || !out || out_len == 0) return -1;
    out[0] = '\0';
    char var[96];
    const char *v = override_var(service_env_id, var, sizeof var);
    if (!v) return 0;
    size_t n = strlen(v);
    while (n > 1 && v[n - 1] == '/') n--; /* the path is the caller's to add */
    if (n >= out_len) return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 1;
}

const char *aws_endpoint_var_of(const char *service, const char *url, char *var, size_t len)
{
    if (!service || !url || !var || len < 2) return NULL;
    char id[64];
    size_t k = 0;
    for (; service[k] && k < sizeof id - 1; k++)
        id[k] = service[k] == '-' ? '_' : (char)toupper((unsigned char)service[k]);
    id[k] = '\0';
    const char *v = override_var(id, var, len);
    if (!v) return NULL;
    size_t n = strlen(v);
    while (n > 1 && v[n - 1] == '/') n--;
    /* the URL starts with the variable's (scheme and host case-blind): it is what the variable named */
    if (strncasecmp(url, v, n) || (url[n] && url[n] != '/' && url[n] != '?' && url[n] != '#')) return NULL;
    return var;
}

const char *aws_endpoint_url_problem(const char *service, const char *url, char *why, size_t len)
{
    size_t n = !strncasecmp(url, "https://", 8) ? 8 : !strncasecmp(url, "http://", 7) ? 7 : 0;
    if (n && url[n] && !strchr("/?#", url[n])) return NULL;
    char var[96], shown[600];
    const char *v = aws_endpoint_var_of(service, url, var, sizeof var);
    aws_url_for_display(v ? getenv(var) : url, shown, sizeof shown);
    snprintf(why, len,
             "%s '%s' is not an endpoint URL: it wants http:// or https:// and a host (e.g. http://localhost:4566)",
             v ? v : "the URL", shown);
    return why;
}

const char *aws_endpoint_problem(const char *service_env_id, const char *region, size_t out_len, char *why,
                                 size_t why_len)
{
    char var[96];
    if (!why || !why_len) return "";
    const char *v = service_env_id ? override_var(service_env_id, var, sizeof var) : NULL;
    size_t n = v ? strlen(v) : 0;
    while (n > 1 && v[n - 1] == '/') n--;
    if (v && n >= out_len) {
        snprintf(why, why_len, "%s is too long: %zu bytes, over the limit of %zu for an endpoint URL", var, n,
                 out_len ? out_len - 1 : 0);
    } else {
        snprintf(why, why_len, "no endpoint URL for region '%.40s' fits in %zu bytes", region ? region : "",
                 out_len ? out_len - 1 : 0);
    }
    return why;
}

int aws_endpoint_url(const char *service_env_id, const char *region, char *out, size_t out_len)
{
    int over = aws_endpoint_override(service_env_id, out, out_len);
    if (over != 0) return over < 0 ? -1 : 0;
    const char *r = region && region[0] ? region : "us-east-1";
    /* China partition regions use their own domain. */
    const char *domain = strncmp(r, "cn-", 3) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
    int w;
    if (!strcasecmp(service_env_id, "PRICING")) {
        /* The Price List Query API exists in us-east-1, eu-central-1 and ap-south-1 only. */
        if (strcmp(r, "eu-central-1") && strcmp(r, "ap-south-1")) r = "us-east-1", domain = "amazonaws.com";
        w = snprintf(out, out_len, "https://api.pricing.%s.%s", r, domain);
    } else if (!strcasecmp(service_env_id, "SSO")) {
        /* IAM Identity Center's portal (GetRoleCredentials), in the SSO region */
        w = snprintf(out, out_len, "https://portal.sso.%s.%s", r, domain);
    } else {
        char svc[64];
        size_t k = 0;
        for (; service_env_id[k] && k < sizeof svc - 1; k++)
            svc[k] = service_env_id[k] == '_' ? '-' : (char)tolower((unsigned char)service_env_id[k]);
        svc[k] = '\0';
        w = snprintf(out, out_len, "https://%s.%s.%s", svc, r, domain);
    }
    return (w < 0 || (size_t)w >= out_len) ? -1 : 0;
}

/* A presigned URL's parameters that authorise whoever holds them (P points at a name). */
static int presign_secret_param(const char *p)
{
    /* SigV4's query form, and S3's query-string form (AWSAccessKeyId, Signature, x-amz-security-token) */
    static const char *const names[] = {
        "X-Amz-Signature=", "X-Amz-Security-Token=", "X-Amz-Credential=", "Signature=", "AWSAccessKeyId="};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strncasecmp(p, names[i], strlen(names[i]))) return 1;
    return 0;
}

const char *aws_url_origin(const char *url, char *out, size_t len)
{
    char shown[1024];
    aws_url_for_display(url, shown, sizeof shown);
    const char *sep = strstr(shown, "://");
    size_t n = sep ? (size_t)(sep + 3 - shown) + strcspn(sep + 3, "/?#") : strlen(shown);
    snprintf(out, len, "%.*s", (int)n, shown);
    return out;
}

const char *aws_url_for_display(const char *url, char *out, size_t len)
{
    if (!out || len == 0) return "";
    if (!url) url = "";
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@') at = p; /* the last '@' ends the userinfo, as in curl */
    size_t o = 0;
    const char *query = strpbrk(auth + alen, "?#"); /* where parameters may start: query or fragment */
    for (const char *p = url; *p && o + 1 < len; p++) {
        if (at && p == auth) {
            const char *mask = "***@";
            for (; *mask && o + 1 < len; mask++) out[o++] = *mask;
            p = at;
            continue;
        }
        /* masked wherever a parameter can start, a fragment's ("#?X-Amz-Signature=") included */
        if (query && p > query && strchr("?&#;", p[-1]) && presign_secret_param(p)) {
            /* the name and '=', then "***" for the value */
            const char *eq = strchr(p, '=');
            for (; p <= eq && o + 1 < len; p++) out[o++] = *p;
            for (const char *mask = "***"; *mask && o + 1 < len; mask++) out[o++] = *mask;
            p += strcspn(p, "&#");
            p--;
            continue;
        }
        out[o++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
    }
    out[o] = '\0';
    return out;
}

int aws_endpoints_identity(const char *const *service_env_ids, size_t n, char *out, size_t out_len)
{
    if (!out || out_len < 17) return -1;
    out[0] = '\0';
    /* "PRICING=<url>\nEC2=<url>\n", an empty URL for AWS's own endpoint: whatever moves one
     * service elsewhere changes the identity, and only AWS's own endpoints give none. */
    char text[8192], url[2048];
    size_t len = 0;
    int custom = 0;
    for (size_t i = 0; i < n; i++) {
        int over = aws_endpoint_override(service_env_ids[i], url, sizeof url);
        if (over < 0) return -1;
        custom |= over;
        int w = snprintf(text + len, sizeof text - len, "%s=%s\n", service_env_ids[i], url);
        if (w < 0 || (size_t)w >= sizeof text - len) return -1;
        len += (size_t)w;
    }
    if (!custom) return 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    if (!EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL)) return -1;
    util_hex(md, 8, hex); /* 64 bits: a name per endpoint, not a secret */
    memcpy(out, hex, 16);
    out[16] = '\0';
    return 1;
}
