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

void cpu_layernorm_forward(const float *x_in, const float *res, float *x_out, const float *w, const float *b, void *y,
                           ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t x_stride)
{
#pragma omp parallel
    {
        float *row = dt == IB_PREC_FP32 ? NULL : aligned_alloc(64, ((size_t)D * 4 + 63) / 64 * 64);
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            float *out = dt == IB_PREC_FP32 ? (float *)y + (size_t)r * D : row;
            ln_fwd_row(x_in + r * x_stride, res ? res + r * x_stride : NULL, res ? x_out + r * x_stride : NULL, w, b,
                       out, mean + r, rstd + r, D);
            if (dt != IB_PREC_FP32) cpu_store(y, dt, (size_t)r * D, row, D);
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

void cpu_layernorm_backward(const float *dy, const float *x, const float *mean, const float *rstd, const float *w,
                            float *dx, ptrdiff_t dx_stride, float *dw, float *db, int R, int D, ptrdiff_t x_stride,
                            void *dx_act, ib_precision dt, float *dx_colsum)
{
    const int nt = omp_get_max_threads(), np = dx_colsum ? 3 : 2;
    float *part = calloc((size_t)nt * np * D, sizeof *part); /* per-thread dw, db (, colsum) partials */
#pragma omp parallel num_threads(nt)
    {
        const int tid = omp_get_thread_num();
        float *pdw = part + (size_t)tid * np * D, *pdb = pdw + D, *pcol = dx_colsum ? pdb + D : NULL;
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            ln_bwd_row(dy + (size_t)r * D, x + r * x_stride, mean[r], rstd[r], w, dx + r * dx_stride, pdw, pdb, pcol,
                       D);
            if (dx_act && dt != IB_PREC_FP32) cpu_store(dx_act, dt, (size_t)r * D, dx + r * dx_stride, D);
        }
    }
    for (int d = 0; d < D; d++) {
        float a = 0, c = 0, e = 0;
        for (int t = 0; t < nt; t++) {
            const float *pt = part + (size_t)t * np * D;
            a += pt[d], c += pt[D + d];
            if (dx_colsum) e += pt[2 * D + d];
        }
        dw[d] = a;
        db[d] = c;
        if (dx_colsum) dx_colsum[d] = e;
    }
    free(part);
}
