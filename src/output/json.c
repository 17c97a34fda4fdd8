/* output/json.c: small helpers for writing cJSON documents. */
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "instbench/output.h"

cJSON *output_json_number(double v)
{
    /* JSON has no NaN/Infinity: an unknown figure is null. */
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

int output_json_write(FILE *out, const cJSON *doc, ib_error *err)
{
    char *s = util_json_print(doc);
    if (!s) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory formatting JSON");
    fputs(s, out);
    free(s);
    if (ferror(out)) return ib_error_set(err, IB_EXIT_RUNTIME, "cannot write JSON output");
    return 0;
}
