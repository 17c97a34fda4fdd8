/* libFuzzer target: `rank` decompresses .json.gz / .jsonl.gz inputs (local files and S3 objects)
 * through rank/gzip.c's capped stream.  Any bytes, as either kind (the first byte picks), must be
 * loaded or skipped with a reason: no crash, no sanitizer report, every skip reason one line, the
 * memory bounded by the 64 MiB cap (libFuzzer's RSS limit catches a cap that leaks).  Enters through the same
 * door an S3 object does (rank_load with a remote reader handing the bytes to rank_sink_object). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/rank.h"

typedef struct input {
    const uint8_t *data;
    size_t size;
    const char *name;
} input;

static void remote(void *ctx, const char *uri, rank_sink *sink)
{
    const input *in = ctx;
    rank_sink_object(sink, uri, in->name, (const char *)in->data, in->size);
}

static void on_skip(void *ctx, const char *where, const char *reason)
{
    (void)ctx;
    (void)where;
    if (!reason[0] || strchr(reason, '\n')) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    input in = {data + 1, size - 1, (data[0] & 1) ? "fuzz.jsonl.gz" : "fuzz.json.gz"};
    char *paths[] = {"s3://fuzz-bkt/fuzz"};
    rank_load_options opt = {.remote = remote, .remote_ctx = &in};
    rank_results res = {0};
    ib_error err;
    if (rank_load(paths, 1, &opt, &res, on_skip, NULL, &err) != 0) __builtin_trap(); /* only out of memory fails */
    if (res.files_read > 1) __builtin_trap();
    for (size_t i = 0; i < res.n; i++)
        if (res.items[i].nodes < 1 || !(res.items[i].samples_per_second > 0)) __builtin_trap();
    rank_results_free(&res);
    return 0;
}
