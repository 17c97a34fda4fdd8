/* ec2_form: the query-API request forms, the one send, and the paged describe that every EC2 file
 * of the sweep (ec2_launch.c, ec2_network.c) builds its calls from.  Contract in internal.h. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ec2_add(ec2_form *f, const char *name, const char *value)
{
    if (!f->bad && aws_query_append(&f->s, &f->len, &f->cap, name, value) != 0) f->bad = 1;
}

/* A parameter whose name is formatted ("TagSpecification.1.Tag.3.Key"). */
void ec2_addf(ec2_form *f, const char *value, const char *name_fmt, ...)
{
    char name[128];
    va_list ap;
    va_start(ap, name_fmt);
    vsnprintf(name, sizeof name, name_fmt, ap);
    va_end(ap);
    ec2_add(f, name, value);
}

ec2_form ec2_action(const char *name)
{
    ec2_form f = {0};
    ec2_add(&f, "Action", name);
    ec2_add(&f, "Version", EC2_API_VERSION);
    return f;
}

/* Filter.N.Name = NAME, Filter.N.Value.1 = VALUE. */
void ec2_filter(ec2_form *f, int n, const char *name, const char *value)
{
    ec2_addf(f, name, "Filter.%d.Name", n);
    ec2_addf(f, value, "Filter.%d.Value.1", n);
}

void ec2_tag_spec(ec2_form *f, int n, const char *resource_type, const ec2_tag *tags, size_t n_tags)
{
    ec2_addf(f, resource_type, "TagSpecification.%d.ResourceType", n);
    for (size_t i = 0; i < n_tags; i++) {
        ec2_addf(f, tags[i].key, "TagSpecification.%d.Tag.%zu.Key", n, i + 1);
        ec2_addf(f, tags[i].value, "TagSpecification.%d.Tag.%zu.Value", n, i + 1);
    }
}

/* One request, sent.  0: resp holds the answer; -1: err says why and aws_code (when given) gets
 * AWS's error code ("" for a transport failure).  Takes f's body. */
int ec2_call(aws_client *c, const char *region, const char *what, ec2_form *f, aws_response *resp, char aws_code[64],
             ib_error *err)
{
    memset(resp, 0, sizeof *resp);
    if (aws_code) aws_code[0] = '\0';
    if (f->bad) {
        free(f->s);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
    }
    aws_request req;
    char *url = NULL;
    int rc = ec2_request(region, f->s, &req, &url, err, what);
    if (rc == 0) rc = aws_client_send(c, &req, resp, err);
    if (rc != 0 && aws_code) snprintf(aws_code, 64, "%.63s", resp->error_code);
    free(url);
    free(f->s);
    f->s = NULL;
    return rc;
}

int ec2_send(aws_client *c, const char *region, const char *what, ec2_form *f, const char *const *done, char code[64],
             ib_error *err)
{
    aws_response resp;
    char own[64];
    char *k = code ? code : own;
    int rc = ec2_call(c, region, what, f, &resp, k, err);
    aws_response_free(&resp);
    for (const char *const *d = done; rc != 0 && d && *d; d++)
        if (!strcmp(k, *d)) {
            ib_error_clear(err);
            rc = 0;
        }
    return rc;
}

/* Every page of N queries (bodies[i]: the form without NextToken), each page read by SPEC into
 * ctx.  The first failure's message goes to err. */
typedef struct describe_ctx {
    const char *region;
    char *const *bodies;
    const ec2_xml_spec *spec;
    void *out;
} describe_ctx;

static int describe_build(void *ctx, size_t i, const char *token, aws_request *req, char **url, char **body,
                          ib_error *err)
{
    describe_ctx *d = ctx;
    ec2_form f = {0};
    if (aws_str_append(&f.s, &f.len, &f.cap, d->bodies[i]) != 0) f.bad = 1;
    if (token) ec2_add(&f, "NextToken", token);
    *body = f.s;
    if (f.bad) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", d->spec->what);
    return ec2_request(d->region, *body, req, url, err, d->spec->what);
}

static int describe_parse(void *ctx, size_t i, const char *body, size_t len, char **next, ib_error *err)
{
    describe_ctx *d = ctx;
    (void)i;
    return ec2_xml_parse(d->spec, d->out, body, len, next, err);
}

int ec2_describe_all(aws_client *c, const char *region, char *const *bodies, size_t n, const ec2_xml_spec *spec,
                     void *out, ib_error *err)
{
    if (n == 0) return 0;
    ib_error *errs = calloc(n, sizeof *errs);
    if (!errs) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", spec->what);
    describe_ctx d = {region, bodies, spec, out};
    aws_pager p = {&d, spec->what, describe_build, describe_parse, 0, NULL};
    size_t failed = aws_paginate_many(c, &p, n, errs);
    for (size_t i = 0; failed && i < n; i++)
        if (errs[i].code) {
            *err = errs[i];
            break;
        }
    free(errs);
    return failed ? -1 : 0;
}

int ec2_describe_where(aws_client *c, const char *region, const char *action, const char *const *filters, size_t n,
                       const ec2_xml_spec *spec, void *out, ib_error *err)
{
    ec2_form f = ec2_action(action);
    for (size_t i = 0; i < n; i++) ec2_filter(&f, (int)i + 1, filters[2 * i], filters[2 * i + 1]);
    char *body = ec2_form_text(&f);
    if (!body) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", spec->what);
    int rc = ec2_describe_all(c, region, &body, 1, spec, out, err);
    free(body);
    return rc;
}

int ec2_describe_tagged(aws_client *c, const char *region, const char *action, const char *tag_key,
                        const char *tag_value, const ec2_xml_spec *spec, void *out, ib_error *err)
{
    char name[160];
    snprintf(name, sizeof name, "tag:%s", tag_key);
    const char *filter[] = {name, tag_value};
    return ec2_describe_where(c, region, action, filter, 1, spec, out, err);
}

/* A form's text for ec2_describe_all, or NULL (out of memory). */
char *ec2_form_text(ec2_form *f)
{
    if (!f->bad) return f->s;
    free(f->s);
    return NULL;
}


/* SRC into DST (cap bytes) with control characters as '?': the text is the server's. */
int ec2_put(char *dst, size_t cap, const char *src, const char *what, const char *field, ib_error *err)
{
    size_t n = strlen(src);
    if (n >= cap) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s longer than %zu bytes", what, field, cap - 1);
    for (size_t i = 0; i <= n; i++) dst[i] = (src[i] > 0 && src[i] < 0x20) || src[i] == 0x7f ? '?' : src[i];
    return 0;
}
