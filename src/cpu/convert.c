/* cpu/convert: fp32 -> act dtype stores (bf16 round to nearest even, as torch's autocast casts). */
#include "cpu/ops.h"

void cpu_store(void *dst, cpu_dtype dt, size_t off, const float *src, size_t n)
{
    if (dt == CPU_F32) {
        memcpy((float *)dst + off, src, n * sizeof(float));
    } else {
        bf16 *d = (bf16 *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = cpu_bf16_from_f32(src[i]);
    }
}

void cpu_convert_bf16(bf16 *dst, const float *src, size_t n)
{
    const size_t chunk = 1 << 14;
    const long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        size_t lo = (size_t)c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        for (size_t i = lo; i < hi; i++) dst[i] = cpu_bf16_from_f32(src[i]);
    }
}
