/* aws/sts: the two STS calls the credential chain makes for the AWS CLI's role settings
 * (credentials.c): AssumeRole, signed with the source credentials (a profile's role_arn), and
 * AssumeRoleWithWebIdentity, unsigned, its token the authorisation (EKS's
 * AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, or a profile's web_identity_token_file).  The
 * query protocol: a POST form to sts.REGION.amazonaws.com (AWS_ENDPOINT_URL_STS moves it), the
 * answer's <Credentials> read from its XML. */
#include <curl/curl.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"

#define STS_API_VERSION "2011-06-15"
#define STS_ANSWER_MAX ((size_t)64 << 10) /* an answer is ~2 KiB: its token and the role's ids */

/* The answer's Credentials: the four fields inside <Credentials>, each at most its buffer. */
typedef struct sts_answer {
    int depth_in_credentials; /* >0 inside <Credentials> */
    char *field;              /* the buffer of the element being read, NULL outside one */
    size_t field_len, field_cap;
    char ak[128], sk[128], token[4096], expiration[64];
    int too_long;
} sts_answer;

static void XMLCALL x_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    (void)atts;
    sts_answer *a = ud;
    if (!strcmp(name, "Credentials")) {
        a->depth_in_credentials = 1;
        return;
    }
    if (!a->depth_in_credentials) return;
    a->depth_in_credentials++;
    a->field = !strcmp(name, "AccessKeyId")       ? a->ak
               : !strcmp(name, "SecretAccessKey") ? a->sk
               : !strcmp(name, "SessionToken")    ? a->token
               : !strcmp(name, "Expiration")      ? a->expiration
                                                  : NULL;
    a->field_cap = a->field == a->ak      ? sizeof a->ak
                   : a->field == a->sk    ? sizeof a->sk
                   : a->field == a->token ? sizeof a->token
                                          : sizeof a->expiration;
    a->field_len = 0;
    if (a->field) a->field[0] = '\0';
}

static void XMLCALL x_end(void *ud, const XML_Char *name)
{
    sts_answer *a = ud;
    a->field = NULL;
    if (a->depth_in_credentials) a->depth_in_credentials--;
    (void)name;
}

static void XMLCALL x_text(void *ud, const XML_Char *txt, int len)
{
    sts_answer *a = ud;
    if (!a->field) return;
    if (a->field_len + (size_t)len >= a->field_cap) {
        a->too_long = 1;
        return;
    }
    memcpy(a->field + a->field_len, txt, (size_t)len);
    a->field_len += (size_t)len;
    a->field[a->field_len] = '\0';
}

/* "&NAME=VALUE" appended to BUF (CAP bytes) with VALUE percent-encoded as AWS's query forms are
 * (everything but A-Z a-z 0-9 - . _ ~); -1 when it does not fit. */
static int form_add(char *buf, size_t cap, const char *name, const char *value)
{
    char *enc = curl_easy_escape(NULL, value, 0);
    if (!enc) return -1;
    size_t used = strlen(buf);
    int w = snprintf(buf + used, cap - used, "%s%s=%s", used ? "&" : "", name, enc);
    aws_wipe(enc, strlen(enc)); /* a web identity token is a bearer credential */
    curl_free(enc);
    return w < 0 || (size_t)w >= cap - used ? -1 : 0;
}

int aws_sts_assume_role(const aws_sts_call *call, aws_credentials *out, ib_error *err)
{
    const int web = call->web_identity_token != NULL;
    const char *action = web ? "AssumeRoleWithWebIdentity" : "AssumeRole";
    /* a web identity token (a JWT) is at most a few KiB, and so is everything else here */
    size_t cap = 4096 + (web ? 3 * strlen(call->web_identity_token) : 0);
    char *form = calloc(1, cap);
    if (!form) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    char duration[24];
    snprintf(duration, sizeof duration, "%ld", call->duration_s);
    int bad = form_add(form, cap, "Action", action) || form_add(form, cap, "Version", STS_API_VERSION) ||
              (call->duration_s > 0 && form_add(form, cap, "DurationSeconds", duration)) ||
              (call->external_id && form_add(form, cap, "ExternalId", call->external_id)) ||
              form_add(form, cap, "RoleArn", call->role_arn) ||
              form_add(form, cap, "RoleSessionName", call->session_name) ||
              (call->mfa_serial && form_add(form, cap, "SerialNumber", call->mfa_serial)) ||
              (call->mfa_code && form_add(form, cap, "TokenCode", call->mfa_code)) ||
              (web && form_add(form, cap, "WebIdentityToken", call->web_identity_token));
    char url[1024];
    if (bad || aws_endpoint_url("STS", call->region, url, sizeof url) != 0) {
        aws_wipe(form, cap);
        free(form);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", action,
                            bad ? "the request does not fit (a role ARN or session name far too long?)"
                                : "the STS endpoint URL does not fit");
    }
    aws_header ct = {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"};
    aws_request req = {.method = "POST",
                       .service = "sts",
                       .region = call->region,
                       .url = url,
                       .headers = &ct,
                       .n_headers = 1,
                       .body = form,
                       .body_len = strlen(form),
                       .presigned = web, /* sent unsigned: the token authorises it */
                       .max_body = STS_ANSWER_MAX};
    aws_response resp;
    ib_error cerr;
    int rc = aws_send_once(web ? NULL : call->source, &req, &resp, &cerr);
    aws_wipe(form, cap);
    free(form);
    if (rc != 0) {
        aws_response_free(&resp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s for %s: %s", action, call->role_arn, cerr.msg);
    }
    sts_answer a;
    memset(&a, 0, sizeof a);
    XML_Parser p = XML_ParserCreate(NULL);
    int parsed = 0;
    if (p) {
        XML_SetUserData(p, &a);
        XML_SetElementHandler(p, x_start, x_end);
        XML_SetCharacterDataHandler(p, x_text);
        parsed = XML_Parse(p, resp.body ? resp.body : "", (int)resp.body_len, 1) == XML_STATUS_OK;
        XML_ParserFree(p);
    }
    aws_wipe(resp.body, resp.body_len);
    aws_response_free(&resp);
    time_t exp = 0;
    if (!parsed || a.too_long || !a.ak[0] || !a.sk[0] || !a.token[0] || util_parse_iso8601(a.expiration, &exp) != 0) {
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s for %s: STS answered without credentials (%s)", action,
                          call->role_arn,
                          !parsed       ? "no XML"
                          : a.too_long  ? "a field over its size"
                          : !a.token[0] ? "no session token"
                                        : "no AccessKeyId, SecretAccessKey or Expiration");
    } else {
        rc = aws_credentials_set(out, a.ak, a.sk, a.token, call->source_name, err);
        if (rc == 0) out->expiration = exp;
    }
    aws_wipe(&a, sizeof a);
    return rc;
}
