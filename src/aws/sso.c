/* aws/sso: a profile's IAM Identity Center (SSO) role, read as botocore's SSOProvider reads it:
 * the access token `aws sso login` left in ~/.aws/sso/cache/SHA1.json (SHA1 of the sso-session's
 * name, or of the legacy profile's sso_start_url), then the portal's GetRoleCredentials (GET
 * https://portal.sso.REGION.amazonaws.com/federation/credentials, the token in a header, unsigned;
 * AWS_ENDPOINT_URL_SSO moves it).  An expired token is the user's to renew (`aws sso login`):
 * instbench does not refresh it through SSO-OIDC as the AWS CLI can. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"

#define SSO_TOKEN_MAX ((size_t)64 << 10)
#define SSO_ANSWER_MAX ((size_t)64 << 10)

/* The cache file of KEY: ~/.aws/sso/cache/ + hex SHA-1 of KEY + .json. */
static int cache_path(const char *key, char *out, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest(key, strlen(key), md, &n, EVP_sha1(), NULL)) return -1;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    const char *home = getenv("HOME");
    int w = snprintf(out, len, "%s/.aws/sso/cache/%s.json", home ? home : "", hex);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* expiresAt as the AWS CLI writes it: ISO 8601 with Z, or the older "...UTC". */
static int parse_expires(const char *s, time_t *t)
{
    char buf[64];
    size_t n = strlen(s);
    if (n >= sizeof buf) return -1;
    memcpy(buf, s, n + 1);
    if (n > 3 && !strcmp(buf + n - 3, "UTC")) strcpy(buf + n - 3, "Z");
    return util_parse_iso8601(buf, t);
}

int aws_sso_role_credentials(const aws_sso_profile *p, aws_credentials *out, ib_error *err)
{
    char path[4200];
    const char *key = p->session_name ? p->session_name : p->start_url;
    if (cache_path(key, path, sizeof path) != 0) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    char login[160];
    snprintf(login, sizeof login, "run `aws sso login --profile %.100s`", p->profile);
    char *text = NULL;
    size_t n = 0;
    ib_error ferr;
    if (util_read_file(path, SSO_TOKEN_MAX, &text, &n, &ferr) != 0)
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' uses SSO, and its token is not in the cache (%s): %s",
                            p->profile, ferr.msg, login);
    cJSON *j = cJSON_ParseWithLength(text, n);
    aws_wipe(text, n);
    free(text);
    const char *token = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "accessToken"));
    const char *expires = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "expiresAt"));
    time_t until = 0;
    int rc = 0;
    if (!token || !token[0] || !expires || parse_expires(expires, &until) != 0)
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "profile '%s' uses SSO, and its cached token (%s) has no accessToken or expiresAt: %s",
                          p->profile, path, login);
    else if (until <= time(NULL))
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s' uses SSO, and its token expired at %s: %s", p->profile,
                          expires, login);
    else if (aws_has_control(token, strlen(token)))
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': the cached SSO token holds a control character",
                          p->profile);
    char url[2048] = "", hdr[8192];
    if (rc == 0) {
        char base[1024];
        char *acct = curl_easy_escape(NULL, p->account_id, 0), *role = curl_easy_escape(NULL, p->role_name, 0);
        int w1 = aws_endpoint_url("SSO", p->region, base, sizeof base);
        int w2 = acct && role ? snprintf(url, sizeof url, "%s/federation/credentials?account_id=%s&role_name=%s", base,
                                         acct, role)
                              : -1;
        int w3 = snprintf(hdr, sizeof hdr, "%s", token);
        curl_free(acct);
        curl_free(role);
        if (w1 != 0 || w2 < 0 || (size_t)w2 >= sizeof url || w3 < 0 || (size_t)w3 >= sizeof hdr)
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': the SSO request does not fit", p->profile);
    }
    cJSON_Delete(j);
    if (rc != 0) return -1;
    aws_header h = {"x-amz-sso_bearer_token", hdr};
    aws_request req = {.method = "GET",
                       .service = "awsssoportal",
                       .region = p->region,
                       .url = url,
                       .headers = &h,
                       .n_headers = 1,
                       .presigned = 1, /* unsigned: the bearer token authorises it */
                       .max_body = SSO_ANSWER_MAX};
    aws_response resp;
    ib_error cerr;
    rc = aws_send_once(NULL, &req, &resp, &cerr);
    aws_wipe(hdr, sizeof hdr);
    if (rc != 0) {
        int refused = resp.status == 401 || resp.status == 403;
        aws_response_free(&resp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "profile '%s': SSO GetRoleCredentials (account %s, role %s): %s%s%s",
                            p->profile, p->account_id, p->role_name, cerr.msg, refused ? "; " : "",
                            refused ? login : "");
    }
    j = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
    aws_wipe(resp.body, resp.body_len);
    aws_response_free(&resp);
    cJSON *rcj = cJSON_GetObjectItemCaseSensitive(j, "roleCredentials");
    const char *ak = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rcj, "accessKeyId"));
    const char *sk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rcj, "secretAccessKey"));
    const char *tok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rcj, "sessionToken"));
    cJSON *ex = cJSON_GetObjectItemCaseSensitive(rcj, "expiration"); /* milliseconds since 1970 */
    char src[32];
    snprintf(src, sizeof src, "sso:%.27s", p->profile);
    if (!ak || !sk || !tok || !ak[0] || !sk[0] || !cJSON_IsNumber(ex) || ex->valuedouble <= 0)
        rc = ib_error_set(err, IB_EXIT_RUNTIME,
                          "profile '%s': SSO GetRoleCredentials answered without roleCredentials (accessKeyId, "
                          "secretAccessKey, sessionToken, expiration)",
                          p->profile);
    else if ((rc = aws_credentials_set(out, ak, sk, tok, src, err)) == 0)
        out->expiration = (time_t)(ex->valuedouble / 1000);
    cJSON_Delete(j);
    return rc;
}
