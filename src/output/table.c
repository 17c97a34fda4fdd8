/* output/table.c: a grid of strings and its aligned plain-text rendering (cells escaped for the
 * terminal: they may quote files and services instbench does not control). */
#define _GNU_SOURCE /* vasprintf */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "instbench/output.h"

int output_table_init(output_table *t, size_t n_cols, const char *const *headers, const output_align *align)
{
    memset(t, 0, sizeof *t);
    t->headers = calloc(n_cols, sizeof *t->headers);
    t->align = calloc(n_cols, sizeof *t->align);
    t->written = calloc(n_cols ? n_cols : 1, 1);
    if (!t->headers || !t->align || !t->written) {
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
    free(t->written);
    memset(t, 0, sizeof *t);
}

/* Display width: UTF-8 continuation bytes do not advance the cursor. */
static size_t width_n(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n && s[i]; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

static size_t width(const char *s) { return width_n(s, (size_t)-1); }

static void pad(FILE *out, size_t n)
{
    while (n--) fputc(' ', out);
}

static struct {
    size_t width;
    char *const *columns;
    size_t n_columns;
} fit;

void output_fit_set(size_t width, char *const *columns, size_t n_columns)
{
    fit.width = width;
    fit.columns = columns;
    fit.n_columns = n_columns;
}

size_t output_terminal_width(FILE *out)
{
    if (!isatty(fileno(out))) return 0;
    const char *env = getenv("COLUMNS");
    long n = 0;
    if (env && util_parse_int(env, 20, 100000, &n) == 0) return (size_t)n;
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

void output_note(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *raw = NULL;
    int n = vasprintf(&raw, fmt, ap);
    va_end(ap);
    char *text = n >= 0 ? util_term_escape_dup(raw) : NULL;
    free(raw);
    if (!text) return;
    /* Word-wrapped at the fitted width; continuation lines indented as the first line is, plus 2. */
    size_t indent = strspn(text, " "), col = 0, pending = 0; /* spaces written only before a word */
    /* continuation lines hang under the value of a "label   value" line, else 2 in */
    size_t hang = indent + 2;
    const char *gap = strstr(text + indent, "  ");
    if (gap && gap - text < 24) hang = (size_t)(gap - text) + strspn(gap, " ");
    for (const char *p = text; *p;) {
        size_t word = strcspn(p, " "), ww = width_n(p, word);
        if (fit.width && col > indent && col + pending + ww > fit.width) {
            fputc('\n', out);
            for (col = 0; col < hang; col++) fputc(' ', out);
            pending = 0;
        }
        for (; pending; pending--, col++) fputc(' ', out);
        fwrite(p, 1, word, out);
        col += ww;
        p += word;
        pending = strspn(p, " ");
        p += pending;
    }
    fputc('\n', out);
    free(text);
}

void output_table_fit_columns(output_table *t, const char *const *keys, const int *priority)
{
    t->keys = keys;
    t->priority = priority;
}

/* The columns to show, in order, into vis (n_cols room); returns how many, *hidden how many the
 * width left out.  w: each column's width. */
static size_t visible_columns(const output_table *t, const size_t *w, size_t *vis, size_t *hidden)
{
    size_t n = 0;
    *hidden = 0;
    if (fit.n_columns && t->keys) {
        for (size_t k = 0; k < fit.n_columns; k++)
            for (size_t c = 0; c < t->n_cols; c++)
                if (!strcmp(t->keys[c], fit.columns[k])) vis[n++] = c;
        if (n) return n; /* none of them here (another table of the command): show it whole */
    }
    for (size_t c = 0; c < t->n_cols; c++) vis[n++] = c;
    for (;;) {
        size_t total = 0, drop = n;
        for (size_t i = 0; i < n; i++) total += w[vis[i]] + (i ? 2 : 0);
        if (!fit.width || total <= fit.width) return n;
        for (size_t i = 0; i < n; i++) {
            int p = t->priority ? t->priority[vis[i]] : OUTPUT_KEEP;
            if (p < OUTPUT_KEEP && (drop == n || p <= t->priority[vis[drop]])) drop = i;
        }
        if (drop == n) return n; /* only columns that must stay: the lines stay long */
        memmove(vis + drop, vis + drop + 1, (n - drop - 1) * sizeof *vis);
        n--;
        (*hidden)++;
    }
}

int output_table_write_text(const output_table *t, FILE *out)
{
    /* Cells hold untrusted text (zone names, device names): shown escaped, widths measured on
     * what is shown. */
    size_t n = (t->n_rows + 1) * t->n_cols;
    char **shown = calloc(n ? n : 1, sizeof *shown);
    size_t *w = calloc(t->n_cols ? t->n_cols : 1, sizeof *w), *vis = calloc(t->n_cols ? t->n_cols : 1, sizeof *vis);
    int rc = shown && w && vis ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *s = i < t->n_cols ? t->headers[i] : t->cells[i - t->n_cols];
        if (!(shown[i] = util_term_escape_dup(s))) rc = -1;
        else if (width(shown[i]) > w[i % t->n_cols]) w[i % t->n_cols] = width(shown[i]);
    }
    size_t hidden = 0, nv = rc == 0 ? visible_columns(t, w, vis, &hidden) : 0;
    memset(t->written, 0, t->n_cols);
    for (size_t v = 0; v < nv; v++) t->written[vis[v]] = 1;
    for (size_t r = 0; rc == 0 && r <= t->n_rows + 1; r++) {
        for (size_t v = 0; v < nv; v++) {
            const size_t c = vis[v];
            int last = v + 1 == nv;
            if (r == 1) { /* the rule under the header */
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
    if (rc == 0 && hidden)
        fprintf(out, "(%zu more column%s: --wide shows %s, --columns picks)\n", hidden, hidden == 1 ? "" : "s",
                hidden == 1 ? "it" : "them");
    for (size_t i = 0; shown && i < n; i++) free(shown[i]);
    free(shown);
    free(w);
    free(vis);
    return rc == 0 && !ferror(out) ? 0 : -1;
}

int output_table_showed(const output_table *t, const char *key)
{
    for (size_t c = 0; t->keys && c < t->n_cols; c++)
        if (!strcmp(t->keys[c], key)) return t->written[c];
    return 0;
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

void output_fmt_usd(char *out, size_t len, double usd)
{
    if (!isfinite(usd)) {
        snprintf(out, len, "-");
        return;
    }
    /* The decimals come from the value rounded to 3 significant digits (its exponent), so
     * $0.09996 reads "$0.10", not "$0.1000". */
    char sig[32];
    snprintf(sig, sizeof sig, "%.2e", fabs(usd));
    const char *e = strchr(sig, 'e');
    int exp10 = e && usd != 0 ? atoi(e + 1) : 0, decimals = exp10 < -1 ? 2 - exp10 : 2;
    if (decimals > 12) decimals = 12; /* below any price AWS has: the figure is not the point */
    char num[64];
    output_fmt_grouped(num, sizeof num, fabs(usd), decimals);
    snprintf(out, len, "%s$%s", usd < 0 ? "-" : "", num);
}

void output_fmt_duration(char *out, size_t len, double seconds)
{
    if (!isfinite(seconds) || seconds < 0) {
        snprintf(out, len, "-");
        return;
    }
    /* Each unit is chosen on the rounded value, so 59.7 min reads "1.0 h", not "60 min". */
    double minutes = round(seconds / 60), tenths = round(seconds / 360), hours = round(seconds / 3600);
    if (minutes < 1) {
        snprintf(out, len, "<1 min");
    } else if (minutes < 60) {
        snprintf(out, len, "%.0f min", minutes);
    } else if (tenths < 480) {
        snprintf(out, len, "%.1f h", tenths / 10);
    } else {
        char d[64];
        double days = floor(hours / 24);
        output_fmt_grouped(d, sizeof d, days, 0);
        /* past ~270 years the hours say nothing (and the digits would not fit) */
        if (days >= 1e5) snprintf(out, len, "%sd", d);
        else snprintf(out, len, "%sd %.0fh", d, hours - 24 * days);
    }
}

void output_fmt_probability(char *out, size_t len, double p)
{
    if (!(p >= 0 && p <= 1)) snprintf(out, len, "-");
    else if (p < 1 && p >= 0.9995) snprintf(out, len, ">99.9%%");
    else if (p > 0 && p < 0.0005) snprintf(out, len, "<0.1%%");
    else snprintf(out, len, "%.1f%%", 100 * p);
}
