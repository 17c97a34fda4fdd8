/* cpu/layernorm: LayerNorm over the last dim (eps 1e-6 as timm's ViT), fp32 statistics, with the
 * residual add that precedes each norm fused in (one pass over the residual stream). */
#include "cpu/ops.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define LN_EPS 1e-6f

void cpu_layernorm_forward(const float *x_in, const float *res, float *x_out, const float *w, const float *b,
                           void *y, cpu_dtype dt, float *mean, float *rstd, int R, int D, ptrdiff_t x_stride)
{
#pragma omp parallel
    {
        float *row = malloc((size_t)D * sizeof *row);
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            const float *x = x_in + r * x_stride;
            if (res) {
                float *xo = x_out + r * x_stride;
                const float *rr = res + r * x_stride;
                for (int d = 0; d < D; d++) xo[d] = x[d] + rr[d];
                x = xo;
            }
            float s = 0;
            for (int d = 0; d < D; d++) s += x[d];
            const float m = s / D;
            float v = 0;
            for (int d = 0; d < D; d++) {
                float c = x[d] - m;
                v += c * c;
            }
            const float rs = 1.0f / sqrtf(v / D + LN_EPS);
            for (int d = 0; d < D; d++) row[d] = (x[d] - m) * rs * w[d] + b[d];
            cpu_store(y, dt, (size_t)r * D, row, D);
            mean[r] = m;
            rstd[r] = rs;
        }
        free(row);
    }
}

/* dx += rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w; dw = sum dy*xhat, db = sum dy. */
void cpu_layernorm_backward(const float *dy, const float *x, const float *mean, const float *rstd, const float *w,
                            float *dx, ptrdiff_t dx_stride, float *dw, float *db, int R, int D, ptrdiff_t x_stride)
{
    const int nt = omp_get_max_threads();
    float *part = calloc((size_t)nt * 2 * D, sizeof *part);   /* per-thread dw, db partial sums */
#pragma omp parallel num_threads(nt)
    {
        const int tid = omp_get_thread_num();
        float *pdw = part + (size_t)tid * 2 * D, *pdb = pdw + D;
#pragma omp for schedule(static)
        for (long r = 0; r < R; r++) {
            const float *g = dy + (size_t)r * D, *xr = x + r * x_stride;
            float *o = dx + r * dx_stride;
            const float m = mean[r], rs = rstd[r];
            float sg = 0, sgx = 0;
            for (int d = 0; d < D; d++) {
                const float xh = (xr[d] - m) * rs, gw = g[d] * w[d];
                sg += gw;
                sgx += gw * xh;
                pdw[d] += g[d] * xh;
                pdb[d] += g[d];
            }
            sg /= D, sgx /= D;
            for (int d = 0; d < D; d++) {
                const float xh = (xr[d] - m) * rs;
                o[d] += rs * (g[d] * w[d] - sg - xh * sgx);
            }
        }
    }
    for (int d = 0; d < D; d++) {
        float a = 0, c = 0;
        for (int t = 0; t < nt; t++) a += part[(size_t)t * 2 * D + d], c += part[(size_t)t * 2 * D + D + d];
        dw[d] = a;
        db[d] = c;
    }
    free(part);
}
