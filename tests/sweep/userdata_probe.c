/* A driver for src/sweep/userdata.c, used by tests/sweep/sweep_userdata*.py.
 *   userdata_probe render VARS.json      the rendered script on stdout
 *   userdata_probe log-nodes VARS.json   how many log URLs it carries
 *   userdata_probe archive               the source archive beside this program: "PATH SHA256"
 * VARS.json: {"sweep_id", "candidate_spec", "nodes", "max_minutes", "region", "market",
 * "source_url", "source_sha256", "result_url", "log_urls": [...], "rendezvous_url",
 * "measure_args": [...], "efa_devices"} (a key left out is NULL / 0).
 * Exit 0 when it succeeded, else the error's code (message on stderr, one line). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/sweep.h"

static int die(const ib_error *e)
{
    fprintf(stderr, "userdata_probe: %s\n", e->msg);
    return e->code ? e->code : 1;
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The strings of array KEY (NULL for a non-string item), malloc'd; *N their count. */
static char **strs(const cJSON *j, const char *key, size_t *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key), *it;
    *n = 0;
    if (!cJSON_IsArray(a)) return NULL;
    char **out = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *out);
    cJSON_ArrayForEach(it, a) out[(*n)++] = cJSON_IsString(it) ? it->valuestring : NULL;
    return out;
}

int main(int argc, char **argv)
{
    ib_error err = {0};
    if (argc == 2 && !strcmp(argv[1], "archive")) {
        char path[PATH_MAX], hex[65];
        if (sweep_source_archive(path, sizeof path, hex, &err) != 0) return die(&err);
        printf("%s %s\n", path, hex);
        return 0;
    }
    if (argc != 3) return 2;
    char *text;
    size_t len;
    if (util_read_file(argv[2], (size_t)16 << 20, &text, &len, &err) != 0) return die(&err);
    cJSON *j = cJSON_Parse(text);
    if (!j) {
        free(text);
        return 2;
    }
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "nodes");
    const cJSON *minutes = cJSON_GetObjectItemCaseSensitive(j, "max_minutes");
    const cJSON *efa = cJSON_GetObjectItemCaseSensitive(j, "efa_devices");
    size_t n_logs, n_args;
    char **logs = strs(j, "log_urls", &n_logs), **args = strs(j, "measure_args", &n_args);
    sweep_userdata_vars v = {
        .sweep_id = str(j, "sweep_id"),
        .candidate_spec = str(j, "candidate_spec"),
        .nodes = cJSON_IsNumber(nodes) ? nodes->valueint : 0,
        .max_minutes = cJSON_IsNumber(minutes) ? minutes->valuedouble : 0,
        .region = str(j, "region"),
        .market = str(j, "market"),
        .source_url = str(j, "source_url"),
        .source_sha256 = str(j, "source_sha256"),
        .result_url = str(j, "result_url"),
        .log_urls = (const char *const *)logs,
        .rendezvous_url = str(j, "rendezvous_url"),
        .measure_args = args,
        .n_measure_args = n_args,
        .efa_devices = cJSON_IsNumber(efa) ? efa->valueint : 0,
    };
    /* every path frees what it read: the ASan build's leak check would turn exit 2 into 1 */
    int rc = 0;
    if (!strcmp(argv[1], "render")) {
        char *out;
        if (sweep_userdata_render(&v, &out, &err) != 0) {
            rc = die(&err);
        } else {
            fwrite(out, 1, strlen(out), stdout);
            free(out);
        }
    } else if (!strcmp(argv[1], "log-nodes")) {
        int k = sweep_userdata_log_nodes(&v, &err);
        if (k < 0) rc = die(&err);
        else printf("%d\n", k);
    } else {
        rc = 2;
    }
    free(logs);
    free(args);
    cJSON_Delete(j);
    free(text);
    return rc;
}
