/* cpu/layernorm: LayerNorm over the last dim (eps 1e-6 as timm's ViT), fp32 statistics, with the
 * residual add that precedes each norm fused in (one pass over the residual stream). */
#include "cpu/ops.h"
#include "cpu/simd.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define LN_EPS 1e-6f

/* One row: optional x = x_in + res (stored to x_out), then y = (x - mean) * rstd * w + b.
 * Two-pass variance as torch's CPU kernel (no E[x^2] - E[x]^2 cancellation). */
CPU_KERNEL static void ln_fwd_row(const float *restrict x_in, const float *restrict res, float *restrict x_out,
                                  const float *restrict w, const float *restrict b, float *restrict y, float *mean,
                                  float *rstd, int D)
{
    const float *x = x_in;
    if (res) {
        for (int d = 0; d < D; d++) x_out[d] = x_in[d] + res[d];
        x = x_out;
    }
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int d = 0; d < D; d++) s += x[d];
    const float m = s / D;
    float v = 0;
#pragma omp simd reduction(+ : v)
    for (int d = 0; d < D; d++) v += (x[d] - m) * (x[d] - m);
    const float rs = 1.0f / sqrtf(v / D + LN_EPS);
    for (int d = 0; d < D; d++) y[d] = (x[d] - m) * rs * w[d] + b[d];
    *mean = m;
    *rstd = rs;
}

void cpu_layernorm_forward(const float *x_in, const void *res, float *x_out, const float *w, const float *b, void *y,
                           ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t x_stride)
{
    const int bf = dt != IB_PREC_FP32;
#pragma omp parallel
    {
        /* under bf16: the output row before its rounding, and the residual (a Linear's bf16 output)
         * widened to fp32, exactly */
        float *row = bf ? aligned_alloc(64, ((size_t)D * 8 + 63) / 64 * 64) : NULL, *rrow = row ? row + D : NULL;
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            float *out = bf ? row : (float *)y + (size_t)r * D;
            const float *rr = !res ? NULL : bf ? rrow : (const float *)res + r * x_stride;
            if (res && bf) cpu_load_bf16(rrow, (const bf16 *)res + r * x_stride, D);
            ln_fwd_row(x_in + r * x_stride, rr, res ? x_out + r * x_stride : NULL, w, b, out, mean + r, rstd + r, D);
            if (bf) cpu_store(y, dt, (size_t)r * D, row, D);
        }
        free(row);
    }
}

/* One row: dx += rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w;
 * dw += dy * xhat, db += dy (per-thread partial sums); then, when asked, the finished dx row's
 * act copy and its sum into pcol (the bias gradient of the Linear whose output dx is). */
CPU_KERNEL static void ln_bwd_row(const float *restrict g, const float *restrict x, float m, float rs,
                                  const float *restrict w, float *restrict dx, float *restrict pdw, float *restrict pdb,
                                  float *restrict pcol, int D)
{
    float sg = 0, sgx = 0;
#pragma omp simd reduction(+ : sg, sgx)
    for (int d = 0; d < D; d++) {
        const float xh = (x[d] - m) * rs, gw = g[d] * w[d];
        sg += gw;
        sgx += gw * xh;
    }
    sg /= D, sgx /= D;
    for (int d = 0; d < D; d++) {
        const float xh = (x[d] - m) * rs;
        dx[d] += rs * (g[d] * w[d] - sg - xh * sgx);
        pdw[d] += g[d] * xh;
        pdb[d] += g[d];
    }
    if (pcol)
        for (int d = 0; d < D; d++) pcol[d] += dx[d];
}

void cpu_layernorm_backward(const void *dy, ib_precision dy_dt, const float *x, const float *mean, const float *rstd,
                            const float *w, float *dx, ptrdiff_t dx_stride, float *dw, float *db, int R, int D,
                            ptrdiff_t x_stride, void *dx_act, ib_precision dt, float *dx_colsum)
{
    const int nt = omp_get_max_threads(), np = dx_colsum ? 3 : 2, gbf = dy_dt != IB_PREC_FP32;
    /* per-thread dw, db (, colsum) partials, and (dy in bf16) the thread's dy row widened to fp32 */
    const size_t per = (size_t)np * D + (gbf ? (size_t)D : 0);
    float *part = calloc((size_t)nt * per, sizeof *part);
#pragma omp parallel num_threads(nt)
    {
        const int tid = omp_get_thread_num();
        float *pdw = part + (size_t)tid * per, *pdb = pdw + D, *pcol = dx_colsum ? pdb + D : NULL;
        float *grow = gbf ? pdw + (size_t)np * D : NULL;
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            if (gbf) cpu_load_bf16(grow, (const bf16 *)dy + (size_t)r * D, D);
            ln_bwd_row(gbf ? grow : (const float *)dy + (size_t)r * D, x + r * x_stride, mean[r], rstd[r], w,
                       dx + r * dx_stride, pdw, pdb, pcol, D);
            if (dx_act && dt != IB_PREC_FP32) cpu_store(dx_act, dt, (size_t)r * D, dx + r * dx_stride, D);
        }
    }
    for (int d = 0; d < D; d++) {
        float a = 0, c = 0, e = 0;
        for (int t = 0; t < nt; t++) {
            const float *pt = part + (size_t)t * per;
            a += pt[d], c += pt[D + d];
            if (dx_colsum) e += pt[2 * D + d];
        }
        dw[d] = a;
        db[d] = c;
        if (dx_colsum) dx_colsum[d] = e;
    }
    free(part);
}
