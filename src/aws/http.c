/* aws/http: the signed AWS transport.  One curl multi handle per client keeps connections alive
 * between calls (its connection cache: a NextToken page or the next batch goes out on a connection
 * an earlier request opened), and one share handle carries the DNS cache and TLS sessions across
 * every request of the client, so a command resolves each host and does a full TLS handshake
 * about once; up to max_concurrency requests are in flight together, each signed afresh on
 * every attempt and retried the way the SDKs' "standard" retry mode does: throttling, transient
 * codes, HTTP 5xx/429 and connection errors/timeouts, up to max_attempts in total, sleeping
 * rand(0,1) * min(2^(attempt-1), 20) s between attempts (exponential backoff, full jitter).
 * Verbose (-v) logs one line per attempt: method, URL, status, attempt, elapsed, masked key id;
 * never the secret, the session token or the Authorization header (so no CURLOPT_VERBOSE). */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "aws/internal.h"

#define AWS_MAX_BODY (64u << 20)      /* a call without a max_body of its own (prices' calls have theirs) */
#define AWS_MAX_ERROR_BODY (1u << 20) /* AWS's error documents are a few hundred bytes */
#define AWS_MAX_BACKOFF_S 20.0
/* Standard mode's retry quota: a client-wide bucket that retries draw from (more for timeouts)
 * and successes refill, so a failing service is not hammered by every request's retries. */
#define RETRY_QUOTA_INITIAL 500
#define RETRY_COST 5
#define RETRY_COST_TIMEOUT 10
#define RETRY_REFILL_NO_RETRY 1

struct aws_client {
    aws_client_options opt;
    aws_credentials cred;
    CURLM *multi;
    CURLSH *share; /* DNS cache and TLS sessions across requests (one thread: no locks needed) */
    /* curl's socket interface: epoll holds the sockets curl waits on (on_socket keeps it in step)
     * and timer_at is the moment curl next wants CURL_SOCKET_TIMEOUT (< 0: none), so a wake-up
     * costs the sockets that are ready, not a poll() of every one of up to max_concurrency */
    int epfd;
    double timer_at;
    uint64_t rng;
    double backoff_base_s;
    int retry_quota;
    char ca_bundle[4096];
    aws_tls_probe tls_probe; /* asked once per origin however many requests fail alike */
    int said_no_answer;      /* the first attempt that timed out was said, not only under -v */
};

void aws_mask_key_id(const char *key_id, char out[32])
{
    size_t n = key_id ? strlen(key_id) : 0;
    if (n == 0) {
        snprintf(out, 32, "(none)");
    } else if (n <= 8) {
        snprintf(out, 32, "****");
    } else {
        /* first 4 and last 4, as the AWS CLI shows them in `aws configure list` */
        snprintf(out, 32, "%.4s****%.4s", key_id, key_id + n - 4);
    }
}

static double rng_uniform(aws_client *c)
{
    /* xorshift64*: jitter only needs to decorrelate clients, not to be unpredictable. */
    uint64_t x = c->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    c->rng = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* CURLMOPT_SOCKETFUNCTION: what curl waits for on socket S (in, out, both, or nothing more) */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    aws_client *c = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(c->epfd, EPOLL_CTL_DEL, s, NULL); /* ENOENT/EBADF: already gone with its close */
        return 0;
    }
    struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u)};
    ev.data.fd = s;
    if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT &&
        epoll_ctl(c->epfd, EPOLL_CTL_ADD, s, &ev) != 0)
        return -1; /* curl fails the transfers on this socket, which then retry or report */
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: curl wants CURL_SOCKET_TIMEOUT in TIMEOUT_MS (-1: no timer) */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    aws_client *c = userp;
    c->timer_at = timeout_ms < 0 ? -1 : util_now_seconds() + timeout_ms / 1000.0;
    return 0;
}

int aws_client_create(const aws_client_options *opt, const aws_credentials *cred, aws_client **out, ib_error *err)
{
    *out = NULL;
    aws_curl_global_init();
    aws_client *c = calloc(1, sizeof *c);
    if (!c) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (opt) c->opt = *opt;
    if (c->opt.connect_timeout_s <= 0) c->opt.connect_timeout_s = 3;
    if (c->opt.total_timeout_s <= 0) c->opt.total_timeout_s = 30;
    if (c->opt.max_attempts <= 0) c->opt.max_attempts = 3;
    if (c->opt.max_concurrency <= 0) c->opt.max_concurrency = 16;
    c->tls_probe.connect_timeout_s = c->opt.connect_timeout_s;
    const char *ma = getenv("AWS_MAX_ATTEMPTS");
    if (ma && ma[0]) {
        long v;
        if (util_parse_int(ma, 1, 20, &v) != 0) {
            free(c);
            return ib_error_set(err, IB_EXIT_USAGE, "AWS_MAX_ATTEMPTS must be an integer from 1 to 20 (got '%s')", ma);
        }
        c->opt.max_attempts = (int)v;
    }
    const char *ca = getenv("AWS_CA_BUNDLE");
    if (ca && ca[0]) {
        if (access(ca, R_OK) != 0) {
            free(c);
            return ib_error_set(err, IB_EXIT_RUNTIME, "AWS_CA_BUNDLE %s cannot be read", ca);
        }
        snprintf(c->ca_bundle, sizeof c->ca_bundle, "%s", ca);
    }
    /* The base of the backoff: 1 s as in the SDKs; tests shorten it to keep the suite quick. */
    c->backoff_base_s = 1.0;
    c->retry_quota = RETRY_QUOTA_INITIAL;
    const char *bb = getenv("INSTBENCH_AWS_BACKOFF_BASE");
    if (bb && bb[0]) {
        double v;
        if (util_parse_double(bb, 0, 60, &v) == 0) c->backoff_base_s = v;
    }
    if (cred) c->cred = *cred;
    c->rng = (uint64_t)(util_now_seconds() * 1e9) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
    if (!c->rng) c->rng = 88172645463325252ULL;
    c->multi = curl_multi_init();
    if (!c->multi) {
        free(c);
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot initialise libcurl");
    }
    c->share = curl_share_init();
    if (c->share) {
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    }
    c->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (c->epfd < 0) {
        curl_multi_cleanup(c->multi);
        if (c->share) curl_share_cleanup(c->share);
        free(c);
        return ib_error_set(err, IB_EXIT_RUNTIME, "cannot create an epoll instance: %s", strerror(errno));
    }
    c->timer_at = -1;
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->opt.max_concurrency);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->opt.max_concurrency);
    *out = c;
    return 0;
}

void aws_client_destroy(aws_client *c)
{
    if (!c) return;
    curl_multi_cleanup(c->multi); /* closes the cached connections through on_socket */
    if (c->share) curl_share_cleanup(c->share);
    close(c->epfd);
    /* the credentials copy includes the secret: wipe it before the memory goes back */
    aws_wipe(&c->cred, sizeof c->cred);
    free(c);
}

int aws_send_once(const aws_credentials *cred, const aws_request *req, aws_response *resp, ib_error *err)
{
    aws_client *c = NULL;
    memset(resp, 0, sizeof *resp);
    int rc = aws_client_create(NULL, cred, &c, err);
    if (rc == 0) rc = aws_client_send(c, req, resp, err);
    aws_client_destroy(c);
    return rc;
}

void aws_response_free(aws_response *r)
{
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
}

/* ---- one request's state across attempts ------------------------------------------------- */
typedef struct xfer {
    const aws_request *req;
    aws_response *resp;
    ib_error *err;
    CURL *easy;
    struct curl_slist *hdrs;
    aws_body body; /* this attempt's response body */
    char amzn_error_type[160];
    char bucket_region[32]; /* S3's x-amz-bucket-region (redirects, HeadBucket) */
    char location[1024];    /* a redirect's Location, shown, never followed */
    char errbuf[CURL_ERROR_SIZE];
    double started, next_at;
    int attempt, in_flight, done, failed, refreshed;
    int quota_held; /* retry quota drawn for this request's last retry */
} xfer;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    /* the caller's cap is for the answer it asked for; any other answer is an error document,
     * which no server of AWS's makes long (a hostile one could send 64 MiB to each request in
     * flight) */
    const int ok = status >= 200 && status < 300;
    size_t max = !ok ? AWS_MAX_ERROR_BODY : x->req->max_body ? x->req->max_body : AWS_MAX_BODY;
    return aws_body_append(&x->body, ptr, size * nmemb, max);
}

/* Copies header KEY's (with ':') trimmed value into out when LINE is that header. */
static void header_value(const char *line, size_t n, const char *key, char *out, size_t out_len)
{
    size_t kn = strlen(key);
    if (n <= kn || strncasecmp(line, key, kn) != 0) return;
    size_t vn = n - kn;
    const char *v = line + kn;
    while (vn && (*v == ' ')) v++, vn--;
    while (vn && (v[vn - 1] == '\r' || v[vn - 1] == '\n' || v[vn - 1] == ' ')) vn--;
    if (vn >= out_len) vn = out_len - 1;
    memcpy(out, v, vn);
    out[vn] = '\0';
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    header_value(ptr, n, "x-amzn-errortype:", x->amzn_error_type, sizeof x->amzn_error_type);
    header_value(ptr, n, "x-amz-bucket-region:", x->bucket_region, sizeof x->bucket_region);
    header_value(ptr, n, "location:", x->location, sizeof x->location);
    return n;
}

static char *header_line(const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 3;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s: %s", name, value);
    return s;
}

static int append_header(struct curl_slist **l, const char *name, const char *value)
{
    char *line = header_line(name, value);
    if (!line) return -1;
    struct curl_slist *nl = curl_slist_append(*l, line);
    free(line);
    if (!nl) return -1;
    *l = nl;
    return 0;
}

static int presigned_headers(xfer *x);
static int sign_headers(aws_client *c, xfer *x, char *hostport, const char *path, const char *query);
static int setup_easy(aws_client *c, xfer *x);

/* Builds and signs one attempt.  Host, path and query are taken from the URL exactly as curl
 * will send them (PATH_AS_IS), so what is signed is what goes on the wire. */
static int prepare_attempt(aws_client *c, xfer *x)
{
    const aws_request *r = x->req;
    ib_error *err = x->err;
    char *host = NULL, *port = NULL, *path = NULL, *query = NULL, *scheme = NULL;
    int rc = -1;
    char why[800];
    CURLU *u = curl_url();
    if (aws_endpoint_url_problem(r->service, r->url, why, sizeof why)) {
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", r->service, why);
        goto out;
    }
    if (!u || curl_url_set(u, CURLUPART_URL, r->url, CURLU_PATH_AS_IS) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        char shown[1024];
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: invalid endpoint URL '%s'", r->service,
                     aws_url_for_display(r->url, shown, sizeof shown));
        goto out;
    }
    if (strcmp(scheme, "https") && strcmp(scheme, "http")) {
        char shown[1024];
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: endpoint URL '%s' is not http(s)", r->service,
                     aws_url_for_display(r->url, shown, sizeof shown));
        goto out;
    }
    curl_url_get(u, CURLUPART_PORT, &port, 0); /* NULL when the URL names none */
    curl_url_get(u, CURLUPART_PATH, &path, 0);
    curl_url_get(u, CURLUPART_QUERY, &query, 0);
    char hostport[512];
    snprintf(hostport, sizeof hostport, "%s%s%s", host, port ? ":" : "", port ? port : "");

    if (r->presigned) {
        if (presigned_headers(x) != 0) goto out;
    } else if (sign_headers(c, x, hostport, path, query) != 0) {
        goto out;
    }
    rc = setup_easy(c, x);
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return rc;
}

/* A presigned URL is its own authorisation: the caller's headers only. */
static int presigned_headers(xfer *x)
{
    const aws_request *r = x->req;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    int ok = 1;
    for (size_t i = 0; i < r->n_headers; i++)
        ok = ok && append_header(&x->hdrs, r->headers[i].name, r->headers[i].value) == 0;
    ok = ok && (x->hdrs = curl_slist_append(x->hdrs, "Expect:")) != NULL;
    return ok ? 0 : ib_error_set(x->err, IB_EXIT_RUNTIME, "out of memory");
}

/* Signs one attempt (SigV4 headers, Authorization) into x->hdrs. */
static int sign_headers(aws_client *c, xfer *x, char *hostport, const char *path, const char *query)
{
    const aws_request *r = x->req;
    ib_error *err = x->err;
    if (c->opt.refresh && c->opt.refresh(&c->cred, 0, err) < 0) return -1;

    size_t nh = r->n_headers + 1;
    aws_header *hs = calloc(nh, sizeof *hs);
    if (!hs) { return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory"); }
    hs[0].name = "Host";
    hs[0].value = hostport;
    for (size_t i = 0; i < r->n_headers; i++) hs[i + 1] = r->headers[i];
    aws_sign_input in = {
        .method = r->method,
        .path = path && path[0] ? path : "/",
        .query = query,
        .headers = hs,
        .n_headers = nh,
        .body = r->body,
        .body_len = r->body ? r->body_len : 0,
        .service = r->service,
        .region = r->region,
        .when = time(NULL),
        .normalize_path = !r->s3,
        .path_encoded = r->s3,
        .sign_body = r->s3,
    };
    aws_sign_output so;
    ib_error serr;
    if (aws_sigv4_sign(&in, &c->cred, &so, &serr) != 0) {
        free(hs);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", r->service, serr.msg);
    }
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    int ok = 1;
    for (size_t i = 0; i < nh; i++) ok = ok && append_header(&x->hdrs, hs[i].name, hs[i].value) == 0;
    for (size_t i = 0; i < so.n_add; i++) ok = ok && append_header(&x->hdrs, so.add[i].name, so.add[i].value) == 0;
    ok = ok && append_header(&x->hdrs, "Authorization", so.authorization) == 0;
    /* No 100-continue round trip; no default form Content-Type for bodies the caller typed. */
    ok = ok && (x->hdrs = curl_slist_append(x->hdrs, "Expect:")) != NULL;
    aws_sign_output_free(&so);
    free(hs);
    return ok ? 0 : ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
}

/* The curl handle of one attempt: URL as is, headers, limits, callbacks, method and body. */
static int setup_easy(aws_client *c, xfer *x)
{
    const aws_request *r = x->req;
    if (!x->easy) x->easy = curl_easy_init();
    else curl_easy_reset(x->easy);
    CURL *e = x->easy;
    if (!e) return ib_error_set(x->err, IB_EXIT_RUNTIME, "cannot initialise libcurl");
    x->body.len = 0;
    x->body.too_big = 0;
    x->amzn_error_type[0] = '\0';
    x->bucket_region[0] = '\0';
    x->location[0] = '\0';
    x->errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "instbench/" INSTBENCH_VERSION);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* every encoding curl can decode (gzip) */
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->opt.connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->opt.total_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca_bundle[0]) curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_bundle);
    if (c->share) curl_easy_setopt(e, CURLOPT_SHARE, c->share);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    if (!strcmp(r->method, "GET")) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(r->method, "HEAD")) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else {
        if (!strcmp(r->method, "POST")) curl_easy_setopt(e, CURLOPT_POST, 1L);
        else curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(r->body ? r->body_len : 0));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? r->body : "");
    }
    return 0;
}

static double backoff_s(aws_client *c, int attempt)
{
    double cap = c->backoff_base_s;
    for (int i = 1; i < attempt && cap < AWS_MAX_BACKOFF_S; i++) cap *= 2;
    if (cap > AWS_MAX_BACKOFF_S) cap = AWS_MAX_BACKOFF_S;
    return rng_uniform(c) * cap;
}

/* Decides what one finished attempt means: success, retry later, or a final failure. */
static void finish_attempt(aws_client *c, xfer *x, CURLcode cc)
{
    const aws_request *r = x->req;
    aws_response *resp = x->resp;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    double elapsed = util_now_seconds() - x->started;
    resp->status = cc == CURLE_OK ? status : 0;
    resp->attempts = x->attempt;
    resp->error_code[0] = resp->error_message[0] = '\0';
    resp->too_big = 0;
    snprintf(resp->bucket_region, sizeof resp->bucket_region, "%s", x->bucket_region);
    snprintf(resp->location, sizeof resp->location, "%s", status >= 300 && status < 400 ? x->location : "");
    char key[32], url[1024];
    aws_mask_key_id(c->cred.access_key_id, key);
    aws_url_for_display(r->url, url, sizeof url); /* never the userinfo of AWS_ENDPOINT_URL */

    int retryable = 0;
    char reason[1200];
    if (cc != CURLE_OK) {
        /* connection refused/reset, DNS, timeouts, truncated bodies: all transient for the SDKs */
        retryable = !x->body.too_big && cc != CURLE_SSL_CACERT_BADFILE && cc != CURLE_PEER_FAILED_VERIFICATION &&
                    cc != CURLE_UNSUPPORTED_PROTOCOL && cc != CURLE_URL_MALFORMAT && cc != CURLE_OUT_OF_MEMORY;
        char var[96];
        const char *v = aws_endpoint_var_of(r->service, r->url, var, sizeof var);
        if (x->body.too_big) {
            resp->too_big = status >= 200 && status < 300;
            if (resp->too_big) /* the cap is the call's own: an endpoint that passes it is no AWS */
                snprintf(reason, sizeof reason, "response larger than %zu bytes, the most this call reads%s%s%s",
                         r->max_body ? r->max_body : (size_t)AWS_MAX_BODY, v ? " (is " : "", v ? v : "",
                         v ? " an AWS endpoint?)" : "");
            else
                snprintf(reason, sizeof reason, "an HTTP %ld answer larger than %u bytes, which no AWS error is",
                         status, AWS_MAX_ERROR_BODY);
        } else if (aws_scheme_mismatch(x->easy, r->url, cc, x->errbuf, v, &c->tls_probe, reason, sizeof reason)) {
            retryable = 0; /* the same answer every time */
        } else {
            snprintf(reason, sizeof reason, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc));
        }
        ib_debug("aws: %s %s -> %s (attempt %d/%d, %.3f s, key %s)", r->method, url, reason, x->attempt,
                 c->opt.max_attempts, elapsed, key);
    } else {
        ib_debug("aws: %s %s -> HTTP %ld (attempt %d/%d, %.3f s, %zu bytes, key %s)", r->method, url, status,
                 x->attempt, c->opt.max_attempts, elapsed, x->body.len, key);
        if (status >= 200 && status < 300) {
            c->retry_quota += x->quota_held ? x->quota_held : RETRY_REFILL_NO_RETRY;
            if (c->retry_quota > RETRY_QUOTA_INITIAL) c->retry_quota = RETRY_QUOTA_INITIAL;
            resp->body = x->body.p ? x->body.p : calloc(1, 1);
            resp->body_len = x->body.len;
            x->body.p = NULL;
            x->body.len = x->body.cap = 0;
            x->done = 1;
            return;
        }
        aws_error_parse(x->body.p, x->body.len, x->amzn_error_type, resp->error_code, sizeof resp->error_code,
                        resp->error_message, sizeof resp->error_message);
        retryable = status >= 500 || status == 429 || aws_error_is_throttling(resp->error_code) ||
                    aws_error_is_transient(resp->error_code);
        if (!retryable && aws_error_is_expired_token(resp->error_code) && !x->refreshed && c->opt.refresh) {
            /* refreshable credentials may have expired between resolve and send: refresh once (the
             * provider answers 1 for sources it cannot refresh, and then this is final) */
            ib_error rerr;
            x->refreshed = 1;
            if (c->opt.refresh(&c->cred, 1, &rerr) == 0) retryable = 1;
        }
        if (resp->error_code[0])
            snprintf(reason, sizeof reason, "HTTP %ld %s%s%s", status, resp->error_code,
                     resp->error_message[0] ? ": " : "", resp->error_message);
        else snprintf(reason, sizeof reason, "HTTP %ld", status);
        if (resp->location[0]) { /* where it points, as it may be printed; a signed request stays put */
            char to[512];
            aws_url_for_display(resp->location, to, sizeof to);
            snprintf(reason + strlen(reason), sizeof reason - strlen(reason), "; redirected to %s, not followed", to);
        }
    }
    int cost = cc == CURLE_OPERATION_TIMEDOUT ? RETRY_COST_TIMEOUT : RETRY_COST;
    if (retryable && x->attempt < c->opt.max_attempts && c->retry_quota < cost) {
        ib_debug("aws: %s: retry quota exhausted, not retrying (%s)", r->service, reason);
        snprintf(reason + strlen(reason), sizeof reason - strlen(reason), "; retry quota exhausted");
        retryable = 0;
    }
    if (retryable && x->attempt < c->opt.max_attempts) {
        c->retry_quota -= cost;
        x->quota_held = cost;
        double wait = backoff_s(c, x->attempt);
        ib_debug("aws: %s: retrying in %.2f s (%s)", r->service, wait, reason);
        if (cc == CURLE_OPERATION_TIMEDOUT && !c->said_no_answer) {
            /* an endpoint that accepts and never answers costs attempts x the limit per call, and a
             * command makes several calls one after another: say why it is quiet, once.  Tenths of
             * a second, since a limit may be under one (`prices --timeout 0.3` is not "0 s"). */
            c->said_no_answer = 1;
            ib_info("AWS %s at %s has not answered in %g s; trying again (at most %d attempts of %g s)", r->service,
                    url, round(elapsed * 10) / 10, c->opt.max_attempts, round(c->opt.total_timeout_s * 10) / 10);
        }
        x->next_at = util_now_seconds() + wait;
        return;
    }
    /* Final failure: keep the error body for callers that want to look at it. */
    resp->body = x->body.p ? x->body.p : calloc(1, 1);
    resp->body_len = x->body.len;
    x->body.p = NULL;
    x->body.len = x->body.cap = 0;
    x->done = x->failed = 1;
    if (cc != CURLE_OK) snprintf(resp->error_message, sizeof resp->error_message, "%s", reason);
    const char *hint = "";
    if (!strcmp(resp->error_code, "SignatureDoesNotMatch") || !strcmp(resp->error_code, "InvalidSignatureException"))
        hint = " (check the secret access key and the system clock)";
    else if (aws_error_is_expired_token(resp->error_code))
        hint = " (the session token expired: refresh the credentials)";
    else if (!strcmp(resp->error_code, "UnauthorizedOperation") || !strcmp(resp->error_code, "AccessDeniedException") ||
             !strcmp(resp->error_code, "AccessDenied"))
        hint = " (the credentials lack this permission)";
    ib_error_set(x->err, IB_EXIT_RUNTIME, "AWS %s request failed: %s%s (%s %s, %d attempt%s)", r->service, reason, hint,
                 r->method, url, x->attempt, x->attempt == 1 ? "" : "s");
}

int aws_client_send_many(aws_client *c, const aws_request *reqs, size_t n, aws_response *resps, ib_error *errs)
{
    if (n == 0) return 0;
    xfer *xs = calloc(n, sizeof *xs);
    if (!xs) {
        for (size_t i = 0; i < n; i++) ib_error_set(&errs[i], IB_EXIT_RUNTIME, "out of memory");
        return (int)n;
    }
    for (size_t i = 0; i < n; i++) {
        memset(&resps[i], 0, sizeof resps[i]);
        ib_error_clear(&errs[i]);
        xs[i].req = &reqs[i];
        xs[i].resp = &resps[i];
        xs[i].err = &errs[i];
    }
    /* next: every request before it has started at least once, so without retries waiting
     * (waiting == 0) nothing before it needs looking at; the loop stays linear in n */
    size_t remaining = n, in_flight = 0, next = 0, waiting = 0;
    while (remaining) {
        double now = util_now_seconds();
        double soonest = -1;
        /* start whatever is due, in order, up to the concurrency bound */
        for (size_t i = waiting ? 0 : next; i < n && in_flight < (size_t)c->opt.max_concurrency; i++) {
            xfer *x = &xs[i];
            if (x->done || x->in_flight) continue;
            if (x->next_at > now) continue;
            if (x->attempt) waiting--;
            else next = i + 1;
            x->attempt++;
            if (prepare_attempt(c, x) != 0) {
                x->done = x->failed = 1;
                x->resp->attempts = x->attempt;
                remaining--;
                continue;
            }
            x->started = util_now_seconds();
            if (curl_multi_add_handle(c->multi, x->easy) != CURLM_OK) {
                ib_error_set(x->err, IB_EXIT_RUNTIME, "%s: cannot start the request", x->req->service);
                x->done = x->failed = 1;
                remaining--;
                continue;
            }
            x->in_flight = 1;
            in_flight++;
        }
        if (!remaining) break;
        /* the earliest backoff still running; requests that are due but found no free slot wait
         * for a transfer to finish, which wakes the wait below anyway */
        now = util_now_seconds();
        for (size_t i = 0; waiting && i < n; i++)
            if (!xs[i].done && !xs[i].in_flight && xs[i].next_at > now && (soonest < 0 || xs[i].next_at < soonest))
                soonest = xs[i].next_at;
        /* wait for a socket, curl's timer or the earliest backoff (100 ms at most) */
        double until = now + 0.1;
        if (in_flight && c->timer_at >= 0 && c->timer_at < until) until = c->timer_at;
        if (soonest >= 0 && soonest < until) until = soonest;
        int wait_ms = until <= now ? 0 : (int)((until - now) * 1000) + 1;
        int running = 0;
        if (in_flight) {
            struct epoll_event evs[64];
            int ne = epoll_wait(c->epfd, evs, 64, wait_ms);
            for (int k = 0; k < ne; k++) {
                int flags = (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP) ? CURL_CSELECT_IN : 0) |
                            (evs[k].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                            (evs[k].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
                curl_multi_socket_action(c->multi, evs[k].data.fd, flags, &running);
            }
            if (c->timer_at >= 0 && util_now_seconds() >= c->timer_at) {
                c->timer_at = -1; /* fired: curl sets the next one through on_timer */
                curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            }
        } else if (wait_ms > 0) {
            usleep((useconds_t)wait_ms * 1000);
        }
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(c->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            xfer *x = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            CURLcode cc = m->data.result;
            curl_multi_remove_handle(c->multi, m->easy_handle);
            x->in_flight = 0;
            in_flight--;
            finish_attempt(c, x, cc);
            if (x->done) remaining--;
            else waiting++; /* a retry, due at x->next_at */
        }
    }
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += xs[i].failed;
        if (xs[i].easy) curl_easy_cleanup(xs[i].easy);
        curl_slist_free_all(xs[i].hdrs);
        free(xs[i].body.p);
    }
    free(xs);
    return failed;
}

int aws_client_send(aws_client *c, const aws_request *req, aws_response *resp, ib_error *err)
{
    return aws_client_send_many(c, req, 1, resp, err) ? -1 : 0;
}
