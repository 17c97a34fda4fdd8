/* util/json_keys.c: the one JSON layout instbench writes, and finds an object key given twice in a
 * parsed JSON document.  cJSON keeps every
 * member and its lookups return the first, while jq and Python keep the last: a file with
 * {"samples_per_second": 100, "samples_per_second": 1e6} would mean different things to
 * instbench and to the tools people check it with, so readers refuse it instead. */
#include "instbench/util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

size_t util_json_escaped_nul(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!in_string) {
            in_string = c == '"';
        } else if (c == '"') {
            in_string = 0;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4)) return i + 1;
            i++; /* the escaped character: \" does not end the string */
        }
    }
    return 0;
}

static int cmp_key(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A key of OBJ given twice, or NULL.  Small objects pairwise, large ones sorted. */
static const char *repeated_key(const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c; c = c->next) n++;
    if (n < 2) return NULL;
    if (n <= 16) {
        for (const cJSON *a = obj->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next) /* the first bytes first: most keys differ there */
                if (a->string && b->string && a->string[0] == b->string[0] && !strcmp(a->string, b->string))
                    return a->string;
        return NULL;
    }
    const char **keys = malloc(n * sizeof *keys), *dup = NULL;
    if (!keys) return NULL;
    size_t k = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        if (c->string) keys[k++] = c->string;
    qsort(keys, k, sizeof *keys, cmp_key);
    for (size_t i = 1; i < k && !dup; i++)
        if (!strcmp(keys[i - 1], keys[i])) dup = keys[i];
    free(keys);
    return dup;
}

/* Appends N bytes of S to PATH (length LEN, capacity CAP), cut to fit; returns the new length. */
static size_t append(char *path, size_t len, size_t cap, const char *s, size_t n)
{
    if (n > cap - 1 - len) n = cap - 1 - len;
    memcpy(path + len, s, n);
    path[len + n] = '\0';
    return len + n;
}

/* Appends ".key" or "[i]" to PATH (length LEN < CAP), cut to fit; returns the new length.  By hand,
 * not snprintf: it runs for every member of a document, and formatting them was a sixth of
 * loading the 780 KB price snapshot, which every `prices` and `rank` run does. */
static size_t step(char *path, size_t len, size_t cap, const cJSON *parent, const cJSON *child, size_t i)
{
    if (cJSON_IsObject(parent)) {
        const char *key = child->string ? child->string : "(null)";
        if (len) len = append(path, len, cap, ".", 1);
        return append(path, len, cap, key, strlen(key));
    }
    char num[24]; /* "[i]", written from the end */
    char *p = num + sizeof num;
    *--p = ']';
    do *--p = (char)('0' + i % 10);
    while (i /= 10);
    *--p = '[';
    return append(path, len, cap, p, (size_t)(num + sizeof num - p));
}

static int find(const cJSON *node, char *path, size_t len, size_t cap)
{
    if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return 0;
    const char *dup = cJSON_IsObject(node) ? repeated_key(node) : NULL;
    if (dup) {
        snprintf(path + len, cap - len, "%s%s", len ? "." : "", dup);
        return 1;
    }
    size_t i = 0;
    for (const cJSON *c = node->child; c; c = c->next, i++) {
        if (find(c, path, step(path, len, cap, node, c, i), cap)) return 1;
        path[len] = '\0';
    }
    return 0;
}

int util_json_duplicate_key(const struct cJSON *doc, char *path, size_t cap)
{
    if (!cap) return 0;
    path[0] = '\0';
    return find(doc, path, 0, cap);
}

size_t util_json_depth(const char *text, size_t len)
{
    size_t depth = 0, max = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '"') { /* brackets inside strings do not nest */
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\') i++;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max) max = depth;
        } else if ((ch == ']' || ch == '}') && depth) {
            depth--;
        }
    }
    return max;
}

/* Numbers become raw text in util_fmt_double's form: the printers below then write them as they
 * are.  cJSON frees a raw item's valuestring with free() (its default hooks; instbench sets none). */
static int numbers_to_raw(cJSON *item)
{
    for (; item; item = item->next) {
        if (cJSON_IsNumber(item)) {
            char buf[40];
            util_fmt_double(buf, sizeof buf, item->valuedouble);
            char *raw = util_strdup(buf[0] ? buf : "null");
            if (!raw) return -1;
            item->type = cJSON_Raw | (item->type & cJSON_StringIsConst);
            item->valuestring = raw;
        } else if (item->child && numbers_to_raw(item->child) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The code point a JSON text shows escaped, or 0: cJSON escapes C0 and '"' and '\\' only, but a
 * terminal obeys DEL's and C1's (U+009B is CSI), the bidirectional controls reorder what is read
 * (U+202A-202E, U+2066-2069), and U+2028/2029 end a line in JavaScript before ES2019.  They can
 * only occur inside strings (everything else cJSON writes is ASCII), so the printed text is
 * rewritten, byte for byte the same elsewhere. */
static unsigned unsafe_at(const unsigned char *p, size_t *len)
{
    if (p[0] == 0x7F) return *len = 1, 0x7F;
    if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) return *len = 2, p[1];
    if (p[0] == 0xE2 && p[1] == 0x80 && p[2] >= 0xA8 && p[2] <= 0xAE) return *len = 3, 0x2000u + (p[2] - 0x80u);
    if (p[0] == 0xE2 && p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9) return *len = 3, 0x2040u + (p[2] - 0x80u);
    return 0;
}

/* TXT (cJSON's, freed here) with those escaped as \uNNNN; malloc'd; NULL when out of memory. */
static char *escape_unsafe(char *txt)
{
    if (!txt) return NULL;
    size_t n = strlen(txt), extra = 0, len;
    for (const unsigned char *p = (const unsigned char *)txt; *p; p++)
        if (unsafe_at(p, &len)) extra += 6;
    char *out = malloc(n + extra + 1);
    if (out) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;
        for (const unsigned char *p = (const unsigned char *)txt; *p;) {
            unsigned cp = unsafe_at(p, &len);
            if (!cp) {
                out[o++] = (char)*p++;
                continue;
            }
            out[o++] = '\\', out[o++] = 'u';
            for (int i = 0; i < 4; i++) out[o++] = hex[(cp >> (12 - 4 * i)) & 15];
            p += len;
        }
        out[o] = '\0';
    }
    cJSON_free(txt);
    return out;
}

char *util_json_print_compact(const cJSON *doc)
{
    if (numbers_to_raw((cJSON *)doc) != 0) return NULL;
    return escape_unsafe(cJSON_PrintUnformatted(doc));
}

char *util_json_print(const cJSON *doc)
{
    if (numbers_to_raw((cJSON *)doc) != 0) return NULL;
    char *txt = escape_unsafe(cJSON_Print(doc));
    if (!txt) return NULL;
    /* cJSON indents with tabs and puts a tab after ':'.  Strings escape their tabs (\t), so every
     * raw tab is layout: re-indent with two spaces, ": " after keys, for a diff-friendly file. */
    size_t n = strlen(txt), tabs = 0;
    for (size_t i = 0; i < n; i++) tabs += txt[i] == '\t';
    char *out = malloc(n + tabs + 2);
    if (!out) {
        free(txt);
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (txt[i] != '\t') out[o++] = txt[i];
        else if (i > 0 && txt[i - 1] == ':') out[o++] = ' ';
        else out[o++] = ' ', out[o++] = ' ';
    }
    out[o++] = '\n';
    out[o] = '\0';
    free(txt);
    return out;
}
