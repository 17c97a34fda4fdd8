/* prices_view: one set of column names for every format of `prices` (each market: on-demand and
 * spot, capacity-block, savings-plan).  A market fills a grid with two texts per cell, the plain
 * one the CSV and the JSON rows carry and the one people read in the table ($, ages, "4 x A10G");
 * the column's key is the CSV header, the JSON row key and what --columns names, so the table,
 * the CSV and the JSON pick and order the same columns by the same word. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "instbench/prices.h"

int prices_grid_init(prices_grid *g, const prices_column *cols)
{
    memset(g, 0, sizeof *g);
    g->cols = cols;
    while (cols[g->n_cols].key) g->n_cols++;
    if (g->n_cols > PRICES_MAX_COLUMNS) return -1;
    for (size_t c = 0; c < g->n_cols; c++) g->keys[c] = cols[c].key, g->prio[c] = cols[c].priority;
    return 0;
}

void prices_grid_free(prices_grid *g)
{
    for (size_t i = 0; i < g->n_rows * g->n_cols; i++) free(g->plain[i]), free(g->shown[i]);
    free(g->plain);
    free(g->shown);
    g->plain = g->shown = NULL;
    g->n_rows = g->cap = 0;
}

int prices_grid_add(prices_grid *g, const char *const *plain, const char *const *shown)
{
    if (g->n_rows == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        char **p = realloc(g->plain, cap * g->n_cols * sizeof *p);
        if (!p) return -1;
        g->plain = p;
        char **s = realloc(g->shown, cap * g->n_cols * sizeof *s);
        if (!s) return -1;
        g->shown = s;
        g->cap = cap;
    }
    char **p = g->plain + g->n_rows * g->n_cols, **s = g->shown + g->n_rows * g->n_cols;
    int bad = 0;
    for (size_t c = 0; c < g->n_cols; c++) {
        const char *v = plain[c] ? plain[c] : "";
        /* a cell without a people's form shows its plain text, "-" when there is none */
        const char *w = shown && shown[c] ? shown[c] : v[0] ? v : "-";
        p[c] = util_strdup(v), s[c] = util_strdup(w);
        bad |= !p[c] || !s[c];
    }
    g->n_rows++;
    return bad ? -1 : 0;
}

int prices_grid_column(const prices_grid *g, const char *key)
{
    for (size_t c = 0; c < g->n_cols; c++)
        if (!strcmp(g->cols[c].key, key)) return (int)c;
    return -1;
}

/* The region of every row when they share one (and there is a row), else NULL. */
static const char *one_region(const prices_grid *g)
{
    const int c = prices_grid_column(g, "region");
    if (c < 0 || !g->n_rows) return NULL;
    const char *first = g->plain[c];
    for (size_t r = 1; r < g->n_rows; r++)
        if (strcmp(g->plain[r * g->n_cols + c], first)) return NULL;
    return first[0] ? first : NULL;
}

int prices_grid_write_table(const prices_grid *g, const char *const *defaults, int picked, output_table *t, FILE *out)
{
    /* --columns (picked): every column, the table's fitting (output_fit_set) shows those asked, in
     * their order; else the market's default columns, in DEFAULTS' order, but for a REGION that
     * would repeat one region on every row: said once above the table instead, as rank does */
    const char *region = picked ? NULL : one_region(g);
    size_t idx[PRICES_MAX_COLUMNS], n = 0;
    for (size_t i = 0; picked ? i < g->n_cols : defaults[i] != NULL; i++) {
        int c = picked ? (int)i : prices_grid_column(g, defaults[i]);
        if (c >= 0 && region && !strcmp(g->cols[c].key, "region")) continue;
        if (c >= 0 && n < PRICES_MAX_COLUMNS) idx[n++] = (size_t)c;
    }
    const char *headers[PRICES_MAX_COLUMNS];
    output_align align[PRICES_MAX_COLUMNS];
    prices_grid *mut = (prices_grid *)g; /* the table keeps pointers to keys and priorities */
    for (size_t i = 0; i < n; i++) {
        const prices_column *col = &g->cols[idx[i]];
        headers[i] = col->header, align[i] = col->align;
        mut->table_keys[i] = col->key, mut->table_prio[i] = col->priority;
    }
    if (output_table_init(t, n, headers, align) != 0) return -1;
    output_table_fit_columns(t, g->table_keys, g->table_prio);
    const char *cells[PRICES_MAX_COLUMNS];
    for (size_t r = 0; r < g->n_rows; r++) {
        for (size_t i = 0; i < n; i++) cells[i] = g->shown[r * g->n_cols + idx[i]];
        if (output_table_add_row(t, cells) != 0) return -1;
    }
    if (region) util_term_printf(out, "region: %s\n", region);
    return output_table_write_text(t, out);
}

/* The columns KEYS names (every column when N is 0), as indexes into IDX; their count. */
static size_t pick(const prices_grid *g, char *const *keys, size_t n, size_t *idx)
{
    size_t k = 0;
    if (!n)
        for (size_t c = 0; c < g->n_cols; c++) idx[k++] = c;
    for (size_t i = 0; i < n && k < PRICES_MAX_COLUMNS; i++) {
        int c = prices_grid_column(g, keys[i]);
        if (c >= 0) idx[k++] = (size_t)c;
    }
    return k;
}

int prices_grid_write_csv(const prices_grid *g, char *const *keys, size_t n, FILE *out)
{
    size_t idx[PRICES_MAX_COLUMNS], k = pick(g, keys, n, idx);
    const char *headers[PRICES_MAX_COLUMNS], *cells[PRICES_MAX_COLUMNS];
    for (size_t i = 0; i < k; i++) headers[i] = g->cols[idx[i]].key;
    output_table t;
    if (output_table_init(&t, k, headers, NULL) != 0) return -1;
    int rc = 0;
    for (size_t r = 0; r < g->n_rows && !rc; r++) {
        for (size_t i = 0; i < k; i++) cells[i] = g->plain[r * g->n_cols + idx[i]];
        rc = output_table_add_row(&t, cells);
    }
    if (!rc) rc = output_table_write_csv(&t, out);
    output_table_free(&t);
    return rc;
}

/* A plain cell as JSON: "" is null; numbers are the CSV's text read back (util_fmt_double writes
 * the shortest text that reads back to the same double, so nothing is lost); times are the CSV's
 * UTC date-time with its Z. */
static cJSON *cell_json(const prices_column *col, const char *v)
{
    if (!v[0]) return cJSON_CreateNull();
    char *end;
    switch (col->kind) {
    case PRICES_NUMBER:
    case PRICES_NUMBER_OR_WORD: {
        double x = strtod(v, &end);
        if (!*end) return output_json_number(x);
        return col->kind == PRICES_NUMBER ? cJSON_CreateNull() : cJSON_CreateString(v);
    }
    case PRICES_TIME: {
        char iso[40];
        snprintf(iso, sizeof iso, "%sZ", v);
        return cJSON_CreateString(iso);
    }
    default: return cJSON_CreateString(v);
    }
}

int prices_grid_write_rows(const prices_grid *g, const char *market, time_t now, const char *note, char *const *keys,
                           size_t n, FILE *out)
{
    size_t idx[PRICES_MAX_COLUMNS], k = pick(g, keys, n, idx);
    cJSON *d = cJSON_CreateObject(), *cols = cJSON_CreateArray(), *rows = cJSON_CreateArray();
    char at[32];
    util_utc_iso8601(now, at);
    if (d) {
        cJSON_AddStringToObject(d, "schema", PRICES_ROWS_SCHEMA);
        cJSON_AddStringToObject(d, "generated_at", at);
        cJSON_AddStringToObject(d, "market", market);
        if (note) cJSON_AddStringToObject(d, "note", note);
    }
    for (size_t i = 0; cols && i < k; i++) cJSON_AddItemToArray(cols, cJSON_CreateString(g->cols[idx[i]].key));
    for (size_t r = 0; rows && r < g->n_rows; r++) {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; o && i < k; i++) {
            const prices_column *col = &g->cols[idx[i]];
            cJSON_AddItemToObject(o, col->key, cell_json(col, g->plain[r * g->n_cols + idx[i]]));
        }
        cJSON_AddItemToArray(rows, o);
    }
    int rc = -1;
    if (d && cols && rows) {
        cJSON_AddItemToObject(d, "columns", cols);
        cJSON_AddItemToObject(d, "rows", rows);
        ib_error err = {0};
        rc = output_json_write(out, d, &err);
        cJSON_Delete(d);
    } else {
        cJSON_Delete(d), cJSON_Delete(cols), cJSON_Delete(rows);
    }
    return rc;
}

const char *prices_column_key(const prices_column *cols, const char *key, int *old)
{
    *old = 0;
    for (const prices_column *c = cols; c->key; c++)
        if (!strcmp(c->key, key)) return c->key;
    for (const prices_column *c = cols; c->key; c++)
        if (c->old_key && !strcmp(c->old_key, key)) return *old = 1, c->key;
    return NULL;
}
