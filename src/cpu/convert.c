/* cpu/convert: fp32 -> act dtype stores (bf16 round to nearest even, as torch's autocast casts). */
#include "cpu/ops.h"
#include "cpu/simd.h"

CPU_KERNEL static void to_bf16(bf16 *restrict d, const float *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = cpu_bf16_rne(s[i]);
}

CPU_KERNEL void cpu_load_bf16(float *restrict dst, const bf16 *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = cpu_bits_f32((uint32_t)src[i] << 16);
}

void cpu_store(void *dst, ib_precision dt, size_t off, const float *src, size_t n)
{
    if (dt == IB_PREC_FP32) memcpy((float *)dst + off, src, n * sizeof(float));
    else to_bf16((bf16 *)dst + off, src, n);
}

/* Both directions over all threads, in chunks of 16 Ki elements: narrow (fp32 -> bf16, RNE) or
 * widen (bf16 -> fp32, exact). */
static void convert_parallel(void *dst, const void *src, size_t n, int narrow)
{
    const size_t chunk = 1 << 14;
    const long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        size_t lo = (size_t)c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (narrow) to_bf16((bf16 *)dst + lo, (const float *)src + lo, hi - lo);
        else cpu_load_bf16((float *)dst + lo, (const bf16 *)src + lo, hi - lo);
    }
}

void cpu_convert_bf16(bf16 *dst, const float *src, size_t n) { convert_parallel(dst, src, n, 1); }
void cpu_widen_bf16(float *dst, const bf16 *src, size_t n) { convert_parallel(dst, src, n, 0); }
