/* output/table.c: a grid of strings and its aligned plain-text rendering (cells escaped for the
 * terminal: they may quote files and services instbench does not control). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"

int output_table_init(output_table *t, size_t n_cols, const char *const *headers, const output_align *align)
{
    memset(t, 0, sizeof *t);
    t->headers = calloc(n_cols, sizeof *t->headers);
    t->align = calloc(n_cols, sizeof *t->align);
    if (!t->headers || !t->align) {
        output_table_free(t);
        return -1;
    }
    t->n_cols = n_cols;
    for (size_t c = 0; c < n_cols; c++) {
        t->headers[c] = util_strdup(headers[c] ? headers[c] : "");
        if (!t->headers[c]) {
            output_table_free(t);
            return -1;
        }
        t->align[c] = align ? align[c] : OUTPUT_LEFT;
    }
    return 0;
}

int output_table_add_row(output_table *t, const char *const *cells)
{
    if (t->n_rows == t->cap_rows) {
        size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
        char **nc = realloc(t->cells, cap * t->n_cols * sizeof *nc);
        if (!nc) return -1;
        t->cells = nc;
        t->cap_rows = cap;
    }
    char **row = t->cells + t->n_rows * t->n_cols;
    for (size_t c = 0; c < t->n_cols; c++) {
        row[c] = util_strdup(cells[c] ? cells[c] : "");
        if (!row[c]) {
            while (c--) free(row[c]);
            return -1;
        }
    }
    t->n_rows++;
    return 0;
}

void output_table_free(output_table *t)
{
    if (!t) return;
    for (size_t i = 0; t->cells && i < t->n_rows * t->n_cols; i++) free(t->cells[i]);
    for (size_t c = 0; t->headers && c < t->n_cols; c++) free(t->headers[c]);
    free(t->cells);
    free(t->headers);
    free(t->align);
    memset(t, 0, sizeof *t);
}

/* Display width: UTF-8 continuation bytes do not advance the cursor. */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *out, size_t n)
{
    while (n--) fputc(' ', out);
}

int output_table_write_text(const output_table *t, FILE *out)
{
    /* Cells hold untrusted text (zone names, device names): shown escaped, widths measured on
     * what is shown. */
    size_t n = (t->n_rows + 1) * t->n_cols;
    char **shown = calloc(n ? n : 1, sizeof *shown);
    size_t *w = calloc(t->n_cols ? t->n_cols : 1, sizeof *w);
    int rc = shown && w ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *s = i < t->n_cols ? t->headers[i] : t->cells[i - t->n_cols];
        if (!(shown[i] = util_term_escape_dup(s))) rc = -1;
        else if (width(shown[i]) > w[i % t->n_cols]) w[i % t->n_cols] = width(shown[i]);
    }
    for (size_t r = 0; rc == 0 && r <= t->n_rows + 1; r++) {
        for (size_t c = 0; c < t->n_cols; c++) {
            int last = c + 1 == t->n_cols;
            if (r == 1) {   /* the rule under the header */
                for (size_t i = 0; i < w[c]; i++) fputc('-', out);
                if (!last) fputs("  ", out);
                continue;
            }
            const char *s = shown[(r ? r - 1 : 0) * t->n_cols + c];
            size_t gap = w[c] - width(s);
            if (t->align[c] == OUTPUT_RIGHT) pad(out, gap);
            fputs(s, out);
            /* No trailing blanks at line ends. */
            if (!last) {
                if (t->align[c] == OUTPUT_LEFT) pad(out, gap);
                fputs("  ", out);
            }
        }
        fputc('\n', out);
    }
    for (size_t i = 0; shown && i < n; i++) free(shown[i]);
    free(shown);
    free(w);
    return rc == 0 && !ferror(out) ? 0 : -1;
}

/* 1234567.8 -> "1,234,568" (DECIMALS = 0) or "1,234,567.8". */
void output_fmt_grouped(char *out, size_t len, double v, int decimals)
{
    if (!isfinite(v)) {
        snprintf(out, len, "-");
        return;
    }
    char raw[64];
    snprintf(raw, sizeof raw, "%.*f", decimals, fabs(v));
    char *dot = strchr(raw, '.');
    size_t int_len = dot ? (size_t)(dot - raw) : strlen(raw), o = 0;
    if (v < 0 && o + 1 < len) out[o++] = '-';
    for (size_t i = 0; i < int_len && o + 2 < len; i++) {
        if (i && (int_len - i) % 3 == 0) out[o++] = ',';
        out[o++] = raw[i];
    }
    if (dot)
        for (const char *p = dot; *p && o + 1 < len; p++) out[o++] = *p;
    out[o] = '\0';
}
