/* cpu/patch_embed: the 16x16 stride-16 conv as patchify + GEMM (the GEMM lives in vit.c), and the
 * token assembly around it: class token first, then patches, plus the learned position embedding. */
#include "cpu/ops.h"

void cpu_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt)
{
    const int G = S / P, N = G * G, K = C * P * P;
#pragma omp parallel for schedule(static)
    for (long bn = 0; bn < (long)B * N; bn++) {
        const int b = (int)(bn / N), n = (int)(bn % N), gy = n / G, gx = n % G;
        for (int c = 0; c < C; c++)
            for (int ky = 0; ky < P; ky++) {
                const float *src = images + (((size_t)b * C + c) * S + (size_t)gy * P + ky) * S + (size_t)gx * P;
                cpu_store(patches, dt, (size_t)bn * K + ((size_t)c * P + ky) * P, src, P);
            }
    }
}

void cpu_tokens_forward(const float *pe, const float *cls, const float *pos, float *x, int B, int T, int D)
{
#pragma omp parallel for schedule(static)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        const float *src = t == 0 ? cls : pe + ((size_t)b * (T - 1) + t - 1) * D;
        const float *p = pos + (size_t)t * D;
        float *dst = x + (size_t)bt * D;
        for (int d = 0; d < D; d++) dst[d] = src[d] + p[d];
    }
}

void cpu_tokens_backward(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T, int D)
{
#pragma omp parallel for schedule(static)
    for (long t = 0; t < T; t++) {
        float *dp = dpos + (size_t)t * D;
        for (int d = 0; d < D; d++) dp[d] = 0;
        for (int b = 0; b < B; b++) {
            const float *g = dx + ((size_t)b * T + t) * D;
            for (int d = 0; d < D; d++) dp[d] += g[d];
            if (t > 0) memcpy(dpe + ((size_t)b * (T - 1) + t - 1) * D, g, D * sizeof(float));
        }
        if (t == 0) memcpy(dcls, dp, D * sizeof(float));
    }
}
