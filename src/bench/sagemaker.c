/* sagemaker: the identity of a SageMaker training job's node, where EC2 instance metadata is not
 * reachable (a training container has no IMDS of its own).  SageMaker writes the cluster's shape to
 * /opt/ml/input/config/resourceconfig.json (INSTBENCH_SAGEMAKER_RESOURCE_CONFIG replaces the path,
 * for tests):
 *   {"current_host": "algo-1", "current_instance_type": "ml.g5.xlarge",
 *    "hosts": ["algo-1", "algo-2"], "network_interface_name": "eth0", ...}
 * The node's rank is its place among the sorted host names, as SageMaker's training toolkit
 * (sagemaker_training.environment, `hosts = sorted(...)`) and its launchers number them.
 * The file is hostile input like any other: bounded in size, every field typed and checked, the
 * instance type an ml.* name, the current host one of the hosts; anything else is refused with
 * the field named, never taken as an identity. */
#include "instbench/bench.h"
#include "instbench/instance_type.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SAGEMAKER_DEFAULT_PATH "/opt/ml/input/config/resourceconfig.json"
enum { MAX_FILE = 1 << 20, MAX_HOSTS = 4096 };

const char *sagemaker_resource_config_path(void)
{
    const char *p = getenv("INSTBENCH_SAGEMAKER_RESOURCE_CONFIG");
    return p && p[0] ? p : SAGEMAKER_DEFAULT_PATH;
}

/* A host name as SageMaker gives them ("algo-1"): letters, digits, '.', '-', '_', 1..63 long. */
static int host_ok(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == n;
}

/* "ml.<family>.<size>" in lower case, the form the Pricing API and SageMaker's API use. */
static int ml_type_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 6 || n > 40 || !instance_type_is_sagemaker(s)) return 0;
    if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n) return 0;
    const char *dot = strchr(s + 3, '.');
    return dot && dot > s + 3 && dot[1] && !strchr(dot + 1, '.');
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int refuse(const char *path, ib_error *err, const char *why)
{
    return ib_error_set(err, IB_EXIT_RUNTIME, "SageMaker resource config %s: %s", path, why);
}

static int parse(const char *path, const cJSON *root, bench_sagemaker *out, ib_error *err)
{
    char why[160];
    if (!cJSON_IsObject(root)) return refuse(path, err, "not a JSON object");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "current_instance_type");
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(root, "current_host");
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(root, "hosts");
    if (!cJSON_IsString(type)) return refuse(path, err, "current_instance_type is missing or not a string");
    if (!ml_type_ok(type->valuestring))
        return refuse(path, err, "current_instance_type is not a SageMaker instance type (ml.FAMILY.SIZE)");
    if (!cJSON_IsString(cur) || !host_ok(cur->valuestring))
        return refuse(path, err, "current_host is missing or not a host name");
    if (!cJSON_IsArray(hosts)) return refuse(path, err, "hosts is missing or not an array");
    const int n = cJSON_GetArraySize(hosts);
    if (n < 1 || n > MAX_HOSTS) {
        snprintf(why, sizeof why, "hosts has %d entries (1..%d)", n, MAX_HOSTS);
        return refuse(path, err, why);
    }
    const char **names = malloc((size_t)n * sizeof *names);
    if (!names) return refuse(path, err, "out of memory");
    int i = 0;
    for (const cJSON *h = hosts->child; h; h = h->next, i++) {
        if (!cJSON_IsString(h) || !host_ok(h->valuestring)) {
            free(names);
            snprintf(why, sizeof why, "hosts[%d] is not a host name", i);
            return refuse(path, err, why);
        }
        names[i] = h->valuestring;
    }
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    out->node_rank = -1;
    for (i = 0; i < n; i++) {
        if (i > 0 && !strcmp(names[i], names[i - 1])) {
            free(names);
            return refuse(path, err, "hosts names a host twice");
        }
        if (!strcmp(names[i], cur->valuestring)) out->node_rank = i;
    }
    if (out->node_rank >= 0) snprintf(out->master_host, sizeof out->master_host, "%s", names[0]);
    free(names);
    if (out->node_rank < 0) return refuse(path, err, "current_host is not one of hosts");
    snprintf(out->instance_type, sizeof out->instance_type, "%s", type->valuestring);
    snprintf(out->current_host, sizeof out->current_host, "%s", cur->valuestring);
    out->nodes = n;
    return 0;
}

int sagemaker_identity(bench_sagemaker *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    const char *path = sagemaker_resource_config_path();
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT || errno == ENOTDIR ? 1 : refuse(path, err, strerror(errno));
    if (!S_ISREG(st.st_mode)) return refuse(path, err, "not a regular file");
    if (st.st_size > MAX_FILE) return refuse(path, err, "larger than 1 MiB");
    char *data = NULL;
    size_t len = 0;
    ib_error rerr = {0};
    if (util_read_file(path, MAX_FILE, &data, &len, &rerr) != 0) return refuse(path, err, rerr.msg);
    int rc = sagemaker_parse_config(data, len, path, out, err);
    free(data);
    return rc;
}

int sagemaker_parse_config(const char *text, size_t len, const char *path, bench_sagemaker *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > MAX_FILE) return refuse(path, err, "larger than 1 MiB");
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return refuse(path, err, "not valid JSON");
    int rc = parse(path, root, out, err);
    cJSON_Delete(root);
    return rc;
}
