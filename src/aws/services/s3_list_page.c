/* s3_list_page: one ListObjectsV2 page's XML (encoding-type=url) into keys and sizes, the
 * continuation token and IsTruncated; keys arrive percent-encoded and are decoded here, staying
 * untrusted bytes for the caller.  The paging is s3_paging.c's, the requests s3.c's. */
#include "internal.h"

#include <ctype.h>
#include <expat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct list_parse {
    XML_Parser p;
    aws_s3_listing *out;
    size_t first;                  /* out->n before this page: what url-decoding applies to */
    int depth, in_contents, field; /* field: 1 Key, 2 Size, 3 NextContinuationToken, 4 IsTruncated, 5 EncodingType */
    char key[S3_MAX_KEY * 3 + 1];  /* percent-encoded keys may be 3x the key */
    size_t key_len;
    char size[32], token[4096], truncated[8], encoding[8];
    size_t size_len, token_len, truncated_len, encoding_len;
    int saw_root, failed;
    ib_error *err;
} list_parse;

static void list_fail(list_parse *lp, const char *why)
{
    if (!lp->failed) ib_error_set(lp->err, IB_EXIT_RUNTIME, "S3 ListObjectsV2: %s", why);
    lp->failed = 1;
    XML_StopParser(lp->p, XML_FALSE);
}

static void XMLCALL list_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    (void)atts;
    list_parse *lp = ud;
    lp->depth++;
    if (lp->failed) return;
    lp->field = 0;
    if (lp->depth == 1) {
        if (strcmp(name, "ListBucketResult")) list_fail(lp, "unexpected XML document");
        lp->saw_root = 1;
    } else if (lp->depth == 2) {
        if (!strcmp(name, "Contents")) {
            lp->in_contents = 1;
            lp->key_len = lp->size_len = 0;
            lp->key[0] = lp->size[0] = '\0';
        } else if (!strcmp(name, "NextContinuationToken")) {
            lp->field = 3;
            lp->token_len = 0;
        } else if (!strcmp(name, "IsTruncated")) {
            lp->field = 4;
            lp->truncated_len = 0;
        } else if (!strcmp(name, "EncodingType")) {
            lp->field = 5;
            lp->encoding_len = 0;
        }
    } else if (lp->depth == 3 && lp->in_contents) {
        if (!strcmp(name, "Key")) lp->field = 1;
        else if (!strcmp(name, "Size")) lp->field = 2;
    }
}

static void field_append(list_parse *lp, char *buf, size_t cap, size_t *len, const char *s, int n, const char *what)
{
    if (*len + (size_t)n >= cap) {
        char why[64];
        snprintf(why, sizeof why, "%s too long", what);
        list_fail(lp, why);
        return;
    }
    memcpy(buf + *len, s, (size_t)n);
    *len += (size_t)n;
    buf[*len] = '\0';
}

static void XMLCALL list_text(void *ud, const XML_Char *s, int n)
{
    list_parse *lp = ud;
    if (lp->failed || n <= 0) return;
    switch (lp->field) {
    case 1: field_append(lp, lp->key, sizeof lp->key, &lp->key_len, s, n, "a key"); break;
    case 2: field_append(lp, lp->size, sizeof lp->size, &lp->size_len, s, n, "a size"); break;
    case 3: field_append(lp, lp->token, sizeof lp->token, &lp->token_len, s, n, "the continuation token"); break;
    case 4: field_append(lp, lp->truncated, sizeof lp->truncated, &lp->truncated_len, s, n, "IsTruncated"); break;
    case 5: field_append(lp, lp->encoding, sizeof lp->encoding, &lp->encoding_len, s, n, "EncodingType"); break;
    default: break;
    }
}

/* Appends KEY (malloc'd; L owns it from here, also on failure). */
int s3_listing_push(aws_s3_listing *l, char *key, long long size)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        aws_s3_object *p = realloc(l->objs, nc * sizeof *p);
        if (!p) {
            free(key);
            return -1;
        }
        l->objs = p;
        l->cap = nc;
    }
    l->objs[l->n].key = key;
    l->objs[l->n].size = size;
    l->n++;
    return 0;
}

static int listing_add(aws_s3_listing *l, const char *key, size_t key_len, long long size)
{
    char *k = malloc(key_len + 1);
    if (!k) return -1;
    memcpy(k, key, key_len);
    k[key_len] = '\0';
    return s3_listing_push(l, k, size);
}

/* S3 writes a Size as plain decimal digits; strtoll alone would also take a sign, leading
 * whitespace and (clamped) an overflow, none of which S3 sends, so a server that does is not
 * trusted with the rest of the page either.  -1 when S is not such a number in range. */
static long long size_value(const char *s)
{
    long long v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (LLONG_MAX - (*s - '0')) / 10) return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static void XMLCALL list_end(void *ud, const XML_Char *name)
{
    list_parse *lp = ud;
    if (!lp->failed && lp->depth == 2 && lp->in_contents && !strcmp(name, "Contents")) {
        lp->in_contents = 0;
        long long size = size_value(lp->size);
        if (!lp->key_len) {
            list_fail(lp, "an object without a key");
        } else if (size < 0) {
            /* the key as listed (still url-encoded): the message stays one line of printable text */
            char why[400];
            snprintf(why, sizeof why, "object '%.200s': size '%.40s' is not a byte count (decimal digits only)",
                     lp->key, lp->size_len ? lp->size : "");
            list_fail(lp, why);
        } else if (listing_add(lp->out, lp->key, lp->key_len, size) != 0) {
            list_fail(lp, "out of memory");
        }
    }
    lp->field = 0;
    lp->depth--;
}

static int hexv(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* encoding-type=url: keys arrive as form-urlencoded (%XX, and '+' for space as S3 writes it). */
static void url_decode_inplace(char *s)
{
    size_t o = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '%' && hexv((unsigned char)s[i + 1]) >= 0 && hexv((unsigned char)s[i + 2]) >= 0) {
            s[o++] = (char)(hexv((unsigned char)s[i + 1]) * 16 + hexv((unsigned char)s[i + 2]));
            i += 2;
        } else {
            s[o++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    s[o] = '\0';
}

int aws_s3_parse_list_page(const char *xml, size_t len, aws_s3_listing *out, char **next, ib_error *err)
{
    *next = NULL;
    list_parse *lp = calloc(1, sizeof *lp);
    if (!lp) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    lp->out = out;
    lp->first = out->n;
    lp->err = err;
    lp->p = XML_ParserCreate("UTF-8");
    if (!lp->p) {
        free(lp);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    XML_SetUserData(lp->p, lp);
    XML_SetElementHandler(lp->p, list_start, list_end);
    XML_SetCharacterDataHandler(lp->p, list_text);
    int rc = 0;
    if (XML_Parse(lp->p, xml ? xml : "", (int)(len > (size_t)1 << 30 ? 1u << 30 : len), XML_TRUE) == XML_STATUS_ERROR &&
        !lp->failed)
        rc = ib_error_set(err, IB_EXIT_RUNTIME, "S3 ListObjectsV2: malformed XML (%s)",
                          XML_ErrorString(XML_GetErrorCode(lp->p)));
    if (lp->failed) rc = -1;
    if (rc == 0 && !lp->saw_root) rc = ib_error_set(err, IB_EXIT_RUNTIME, "S3 ListObjectsV2: empty answer");
    if (rc == 0 && !strcmp(lp->encoding, "url"))
        for (size_t i = lp->first; i < out->n; i++) url_decode_inplace(out->objs[i].key);
    if (rc == 0 && !strcmp(lp->truncated, "true")) {
        if (!lp->token_len)
            rc = ib_error_set(err, IB_EXIT_RUNTIME, "S3 ListObjectsV2: truncated listing without a continuation token");
        else if (!(*next = strdup(lp->token))) rc = ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    XML_ParserFree(lp->p);
    free(lp);
    return rc;
}

/* The query of the page after TOKEN (NULL: the first), parameters in byte order as the canonical
 * query sorts them anyway; NULL when out of memory. */

void aws_s3_listing_free(aws_s3_listing *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) free(l->objs[i].key);
    free(l->objs);
    memset(l, 0, sizeof *l);
}
