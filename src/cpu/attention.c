/* cpu/attention: the data movement and softmax around attention's two batched GEMMs (in vit.c):
 *   qkv [B,T,3,H,hd] -> q,k,v [B,H,T,hd];  S = q k^T [B*H,T,T];  P = softmax(S * scale);
 *   o = P v [B,H,T,hd] -> [B,T,H*hd].
 * timm scales q before the product; for head_dim 64 (all presets) the scale 1/8 is exact in any
 * precision, so scaling inside the softmax is the same math. */
#include "cpu/ops.h"

#include <math.h>

#include "cpu/simd.h"

void cpu_attention_split(const float *qkv, void *q, void *k, void *v, cpu_dtype dt, int B, int T, int H, int hd)
{
    const int D = H * hd;
#pragma omp parallel for schedule(static)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        const float *src = qkv + (size_t)bt * 3 * D;
        for (int h = 0; h < H; h++) {
            const size_t dst = (((size_t)b * H + h) * T + t) * hd;
            cpu_store(q, dt, dst, src + 0 * D + h * hd, hd);
            cpu_store(k, dt, dst, src + 1 * D + h * hd, hd);
            cpu_store(v, dt, dst, src + 2 * D + h * hd, hd);
        }
    }
}

void cpu_attention_unsplit(const float *dq, const float *dk, const float *dv, float *dqkv, int B, int T, int H,
                           int hd)
{
    const int D = H * hd;
#pragma omp parallel for schedule(static)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        float *dst = dqkv + (size_t)bt * 3 * D;
        for (int h = 0; h < H; h++) {
            const size_t src = (((size_t)b * H + h) * T + t) * hd;
            memcpy(dst + 0 * D + h * hd, dq + src, hd * sizeof(float));
            memcpy(dst + 1 * D + h * hd, dk + src, hd * sizeof(float));
            memcpy(dst + 2 * D + h * hd, dv + src, hd * sizeof(float));
        }
    }
}

void cpu_attention_merge(const float *o, void *out, cpu_dtype dt, int B, int T, int H, int hd)
{
    const int D = H * hd;
#pragma omp parallel for schedule(static)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        for (int h = 0; h < H; h++)
            cpu_store(out, dt, (size_t)bt * D + h * hd, o + (((size_t)b * H + h) * T + t) * hd, hd);
    }
}

void cpu_attention_unmerge(const float *dout, void *do_act, cpu_dtype dt, int B, int T, int H, int hd)
{
    const int D = H * hd;
#pragma omp parallel for schedule(static)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const int b = (int)(bt / T), t = (int)(bt % T);
        for (int h = 0; h < H; h++)
            cpu_store(do_act, dt, (((size_t)b * H + h) * T + t) * hd, dout + (size_t)bt * D + h * hd, hd);
    }
}

/* One row: s <- softmax(s * scale), the max subtracted first as torch does. */
CPU_KERNEL static void softmax_row(float *restrict s, int T, float scale)
{
    float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
    for (int j = 0; j < T; j++) mx = s[j] > mx ? s[j] : mx;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < T; j++) {
        s[j] = cpu_expf((s[j] - mx) * scale);
        sum += s[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < T; j++) s[j] *= inv;
}

/* One row: g <- p * (g - <p, g>) * scale */
CPU_KERNEL static void softmax_bwd_row(const float *restrict p, float *restrict g, int T, float scale)
{
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int j = 0; j < T; j++) dot += p[j] * g[j];
    for (int j = 0; j < T; j++) g[j] = p[j] * (g[j] - dot) * scale;
}

void cpu_softmax_forward(float *S, void *p_act, cpu_dtype dt, size_t rows, int T, float scale)
{
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)rows; r++) {
        softmax_row(S + (size_t)r * T, T, scale);
        if (p_act) cpu_store(p_act, dt, (size_t)r * T, S + (size_t)r * T, T);
    }
}

void cpu_softmax_backward(const float *P, float *dP, void *ds_act, cpu_dtype dt, size_t rows, int T, float scale)
{
#pragma omp parallel for schedule(static)
    for (long r = 0; r < (long)rows; r++) {
        softmax_bwd_row(P + (size_t)r * T, dP + (size_t)r * T, T, scale);
        if (ds_act) cpu_store(ds_act, dt, (size_t)r * T, dP + (size_t)r * T, T);
    }
}
