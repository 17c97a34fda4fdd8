/* aws/curl_util: the libcurl pieces the signed transport (http.c) and the plain requests
 * (plain_http.c) share, in a file of their own so neither depends on the other: the body buffer
 * and what a failure says when an endpoint URL has the wrong scheme. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/internal.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }
void aws_curl_global_init(void) { pthread_once(&curl_once, curl_init_once); }

size_t aws_body_append(aws_body *b, const char *data, size_t n, size_t max)
{
    if (b->len + n > max) {
        b->too_big = 1;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        /* doubling, but never past what the cap allows: a body at its limit (64 MiB) would
         * otherwise take twice that */
        const size_t most = max < SIZE_MAX ? max + 1 : max;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        if (cap > most) cap = most;
        char *np = realloc(b->p, cap);
        if (!np) return 0;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

/* ---- an endpoint that speaks the other protocol (https:// at plain HTTP, http:// at TLS) ------- */

static int url_scheme_is(const char *url, const char *scheme)
{
    size_t n = strlen(scheme);
    return !strncasecmp(url, scheme, n) && url[n] == ':';
}

/* TLS errors that mean bytes came back that are no TLS record (a plain-HTTP server's "HTTP/1.1
 * 400" read as one): OpenSSL's texts before and after 3.2, GnuTLS's. */
static int not_tls_answer(const char *text)
{
    static const char *const l[] = {"wrong version number",
                                    "packet length too long",
                                    "record layer failure",
                                    "unexpected TLS packet",
                                    "TLS packet with unexpected length",
                                    NULL};
    for (const char *const *p = l; *p; p++)
        if (strstr(text, *p)) return 1;
    return 0;
}

/* 1 when the host and port of URL (an http:// one) complete a TLS handshake, certificates
 * unchecked: nothing is sent over it.  Asked once per origin (PROBE keeps the last answer). */
static int speaks_tls(const char *url, aws_tls_probe *probe)
{
    char origin[512];
    aws_url_origin(url, origin, sizeof origin);
    if (probe->asked && !strcmp(origin, probe->origin)) return probe->result;
    char *port = NULL, *tls_url = NULL;
    int yes = 0;
    CURLU *u = curl_url();
    CURL *e = curl_easy_init();
    if (u && e && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_SCHEME, "https", 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_PORT, port, 0) == CURLUE_OK && curl_url_set(u, CURLUPART_PATH, "/", 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_QUERY, NULL, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_URL, &tls_url, 0) == CURLUE_OK) {
        curl_easy_setopt(e, CURLOPT_URL, tls_url);
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
        if (probe->direct) curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); /* the way the request went */
        curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L);                /* the handshake, then nothing */
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(probe->connect_timeout_s * 1000));
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(probe->connect_timeout_s * 1000) + 2000L);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        yes = curl_easy_perform(e) == CURLE_OK;
    }
    curl_free(port);
    curl_free(tls_url);
    curl_url_cleanup(u);
    if (e) curl_easy_cleanup(e);
    snprintf(probe->origin, sizeof probe->origin, "%s", origin);
    probe->result = yes;
    probe->asked = 1;
    return yes;
}

int aws_scheme_mismatch(CURL *easy, const char *url, CURLcode cc, const char *errbuf, const char *var,
                        aws_tls_probe *probe, char *out, size_t len)
{
    const char *what = NULL;
    if (url_scheme_is(url, "https") && cc == CURLE_SSL_CONNECT_ERROR && not_tls_answer(errbuf)) {
        what = "the server did not speak TLS (is it http://?)";
    } else if (url_scheme_is(url, "http") && (cc == CURLE_GOT_NOTHING || cc == CURLE_RECV_ERROR ||
                                              cc == CURLE_WEIRD_SERVER_REPLY || cc == CURLE_UNSUPPORTED_PROTOCOL)) {
        long header_bytes = 0; /* no answer at all: a TLS server closes (or alerts) on plain text */
        curl_easy_getinfo(easy, CURLINFO_HEADER_SIZE, &header_bytes);
        if (header_bytes == 0 && speaks_tls(url, probe)) what = "the server speaks TLS (is it https://?)";
    }
    if (!what) return 0;
    char origin[512];
    aws_url_origin(url, origin, sizeof origin);
    snprintf(out, len, "%s %s: %s: %s", var ? var : "URL", origin, what, errbuf[0] ? errbuf : curl_easy_strerror(cc));
    return 1;
}
