/* A small driver for the AWS client pieces, used by tests/aws_endpoint_test.py before (and
 * beside) `instbench prices`.  Prints one JSON object per command on stdout; errors on stderr.
 *   aws_client_probe [-v] [--timeout S] [--connect-timeout S] COMMAND ...
 *     credentials                      the chain's answer (key id masked, token presence)
 *     region                           the resolved region
 *     endpoint SERVICE_ID REGION       the endpoint URL after overrides
 *     identity                         IMDS identity and how long it took
 *     pricing SERVICE_CODE TYPE...     GetProducts for those instance types (every page)
 *     spot REGION TYPE...              DescribeSpotPriceHistory, every page
 *     many N                           N concurrent single-page GetProducts calls
 *     ec2 REGION QUERY                 one EC2 query API GET (QUERY already encoded), body out
 *     container-url                    the container credentials URL the environment names
 *     config FILE 0|1 PROFILE KEY ...  values the config (1) / credentials (0) file parser gives
 *     config -                         the same for each line of stdin, a JSON array of those
 *                                      arguments: one array of values a line
 *     sign                             sign each JSON request on stdin, one a line (differential tests):
 *         {"method","path","query","headers":[[n,v],...],"body","service","region","when",
 *          "ak","sk","token","normalize","sign_body"} -> canonical_request, string_to_sign,
 *          signature, authorization; or {"error": why} for a request that does not sign
 * The differential tests send all their cases to one process: a process each cost them more than
 * the comparisons (most of aws_config_botocore's time under the sanitizers was 500 starts).
 * Exit 0 when everything succeeded, 1 on a failure, 2 on usage. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"
#include "instbench/aws.h"
#include "instbench/imds.h"

static aws_client_options opts = {.refresh = aws_credentials_refresh};

static int usage(void)
{
    fprintf(stderr, "usage: aws_client_probe [-v] [--timeout S] [--connect-timeout S] "
                    "credentials|region|endpoint|identity|pricing|spot|many|shell-split ...\n");
    return 2;
}

static int make_client(aws_client **c, aws_credentials *cred)
{
    ib_error err;
    if (aws_credentials_resolve(cred, &err) != 0 || aws_client_create(&opts, cred, c, &err) != 0) {
        fprintf(stderr, "probe: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static char *pricing_body(const char *service_code, char **types, int n, const char *next)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "ServiceCode", service_code);
    cJSON_AddStringToObject(j, "FormatVersion", "aws_v1");
    cJSON *fs = cJSON_AddArrayToObject(j, "Filters");
    size_t cap = 16;
    for (int i = 0; i < n; i++) cap += strlen(types[i]) + 1;
    char *any = calloc(1, cap);
    for (int i = 0; i < n; i++) {
        if (i) strcat(any, ",");
        strcat(any, types[i]);
    }
    struct {
        const char *type, *field, *value;
    } f[] = {
        {"ANY_OF", !strcmp(service_code, "AmazonSageMaker") ? "instanceName" : "instanceType", any},
        {"TERM_MATCH", "operatingSystem", "Linux"},
        {"TERM_MATCH", "tenancy", "Shared"},
        {"TERM_MATCH", "preInstalledSw", "NA"},
        {"TERM_MATCH", "capacitystatus", "Used"},
    };
    int nf = !strcmp(service_code, "AmazonSageMaker") ? 1 : 5;
    for (int i = 0; i < nf; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "Type", f[i].type);
        cJSON_AddStringToObject(o, "Field", f[i].field);
        cJSON_AddStringToObject(o, "Value", f[i].value);
        cJSON_AddItemToArray(fs, o);
    }
    if (next) cJSON_AddStringToObject(j, "NextToken", next);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    free(any);
    return s;
}

static int cmd_pricing(int argc, char **argv)
{
    if (argc < 2) return usage();
    aws_client *c;
    aws_credentials cred;
    if (make_client(&c, &cred) != 0) return 1;
    char url[1024];
    aws_endpoint_url("PRICING", "us-east-1", url, sizeof url);
    strcat(url, "/");
    aws_header hs[] = {{"Content-Type", "application/x-amz-json-1.1"},
                       {"X-Amz-Target", "AWSPriceListService.GetProducts"}};
    char *next = NULL;
    int pages = 0, entries = 0, attempts = 0, rc = 0;
    cJSON *prices = cJSON_CreateArray();
    do {
        char *body = pricing_body(argv[0], argv + 1, argc - 1, next);
        aws_request r = {"POST", "pricing", "us-east-1", url, hs, 2, body, strlen(body)};
        aws_response resp;
        ib_error err;
        free(next);
        next = NULL;
        if (aws_client_send(c, &r, &resp, &err) != 0) {
            fprintf(stderr, "probe: %s\n", err.msg);
            free(body);
            aws_response_free(&resp);
            rc = 1;
            break;
        }
        attempts += resp.attempts;
        pages++;
        cJSON *j = cJSON_Parse(resp.body);
        cJSON *pl = cJSON_GetObjectItem(j, "PriceList");
        if (!j || !cJSON_IsArray(pl)) {
            fprintf(stderr, "probe: pricing: response is not a GetProducts document\n");
            rc = 1;
        }
        cJSON *e;
        cJSON_ArrayForEach(e, pl)
        {
            entries++;
            cJSON *doc = cJSON_Parse(cJSON_GetStringValue(e));
            cJSON *attrs = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "product"), "attributes");
            cJSON *item = cJSON_CreateObject();
            const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(attrs, "instanceType"));
            const char *nm = cJSON_GetStringValue(cJSON_GetObjectItem(attrs, "instanceName"));
            cJSON_AddStringToObject(item, "type", nm ? nm : t ? t : "");
            const char *reg = cJSON_GetStringValue(cJSON_GetObjectItem(attrs, "regionCode"));
            cJSON_AddStringToObject(item, "region", reg ? reg : "");
            cJSON_AddItemToArray(prices, item);
            cJSON_Delete(doc);
        }
        const char *nt = cJSON_GetStringValue(cJSON_GetObjectItem(j, "NextToken"));
        if (nt) next = strdup(nt);
        cJSON_Delete(j);
        free(body);
        aws_response_free(&resp);
    } while (next && rc == 0);
    free(next);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "pages", pages);
    cJSON_AddNumberToObject(out, "entries", entries);
    cJSON_AddNumberToObject(out, "attempts", attempts);
    cJSON_AddItemToObject(out, "products", prices);
    char *s = cJSON_PrintUnformatted(out);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(out);
    aws_client_destroy(c);
    return rc;
}

static int cmd_spot(int argc, char **argv)
{
    if (argc < 2) return usage();
    aws_client *c;
    aws_credentials cred;
    if (make_client(&c, &cred) != 0) return 1;
    char ep[1024];
    aws_endpoint_url("EC2", argv[0], ep, sizeof ep);
    char *next = NULL;
    int pages = 0, bytes = 0, rc = 0;
    do {
        char q[8192];
        int w = snprintf(q, sizeof q,
                         "%s/?Action=DescribeSpotPriceHistory&Version=2016-11-15&"
                         "ProductDescription.1=Linux%%2FUNIX&MaxResults=5",
                         ep);
        for (int i = 1; i < argc; i++) w += snprintf(q + w, sizeof q - w, "&InstanceType.%d=%s", i, argv[i]);
        if (next) w += snprintf(q + w, sizeof q - w, "&NextToken=%s", next);
        aws_request r = {"GET", "ec2", argv[0], q, NULL, 0, NULL, 0};
        aws_response resp;
        ib_error err;
        free(next);
        next = NULL;
        if (aws_client_send(c, &r, &resp, &err) != 0) {
            fprintf(stderr, "probe: %s\n", err.msg);
            aws_response_free(&resp);
            rc = 1;
            break;
        }
        pages++;
        bytes += (int)resp.body_len;
        /* the token is base64: '+', '/' and '=' must be percent-encoded in the query */
        char *b = strstr(resp.body, "<nextToken>");
        if (b) {
            b += 11;
            char *e = strstr(b, "</nextToken>");
            if (e) {
                next = calloc(3 * (size_t)(e - b) + 1, 1);
                for (char *p = b, *o = next; p < e; p++) {
                    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) *o++ = *p;
                    else o += sprintf(o, "%%%02X", (unsigned char)*p);
                }
            }
        }
        aws_response_free(&resp);
    } while (next);
    printf("{\"pages\": %d, \"bytes\": %d}\n", pages, bytes);
    aws_client_destroy(c);
    return rc;
}

static int cmd_ec2(int argc, char **argv)
{
    if (argc != 2) return usage();
    aws_client *c;
    aws_credentials cred;
    if (make_client(&c, &cred) != 0) return 1;
    char ep[1024];
    aws_endpoint_url("EC2", argv[0], ep, sizeof ep);
    size_t n = strlen(ep) + strlen(argv[1]) + 4;
    char *url = malloc(n);
    snprintf(url, n, "%s/?%s", ep, argv[1]);
    aws_request r = {"GET", "ec2", argv[0], url, NULL, 0, NULL, 0};
    aws_response resp;
    ib_error err;
    int rc = aws_client_send(c, &r, &resp, &err);
    if (rc != 0) fprintf(stderr, "probe: %s\n", err.msg);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "status", (double)resp.status);
    cJSON_AddNumberToObject(o, "attempts", resp.attempts);
    cJSON_AddStringToObject(o, "error_code", resp.error_code);
    cJSON_AddStringToObject(o, "body", resp.body ? resp.body : "");
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
    aws_response_free(&resp);
    free(url);
    aws_client_destroy(c);
    return rc ? 1 : 0;
}

/* One line of values for `config FILE 0|1 PROFILE KEY ...` (ARGV without the command); -1 when
 * the file cannot be read. */
static int config_values(int argc, char **argv)
{
    char *data = NULL;
    size_t len = 0;
    ib_error err;
    if (util_read_file(argv[0], (size_t)16 << 20, &data, &len, &err) != 0) {
        fprintf(stderr, "probe: %s\n", err.msg);
        return -1;
    }
    aws_config_file *f = aws_config_parse(data, len, !strcmp(argv[1], "1"));
    cJSON *o = cJSON_CreateArray();
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *v = aws_config_get(f, argv[i], argv[i + 1]);
        cJSON_AddItemToArray(o, v ? cJSON_CreateString(v) : cJSON_CreateNull());
    }
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
    aws_config_free(f);
    free(data);
    return 0;
}

/* The next line of stdin that is not blank, parsed as JSON into *J (NULL when it is not JSON;
 * *LINE keeps its text); 0 at the end of the input.  The line-a-case commands read theirs so. */
static int next_json_line(char **line, size_t *cap, cJSON **j)
{
    while (getline(line, cap, stdin) > 0) {
        if (!(*line)[strspn(*line, " \t\r\n")]) continue;
        *j = cJSON_Parse(*line);
        return 1;
    }
    return 0;
}

/* Each line of stdin a JSON array of strings, the arguments of one `config`. */
static int config_lines(void)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    cJSON *a;
    while (next_json_line(&line, &cap, &a)) {
        const int n = cJSON_GetArraySize(a);
        char **argv = calloc((size_t)n + 1, sizeof *argv);
        int ok = cJSON_IsArray(a) && n >= 2 && n % 2 == 0 && argv;
        for (int i = 0; ok && i < n; i++) ok = (argv[i] = cJSON_GetStringValue(cJSON_GetArrayItem(a, i))) != NULL;
        if (!ok) {
            fprintf(stderr, "probe: config -: not an array of FILE 0|1 PROFILE KEY ...: %s", line);
            rc = 2;
        } else if (config_values(n, argv) != 0) {
            rc = 1;
        }
        free(argv);
        cJSON_Delete(a);
        if (rc) break;
    }
    free(line);
    return rc;
}

/* stdin: strings separated by NUL bytes; stdout: per string one line, {"argv": [...]} as
 * aws_shell_split splits it (credential_process) or {"error": "..."}. */
static int cmd_shell_split(void)
{
    size_t cap = 1 << 16, n = 0;
    char *all = malloc(cap + 1);
    for (size_t r; all && (r = fread(all + n, 1, cap - n, stdin)) > 0;) {
        n += r;
        if (n == cap) all = realloc(all, (cap *= 2) + 1);
    }
    if (!all) return 1;
    all[n] = '\0';
    for (size_t at = 0; at < n; at += strlen(all + at) + 1) {
        char **words = NULL;
        size_t count = 0;
        ib_error err;
        cJSON *j = cJSON_CreateObject();
        if (aws_shell_split(all + at, &words, &count, &err) == 0) {
            cJSON *a = cJSON_AddArrayToObject(j, "argv");
            for (size_t k = 0; k < count; k++) cJSON_AddItemToArray(a, cJSON_CreateString(words[k]));
            free(words);
        } else {
            cJSON_AddStringToObject(j, "error", err.msg);
        }
        char *line = cJSON_PrintUnformatted(j);
        puts(line);
        free(line);
        cJSON_Delete(j);
    }
    free(all);
    return 0;
}

static int cmd_config(int argc, char **argv)
{
    if (argc == 1 && !strcmp(argv[0], "-")) return config_lines();
    if (argc < 2 || (argc - 2) % 2) return usage();
    return config_values(argc, argv) ? 1 : 0;
}

static int cmd_many(int argc, char **argv)
{
    long n;
    if (argc < 1 || util_parse_int(argv[0], 1, 1000, &n) != 0) return usage();
    aws_client *c;
    aws_credentials cred;
    if (make_client(&c, &cred) != 0) return 1;
    char url[1024];
    aws_endpoint_url("PRICING", "us-east-1", url, sizeof url);
    strcat(url, "/");
    aws_header hs[] = {{"Content-Type", "application/x-amz-json-1.1"},
                       {"X-Amz-Target", "AWSPriceListService.GetProducts"}};
    const char *body = "{\"ServiceCode\":\"AmazonEC2\",\"FormatVersion\":\"aws_v1\",\"MaxResults\":1}";
    aws_request *rs = calloc((size_t)n, sizeof *rs);
    aws_response *resps = calloc((size_t)n, sizeof *resps);
    ib_error *errs = calloc((size_t)n, sizeof *errs);
    for (long i = 0; i < n; i++) rs[i] = (aws_request){"POST", "pricing", "us-east-1", url, hs, 2, body, strlen(body)};
    double t0 = util_now_seconds();
    int failed = aws_client_send_many(c, rs, (size_t)n, resps, errs);
    double dt = util_now_seconds() - t0;
    int attempts = 0;
    for (long i = 0; i < n; i++) {
        attempts += resps[i].attempts;
        if (errs[i].msg[0]) fprintf(stderr, "probe: request %ld: %s\n", i, errs[i].msg);
        aws_response_free(&resps[i]);
    }
    printf("{\"requests\": %ld, \"failed\": %d, \"attempts\": %d, \"seconds\": %.4f}\n", n, failed, attempts, dt);
    free(rs);
    free(resps);
    free(errs);
    aws_client_destroy(c);
    return failed ? 1 : 0;
}

static const char *jstr(cJSON *j, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(j, k));
    return v ? v : "";
}

/* Signs request J, printing the result (or {"error": why}) as one line; 0 signed. */
static int sign_one(cJSON *j)
{
    ib_error err;
    cJSON *hs = cJSON_GetObjectItem(j, "headers");
    int nh = cJSON_GetArraySize(hs);
    aws_header *h = calloc((size_t)nh + 1, sizeof *h);
    for (int i = 0; i < nh; i++) {
        cJSON *p = cJSON_GetArrayItem(hs, i);
        h[i].name = cJSON_GetStringValue(cJSON_GetArrayItem(p, 0));
        h[i].value = cJSON_GetStringValue(cJSON_GetArrayItem(p, 1));
    }
    aws_credentials cred = {0};
    snprintf(cred.access_key_id, sizeof cred.access_key_id, "%s", jstr(j, "ak"));
    snprintf(cred.secret_access_key, sizeof cred.secret_access_key, "%s", jstr(j, "sk"));
    snprintf(cred.session_token, sizeof cred.session_token, "%s", jstr(j, "token"));
    const char *body = jstr(j, "body");
    cJSON *q = cJSON_GetObjectItem(j, "query");
    aws_sign_input si = {
        .method = jstr(j, "method"),
        .path = jstr(j, "path"),
        .query = cJSON_IsString(q) ? q->valuestring : NULL,
        .headers = h,
        .n_headers = (size_t)nh,
        .body = body,
        .body_len = strlen(body),
        .service = jstr(j, "service"),
        .region = jstr(j, "region"),
        .when = (time_t)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "when")),
        .normalize_path = cJSON_IsTrue(cJSON_GetObjectItem(j, "normalize")),
        .sign_body = cJSON_IsTrue(cJSON_GetObjectItem(j, "sign_body")),
    };
    aws_sign_output so;
    int rc = aws_sigv4_sign(&si, &cred, &so, &err);
    cJSON *o = cJSON_CreateObject();
    if (rc == 0) {
        cJSON_AddStringToObject(o, "canonical_request", so.canonical_request);
        cJSON_AddStringToObject(o, "string_to_sign", so.string_to_sign);
        cJSON_AddStringToObject(o, "signature", so.signature);
        cJSON_AddStringToObject(o, "authorization", so.authorization);
        aws_sign_output_free(&so);
    } else {
        cJSON_AddStringToObject(o, "error", err.msg);
    }
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
    free(h);
    return rc;
}

static int cmd_sign(void)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    cJSON *j;
    while (next_json_line(&line, &cap, &j)) {
        if (!cJSON_IsObject(j)) {
            fprintf(stderr, "probe: sign: not a JSON object: %s", line);
            cJSON_Delete(j);
            rc = 2;
            break;
        }
        if (sign_one(j) != 0) rc = 1;
        cJSON_Delete(j);
    }
    free(line);
    return rc;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v")) {
            ib_log_level = 2;
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            if (util_parse_double(argv[++i], 0.01, 600, &opts.total_timeout_s) != 0) return usage();
        } else if (!strcmp(argv[i], "--connect-timeout") && i + 1 < argc) {
            if (util_parse_double(argv[++i], 0.01, 600, &opts.connect_timeout_s) != 0) return usage();
        } else if (!strcmp(argv[i], "--concurrency") && i + 1 < argc) {
            long v;
            if (util_parse_int(argv[++i], 1, 256, &v) != 0) return usage();
            opts.max_concurrency = (int)v;
        } else {
            return usage();
        }
    }
    if (i >= argc) return usage();
    const char *cmd = argv[i];
    int rest = argc - i - 1;
    char **rv = argv + i + 1;
    ib_error err;
    if (!strcmp(cmd, "credentials")) {
        aws_credentials cr;
        if (aws_credentials_resolve(&cr, &err) != 0) {
            fprintf(stderr, "probe: %s\n", err.msg);
            return 1;
        }
        char masked[32];
        aws_mask_key_id(cr.access_key_id, masked);
        printf("{\"source\": \"%s\", \"key\": \"%s\", \"token\": %s, \"expiration\": %lld}\n", cr.source, masked,
               cr.session_token[0] ? "true" : "false", (long long)cr.expiration);
        return 0;
    }
    if (!strcmp(cmd, "shell-split")) return cmd_shell_split();
    if (!strcmp(cmd, "region")) {
        char r[32];
        if (aws_region_resolve(r, &err) != 0) {
            fprintf(stderr, "probe: %s\n", err.msg);
            return err.code == IB_EXIT_USAGE ? 2 : 1;
        }
        printf("{\"region\": \"%s\"}\n", r);
        return 0;
    }
    if (!strcmp(cmd, "endpoint")) {
        char u[1024];
        if (rest != 2) return usage();
        if (aws_endpoint_url(rv[0], rv[1], u, sizeof u) != 0) return 1;
        printf("{\"url\": \"%s\"}\n", u);
        return 0;
    }
    if (!strcmp(cmd, "identity")) {
        aws_instance_identity id;
        double t0 = util_now_seconds();
        int rc = aws_imds_identity(&id, &err);
        double dt = util_now_seconds() - t0;
        if (rc != 0) {
            fprintf(stderr, "probe: %s\n", err.msg);
            printf("{\"ok\": false, \"rc\": %d, \"seconds\": %.3f}\n", rc, dt);
            return 1;
        }
        printf("{\"ok\": true, \"seconds\": %.3f, \"instance_id\": \"%s\", \"instance_type\": \"%s\", "
               "\"region\": \"%s\", \"availability_zone\": \"%s\", \"lifecycle\": \"%s\"}\n",
               dt, id.instance_id, id.instance_type, id.region, id.availability_zone, id.lifecycle);
        return 0;
    }
    if (!strcmp(cmd, "pricing")) return cmd_pricing(rest, rv);
    if (!strcmp(cmd, "spot")) return cmd_spot(rest, rv);
    if (!strcmp(cmd, "many")) return cmd_many(rest, rv);
    if (!strcmp(cmd, "sign")) return cmd_sign();
    if (!strcmp(cmd, "ec2")) return cmd_ec2(rest, rv);
    if (!strcmp(cmd, "config")) return cmd_config(rest, rv);
    if (!strcmp(cmd, "container-url")) {
        char u[2048];
        const char *var;
        int r = aws_container_credentials_url(u, sizeof u, &var, &err);
        if (r < 0) fprintf(stderr, "probe: %s\n", err.msg);
        printf("{\"url\": \"%s\"}\n", r == 0 ? u : "");
        return r < 0 ? 1 : 0;
    }
    return usage();
}
