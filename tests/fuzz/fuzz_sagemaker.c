/* libFuzzer target: SageMaker's resource config (src/bench/sagemaker.c), the file a training
 * container finds at /opt/ml/input/config/resourceconfig.json and takes its node's identity from.
 * No input may crash, leak or overflow a field; a refusal names the file in one terminal-safe
 * line; whatever is accepted is an identity a job can have: an ml.* instance type, a current host
 * and rank 0's host that are host names, the node's rank inside the host count, rank 0's host the
 * first of them in byte order and no later than the current one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/bench.h"

static int host_name(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    return n >= 1 && n < cap && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bench_sagemaker s;
    ib_error err = {0};
    if (sagemaker_parse_config((const char *)data, size, "fuzz.json", &s, &err) != 0) {
        if (!strstr(err.msg, "fuzz.json")) abort();
        for (const char *p = err.msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) abort();
        return 0;
    }
    if (s.nodes < 1 || s.node_rank < 0 || s.node_rank >= s.nodes) abort();
    if (strncmp(s.instance_type, "ml.", 3) ||
        strnlen(s.instance_type, sizeof s.instance_type) == sizeof s.instance_type)
        abort();
    if (!host_name(s.current_host, sizeof s.current_host) || !host_name(s.master_host, sizeof s.master_host)) abort();
    if ((s.node_rank == 0) != !strcmp(s.master_host, s.current_host) || strcmp(s.master_host, s.current_host) > 0)
        abort();
    return 0;
}
