/* output/csv.c: RFC 4180 CSV of an output_table (spreadsheet-ready: callers put plain numbers in
 * numeric cells, no units, no thousands separators; text that a spreadsheet would run as a
 * formula is prefixed with ' so it stays text). */
#include <string.h>

#include "instbench/output.h"

/* A plain decimal number: [+-] digits [. digits] [e [+-] digits], at least one digit. */
static int is_number(const char *s)
{
    size_t digits = 0;
    if (*s == '+' || *s == '-') s++;
    for (; *s >= '0' && *s <= '9'; s++) digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++) digits++;
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') s++;
    }
    return *s == '\0';
}

void output_csv_field(FILE *out, const char *s)
{
    if (!s) return;
    /* OWASP's CSV-injection rule: a spreadsheet runs a cell starting with = + - @ tab or CR as a
     * formula ("=HYPERLINK(...)" in a device name, "=cmd|..." in a zone name); a leading ' makes
     * it text.  Numbers stay numbers: a negative price or saving is not a formula. */
    int text = s[0] && strchr("=+-@\t\r", s[0]) && !is_number(s);
    if (!strpbrk(s, ",\"\r\n")) {
        if (text) fputc('\'', out);
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (text) fputc('\'', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int output_table_write_csv(const output_table *t, FILE *out)
{
    for (size_t r = 0; r <= t->n_rows; r++) {
        for (size_t c = 0; c < t->n_cols; c++) {
            if (c) fputc(',', out);
            output_csv_field(out, r == 0 ? t->headers[c] : t->cells[(r - 1) * t->n_cols + c]);
        }
        fputc('\n', out);
    }
    return ferror(out) ? -1 : 0;
}
