/* The Spot Instance Advisor's savings figure as a prices file states it, shown unchanged: a real
 * -1 (the advisor's figures go negative where spot costs more) reads -1 in the table, the CSV,
 * the JSON rows and the whole document written back, and an absent or null figure stays unknown
 * ("-", empty, null).  The expected values are read from the input document with cJSON, not from
 * what instbench writes.  A savings figure without a bucket is no Advisor entry: the reader
 * refuses it, naming the field. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "instbench/prices.h"

static const char input[] =
    "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:00:00Z\", \"prices\": [\n"
    " {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": 4, \"label\": \">20%\", \"savings_pct\": -1}},\n"
    " {\"instance_type\": \"p5.48xlarge\", \"region\": \"ca-central-1\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": 0, \"label\": \"<5%\", \"savings_pct\": -62}},\n"
    " {\"instance_type\": \"g5.xlarge\", \"region\": \"us-west-2\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": 1, \"label\": \"5-10%\", \"savings_pct\": 0}},\n"
    " {\"instance_type\": \"g5.xlarge\", \"region\": \"eu-west-1\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": 2, \"label\": \"10-15%\", \"savings_pct\": null}},\n"
    " {\"instance_type\": \"g5.xlarge\", \"region\": \"eu-central-1\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": 3}},\n"
    " {\"instance_type\": \"g5.xlarge\", \"region\": \"ap-south-1\", \"on_demand\": null, \"spot\": null,\n"
    "  \"interruption\": {\"bucket\": null, \"label\": null, \"savings_pct\": null}}]}\n";

enum { N_RECORDS = 6 };

/* Record I's savings as the input states it: "-1", or "" when absent or null. */
static void stated(const cJSON *doc, int i, char *out, size_t len)
{
    const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "prices"), i);
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "interruption"), "savings_pct");
    if (cJSON_IsNumber(v)) snprintf(out, len, "%d", v->valueint);
    else snprintf(out, len, "%s", "");
}

/* S written in FORMAT (with COLUMNS when N > 0), as text the caller frees. */
static char *written(const price_set *s, const char *format, char *const *columns, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    prices_view v = {format, 1, 1, 1795000000, columns, n};
    int rc = prices_write(s, &v, f);
    fclose(f);
    CHECK(rc == 0, "prices_write %s failed", format);
    return buf;
}

/* The text of a JSON savings_pct (number or null) as stated() writes it. */
static void json_text(const cJSON *v, char *out, size_t len)
{
    if (cJSON_IsNumber(v)) snprintf(out, len, "%d", v->valueint);
    else snprintf(out, len, "%s", cJSON_IsNull(v) ? "" : "(not a number or null)");
}

int main(void)
{
    cJSON *doc = cJSON_Parse(input);
    CHECK(doc && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "prices")) == N_RECORDS, "the input");
    char want[N_RECORDS][16];
    for (int i = 0; i < N_RECORDS; i++) stated(doc, i, want[i], sizeof want[i]);
    CHECK(!strcmp(want[0], "-1"), "the input's first record says %s", want[0]);

    price_set s;
    ib_error err = {0};
    if (prices_parse_json(input, sizeof input - 1, "input", &s, &err) != 0 || s.n != N_RECORDS) {
        fprintf(stderr, "FAIL: the input is refused: %s\n", err.msg);
        return 1;
    }

    /* the whole document, and read back */
    char *txt = written(&s, "json", NULL, 0);
    cJSON *out = cJSON_Parse(txt);
    price_set back;
    CHECK(prices_parse_json(txt, strlen(txt), "written", &back, &err) == 0, "written document refused: %s", err.msg);
    for (int i = 0; i < N_RECORDS; i++) {
        char got[32];
        const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(out, "prices"), i);
        json_text(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "interruption"), "savings_pct"), got,
            sizeof got);
        CHECK(!strcmp(got, want[i]), "document record %d: savings_pct '%s', the input says '%s'", i, got, want[i]);
        CHECK(back.n == N_RECORDS && back.items[i].savings_pct == s.items[i].savings_pct,
              "record %d: savings differ after a write and a read", i);
    }
    prices_free(&back);
    cJSON_Delete(out);
    free(txt);

    /* the rows --columns picks, as JSON and CSV, and the table */
    char *cols[] = {"instance_type", "region", "interruption_savings_pct"};
    txt = written(&s, "json", cols, 3);
    out = cJSON_Parse(txt);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(out, "rows");
    CHECK(cJSON_GetArraySize(rows) == N_RECORDS, "JSON rows: %d", cJSON_GetArraySize(rows));
    for (int i = 0; i < N_RECORDS && i < cJSON_GetArraySize(rows); i++) {
        char got[32];
        json_text(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, i), "interruption_savings_pct"), got,
                  sizeof got);
        CHECK(!strcmp(got, want[i]), "JSON row %d: '%s', the input says '%s'", i, got, want[i]);
    }
    cJSON_Delete(out);
    free(txt);

    txt = written(&s, "csv", NULL, 0);
    char *save = NULL, *line = strtok_r(txt, "\r\n", &save);
    int col = -1, k = 0;
    for (char *c = line; c; c = strchr(c, ','), c = c ? c + 1 : NULL, k++)
        if (!strncmp(c, "interruption_savings_pct", 24) && (c[24] == ',' || !c[24])) col = k;
    CHECK(col >= 0, "CSV: no interruption_savings_pct in the header");
    for (int i = 0; i < N_RECORDS && col >= 0; i++) {
        line = strtok_r(NULL, "\r\n", &save);
        const char *c = line;
        for (int j = 0; c && j < col; j++) c = strchr(c, ','), c = c ? c + 1 : NULL;
        size_t n = c ? strcspn(c, ",") : 0;
        CHECK(c && n == strlen(want[i]) && !strncmp(c, want[i], n), "CSV row %d: '%.*s', the input says '%s'", i,
              (int)n, c ? c : "", want[i]);
    }
    free(txt);

    /* the table (its columns are picked as `prices --columns` picks them): the last cell of each
     * row, "-" where the input gives none */
    output_fit_set(0, cols, 3);
    txt = written(&s, "table", cols, 3);
    save = NULL;
    line = strtok_r(txt, "\n", &save);
    CHECK(line && strstr(line, "ADVISOR SAVINGS %"), "table header: %s", line ? line : "(none)");
    for (int i = 0; i < N_RECORDS; i++) {
        line = strtok_r(NULL, "\n", &save);
        if (line && strspn(line, "- ") == strlen(line)) line = strtok_r(NULL, "\n", &save); /* a rule */
        const char *last = line ? strrchr(line, ' ') : NULL;
        const char *shown = want[i][0] ? want[i] : "-";
        CHECK(last && !strcmp(last + 1, shown), "table row %d: %s, the input says '%s'", i, line ? line : "(none)",
              shown);
    }
    free(txt);
    prices_free(&s);
    cJSON_Delete(doc);

    /* a savings figure without a bucket: refused, the field named */
    static const char orphan[] =
        "{\"schema\": \"instbench.prices/v1\", \"generated_at\": \"2026-11-22T00:00:00Z\", \"prices\": [\n"
        " {\"instance_type\": \"g5.xlarge\", \"region\": \"us-east-1\", \"on_demand\": null, \"spot\": null,\n"
        "  \"interruption\": {\"bucket\": null, \"label\": null, \"savings_pct\": 40}}]}\n";
    CHECK(prices_parse_json(orphan, sizeof orphan - 1, "orphan", &s, &err) != 0 &&
              strstr(err.msg, "prices[0].interruption.savings_pct") && strstr(err.msg, "without a bucket"),
          "savings without a bucket: %s", err.msg);
    return failures != 0;
}
