/* ec2_xml: the expat reader behind every EC2 answer instbench parses (ec2.c, ec2_launch.c) and
 * the query-API request they send.  Contract in internal.h. */
#include "internal.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define PATH_MAX_LEN 512

static const aws_header form_headers[] = {
    {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
};

int ec2_request(const char *region, char *body, aws_request *req, char **url, ib_error *err, const char *what)
{
    char ep[512];
    char why[200];
    if (aws_endpoint_url("EC2", region, ep, sizeof ep) != 0 || !ep[0])
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: no endpoint for region %s: %s", what, region,
                            aws_endpoint_problem("EC2", region, sizeof ep, why, sizeof why));
    size_t n = strlen(ep) + 2;
    *url = malloc(n);
    if (!*url) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", what);
    snprintf(*url, n, "%s%s", ep, ep[strlen(ep) - 1] == '/' ? "" : "/");
    memset(req, 0, sizeof *req);
    req->method = "POST";
    req->service = "ec2";
    req->region = region;
    req->url = *url;
    req->headers = form_headers;
    req->n_headers = 1;
    req->body = body;
    req->body_len = strlen(body);
    return 0;
}

typedef struct reader {
    const ec2_xml_spec *spec;
    void *ctx;
    XML_Parser parser;
    ib_error *err;
    int depth, failed, saw_root;
    char path[PATH_MAX_LEN];    /* element names below the root joined by '/' */
    size_t plen[MAX_DEPTH + 1]; /* path length at each depth */
    size_t item_len, sub_len;   /* strlen(spec->item), strlen(spec->sub) */
    int item_depth, sub_depth;  /* 0: not inside one */
    int field, field_depth;     /* field being read in the item (-1: none) */
    int sub_field, sub_field_depth;
    int in_token;
    char v[EC2_XML_FIELDS][EC2_XML_VALUE_MAX];
    size_t vlen[EC2_XML_FIELDS];
    char sv[3][EC2_XML_VALUE_MAX];
    size_t svlen[3];
    char next_token[4096];
    size_t token_len;
} reader;

static void fail(reader *r, const char *why)
{
    if (!r->failed) ib_error_set(r->err, IB_EXIT_RUNTIME, "%s: %s", r->spec->what, why);
    r->failed = 1;
    XML_StopParser(r->parser, XML_FALSE);
}

static int match(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n && names[i]; i++)
        if (!strcmp(names[i], s)) return (int)i;
    return -1;
}

static int append(reader *r, char *dst, size_t *len, size_t cap, const char *s, int n, const char *what);

/* Where an element that just opened (path already extended) sits: item, sub entry, field. */
static void classify(reader *r)
{
    const ec2_xml_spec *s = r->spec;
    const char *p = r->path;
    if (!r->item_depth) {
        if (!strcmp(p, s->item)) {
            r->item_depth = r->depth;
            memset(r->vlen, 0, sizeof r->vlen);
            for (int i = 0; i < EC2_XML_FIELDS; i++) r->v[i][0] = '\0';
        }
        return;
    }
    /* below the item: the path starts with "item/" (an empty item is the root itself) */
    const char *rel = r->item_len ? p + r->item_len + 1 : p;
    if (r->sub_depth) {
        const char *srel = rel + r->sub_len + 1;
        if (r->sub_field < 0 && (r->sub_field = match(s->sub_fields, 3, srel)) >= 0) {
            r->sub_field_depth = r->depth;
            size_t n = strlen(srel);
            if (n >= 5 && !strcmp(srel + n - 5, "/item")) {
                /* one entry of a list of strings: appended after a space */
                if (r->svlen[r->sub_field])
                    append(r, r->sv[r->sub_field], &r->svlen[r->sub_field], EC2_XML_VALUE_MAX, " ", 1,
                           "value too long in an item");
            } else {
                r->svlen[r->sub_field] = 0;
                r->sv[r->sub_field][0] = '\0';
            }
        }
        return;
    }
    if (s->sub && !strcmp(rel, s->sub)) {
        r->sub_depth = r->depth;
        memset(r->svlen, 0, sizeof r->svlen);
        for (int i = 0; i < 3; i++) r->sv[i][0] = '\0';
        return;
    }
    if (r->field < 0 && (r->field = match(s->fields, EC2_XML_FIELDS, rel)) >= 0) {
        r->field_depth = r->depth;
        r->vlen[r->field] = 0;
        r->v[r->field][0] = '\0';
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    reader *r = ud;
    (void)atts;
    r->depth++;
    if (r->failed) return;
    if (r->depth > MAX_DEPTH) {
        fail(r, "XML nested too deeply");
        return;
    }
    if (r->depth == 1) {
        if (strcmp(name, r->spec->root) != 0) {
            char why[160];
            snprintf(why, sizeof why, "unexpected XML document <%.60s>, expected <%s>", name, r->spec->root);
            fail(r, why);
            return;
        }
        r->saw_root = 1;
        r->plen[1] = 0;
        r->path[0] = '\0';
        if (!r->spec->item[0]) { /* a flat answer: the root is the one item */
            r->item_depth = 1;
            memset(r->vlen, 0, sizeof r->vlen);
            for (int i = 0; i < EC2_XML_FIELDS; i++) r->v[i][0] = '\0';
        }
        return;
    }
    size_t base = r->plen[r->depth - 1], n = strlen(name);
    size_t sep = r->depth > 2;
    if (base + sep + n >= sizeof r->path) {
        fail(r, "XML element path too long");
        return;
    }
    if (sep) r->path[base] = '/';
    memcpy(r->path + base + sep, name, n + 1);
    r->plen[r->depth] = base + sep + n;
    /* nextToken may come before the list (moto writes it first): only its own element resets it */
    if (r->depth == 2 && (r->in_token = !strcmp(name, "nextToken"))) {
        r->token_len = 0;
        r->next_token[0] = '\0';
    }
    classify(r);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    reader *r = ud;
    (void)name;
    if (!r->failed) {
        if (r->field >= 0 && r->depth == r->field_depth) r->field = -1;
        if (r->sub_field >= 0 && r->depth == r->sub_field_depth) r->sub_field = -1;
        if (r->sub_depth && r->depth == r->sub_depth) {
            r->sub_depth = 0;
            if (r->spec->on_sub && r->spec->on_sub(r->ctx, r->sv, r->err) != 0) {
                r->failed = 1;
                XML_StopParser(r->parser, XML_FALSE);
            }
        } else if (r->item_depth && r->depth == r->item_depth) {
            r->item_depth = 0;
            if (r->spec->on_item(r->ctx, r->v, r->err) != 0) {
                r->failed = 1;
                XML_StopParser(r->parser, XML_FALSE);
            }
        } else if (r->depth == 2) {
            r->in_token = 0;
        }
        if (r->depth >= 2 && r->depth <= MAX_DEPTH) r->path[r->plen[r->depth - 1]] = '\0';
    }
    r->depth--;
}

static int append(reader *r, char *dst, size_t *len, size_t cap, const char *s, int n, const char *what)
{
    if (*len + (size_t)n >= cap) {
        fail(r, what);
        return -1;
    }
    memcpy(dst + *len, s, (size_t)n);
    *len += (size_t)n;
    dst[*len] = '\0';
    return 0;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    reader *r = ud;
    if (r->failed || len <= 0) return;
    if (r->depth == 2 && r->in_token)
        append(r, r->next_token, &r->token_len, sizeof r->next_token, s, len, "nextToken too long");
    else if (r->sub_field >= 0 && r->depth == r->sub_field_depth)
        append(r, r->sv[r->sub_field], &r->svlen[r->sub_field], EC2_XML_VALUE_MAX, s, len, "value too long in an item");
    else if (r->field >= 0 && r->depth == r->field_depth)
        append(r, r->v[r->field], &r->vlen[r->field], EC2_XML_VALUE_MAX, s, len, "value too long in an item");
}

int ec2_xml_parse(const ec2_xml_spec *spec, void *ctx, const char *xml, size_t len, char **next, ib_error *err)
{
    if (next) *next = NULL;
    reader *r = calloc(1, sizeof *r);
    if (!r) return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", spec->what);
    r->spec = spec;
    r->ctx = ctx;
    r->err = err;
    r->field = r->sub_field = -1;
    r->item_len = strlen(spec->item);
    r->sub_len = spec->sub ? strlen(spec->sub) : 0;
    r->parser = XML_ParserCreate("UTF-8");
    if (!r->parser) {
        free(r);
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", spec->what);
    }
    XML_SetUserData(r->parser, r);
    XML_SetElementHandler(r->parser, on_start, on_end);
    XML_SetCharacterDataHandler(r->parser, on_text);
    int ok = 1;
    /* Feed in bounded chunks: XML_Parse takes an int length. */
    size_t off = 0;
    do {
        size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
        int final = off + chunk == len;
        if (XML_Parse(r->parser, xml + off, (int)chunk, final) != XML_STATUS_OK) {
            ok = 0;
            break;
        }
        off += chunk;
    } while (off < len);
    if (!ok && !r->failed)
        ib_error_set(err, IB_EXIT_RUNTIME, "%s: malformed XML response (%s at line %lu)", spec->what,
                     XML_ErrorString(XML_GetErrorCode(r->parser)), (unsigned long)XML_GetCurrentLineNumber(r->parser));
    XML_ParserFree(r->parser);
    int rc = 0;
    if (!ok || r->failed) rc = -1;
    else if (!r->saw_root) rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: empty response", spec->what);
    else if (next && r->next_token[0] && !(*next = strdup(r->next_token)))
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "%s: out of memory", spec->what);
    free(r);
    return rc;
}
