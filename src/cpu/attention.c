/* cpu/attention: softmax(q k^T * scale) v for every (batch, head), and its backward.
 * Each (b, h) is one task on one thread: it gathers its q, k, v rows from the qkv activation
 * [B,T,3,H,hd] into dense [T,hd] blocks in that thread's cache, runs its GEMMs single-threaded
 * through oneDNN (cpu_gemm_run_local) with the softmax between them, and scatters the output
 * into [B,T,H*hd]: no whole-tensor split/merge pass, and the T x T scores never leave the core.
 * timm scales q before the product; for head_dim 64 (all presets) the scale 1/8 is exact in any
 * precision, and in general scaling inside the softmax is the same math. */
#include "cpu/ops.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

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

/* Per-thread scratch of one (b, h) task, in bytes: scores/dP fp32 [T,T], two act [T,T] (bf16 P
 * and dS), dense q, k, v and o/dO [T,hd] (act, sized as fp32), dense dq, dk, dv fp32 [T,hd]. */
static size_t task_bytes(int T, int hd)
{
    const size_t tt = (size_t)T * T, th = (size_t)T * hd;
    return (tt * 4 + 2 * tt * 2 + 4 * th * 4 + 3 * th * 4 + 63) / 64 * 64;
}

size_t cpu_attention_scratch_bytes(int T, int hd, int nthreads) { return task_bytes(T, hd) * nthreads; }

/* rows of a head slice (row stride ld elements) <-> a dense [T, hd] block; brgemm runs about
 * twice as fast on dense small operands as the strided GEMM oneDNN otherwise picks. */
static void gather(void *dst, const void *src, int T, int hd, int ld, size_t es)
{
    for (int i = 0; i < T; i++)
        memcpy((char *)dst + (size_t)i * hd * es, (const char *)src + (size_t)i * ld * es, hd * es);
}
static void scatter(void *dst, const void *src, int T, int hd, int ld, size_t es) /* same dtype */
{
    for (int i = 0; i < T; i++)
        memcpy((char *)dst + (size_t)i * ld * es, (const char *)src + (size_t)i * hd * es, hd * es);
}

typedef struct task_buf {
    float *S;            /* [T,T] scores, or dP in backward */
    void *pa, *dsa;      /* act [T,T]: bf16 copies of P and dS */
    void *q, *k, *v, *o; /* act [T,hd] dense */
    float *dq, *dk, *dv; /* fp32 [T,hd] dense */
} task_buf;

static task_buf task_scratch(void *scratch, int T, int hd)
{
    char *p = (char *)scratch + task_bytes(T, hd) * omp_get_thread_num();
    const size_t tt = (size_t)T * T, th = (size_t)T * hd;
    task_buf t;
    t.S = (float *)p, p += tt * 4;
    t.pa = p, p += tt * 2;
    t.dsa = p, p += tt * 2;
    t.q = p, p += th * 4;
    t.k = p, p += th * 4;
    t.v = p, p += th * 4;
    t.o = p, p += th * 4;
    t.dq = (float *)p, p += th * 4;
    t.dk = (float *)p, p += th * 4;
    t.dv = (float *)p;
    return t;
}

int cpu_attention_forward(cpu_gemm *g, ib_precision dt, const void *qkv, void *P, void *att, void *scratch, int B,
                          int T, int H, int hd, ib_error *err)
{
    const int D = H * hd;
    const size_t es = ib_precision_size(dt);
    const float scale = 1.0f / sqrtf((float)hd);
    int h_s, h_o;
    const cpu_gemm_desc ds = {1, T, T, hd, dt, IB_PREC_FP32, 0, 1, 0, 0, 0, 0, 0}; /* S = q k^T */
    const cpu_gemm_desc dout = {1, T, hd, T, dt, dt, 0, 0, 0, 0, 0, 0, 0};         /* o = P v */
    if (cpu_gemm_prepare_local(g, &ds, &h_s, err) || cpu_gemm_prepare_local(g, &dout, &h_o, err)) return -1;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (long bh = 0; bh < (long)B * H; bh++) {
        const int b = (int)(bh / H), h = (int)(bh % H);
        const char *q = (const char *)qkv + ((size_t)b * T * 3 * D + (size_t)h * hd) * es;
        task_buf t = task_scratch(scratch, T, hd);
        gather(t.q, q, T, hd, 3 * D, es);
        gather(t.k, q + (size_t)D * es, T, hd, 3 * D, es);
        gather(t.v, q + (size_t)2 * D * es, T, hd, 3 * D, es);
        /* scores and softmax in fp32 (in place in the saved P under fp32; in scratch under bf16,
         * where P is kept as the bf16 the P v GEMM reads, as autocast keeps it) */
        char *Pbh = (char *)P + (size_t)bh * T * T * es;
        float *S = dt == IB_PREC_FP32 ? (float *)Pbh : t.S;
        failed |= cpu_gemm_run_local(g, h_s, t.q, t.k, S, NULL) != 0;
        for (int i = 0; i < T; i++) {
            softmax_row(S + (size_t)i * T, T, scale);
            if (dt != IB_PREC_FP32) cpu_store(Pbh, dt, (size_t)i * T, S + (size_t)i * T, T);
        }
        failed |= cpu_gemm_run_local(g, h_o, Pbh, t.v, t.o, NULL) != 0;
        scatter((char *)att + ((size_t)b * T * D + (size_t)h * hd) * es, t.o, T, hd, D, es);
    }
    if (failed) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: attention GEMM failed");
    return 0;
}

/* A dense fp32 [T,hd] gradient tile -> its columns of dqkv (act, row stride 3D), and its column
 * sums into colsum [hd] (the qkv bias gradient's share of this batch element). */
CPU_KERNEL static void scatter_sum(void *dst, ib_precision dt, const float *restrict src, float *restrict colsum, int T,
                                   int hd, int ld)
{
    for (int j = 0; j < hd; j++) colsum[j] = 0;
    for (int i = 0; i < T; i++) {
        const float *r = src + (size_t)i * hd;
        for (int j = 0; j < hd; j++) colsum[j] += r[j];
        cpu_store(dst, dt, (size_t)i * ld, r, hd);
    }
}

int cpu_attention_backward(cpu_gemm *g, ib_precision dt, const void *qkv, const void *P, const void *datt, void *dqkv,
                           float *dbias, void *scratch, int B, int T, int H, int hd, ib_error *err)
{
    float *part = calloc((size_t)B * 3 * H * hd, sizeof *part); /* [B, 3D] bias-grad partials */
    if (!part) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    const int D = H * hd;
    const size_t es = ib_precision_size(dt);
    const float scale = 1.0f / sqrtf((float)hd);
    int h_dp, h_dv, h_dq, h_dk;
    const cpu_gemm_desc d_dp = {1, T, T, hd, dt, IB_PREC_FP32, 0, 1, 0, 0, 0, 0, 0}; /* dP = dO v^T */
    const cpu_gemm_desc d_dv = {1, T, hd, T, dt, IB_PREC_FP32, 1, 0, 0, 0, 0, 0, 0}; /* dv = P^T dO */
    const cpu_gemm_desc d_dq = {1, T, hd, T, dt, IB_PREC_FP32, 0, 0, 0, 0, 0, 0, 0}; /* dq = dS k */
    const cpu_gemm_desc d_dk = {1, T, hd, T, dt, IB_PREC_FP32, 1, 0, 0, 0, 0, 0, 0}; /* dk = dS^T q */
    if (cpu_gemm_prepare_local(g, &d_dp, &h_dp, err) || cpu_gemm_prepare_local(g, &d_dv, &h_dv, err) ||
        cpu_gemm_prepare_local(g, &d_dq, &h_dq, err) || cpu_gemm_prepare_local(g, &d_dk, &h_dk, err)) {
        free(part);
        return -1;
    }
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (long bh = 0; bh < (long)B * H; bh++) {
        const int b = (int)(bh / H), h = (int)(bh % H);
        const size_t tok0 = (size_t)b * T;
        const char *q = (const char *)qkv + (tok0 * 3 * D + (size_t)h * hd) * es;
        task_buf t = task_scratch(scratch, T, hd);
        gather(t.q, q, T, hd, 3 * D, es);
        gather(t.k, q + (size_t)D * es, T, hd, 3 * D, es);
        gather(t.v, q + (size_t)2 * D * es, T, hd, 3 * D, es);
        gather(t.o, (const char *)datt + (tok0 * D + (size_t)h * hd) * es, T, hd, D, es); /* dO */
        const char *Pbh = (const char *)P + (size_t)bh * T * T * es;
        float *dP = t.S, *prow = (float *)t.pa; /* pa: one fp32 row of P under bf16 */
        failed |= cpu_gemm_run_local(g, h_dp, t.o, t.v, dP, NULL) != 0;
        failed |= cpu_gemm_run_local(g, h_dv, Pbh, t.o, t.dv, NULL) != 0;
        for (int i = 0; i < T; i++) {
            const float *p = (const float *)Pbh + (size_t)i * T;
            if (dt != IB_PREC_FP32) {
                cpu_load_bf16(prow, (const bf16 *)Pbh + (size_t)i * T, T);
                p = prow;
            }
            softmax_bwd_row(p, dP + (size_t)i * T, T, scale);
            if (dt != IB_PREC_FP32) cpu_store(t.dsa, dt, (size_t)i * T, dP + (size_t)i * T, T);
        }
        const void *dS = dt == IB_PREC_FP32 ? (const void *)dP : t.dsa;
        failed |= cpu_gemm_run_local(g, h_dq, dS, t.k, t.dq, NULL) != 0;
        failed |= cpu_gemm_run_local(g, h_dk, dS, t.q, t.dk, NULL) != 0;
        /* each (b, h) owns its columns of row b of part: no races, and a fixed sum order below */
        char *dq = (char *)dqkv + (tok0 * 3 * D + (size_t)h * hd) * es;
        float *pb = part + (size_t)b * 3 * D + (size_t)h * hd;
        scatter_sum(dq, dt, t.dq, pb, T, hd, 3 * D);
        scatter_sum(dq + (size_t)D * es, dt, t.dk, pb + D, T, hd, 3 * D);
        scatter_sum(dq + (size_t)2 * D * es, dt, t.dv, pb + 2 * D, T, hd, 3 * D);
    }
    for (int j = 0; j < 3 * D; j++) {
        float s = 0;
        for (int b = 0; b < B; b++) s += part[(size_t)b * 3 * D + j];
        dbias[j] = s;
    }
    free(part);
    if (failed) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: attention backward GEMM failed");
    return 0;
}
