/* aws/plain_http: unsigned one-shot requests to IMDS and the container credentials endpoint.
 * Short timeouts and no retries: off EC2 these must fail fast. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "aws/internal.h"

#define PLAIN_MAX_BODY (1u << 20)

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    return aws_body_append(ud, ptr, size * nmemb, PLAIN_MAX_BODY);
}

int aws_plain_http(const aws_plain_request *req, long *status, char **body, size_t *body_len, ib_error *err)
{
    *status = 0;
    *body = NULL;
    if (body_len) *body_len = 0;
    aws_curl_global_init();
    CURL *e = curl_easy_init();
    if (!e) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot initialise libcurl");
    struct curl_slist *hl = NULL;
    for (size_t i = 0; i < req->n_headers; i++) {
        struct curl_slist *nl = curl_slist_append(hl, req->headers[i]);
        if (!nl) break;
        hl = nl;
    }
    aws_body b = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); /* link-local metadata must never go through a proxy */
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(req->connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(req->total_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    const char *ca = getenv("AWS_CA_BUNDLE");
    if (ca && ca[0]) curl_easy_setopt(e, CURLOPT_CAINFO, ca);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "instbench/" INSTBENCH_VERSION);
    if (!strcmp(req->method, "PUT")) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
    }
    CURLcode cc = curl_easy_perform(e);
    int rc = 0;
    if (cc != CURLE_OK && b.too_big) {
        /* an answer came, one no metadata or credentials endpoint gives: said apart from no answer */
        ib_error_set(err, IB_EXIT_RUNTIME, "the answer is over %u MiB, more than any it gives", PLAIN_MAX_BODY >> 20);
        rc = -2;
        free(b.p);
    } else if (cc != CURLE_OK) {
        aws_tls_probe probe = {.connect_timeout_s = req->connect_timeout_s, .direct = 1};
        char hint[sizeof err->msg];
        if (req->url_var && aws_scheme_mismatch(e, req->url, cc, errbuf, req->url_var, &probe, hint, sizeof hint)) {
            ib_error_set(err, IB_EXIT_RUNTIME, "%s", hint);
            rc = -3;
        } else {
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        }
        free(b.p);
    } else {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
        *body = b.p ? b.p : calloc(1, 1);
        if (body_len) *body_len = b.len;
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(e);
    return rc;
}
