/* The AWS SigV4 test suite (aws-c-auth's v4 folders, vendored in tests/data/aws-sigv4-suite):
 * every case's request.txt is parsed here, signed with aws_sigv4_sign, and the canonical request,
 * string to sign and signature must equal the header-*.txt files byte for byte.
 * usage: aws_sigv4_suite SUITE_DIR   (fails when the folder is missing or has < 38 cases) */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/aws.h"

#define MAX_HEADERS 64

static char *read_case_file(const char *dir, const char *name, size_t *len)
{
    char path[4096 + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *data = NULL;
    ib_error err;
    if (util_read_file(path, 1 << 20, &data, len, &err) != 0) return NULL;
    return data;
}

/* request.txt: "METHOD TARGET HTTP/1.1" (TARGET may hold spaces), header lines "Name:value"
 * (a line starting with whitespace continues the previous value), a blank line, the body. */
typedef struct parsed_request {
    char method[16];
    char *path, *query;
    aws_header headers[MAX_HEADERS];
    size_t n_headers;
    const char *body;
    size_t body_len;
} parsed_request;

static int parse_request(char *txt, size_t len, parsed_request *r)
{
    memset(r, 0, sizeof *r);
    char *end = txt + len;
    char *eol = strchr(txt, '\n');
    if (!eol) return -1;
    *eol = '\0';
    char *sp1 = strchr(txt, ' '), *sp2 = strrchr(txt, ' ');
    if (!sp1 || sp2 == sp1) return -1;
    *sp1 = '\0';
    *sp2 = '\0';
    snprintf(r->method, sizeof r->method, "%s", txt);
    r->path = sp1 + 1;
    char *q = strchr(r->path, '?');
    if (q) {
        *q = '\0';
        r->query = q + 1;
    }
    char *line = eol + 1;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        char *stop = nl ? nl : end;
        if (stop == line) { /* blank line: body follows */
            r->body = nl ? nl + 1 : end;
            r->body_len = (size_t)(end - r->body);
            break;
        }
        *stop = '\0';
        if ((line[0] == ' ' || line[0] == '\t') && r->n_headers) {
            /* folded continuation: keep the line break, the signer's trimall folds it */
            aws_header *h = &r->headers[r->n_headers - 1];
            size_t n = strlen(h->value) + 1 + strlen(line) + 1;
            char *v = malloc(n);
            snprintf(v, n, "%s\n%s", h->value, line);
            free(h->value);
            h->value = v;
        } else {
            char *colon = strchr(line, ':');
            if (!colon || r->n_headers == MAX_HEADERS) return -1;
            *colon = '\0';
            r->headers[r->n_headers].name = line;
            r->headers[r->n_headers].value = strdup(colon + 1);
            r->n_headers++;
        }
        if (!nl) break;
        line = nl + 1;
    }
    return 0;
}

static int compare(const char *case_name, const char *what, const char *got, const char *want)
{
    if (got && want && strcmp(got, want) == 0) return 0;
    fprintf(stderr, "FAIL %s: %s differs\n--- expected\n%s\n--- got\n%s\n---\n", case_name, what,
            want ? want : "(missing file)", got ? got : "(null)");
    return 1;
}

static int run_case(const char *suite, const char *name)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", suite, name);
    size_t rlen = 0, clen = 0;
    char *req = read_case_file(dir, "request.txt", &rlen);
    char *ctx = read_case_file(dir, "context.json", &clen);
    char *want_cr = read_case_file(dir, "header-canonical-request.txt", NULL);
    char *want_sts = read_case_file(dir, "header-string-to-sign.txt", NULL);
    char *want_sig = read_case_file(dir, "header-signature.txt", NULL);
    int fails = 0;
    parsed_request r;
    cJSON *j = ctx ? cJSON_Parse(ctx) : NULL;
    if (!req || !j || parse_request(req, rlen, &r) != 0) {
        fprintf(stderr, "FAIL %s: cannot read or parse the case files\n", name);
        fails = 1;
        goto out;
    }
    cJSON *c = cJSON_GetObjectItem(j, "credentials");
    aws_credentials cred = {0};
    snprintf(cred.access_key_id, sizeof cred.access_key_id, "%s",
             cJSON_GetStringValue(cJSON_GetObjectItem(c, "access_key_id")));
    snprintf(cred.secret_access_key, sizeof cred.secret_access_key, "%s",
             cJSON_GetStringValue(cJSON_GetObjectItem(c, "secret_access_key")));
    const char *tok = cJSON_GetStringValue(cJSON_GetObjectItem(c, "token"));
    snprintf(cred.session_token, sizeof cred.session_token, "%s", tok ? tok : "");
    time_t when = 0;
    if (util_parse_iso8601(cJSON_GetStringValue(cJSON_GetObjectItem(j, "timestamp")), &when) != 0) {
        fprintf(stderr, "FAIL %s: bad timestamp\n", name);
        fails = 1;
        goto out;
    }
    aws_sign_input in = {
        .method = r.method,
        .path = r.path,
        .query = r.query,
        .headers = r.headers,
        .n_headers = r.n_headers,
        .body = r.body,
        .body_len = r.body_len,
        .service = cJSON_GetStringValue(cJSON_GetObjectItem(j, "service")),
        .region = cJSON_GetStringValue(cJSON_GetObjectItem(j, "region")),
        .when = when,
        .normalize_path = cJSON_IsTrue(cJSON_GetObjectItem(j, "normalize")),
        .sign_body = cJSON_IsTrue(cJSON_GetObjectItem(j, "sign_body")),
        .omit_session_token = cJSON_IsTrue(cJSON_GetObjectItem(j, "omit_session_token")),
    };
    aws_sign_output out;
    ib_error err;
    if (aws_sigv4_sign(&in, &cred, &out, &err) != 0) {
        fprintf(stderr, "FAIL %s: %s\n", name, err.msg);
        fails = 1;
    } else {
        fails += compare(name, "canonical request", out.canonical_request, want_cr);
        fails += compare(name, "string to sign", out.string_to_sign, want_sts);
        fails += compare(name, "signature", out.signature, want_sig);
        /* The Authorization header must carry exactly that signature. */
        char *sigpos = strstr(out.authorization, "Signature=");
        fails += compare(name, "Authorization signature", sigpos ? sigpos + 10 : NULL, want_sig);
        aws_sign_output_free(&out);
    }
    for (size_t i = 0; i < r.n_headers; i++) free(r.headers[i].value);
out:
    cJSON_Delete(j);
    free(req);
    free(ctx);
    free(want_cr);
    free(want_sts);
    free(want_sig);
    return fails ? 1 : 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SUITE_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "FAIL: SigV4 suite folder %s is missing\n", argv[1]);
        return 1;
    }
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        if (e->d_name[0] == '.') continue;
        char p[8192 + 64];
        snprintf(p, sizeof p, "%s/%s/request.txt", argv[1], e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        fclose(f);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    if (n < 38) {
        fprintf(stderr, "FAIL: only %zu SigV4 cases in %s (expected 38)\n", n, argv[1]);
        for (size_t i = 0; i < n; i++) free(names[i]);
        return 1;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        int f = run_case(argv[1], names[i]);
        printf("%s %s\n", f ? "FAIL" : "ok  ", names[i]);
        failed += f != 0;
        free(names[i]);
    }
    printf("%zu/%zu SigV4 cases pass\n", n - failed, n);
    return failed ? 1 : 0;
}
