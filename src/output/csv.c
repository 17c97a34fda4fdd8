/* output/csv.c: RFC 4180 CSV of an output_table (spreadsheet-ready: callers put plain numbers in
 * numeric cells, no units, no thousands separators). */
#include <string.h>

#include "instbench/output.h"

void output_csv_field(FILE *out, const char *s)
{
    if (!s) return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
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
