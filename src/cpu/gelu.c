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
 * the first would keep its AVX2 clone scalar (no masked stores below AVX-512). */
CPU_KERNEL static void gelu_bwd_block(const float *restrict h, float *restrict g, bf16 *restrict act,
                                      float *restrict acc, size_t ld, long r0, long r1, int w)
{
    for (long r = r0; r < r1; r++) {
        const float *hr = h + (size_t)r * ld;
        float *gr = g + (size_t)r * ld;
        for (int j = 0; j < w; j++) {
            const float x = hr[j], z = x * 0.70710678118654752f, e = cpu_expf(-z * z);   /* e = exp(-x^2/2) */
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
    /* tasks: (row block, column block), partial column sums added in a fixed order */
    enum { CB = 256, RB = 8 };
    const int nblk = (F + CB - 1) / CB;
    const long rows_per = (M + RB - 1) / RB;
    float *part = calloc((size_t)RB * F, sizeof *part);
    bf16 *act = dt == IB_PREC_BF16 ? (bf16 *)dh_act : NULL;
#pragma omp parallel for schedule(static) collapse(2)
    for (int rb = 0; rb < RB; rb++)
        for (int blk = 0; blk < nblk; blk++) {
            const int c0 = blk * CB, w = c0 + CB < F ? CB : F - c0;
            const long r0 = rb * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
            if (r0 < r1)
                gelu_bwd_block(h + c0, g + c0, act ? act + c0 : NULL, part + (size_t)rb * F + c0, F, r0, r1, w);
        }
    for (int j = 0; j < F; j++) {
        float s = 0;
        for (int rb = 0; rb < RB; rb++) s += part[(size_t)rb * F + j];
        db[j] = s;
    }
    free(part);
}
