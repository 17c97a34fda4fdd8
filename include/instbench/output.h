/* output: renderers that know no domain (util only: prices and rank keep their own views).  A table is a grid of strings (callers format
 * numbers: units and rounding for people, plain full-precision numbers for CSV), so `rank`,
 * `prices` and others share one aligned-text writer and one RFC 4180 CSV writer. */
#ifndef INSTBENCH_OUTPUT_H
#define INSTBENCH_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "instbench/util.h"

typedef enum output_align { OUTPUT_LEFT = 0, OUTPUT_RIGHT = 1 } output_align;

typedef struct output_table {
    size_t n_cols;
    char **headers;          /* n_cols */
    output_align *align;     /* n_cols */
    const char *const *keys; /* n_cols or NULL: what --columns names (output_table_fit_columns) */
    const int *priority;     /* n_cols or NULL: higher stays longer when the terminal is narrow */
    char **cells;            /* row-major n_rows x n_cols, never NULL ("" when empty) */
    size_t n_rows, cap_rows;
    unsigned char *written; /* n_cols: 1 for the columns the last output_table_write_text showed */
} output_table;

/* ALIGN may be NULL (all left). */
int output_table_init(output_table *t, size_t n_cols, const char *const *headers, const output_align *align);
/* CELLS: n_cols strings, NULL meaning "". Copied. */
int output_table_add_row(output_table *t, const char *const *cells);
void output_table_free(output_table *t);
/* The one way numbers are grouped for people: 1234567.8 -> "1,234,568" (DECIMALS = 0) or
 * "1,234,567.8"; not finite -> "-".  (CSV and JSON carry plain numbers.) */
void output_fmt_grouped(char *out, size_t len, double v, int decimals);
/* The one way money is shown to people: "$2.47", "$1,234.50" (2 decimals, grouped); below $0.10
 * three significant digits ("$0.0122", "$0.0892"), so a cheap price keeps its figures.  Not
 * finite -> "-". */
void output_fmt_usd(char *out, size_t len, double usd);
/* The one way a duration is shown to people: under an hour whole minutes ("45 min", "<1 min"),
 * under 48 hours tenths of an hour ("5.3 h"), from 48 hours days and whole hours ("2d 21h").
 * Negative or not finite -> "-". */
void output_fmt_duration(char *out, size_t len, double seconds);
/* The one way a probability is shown to people: "37.5%" (one decimal), never a certainty it is
 * not: above 99.95% but below 1 ">99.9%", below 0.05% but above 0 "<0.1%" ("100.0%" and "0.0%"
 * only for 1 and 0).  Outside [0, 1] or not finite -> "-". */
void output_fmt_probability(char *out, size_t len, double p);

/* Tables that fit the terminal.  A table's columns may carry keys and priorities (static arrays
 * the caller owns; OUTPUT_KEEP: never left out).  output_fit_set (each command, from --wide and
 * --columns, before it writes) applies to every text table after it: WIDTH > 0 leaves out the
 * lowest-priority columns (the rightmost first among equals) until a line fits, and says so under
 * the table; WIDTH 0 shows all.  COLUMNS (n > 0) shows exactly those keys, in that order. */
enum { OUTPUT_KEEP = 100 };
void output_table_fit_columns(output_table *t, const char *const *keys, const int *priority);
void output_fit_set(size_t width, char *const *columns, size_t n_columns);
/* A note under a table (printf-style): shown terminal-safe and word-wrapped to the fitted width;
 * continuation lines hang under the value of a "  label    value" line, else 2 further in. */
void output_note(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The width of the terminal OUT writes to ($COLUMNS, else the terminal's, else 80); 0 when OUT is
 * not a terminal (pipes and files get every column unless --columns asks). */
size_t output_terminal_width(FILE *out);

/* Aligned columns separated by two spaces, a header row and a dashed rule; widths count UTF-8
 * characters, not bytes.  Cells are shown terminal-safe (util_term_escape).  Fitted as above. */
int output_table_write_text(const output_table *t, FILE *out);
/* Whether the last output_table_write_text showed the column KEY (the terminal's width and
 * --columns decide): a legend under the table speaks only of what is there.  0 before any write. */
int output_table_showed(const output_table *t, const char *key);
/* RFC 4180 quoting (fields with , " CR or LF quoted, quotes doubled), header row, LF line ends.
 * A cell starting with = + - @ tab or CR that is not a plain number gets a leading ' (OWASP's
 * CSV-injection rule), so a spreadsheet shows it as text instead of running it. */
int output_table_write_csv(const output_table *t, FILE *out);
/* One CSV field, quoted when needed, ' added as above. */
void output_csv_field(FILE *out, const char *s);

/* JSON helpers (cJSON documents): non-finite numbers become null, never invalid JSON. */
struct cJSON;
struct cJSON *output_json_number(double v);
/* Pretty-prints DOC plus a newline. */
int output_json_write(FILE *out, const struct cJSON *doc, ib_error *err);

/* SVG scatter plot. */
typedef struct output_point {
    double x, y;
    const char *label; /* full text: tooltip and the key beside the plot */
    const char *tag;   /* short text drawn next to the point ("#3"); NULL: draw LABEL */
    int frontier;      /* drawn on the connecting frontier line, emphasised */
    int hollow;        /* drawn as a ring with a dashed outline: a figure not measured as shown
                                    (rank: an extrapolated row) */
} output_point;

typedef struct output_ray { /* guide line y = slope * x through the origin */
    double slope;
    const char *label;
} output_ray;

typedef struct output_plot {
    const char *title;
    const char *subtitle;
    const char *x_label, *y_label;
    const output_point *points;
    size_t n_points;
    const output_ray *rays;
    size_t n_rays;
    const char *legend;    /* one line under the plot, or NULL */
    const char *key_title; /* heading of the key listing every point's label, NULL: no key */
} output_plot;

/* Renders a standalone SVG document (text escaped, valid XML). *SVG is malloc'd. */
int output_svg_scatter(const output_plot *p, char **svg, size_t *len, ib_error *err);
/* Appends S to an XML text/attribute context with & < > " ' escaped, control characters dropped
 * and non-ASCII bytes shown as '?' (the document stays valid XML whatever S holds). */
void output_xml_escape(FILE *out, const char *s);

#endif
