/* peak: the MFU denominator of GPUs: configs/gpu-peak-flops.json (one place for that fact; every
 * figure there carries its datasheet).  A backend that measures its own (cpu) does so through its
 * table's peak_measure. */
#include "instbench/bench.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

int peak_gpu_lookup(const char *gpu_name, ib_precision p, double *tflops, char *source, size_t source_len)
{
    const char *path = getenv("INSTBENCH_GPU_PEAK_FLOPS");
    char def[4096];
    if (!path || !path[0]) {
        snprintf(def, sizeof def, "%s/configs/gpu-peak-flops.json", INSTBENCH_SOURCE_DIR);
        path = def;
    }
    char *text = NULL;
    ib_error e;
    /* the shipped table is 5 KB; INSTBENCH_GPU_PEAK_FLOPS=/dev/zero must not fill the memory */
    if (!gpu_name || !gpu_name[0] || util_read_file(path, (size_t)1 << 20, &text, NULL, &e) != 0) return -1;
    cJSON *root = cJSON_Parse(text);
    free(text);
    int rc = -1;
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
    cJSON *g;
    cJSON_ArrayForEach(g, gpus)
    {
        cJSON *match = cJSON_GetObjectItemCaseSensitive(g, "match"), *m;
        int hit = 0;
        cJSON_ArrayForEach(m, match) if (cJSON_IsString(m) && contains_ci(gpu_name, m->valuestring)) hit = 1;
        if (!hit) continue;
        cJSON *v = cJSON_GetObjectItemCaseSensitive(g, p == IB_PREC_BF16 ? "bf16_tflops" : "fp32_tflops");
        cJSON *src = cJSON_GetObjectItemCaseSensitive(g, "source");
        if (cJSON_IsNumber(v) && v->valuedouble > 0) {
            *tflops = v->valuedouble;
            snprintf(source, source_len, "%s", cJSON_IsString(src) ? src->valuestring : "configs/gpu-peak-flops.json");
            rc = 0;
        }
        break; /* first match decides, even when it has no figure for this precision */
    }
    cJSON_Delete(root);
    return rc;
}
