/* aws/credentials: the credential chain and region, resolved as the AWS CLI resolves them.
 *   env (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN])
 *   -> profile AWS_PROFILE (default "default"): its role_arn assumed (sts.c) with its
 *      source_profile's or credential_source's credentials (and its mfa_serial's code, mfa.c);
 *      a web identity (AWS_WEB_IDENTITY_TOKEN_FILE or the profile's); its SSO role (sso.c);
 *      credentials file [NAME], its credential_process (credential_process.c), then config
 *      [profile NAME]
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

/* The two shared files, read once for a resolution. */
typedef struct shared_files {
    aws_config_file *kf, *cf; /* credentials, config */
    char kpath[4096], cpath[4096];
} shared_files;

/* Profile NAME's setting KEY: the credentials file's over the config file's, as botocore merges
 * them; *WHERE the file's path. */
static const char *pget(const shared_files *f, const char *name, const char *key, const char **where)
{
    const char *v = aws_config_get(f->kf, name, key);
    *where = f->kpath;
    if (!v) {
        v = aws_config_get(f->cf, name, key);
        *where = f->cpath;
    }
    return v;
}

/* The first of KEYS (NULL-terminated) profile NAME sets, *WHERE its file; NULL when none. */
static const char *first_set(const shared_files *f, const char *name, const char *const keys[], const char **where)
{
    for (int k = 0; keys[k]; k++)
        if (pget(f, name, keys[k], where)) return keys[k];
    return NULL;
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

/* The region STS is asked in: AWS_REGION, AWS_DEFAULT_REGION, profile TOP's region, else
 * us-east-1 (the AWS CLI's session region; never IMDS, which off EC2 would only wait). */
static void sts_region(const shared_files *f, const char *top, char out[32])
{
    const char *where, *v = getenv("AWS_REGION");
    if (!v || !v[0]) v = getenv("AWS_DEFAULT_REGION");
    if (!v || !v[0]) v = pget(f, top, "region", &where);
    snprintf(out, 32, "%s", v && names_region_ok(v) ? v : "us-east-1");
}

/* A session name for CloudTrail when the profile names none (botocore: botocore-session-TIME). */
static void default_session_name(char out[64]) { snprintf(out, 64, "instbench-session-%lld", (long long)time(NULL)); }

static int from_container(aws_credentials *out, ib_error *err);

/* How profiles are walked: the top one (AWS_PROFILE), the source profiles visited for it. */
#define ROLE_CHAIN_MAX 8
typedef struct walk {
    const shared_files *f;
    const char *top;
    const char *visited[ROLE_CHAIN_MAX + 1];
    int n_visited;
} walk;

static int profile_chain(walk *w, const char *name, int role, int use_env, aws_credentials *out, ib_error *err);

/* A web identity, as botocore's AssumeRoleWithWebIdentityProvider finds one: each setting from the
 * environment (USE_ENV: AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME), else
 * from profile NAME (web_identity_token_file, role_arn, role_session_name).  The token file is read
 * at every call (EKS rotates it).  1 found, 0 not configured, -1 error. */
static int web_identity(walk *w, const char *name, int use_env, aws_credentials *out, ib_error *err)
{
    const char *where = NULL, *file = use_env ? getenv("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
    const char *from = "AWS_WEB_IDENTITY_TOKEN_FILE";
    if (!file || !file[0]) {
        file = pget(w->f, name, "web_identity_token_file", &where);
        from = "web_identity_token_file";
    }
    if (!file || !file[0]) return 0;
    const char *role = use_env ? getenv("AWS_ROLE_ARN") : NULL;
    if (!role || !role[0]) role = pget(w->f, name, "role_arn", &where);
    if (!role || !role[0])
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "a web identity (%s) without a role to assume: set AWS_ROLE_ARN or the profile's "
                            "role_arn",
                            from);
    const char *session = use_env ? getenv("AWS_ROLE_SESSION_NAME") : NULL;
    if (!session || !session[0]) session = pget(w->f, name, "role_session_name", &where);
    char own[64];
    if (!session || !session[0]) default_session_name(own), session = own;
    char *token = NULL;
    size_t n = 0;
    ib_error ferr;
    /* an OIDC token (a JWT) is 1-2 KiB; the cap keeps /dev/zero out of memory */
    if (util_read_file(file, (size_t)64 << 10, &token, &n, &ferr) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "the web identity token (%s): %s", from, ferr.msg);
    char region[32];
    sts_region(w->f, w->top, region);
    aws_sts_call call = {.web_identity_token = token,
                         .region = region,
                         .role_arn = role,
                         .session_name = session,
                         .source_name = "web-identity"};
    int rc = aws_sts_assume_role(&call, out, err) == 0 ? 1 : -1;
    aws_wipe(token, n);
    free(token);
    return rc;
}

/* Profile NAME's role_arn assumed with the credentials of its source_profile or
 * credential_source, as botocore's AssumeRoleProvider does.  1 or -1. */
static int assume_role(walk *w, const char *name, aws_credentials *out, ib_error *err)
{
    const char *where, *w2;
    const char *role = pget(w->f, name, "role_arn", &where);
    const char *source_profile = pget(w->f, name, "source_profile", &w2);
    const char *source = pget(w->f, name, "credential_source", &w2);
    const char *mfa = pget(w->f, name, "mfa_serial", &w2);
    if (source_profile && source)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s has both source_profile and credential_source",
                            name, where);
    if (!source_profile && !source)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "profile '%s' in %s has role_arn but neither source_profile nor credential_source", name,
                            where);
    aws_credentials src;
    memset(&src, 0, sizeof src);
    int r;
    if (source) {
        ib_error serr;
        if (!strcmp(source, "Environment")) r = from_env(&src, err);
        else if (!strcmp(source, "Ec2InstanceMetadata")) {
            r = aws_imds_role_credentials(&src, &serr) == 0 ? 1 : -1;
            if (r < 0) ib_error_set(err, IB_EXIT_RUNTIME, "%s", serr.msg);
        } else if (!strcmp(source, "EcsContainer")) r = from_container(&src, err);
        else
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "profile '%s' in %s: credential_source '%.60s' is none of Environment, "
                                "Ec2InstanceMetadata, EcsContainer",
                                name, where, source);
        if (r == 0) ib_error_set(err, IB_EXIT_RUNTIME, "none are there");
        if (r <= 0) {
            char said[sizeof err->msg];
            snprintf(said, sizeof said, "%s", err->msg);
            return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s: its credential_source %s: %s", name, where,
                                source, said);
        }
    } else {
        /* botocore's loop rule: a profile seen before on this walk is a loop, unless it is the
         * profile itself and has keys of its own (then its keys sign the AssumeRole) */
        int seen = 0;
        for (int i = 0; i < w->n_visited; i++) seen |= !strcmp(w->visited[i], source_profile);
        int has_keys = pget(w->f, source_profile, "aws_access_key_id", &w2) ||
                       pget(w->f, source_profile, "aws_secret_access_key", &w2);
        if ((seen && (strcmp(source_profile, name) || !has_keys)) || w->n_visited >= ROLE_CHAIN_MAX)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "profile '%s' in %s: source_profile '%.60s' leads back to a profile already on the "
                                "way (or over %d roles deep)",
                                name, where, source_profile, ROLE_CHAIN_MAX);
        if (!aws_config_has_profile(w->f->kf, source_profile) && !aws_config_has_profile(w->f->cf, source_profile))
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "profile '%s' in %s: its source_profile '%.60s' is in neither %s "
                                "nor %s",
                                name, where, source_profile, w->f->kpath, w->f->cpath);
        w->visited[w->n_visited++] = source_profile;
        /* a source profile with keys is read for them (and for nothing it would assume itself) */
        r = profile_chain(w, source_profile, !has_keys, 0, &src, err);
        if (r == 0)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "profile '%s' in %s: its source_profile '%.60s' has no credentials", name, where,
                                source_profile);
        if (r < 0) return -1;
    }
    long duration = 0;
    const char *d = pget(w->f, name, "duration_seconds", &w2);
    if (d && util_parse_int(d, 900, 43200, &duration) != 0) {
        aws_wipe(&src, sizeof src);
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "profile '%s' in %s: duration_seconds '%.40s' is no whole number "
                            "of seconds from 900 to 43200",
                            name, where, d);
    }
    /* asked for last, once everything else is known to be in order, so a refused profile asks
     * for no code (a code is good for one use) */
    char code[AWS_MFA_CODE_LEN + 1] = "";
    if (mfa && aws_mfa_code(name, where, mfa, code, err) != 0) {
        aws_wipe(&src, sizeof src);
        return -1;
    }
    const char *session = pget(w->f, name, "role_session_name", &w2);
    char own[64], region[32], src_name[32];
    if (!session || !session[0]) default_session_name(own), session = own;
    sts_region(w->f, w->top, region);
    snprintf(src_name, sizeof src_name, "role:%.26s", name);
    aws_sts_call call = {.source = &src,
                         .region = region,
                         .role_arn = role,
                         .session_name = session,
                         .external_id = pget(w->f, name, "external_id", &w2),
                         .mfa_serial = mfa,
                         .mfa_code = mfa ? code : NULL,
                         .duration_s = duration,
                         .source_name = src_name};
    r = aws_sts_assume_role(&call, out, err) == 0 ? 1 : -1;
    aws_wipe(&src, sizeof src);
    aws_wipe(code, sizeof code);
    return r;
}

/* Profile NAME's SSO settings (botocore's SSOProvider: sso_account_id and sso_role_name, with
 * sso_start_url and sso_region from its [sso-session] section or from the profile itself), its
 * role's credentials fetched.  1 or -1. */
static int sso_role(walk *w, const char *name, aws_credentials *out, ib_error *err)
{
    const char *where, *w2;
    aws_sso_profile p = {.profile = name,
                         .session_name = pget(w->f, name, "sso_session", &where),
                         .account_id = pget(w->f, name, "sso_account_id", &where),
                         .role_name = pget(w->f, name, "sso_role_name", &w2)};
    if (p.session_name) {
        char section[512];
        snprintf(section, sizeof section, "%s%s", AWS_SSO_SESSION_SECTION, p.session_name);
        if (!aws_config_has_profile(w->f->cf, section))
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "profile '%s' in %s: its sso_session '%.100s' has no "
                                "[sso-session %.100s] section in %s",
                                name, where, p.session_name, p.session_name, w->f->cpath);
        p.start_url = aws_config_get(w->f->cf, section, "sso_start_url");
        p.region = aws_config_get(w->f->cf, section, "sso_region");
    } else {
        p.start_url = pget(w->f, name, "sso_start_url", &w2);
        p.region = pget(w->f, name, "sso_region", &w2);
    }
    const char *missing = !p.account_id  ? "sso_account_id"
                          : !p.role_name ? "sso_role_name"
                          : !p.start_url ? "sso_start_url"
                          : !p.region    ? "sso_region"
                                         : NULL;
    if (missing)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s uses SSO but has no %s%s", name, where, missing,
                            p.session_name ? " (nor its sso-session)" : "");
    if (!names_region_ok(p.region))
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' in %s: sso_region '%.40s' %s", name, where, p.region,
                            names_region_problem(p.region));
    return aws_sso_role_credentials(&p, out, err) == 0 ? 1 : -1;
}

/* Profile NAME read as botocore's chain reads it: its role_arn assumed (ROLE: the top profile, or
 * a source profile without keys of its own; not beside web_identity_token_file), a web identity
 * (from the environment too, USE_ENV: the top profile only), an SSO role (sso.c), then the
 * credentials file's keys, credential_process, the config file's keys.
 * 1 found, 0 none, -1 error. */
static int profile_chain(walk *w, const char *name, int role, int use_env, aws_credentials *out, ib_error *err)
{
    const char *where, *v, *key;
    const shared_files *f = w->f;
    if (role && pget(f, name, "role_arn", &where) && !pget(f, name, "web_identity_token_file", &where))
        return assume_role(w, name, out, err);
    int r = web_identity(w, name, use_env, out, err);
    if (r) return r;
    static const char *const sso[] = {"sso_account_id", "sso_role_name", NULL};
    if ((key = first_set(f, name, sso, &where))) return sso_role(w, name, out, err);
    r = static_keys(f->kf, name, f->kpath, out, err);
    if (r == 0 && (v = pget(f, name, "credential_process", &where)))
        r = aws_credential_process(v, name, where, out, err) == 0 ? 1 : -1;
    if (r == 0) r = static_keys(f->cf, name, f->cpath, out, err);
    return r;
}

static int from_profile(aws_credentials *out, ib_error *err)
{
    int explicit_profile = 0;
    const char *name = aws_profile_name(&explicit_profile);
    shared_files f;
    f.kf = f.cf = NULL;
    if (aws_config_load(0, f.kpath, sizeof f.kpath, &f.kf, err) != 0 ||
        aws_config_load(1, f.cpath, sizeof f.cpath, &f.cf, err) != 0) {
        aws_config_free(f.kf);
        return -1;
    }
    walk w = {.f = &f, .top = name, .visited = {name}, .n_visited = 1};
    int rc = profile_chain(&w, name, 1, 1, out, err);
    const char *where, *key;
    static const char *const sso[] = {"sso_start_url", "sso_session", NULL};
    if (rc == 0 && !aws_config_has_profile(f.kf, name) && !aws_config_has_profile(f.cf, name)) {
        if (explicit_profile)
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "the profile '%s' (AWS_PROFILE) is not in %s or %s", name, f.kpath,
                              f.cpath);
    } else if (rc == 0 && (key = first_set(&f, name, sso, &where))) {
        /* SSO settings without an account and role (botocore then reads on as well): named rather
         * than "no credentials" */
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "profile '%s' in %s has %s but no sso_account_id and sso_role_name, so no role to "
                          "sign in as (nor keys, credential_process or role_arn)",
                          name, where, key);
    }
    aws_config_free(f.kf);
    aws_config_free(f.cf);
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
        aws_wipe(data, n);
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
    aws_wipe(auth, sizeof auth);
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
        aws_wipe(body, strlen(body));
        free(body);
    }
    return rc;
}

int aws_credentials_resolve(aws_credentials *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    int r = from_env(out, err);
    if (r) return r > 0 ? 0 : -1;
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
    /* a credential_process's credentials with an Expiration are refreshed by running it again, an
     * assumed role's by assuming it again (botocore's RefreshableCredentials); a process's without
     * an Expiration are final, as the AWS CLI takes them */
    int profile_source = (!strncmp(cred->source, "process:", 8) || !strncmp(cred->source, "role:", 5) ||
                          !strncmp(cred->source, "sso:", 4) || !strcmp(cred->source, "web-identity")) &&
                         cred->expiration != 0;
    if (!imds && !container && !profile_source) return 1;
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
    aws_wipe(&fresh, sizeof fresh);
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
