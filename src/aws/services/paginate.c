/* paginate: runs many independent paginated AWS queries in rounds.  Round k sends page k of every
 * query that still has one, all together through aws_client_send_many, so total time follows the
 * longest NextToken chain rather than the number of requests. */
#include "instbench/aws_services.h"

#include <stdlib.h>
#include <string.h>

static int pages_most(const aws_pager *p, size_t i)
{
    int most = p->max_pages_of ? p->max_pages_of(p->ctx, i) : 0;
    if (most <= 0) most = p->max_pages;
    return most > 0 ? most : AWS_PAGER_MAX_PAGES;
}

/* The queries of N_PAGERS pagers in the same rounds: COUNTS[k] of PAGERS[k], numbered in that
 * order (ERRS: one per query).  Each query is sent, bounded and read by its own pager alone (its
 * build and parse, its name, its bound on pages and on an answer's size), whatever it goes with. */
static size_t paginate(aws_client *c, const aws_pager *pagers, const size_t *counts, size_t n_pagers, ib_error *errs)
{
    size_t failed = 0, n = 0;
    for (size_t k = 0; k < n_pagers; k++) n += counts[k];
    if (n == 0) return 0;
    const aws_pager **of = calloc(n, sizeof *of); /* query -> its pager */
    size_t *local = calloc(n, sizeof *local);     /* query -> its index in that pager */
    char **token = calloc(n, sizeof *token);      /* NextToken of query i, NULL before page 1 */
    int *active = calloc(n, sizeof *active);
    int *pages = calloc(n, sizeof *pages);
    size_t *idx = calloc(n, sizeof *idx); /* round slot -> query index */
    aws_request *reqs = calloc(n, sizeof *reqs);
    aws_response *resps = calloc(n, sizeof *resps);
    ib_error *rerr = calloc(n, sizeof *rerr);
    char **urls = calloc(n, sizeof *urls), **bodies = calloc(n, sizeof *bodies);
    if (!of || !local || !token || !active || !pages || !idx || !reqs || !resps || !rerr || !urls || !bodies) {
        for (size_t k = 0, i = 0; k < n_pagers; k++)
            for (size_t j = 0; j < counts[k]; j++)
                ib_error_set(&errs[i++], IB_EXIT_RUNTIME, "%s: out of memory", pagers[k].what);
        failed = n;
        goto out;
    }
    for (size_t k = 0, i = 0; k < n_pagers; k++)
        for (size_t j = 0; j < counts[k]; j++, i++) {
            of[i] = &pagers[k];
            local[i] = j;
            ib_error_clear(&errs[i]);
            active[i] = 1;
        }
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (!active[i]) continue;
            const aws_pager *p = of[i];
            urls[m] = bodies[m] = NULL;
            memset(&reqs[m], 0, sizeof reqs[m]);
            if (p->build(p->ctx, local[i], token[i], &reqs[m], &urls[m], &bodies[m], &errs[i]) != 0) {
                free(urls[m]);
                free(bodies[m]);
                active[i] = 0;
                failed++;
                continue;
            }
            reqs[m].max_body = p->max_body; /* the pager's own, whatever build left: one place per call */
            idx[m++] = i;
        }
        if (m == 0) break;
        memset(resps, 0, m * sizeof *resps);
        memset(rerr, 0, m * sizeof *rerr);
        aws_client_send_many(c, reqs, m, resps, rerr);
        for (size_t k = 0; k < m; k++) {
            size_t i = idx[k];
            const aws_pager *p = of[i];
            free(urls[k]);
            free(bodies[k]);
            char *next = NULL;
            const char *what = p->name_of ? p->name_of(p->ctx, local[i]) : p->what;
            if (rerr[k].code != 0 || resps[k].status < 200 || resps[k].status > 299 || !resps[k].body) {
                if (resps[k].too_big) /* the transport's words name the service, not the call */
                    ib_error_set(&errs[i], IB_EXIT_RUNTIME, "%s: %s", what, rerr[k].msg);
                else if (rerr[k].code != 0) errs[i] = rerr[k];
                else if (resps[k].error_code[0])
                    ib_error_set(&errs[i], IB_EXIT_RUNTIME, "%s: HTTP %ld %s: %s", what, resps[k].status,
                                 resps[k].error_code, resps[k].error_message);
                else ib_error_set(&errs[i], IB_EXIT_RUNTIME, "%s: HTTP %ld", what, resps[k].status);
                if (!errs[i].code) errs[i].code = IB_EXIT_RUNTIME;
                active[i] = 0;
                failed++;
            } else if (p->parse(p->ctx, local[i], resps[k].body, resps[k].body_len, &next, &errs[i]) != 0) {
                if (!errs[i].code) errs[i].code = IB_EXIT_RUNTIME;
                free(next);
                active[i] = 0;
                failed++;
            } else if (next && next[0]) {
                /* A token equal to the one just used would loop forever.  pages[i]: the pages
                 * answered so far, this one included (as many as requests sent). */
                const int again = token[i] && !strcmp(token[i], next);
                if (++pages[i] >= pages_most(p, local[i]) || again) {
                    ib_error_set(&errs[i], IB_EXIT_RUNTIME, "%s: pagination did not end after %d pages%s", what,
                                 pages[i], again ? " (the same NextToken twice)" : "");
                    free(next);
                    active[i] = 0;
                    failed++;
                } else {
                    free(token[i]);
                    token[i] = next;
                }
            } else {
                free(next);
                active[i] = 0;
            }
            aws_response_free(&resps[k]);
        }
    }
out:
    if (token)
        for (size_t i = 0; i < n; i++) free(token[i]);
    free(of);
    free(local);
    free(token);
    free(active);
    free(pages);
    free(idx);
    free(reqs);
    free(resps);
    free(rerr);
    free(urls);
    free(bodies);
    return failed;
}

size_t aws_paginate_many(aws_client *c, const aws_pager *p, size_t n, ib_error *errs)
{
    return paginate(c, p, &n, 1, errs);
}

size_t aws_paginate_multi(aws_client *c, const aws_pager *pagers, const size_t *counts, size_t n_pagers,
                          ib_error *const *errs)
{
    size_t total = 0;
    for (size_t k = 0; k < n_pagers; k++) total += counts[k];
    if (total == 0) return 0;
    ib_error *all = calloc(total, sizeof *all);
    if (!all) {
        for (size_t k = 0; k < n_pagers; k++)
            for (size_t i = 0; i < counts[k]; i++) ib_error_set(&errs[k][i], IB_EXIT_RUNTIME, "out of memory");
        return total;
    }
    size_t failed = paginate(c, pagers, counts, n_pagers, all);
    size_t off = 0;
    for (size_t k = 0; k < n_pagers; k++)
        for (size_t i = 0; i < counts[k]; i++) errs[k][i] = all[off++];
    free(all);
    return failed;
}

static int unreserved(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
           ch == '.' || ch == '~';
}

/* Room for `more` bytes plus the NUL. */
static int ensure(char **buf, size_t len, size_t *cap, size_t more)
{
    if (len + more + 1 <= *cap) return 0;
    size_t nc = *cap ? *cap : 256;
    while (len + more + 1 > nc) nc *= 2;
    char *nb = realloc(*buf, nc);
    if (!nb) return -1;
    *buf = nb;
    *cap = nc;
    return 0;
}

int aws_str_append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (ensure(buf, *len, cap, n) != 0) return -1;
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return 0;
}

int aws_uri_append(char **buf, size_t *len, size_t *cap, const char *s, int keep_slash)
{
    static const char hx[] = "0123456789ABCDEF";
    if (ensure(buf, *len, cap, 3 * strlen(s)) != 0) return -1;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        if (unreserved(*q) || (keep_slash && *q == '/')) {
            (*buf)[(*len)++] = (char)*q;
        } else {
            (*buf)[(*len)++] = '%';
            (*buf)[(*len)++] = hx[*q >> 4];
            (*buf)[(*len)++] = hx[*q & 15];
        }
    }
    (*buf)[*len] = '\0';
    return 0;
}

int aws_query_append(char **buf, size_t *len, size_t *cap, const char *name, const char *value)
{
    if (*len > 0 && aws_str_append(buf, len, cap, "&") != 0) return -1;
    if (aws_uri_append(buf, len, cap, name, 0) != 0 || aws_str_append(buf, len, cap, "=") != 0) return -1;
    return aws_uri_append(buf, len, cap, value, 0);
}
