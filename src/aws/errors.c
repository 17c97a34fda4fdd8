/* aws/errors: the AWS error code and message inside a failed response, and how to treat it. */
#include <cjson/cJSON.h>
#include <expat.h>
#include <string.h>

#include "aws/internal.h"

/* Longest error message passed on: AWS's own fit easily; anything longer is a server (or a proxy)
 * echoing a document at us. */
#define MESSAGE_MAX 200

/* A server's text ends up on a terminal and in logs: its first line only, trimmed, no control
 * characters (escape sequences), cut at MESSAGE_MAX with "...". */
static void copy_trim(char *dst, size_t cap, const char *src, size_t n)
{
    while (n && (*src == ' ' || *src == '\n' || *src == '\r' || *src == '\t')) src++, n--;
    for (size_t i = 0; i < n; i++)
        if (src[i] == '\n' || src[i] == '\r') n = i;
    while (n && (src[n - 1] == ' ' || src[n - 1] == '\t')) n--;
    size_t lim = cap - 1 < MESSAGE_MAX ? cap - 1 : MESSAGE_MAX;
    int cut = n > lim;
    if (cut) n = lim > 3 ? lim - 3 : lim;
    for (size_t i = 0; i < n; i++) dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? ' ' : src[i];
    if (cut && lim > 3) memcpy(dst + n, "...", 3), n += 3;
    dst[n] = '\0';
}

/* An error code is a name: letters, digits and . _ - only (anything else becomes '?'). */
static void clean_code(char *code)
{
    for (char *p = code; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            *p = '?';
    if (strlen(code) > 64) strcpy(code + 61, "...");
}

/* "com.amazon.coral.service#ThrottlingException" and "ThrottlingException:http://..." -> code. */
static void set_code(char *code, size_t cap, const char *raw)
{
    const char *hash = strrchr(raw, '#');
    if (hash) raw = hash + 1;
    size_t n = strcspn(raw, ":");
    copy_trim(code, cap, raw, n);
}

typedef struct xml_state {
    int in_code, in_msg, have_code, have_msg;
    char *code, *msg;
    size_t code_cap, msg_cap, code_len, msg_len;
} xml_state;

static void XMLCALL x_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    xml_state *s = ud;
    (void)atts;
    const char *local = strrchr(name, ':'); /* namespaced names arrive as "uri:Code" only with NS parsing */
    local = local ? local + 1 : name;
    if (!strcmp(local, "Code") && !s->have_code) s->in_code = 1, s->code_len = 0;
    if (!strcmp(local, "Message") && !s->have_msg) s->in_msg = 1, s->msg_len = 0;
}

static void XMLCALL x_end(void *ud, const XML_Char *name)
{
    xml_state *s = ud;
    if (s->in_code) s->have_code = 1, s->in_code = 0;
    if (s->in_msg) s->have_msg = 1, s->in_msg = 0;
}

/* Appends up to len bytes, as much as fits with its NUL in cap (a longer text is cut). */
static void append_capped(char *buf, size_t *used, size_t cap, const XML_Char *txt, int len)
{
    size_t n = (size_t)len;
    if (*used + n >= cap) n = cap - 1 - *used;
    memcpy(buf + *used, txt, n);
    *used += n;
    buf[*used] = '\0';
}

static void XMLCALL x_text(void *ud, const XML_Char *txt, int len)
{
    xml_state *s = ud;
    if (s->in_code) append_capped(s->code, &s->code_len, s->code_cap, txt, len);
    if (s->in_msg) append_capped(s->msg, &s->msg_len, s->msg_cap, txt, len);
}

void aws_error_parse(const char *body, size_t len, const char *x_amzn_error_type, char *code, size_t code_len,
                     char *msg, size_t msg_len)
{
    code[0] = msg[0] = '\0';
    if (x_amzn_error_type && x_amzn_error_type[0]) set_code(code, code_len, x_amzn_error_type);
    if (!body || !len) {
        clean_code(code);
        return;
    }
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t')) i++;
    if (i < len && body[i] == '{') {
        cJSON *j = cJSON_ParseWithLength(body, len);
        if (!j) {
            clean_code(code);
            return;
        }
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "__type"));
        if (!t) t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "code"));
        if (!t) t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "Code"));
        if (t && !code[0]) set_code(code, code_len, t);
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
        if (!m) m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Message"));
        if (m) copy_trim(msg, msg_len, m, strlen(m));
        cJSON_Delete(j);
    } else if (i < len && body[i] == '<') {
        char xcode[128] = "", xmsg[1024] = "";
        xml_state s = {0};
        s.code = xcode;
        s.msg = xmsg;
        s.code_cap = sizeof xcode;
        s.msg_cap = sizeof xmsg;
        XML_Parser p = XML_ParserCreate(NULL);
        if (!p) {
            clean_code(code);
            return;
        }
        XML_SetUserData(p, &s);
        XML_SetElementHandler(p, x_start, x_end);
        XML_SetCharacterDataHandler(p, x_text);
        /* A truncated document still yields what was parsed before the break. */
        XML_Parse(p, body, (int)(len > 0x7fffffff ? 0x7fffffff : len), 1);
        XML_ParserFree(p);
        if (s.have_code && !code[0]) copy_trim(code, code_len, xcode, strlen(xcode));
        if (s.have_msg) copy_trim(msg, msg_len, xmsg, strlen(xmsg));
    }
    clean_code(code);
}

static int in_list(const char *code, const char *const *list)
{
    if (!code || !code[0]) return 0;
    for (; *list; list++)
        if (!strcmp(code, *list)) return 1;
    return 0;
}

int aws_error_is_throttling(const char *code)
{
    static const char *const l[] = {"Throttling",
                                    "ThrottlingException",
                                    "ThrottledException",
                                    "RequestThrottledException",
                                    "TooManyRequestsException",
                                    "ProvisionedThroughputExceededException",
                                    "TransactionInProgressException",
                                    "RequestLimitExceeded",
                                    "BandwidthLimitExceeded",
                                    "LimitExceededException",
                                    "RequestThrottled",
                                    "SlowDown",
                                    "PriorRequestNotComplete",
                                    "EC2ThrottledException",
                                    NULL};
    return in_list(code, l);
}

int aws_error_is_transient(const char *code)
{
    static const char *const l[] = {"RequestTimeout",
                                    "RequestTimeoutException",
                                    "InternalError",
                                    "InternalFailure",
                                    "ServiceUnavailable",
                                    "InternalServerError",
                                    NULL};
    return in_list(code, l);
}

int aws_error_is_expired_token(const char *code)
{
    static const char *const l[] = {"ExpiredToken", "ExpiredTokenException", "RequestExpired", NULL};
    return in_list(code, l);
}
