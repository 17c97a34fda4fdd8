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

/* d/dx GELU = Phi(x) + x phi(x) over w columns of one row: g <- g * GELU'(h) in fp32, its
 * values added into acc (the fc1 bias grad). */
CPU_KERNEL static void gelu_bwd_row(const float *restrict h, float *restrict g, float *restrict acc, int w)
{
    for (int j = 0; j < w; j++) {
        const float x = h[j], z = x * 0.70710678118654752f, e = cpu_expf(-z * z); /* e = exp(-x^2/2) */
        const float cdf = 0.5f * (1.0f + cpu_erff_e(z, e));
        const float pdf = e * 0.39894228040143268f;
        const float d = g[j] * (cdf + x * pdf);
        acc[j] += d;
        g[j] = d;
    }
}

/* Rows r0..r1 of [M,F], columns c0..c0+w, in place: fp32 h and g (cpu_colsum_block_fn). */
static void gelu_bwd_block(const void *h, void *g, bf16 *act, float *acc, size_t ld, long r0, long r1, int c0, int w)
{
    (void)act;
    for (long r = r0; r < r1; r++)
        gelu_bwd_row((const float *)h + (size_t)r * ld + c0, (float *)g + (size_t)r * ld + c0, acc, w);
}

/* The same with bf16 h and g (autocast keeps fc1's output and the gradients around GELU in bf16):
 * each row's w columns widened to fp32 (exact), and dh rounded back once; the bias grad sums the
 * fp32 values before that rounding, as under fp32. */
static void gelu_bwd_block_bf16(const void *h, void *g, bf16 *act, float *acc, size_t ld, long r0, long r1, int c0,
                                int w)
{
    (void)act;
    float hr[CPU_COLSUM_COLS], gr[CPU_COLSUM_COLS];
    for (long r = r0; r < r1; r++) {
        const size_t o = (size_t)r * ld + c0;
        cpu_load_bf16(hr, (const bf16 *)h + o, w);
        cpu_load_bf16(gr, (const bf16 *)g + o, w);
        gelu_bwd_row(hr, gr, acc, w);
        cpu_store(g, IB_PREC_BF16, o, gr, w);
    }
}

void cpu_gelu_forward(const void *h, void *a, ib_precision dt, size_t n)
{
    const long nchunks = (long)((n + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        float hin[CHUNK], buf[CHUNK];
        const size_t lo = (size_t)c * CHUNK, len = lo + CHUNK < n ? CHUNK : n - lo;
        if (dt == IB_PREC_FP32) {
            gelu_fwd((const float *)h + lo, (float *)a + lo, len);
        } else { /* bf16 h widened (exact), GELU in fp32, rounded once */
            cpu_load_bf16(hin, (const bf16 *)h + lo, len);
            gelu_fwd(hin, buf, len);
            cpu_store(a, dt, lo, buf, len);
        }
    }
}

void cpu_gelu_backward(const void *h, void *g, float *db, ib_precision dt, int M, int F)
{
    cpu_colsum_tasks(dt == IB_PREC_BF16 ? gelu_bwd_block_bf16 : gelu_bwd_block, h, g, NULL, M, F, db);
}
