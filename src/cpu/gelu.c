/* cpu/gelu: exact GELU, 0.5 x (1 + erf(x / sqrt 2)) as nn.GELU() (timm's default act_layer). */
#include "cpu/ops.h"
#include "cpu/simd.h"

#include <stdlib.h>

#define CHUNK 4096

CPU_KERNEL static void gelu_fwd(const float *restrict h, float *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float x = h[i];
        out[i] = 0.5f * x * (1.0f + cpu_erff(x * 0.70710678118654752f));
    }
}

/* d/dx GELU = Phi(x) + x phi(x); rows r0..r1 of [M,F], columns c0..c0+w: g <- g * GELU'(h) in
 * fp32 (what the fp32 GEMMs read), column sums into acc (the fc1 bias grad), and under bf16 the
 * act copy too.  The copy is a second loop over the row still in cache: a conditional store in
 * the first would keep its AVX2 clone scalar (no masked stores below AVX-512).  A
 * cpu_colsum_block_fn. */
CPU_KERNEL static void gelu_bwd_block(const float *restrict h, float *restrict g, bf16 *restrict act,
                                      float *restrict acc, size_t ld, long r0, long r1, int w)
{
    for (long r = r0; r < r1; r++) {
        const float *hr = h + (size_t)r * ld;
        float *gr = g + (size_t)r * ld;
        for (int j = 0; j < w; j++) {
            const float x = hr[j], z = x * 0.70710678118654752f, e = cpu_expf(-z * z); /* e = exp(-x^2/2) */
            const float cdf = 0.5f * (1.0f + cpu_erff_e(z, e));
            const float pdf = e * 0.39894228040143268f;
            const float d = gr[j] * (cdf + x * pdf);
            acc[j] += d;
            gr[j] = d;
        }
        if (act)
            for (int j = 0; j < w; j++) act[(size_t)r * ld + j] = cpu_bf16_rne(gr[j]);
    }
}

void cpu_gelu_forward(const float *h, void *a, ib_precision dt, size_t n)
{
    const long nchunks = (long)((n + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        float buf[CHUNK];
        const size_t lo = (size_t)c * CHUNK, len = lo + CHUNK < n ? CHUNK : n - lo;
        if (dt == IB_PREC_FP32) {
            gelu_fwd(h + lo, (float *)a + lo, len);
        } else {
            gelu_fwd(h + lo, buf, len);
            cpu_store(a, dt, lo, buf, len);
        }
    }
}

void cpu_gelu_backward(const float *h, float *g, void *dh_act, float *db, ib_precision dt, int M, int F)
{
    cpu_colsum_tasks(gelu_bwd_block, h, g, dt == IB_PREC_BF16 ? (bf16 *)dh_act : NULL, M, F, db);
}
