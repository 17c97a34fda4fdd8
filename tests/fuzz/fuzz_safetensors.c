/* libFuzzer target: the safetensors reader on arbitrary bytes.  Whatever it accepts must describe
 * data inside the buffer, tiling it exactly, and convert without touching anything else.
 * Build: cmake -DCMAKE_C_COMPILER=clang -DINSTBENCH_FUZZ=ON; run: fuzz_safetensors -max_total_time=60
 * (seeds: tests/data/ref_*.safetensors). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_file f;
    ib_error err;
    if (safetensors_parse_buffer(data, size, &f, &err)) return 0;
    size_t total = 0;
    for (size_t i = 0; i < f.count; i++) {
        const st_tensor *t = &f.tensors[i];
        total += t->nbytes;
        if (t->data < f.buf || t->data + t->nbytes > f.buf + f.len) abort();
        if (safetensors_find_tensor(&f, t->name) != t) abort();
        if (t->numel <= 4096) {
            float *o = malloc((t->numel ? t->numel : 1) * sizeof *o);
            int64_t *q = malloc((t->numel ? t->numel : 1) * sizeof *q);
            if (o && q) {
                (void)safetensors_tensor_to_f32(t, o, &err);
                (void)safetensors_tensor_to_i64(t, q, &err);
            }
            free(o);
            free(q);
        }
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | data[i];
    if (total != size - 8 - hlen) abort();
    for (size_t i = 0; i < f.meta_count; i++)
        if (safetensors_get_meta(&f, f.meta_keys[i]) == NULL) abort();
    safetensors_free(&f);
    return 0;
}
