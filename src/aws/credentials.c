/* aws/credentials: the credential chain and region, resolved as the AWS CLI resolves them.
 *   env (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN])
 *   -> profile AWS_PROFILE (default "default"): credentials file [NAME], its credential_process
 *      (credential_process.c), then config [profile NAME]
 *   -> container (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI | _FULL_URI, AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE])
 *   -> EC2 instance role through IMDSv2.
 * Region: AWS_REGION -> AWS_DEFAULT_REGION -> profile `region` -> IMDS placement/region. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/internal.h"
#include "instbench/imds.h"
#include "instbench/names.h" /* one rule for what a region looks like */

#define REFRESH_MARGIN_S 300 /* refresh temporary credentials this long before they expire */
/* AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: an EKS Pod Identity token is a JWT of 1-2 KiB, and what
 * goes into the Authorization header is cut at 4 KiB anyway (auth[] below) */
#define CONTAINER_TOKEN_MAX_BYTES ((size_t)64 << 10)

static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--) *v++ = 0;
}

/* 1 found, 0 not configured, -1 configured wrongly. */
static int from_env(aws_credentials *out, ib_error *err)
{
    const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
    const char *tok = getenv("AWS_SESSION_TOKEN");
    int has_ak = ak && ak[0], has_sk = sk && sk[0];
    if (!has_ak && !has_sk) return 0;
    if (!has_ak || !has_sk)
        return ib_error_set(err, IB_EXIT_RUNTIME, "partial credentials in the environment: %s is set but %s is not",
                            has_ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                            has_ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    return aws_credentials_set(out, ak, sk, tok, "env", err) == 0 ? 1 : -1;
}

/* The static keys of profile NAME in F (PATH): 1 found, 0 none, -1 half of a pair. */
static int static_keys(const aws_config_file *f, const char *name, const char *path, aws_credentials *out,
                       ib_error *err)
{
    const char *ak = aws_config_get(f, name, "aws_access_key_id");
    const char *sk = aws_config_get(f, name, "aws_secret_access_key");
    /* botocore reads the older aws_security_token first */
    const char *tok = aws_config_get(f, name, "aws_security_token");
    if (!tok) tok = aws_config_get(f, name, "aws_session_token");
    if (!ak && !sk) return 0;
    if (!ak || !sk || !ak[0] || !sk[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s has %s but not %s", name, path,
                            ak ? "aws_access_key_id" : "aws_secret_access_key",
                            ak ? "aws_secret_access_key" : "aws_access_key_id");
    char src[32];
    snprintf(src, sizeof src, "profile:%.23s", name);
    return aws_credentials_set(out, ak, sk, tok, src, err) == 0 ? 1 : -1;
}

/* Profile NAME's setting KEY: the credentials file's over the config file's, as botocore merges
 * them; *WHERE the file's path. */
static const char *profile_get(const aws_config_file *kf, const char *kpath, const aws_config_file *cf,
                               const char *cpath, const char *name, const char *key, const char **where)
{
    const char *v = aws_config_get(kf, name, key);
    *where = kpath;
    if (!v) {
        v = aws_config_get(cf, name, key);
        *where = cpath;
    }
    return v;
}

/* The first of KEYS (NULL-terminated) profile NAME sets, *WHERE its file; NULL when none. */
static const char *first_set(const aws_config_file *kf, const char *kpath, const aws_config_file *cf, const char *cpath,
                             const char *name, const char *const keys[], const char **where)
{
    for (int k = 0; keys[k]; k++)
        if (profile_get(kf, kpath, cf, cpath, name, keys[k], where)) return keys[k];
    return NULL;
}

/* A profile, in the order the AWS CLI reads it (botocore's chain): a role to assume, a web
 * identity or SSO come first (instbench reads none of them itself: refused, never passed over
 * for the profile's keys, which would act as another principal, perhaps in another account);
 * then the credentials file's keys, credential_process, the config file's keys. */
static int from_profile(aws_credentials *out, ib_error *err)
{
    int explicit_profile = 0;
    const char *name = aws_profile_name(&explicit_profile);
    char cpath[4096], kpath[4096];
    aws_config_file *kf = NULL, *cf = NULL;
    if (aws_config_load(0, kpath, sizeof kpath, &kf, err) != 0 ||
        aws_config_load(1, cpath, sizeof cpath, &cf, err) != 0) {
        aws_config_free(kf);
        return -1;
    }
    int rc = 0;
    const char *where = NULL, *v, *key;
    static const char *const first[] = {"web_identity_token_file", "role_arn", "sso_account_id", "sso_role_name", NULL};
    static const char *const sso[] = {"sso_start_url", "sso_session", NULL};
    if ((key = first_set(kf, kpath, cf, cpath, name, first, &where)))
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "profile '%s' in %s uses %s, which instbench does not read itself: give the profile "
                          "`credential_process = aws configure export-credentials --profile %s --format process` "
                          "(a profile of its own), or export temporary credentials (`aws configure "
                          "export-credentials --profile %s --format env`)",
                          name, where, key, name, name);
    if (rc == 0) rc = static_keys(kf, name, kpath, out, err);
    if (rc == 0 && (v = profile_get(kf, kpath, cf, cpath, name, "credential_process", &where)))
        rc = aws_credential_process(v, name, where, out, err) == 0 ? 1 : -1;
    if (rc == 0) rc = static_keys(cf, name, cpath, out, err);
    if (rc == 0) {
        if (!aws_config_has_profile(kf, name) && !aws_config_has_profile(cf, name)) {
            if (explicit_profile)
                rc = ib_error_set(err, IB_EXIT_RUNTIME, "the profile '%s' (AWS_PROFILE) is not in %s or %s", name,
                                  kpath, cpath);
        } else if ((key = first_set(kf, kpath, cf, cpath, name, sso, &where))) {
            /* SSO settings without an account and role (botocore then reads on as well): named
             * rather than "no credentials" */
            rc = ib_error_set(err, IB_EXIT_RUNTIME,
                              "profile '%s' in %s has %s but no credentials instbench can read: give it "
                              "`credential_process = aws configure export-credentials --profile NAME --format "
                              "process` for an SSO profile NAME, or export temporary credentials (`aws configure "
                              "export-credentials --format env`)",
                              name, where, key);
        }
    }
    aws_config_free(kf);
    aws_config_free(cf);
    return rc;
}

/* FULL_URI hosts the SDKs accept over plain http: loopback and the ECS/EKS agent addresses. */
static int allowed_http_host(const char *host)
{
    if (!strcmp(host, "localhost") || !strcmp(host, "169.254.170.2") || !strcmp(host, "169.254.170.23") ||
        !strcasecmp(host, "[fd00:ec2::23]") || !strcmp(host, "[::1]"))
        return 1;
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
    return 0;
}

int aws_container_credentials_url(char *out, size_t out_len, const char **var, ib_error *err)
{
    *var = NULL;
    const char *rel = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *full = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (rel && rel[0]) {
        snprintf(out, out_len, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
        return 0;
    }
    if (!full || !full[0]) return 1;
    aws_curl_global_init();
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, full, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        if (!strcmp(scheme, "https") || (!strcmp(scheme, "http") && allowed_http_host(host))) {
            snprintf(out, out_len, "%s", full);
            *var = "AWS_CONTAINER_CREDENTIALS_FULL_URI";
            rc = 0;
        } else if (strcmp(scheme, "http")) {
            ib_error_set(err, IB_EXIT_RUNTIME, "AWS_CONTAINER_CREDENTIALS_FULL_URI: '%s' is no http:// or https:// URL",
                         scheme);
        } else {
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "AWS_CONTAINER_CREDENTIALS_FULL_URI host '%s' is not allowed over http (loopback, "
                         "169.254.170.2, 169.254.170.23 or https only)",
                         host);
        }
    } else {
        ib_error_set(err, IB_EXIT_RUNTIME, "AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL");
    }
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

/* A token goes into the Authorization header as it is (aws_has_control says why none may hold a
 * control character). */
#define TOKEN_CONTROL "holds a control character, which no Authorization header can carry"

static int from_container(aws_credentials *out, ib_error *err)
{
    char url[2048];
    const char *var;
    int r = aws_container_credentials_url(url, sizeof url, &var, err);
    if (r != 0) return r == 1 ? 0 : -1;
    char auth[4200] = "";
    const char *tok = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    const char *tok_file = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    if (tok_file && tok_file[0]) {
        char *data = NULL;
        size_t n = 0;
        ib_error ferr;
        if (util_read_file(tok_file, CONTAINER_TOKEN_MAX_BYTES, &data, &n, &ferr) != 0)
            return ib_error_set(err, IB_EXIT_RUNTIME, "container credentials: %s", ferr.msg);
        while (n && (data[n - 1] == '\n' || data[n - 1] == '\r')) n--; /* the line end `echo` leaves */
        int bad = aws_has_control(data, n);
        if (!bad) snprintf(auth, sizeof auth, "Authorization: %.*s", (int)n, data);
        wipe(data, n);
        free(data);
        if (bad)
            return ib_error_set(err, IB_EXIT_RUNTIME, "container credentials: the token in %s (%s) %s",
                                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tok_file, TOKEN_CONTROL);
    } else if (tok && tok[0]) {
        if (aws_has_control(tok, strlen(tok)))
            return ib_error_set(err, IB_EXIT_RUNTIME, "container credentials: AWS_CONTAINER_AUTHORIZATION_TOKEN %s",
                                TOKEN_CONTROL);
        snprintf(auth, sizeof auth, "Authorization: %s", tok);
    }
    const char *hdr[] = {auth};
    aws_plain_request pr = {"GET", url, hdr, auth[0] ? 1 : 0, 2.0, 5.0, var};
    long status = 0;
    char *body = NULL;
    ib_error perr;
    int rc = aws_plain_http(&pr, &status, &body, NULL, &perr);
    wipe(auth, sizeof auth);
    char shown[2048];
    aws_url_for_display(url, shown, sizeof shown);
    if (rc == -3) return ib_error_set(err, IB_EXIT_RUNTIME, "container credentials: %s", perr.msg);
    if (rc != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "container credentials endpoint %s: %s", shown, perr.msg);
    rc = -1;
    cJSON *j = status == 200 ? cJSON_Parse(body) : NULL;
    const char *ak = cJSON_GetStringValue(cJSON_GetObjectItem(j, "AccessKeyId"));
    const char *sk = cJSON_GetStringValue(cJSON_GetObjectItem(j, "SecretAccessKey"));
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Token"));
    const char *ex = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Expiration"));
    if (status != 200) {
        ib_error_set(err, IB_EXIT_RUNTIME, "container credentials endpoint %s: HTTP %ld", shown, status);
    } else if (!ak || !sk || !ak[0] || !sk[0]) {
        ib_error_set(err, IB_EXIT_RUNTIME, "container credentials endpoint %s: malformed credentials document", shown);
    } else if (aws_credentials_set(out, ak, sk, st, "container", err) == 0) {
        if (ex && util_parse_iso8601(ex, &out->expiration) != 0) out->expiration = 0;
        rc = 1;
    }
    cJSON_Delete(j);
    if (body) {
        wipe(body, strlen(body));
        free(body);
    }
    return rc;
}

int aws_credentials_resolve(aws_credentials *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    int r = from_env(out, err);
    if (r) return r > 0 ? 0 : -1;
    /* EKS's IAM roles for service accounts: the AWS CLI assumes AWS_ROLE_ARN with this token before
     * it reads any profile; the node's instance role further down is another principal */
    const char *wit = getenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    if (wit && wit[0])
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "AWS_WEB_IDENTITY_TOKEN_FILE is set (a web identity, as EKS gives a service account): "
                            "instbench does not assume its role itself; export temporary credentials (`aws "
                            "configure export-credentials --format env`) or unset the variable");
    r = from_profile(out, err);
    if (r) return r > 0 ? 0 : -1;
    r = from_container(out, err);
    if (r) return r > 0 ? 0 : -1;
    ib_error ierr;
    if (aws_imds_role_credentials(out, &ierr) == 0) return 0;
    int explicit_profile = 0;
    const char *prof = aws_profile_name(&explicit_profile);
    return ib_error_set(err, IB_EXIT_RUNTIME,
                        "no AWS credentials found (tried: environment AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; "
                        "profile '%s' in the shared credentials and config files; container credentials "
                        "(AWS_CONTAINER_CREDENTIALS_*_URI unset); EC2 instance role: %s)",
                        prof, ierr.msg);
}

int aws_credentials_refresh(aws_credentials *cred, int force, ib_error *err)
{
    int imds = !strcmp(cred->source, "imds"), container = !strcmp(cred->source, "container");
    /* a credential_process's credentials with an Expiration are refreshed by running it again
     * (botocore's RefreshableCredentials); without one they are final, as the AWS CLI takes them */
    int process = !strncmp(cred->source, "process:", 8) && cred->expiration != 0;
    if (!imds && !container && !process) return 1;
    if (!force && (cred->expiration == 0 || cred->expiration - time(NULL) > REFRESH_MARGIN_S)) return 0;
    aws_credentials fresh;
    memset(&fresh, 0, sizeof fresh);
    int r = imds        ? (aws_imds_role_credentials(&fresh, err) == 0 ? 1 : -1)
            : container ? from_container(&fresh, err)
                        : from_profile(&fresh, err);
    if (r == 0) ib_error_set(err, IB_EXIT_RUNTIME, "the profile's credentials are gone from the shared files");
    if (r <= 0) {
        /* keep using what we have while it is still valid; the service will say when it is not */
        if (cred->expiration > time(NULL)) {
            ib_warn("could not refresh %s credentials (%s); using the current ones until they expire", cred->source,
                    err ? err->msg : "");
            ib_error_clear(err);
            return 0;
        }
        return -1;
    }
    ib_debug("aws: refreshed %s credentials", cred->source);
    *cred = fresh;
    wipe(&fresh, sizeof fresh);
    return 0;
}

int aws_region_resolve(char out[32], ib_error *err) { return aws_region_resolve_from(out, NULL, 0, err); }

int aws_region_resolve_from(char out[32], char *from, size_t len, ib_error *err)
{
    out[0] = '\0';
    if (len) from[0] = '\0';
    const char *vars[] = {"AWS_REGION", "AWS_DEFAULT_REGION"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !v[0]) continue;
        if (!names_region_ok(v))
            return ib_error_set(err, IB_EXIT_USAGE, "%s='%s' %s", vars[i], v, names_region_problem(v));
        snprintf(out, 32, "%s", v);
        if (len) snprintf(from, len, "%s", vars[i]);
        return 0;
    }
    const char *name = aws_profile_name(NULL);
    char cpath[4096];
    aws_config_file *cf;
    if (aws_config_load(1, cpath, sizeof cpath, &cf, err) != 0) return -1;
    const char *v = aws_config_get(cf, name, "region");
    int rc = 1;
    if (v && v[0]) {
        rc = names_region_ok(v) ? 0
                                : ib_error_set(err, IB_EXIT_USAGE, "region '%s' in profile '%s' of %s %s", v, name,
                                               cpath, names_region_problem(v));
        if (rc == 0) {
            snprintf(out, 32, "%s", v);
            if (len) snprintf(from, len, "the region of profile '%s' in %s", name, cpath);
        }
    }
    aws_config_free(cf);
    if (rc != 1) return rc;
    aws_instance_identity id;
    ib_error ierr;
    if (aws_imds_identity(&id, &ierr) == 0 && names_region_ok(id.region)) {
        snprintf(out, 32, "%s", id.region);
        if (len) snprintf(from, len, "instance metadata");
        return 0;
    }
    ib_error_set(err, IB_EXIT_RUNTIME,
                 "no AWS region (tried AWS_REGION, AWS_DEFAULT_REGION, `region` of profile '%s' in %s, IMDS: %s)", name,
                 cpath, ierr.msg);
    return 1;
}
