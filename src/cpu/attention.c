/* cpu/attention: softmax(q k^T * scale) v for every (batch, head), and its backward.
 * Each (b, h) is one task on one thread: its two GEMMs run single-threaded through oneDNN
 * (cpu_gemm_run_local) reading q, k, v in place from the qkv activation [B,T,3,H,hd] (row stride
 * 3D) and writing the output straight into [B,T,H*hd] (row stride D), so there is no head
 * split/merge pass, and the T x T scores stay in that thread's cache between GEMM, softmax, GEMM.
 * timm scales q before the product; for head_dim 64 (all presets) the scale 1/8 is exact in any
 * precision, and in general scaling inside the softmax is the same math. */
#include "cpu/ops.h"

#include <math.h>
#include <omp.h>

#include "cpu/simd.h"

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

static size_t scratch_floats(int T) { return (size_t)T * T * 2; }   /* dP fp32 + two act T x T */

size_t cpu_attention_scratch_bytes(int T, int nthreads) { return scratch_floats(T) * sizeof(float) * nthreads; }

int cpu_attention_forward(cpu_gemm *g, cpu_dtype dt, const void *qkv, float *P, void *att, void *scratch, int B,
                          int T, int H, int hd, ib_error *err)
{
    const int D = H * hd;
    const size_t es = cpu_dtype_size(dt);
    const float scale = 1.0f / sqrtf((float)hd);
    int h_s, h_o;
    const cpu_gemm_desc ds = {1, T, T, hd, dt, CPU_F32, 0, 1, 3 * D, 3 * D, T, 0, 0};   /* S = q k^T */
    const cpu_gemm_desc dout = {1, T, hd, T, dt, dt, 0, 0, T, 3 * D, D, 0, 0};          /* o = P v */
    if (cpu_gemm_prepare_local(g, &ds, &h_s, err) || cpu_gemm_prepare_local(g, &dout, &h_o, err)) return -1;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (long bh = 0; bh < (long)B * H; bh++) {
        const int b = (int)(bh / H), h = (int)(bh % H);
        const char *q = (const char *)qkv + ((size_t)b * T * 3 * D + (size_t)h * hd) * es;
        const char *k = q + (size_t)D * es, *v = q + (size_t)2 * D * es;
        float *S = P + (size_t)bh * T * T;
        void *pb = (float *)scratch + scratch_floats(T) * omp_get_thread_num();
        failed |= cpu_gemm_run_local(g, h_s, q, k, S, NULL) != 0;
        for (int i = 0; i < T; i++) {
            softmax_row(S + (size_t)i * T, T, scale);
            if (dt != CPU_F32) cpu_store(pb, dt, (size_t)i * T, S + (size_t)i * T, T);
        }
        char *o = (char *)att + ((size_t)b * T * D + (size_t)h * hd) * es;
        failed |= cpu_gemm_run_local(g, h_o, dt == CPU_F32 ? (const void *)S : pb, v, o, NULL) != 0;
    }
    if (failed) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: attention GEMM failed");
    return 0;
}

int cpu_attention_backward(cpu_gemm *g, cpu_dtype dt, const void *qkv, const float *P, const void *datt,
                           float *dqkv, void *scratch, int B, int T, int H, int hd, ib_error *err)
{
    const int D = H * hd;
    const size_t es = cpu_dtype_size(dt);
    const float scale = 1.0f / sqrtf((float)hd);
    int h_dp, h_dv, h_dq, h_dk;
    const cpu_gemm_desc d_dp = {1, T, T, hd, dt, CPU_F32, 0, 1, D, 3 * D, T, 0, 0};      /* dP = dO v^T */
    const cpu_gemm_desc d_dv = {1, T, hd, T, dt, CPU_F32, 1, 0, T, D, 3 * D, 0, 0};      /* dv = P^T dO */
    const cpu_gemm_desc d_dq = {1, T, hd, T, dt, CPU_F32, 0, 0, T, 3 * D, 3 * D, 0, 0};  /* dq = dS k */
    const cpu_gemm_desc d_dk = {1, T, hd, T, dt, CPU_F32, 1, 0, T, 3 * D, 3 * D, 0, 0};  /* dk = dS^T q */
    if (cpu_gemm_prepare_local(g, &d_dp, &h_dp, err) || cpu_gemm_prepare_local(g, &d_dv, &h_dv, err) ||
        cpu_gemm_prepare_local(g, &d_dq, &h_dq, err) || cpu_gemm_prepare_local(g, &d_dk, &h_dk, err))
        return -1;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (long bh = 0; bh < (long)B * H; bh++) {
        const int b = (int)(bh / H), h = (int)(bh % H);
        const size_t tok0 = (size_t)b * T;
        const char *q = (const char *)qkv + (tok0 * 3 * D + (size_t)h * hd) * es;
        const char *k = q + (size_t)D * es, *v = q + (size_t)2 * D * es;
        const char *dO = (const char *)datt + (tok0 * D + (size_t)h * hd) * es;
        float *dq = dqkv + tok0 * 3 * D + (size_t)h * hd, *dk = dq + D, *dv = dq + 2 * D;
        const float *Pb = P + (size_t)bh * T * T;
        float *dP = (float *)scratch + scratch_floats(T) * omp_get_thread_num();
        char *pa = (char *)(dP + (size_t)T * T), *dsa = pa + (size_t)T * T * 2;   /* bf16 only */
        failed |= cpu_gemm_run_local(g, h_dp, dO, v, dP, NULL) != 0;
        if (dt != CPU_F32) cpu_store(pa, dt, 0, Pb, (size_t)T * T);
        failed |= cpu_gemm_run_local(g, h_dv, dt == CPU_F32 ? (const void *)Pb : pa, dO, dv, NULL) != 0;
        for (int i = 0; i < T; i++) {
            softmax_bwd_row(Pb + (size_t)i * T, dP + (size_t)i * T, T, scale);
            if (dt != CPU_F32) cpu_store(dsa, dt, (size_t)i * T, dP + (size_t)i * T, T);
        }
        const void *dS = dt == CPU_F32 ? (const void *)dP : dsa;
        failed |= cpu_gemm_run_local(g, h_dq, dS, k, dq, NULL) != 0;
        failed |= cpu_gemm_run_local(g, h_dk, dS, q, dk, NULL) != 0;
    }
    if (failed) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: attention backward GEMM failed");
    return 0;
}
