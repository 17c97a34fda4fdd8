/* cpu/rate: the oneDNN GEMM rate on one training step's own matmul shapes (the CPU roofline). */
#include "instbench/cpu.h"

#include <omp.h>
#include <stdlib.h>

#include "cpu/ops.h"

typedef struct shape {
    int batch, M, N, K, tA, tB;
} shape;

/* elements of one thread's tile, rounded up to 32 (a multiple of 64 bytes in bf16 and fp32), so
 * every thread's tile starts on a 64-byte boundary: 197 x 197 would put every other one off it */
static size_t tile_elems(int T, int hd)
{
    const size_t n = (size_t)(T > hd ? T : hd) * (T > hd ? T : hd);
    return (n + 31) / 32 * 32;
}

/* Attention as the engine runs it (attention.c): one (batch, head) per thread, dense [T,hd]
 * operands, single-threaded oneDNN GEMMs: S = q k^T, o = P v, and in backward dP = dO v^T,
 * dv = P^T dO, dq = dS k, dk = dS^T q. */
static int attention_round(cpu_gemm *g, ib_precision dt, int BH, int T, int hd, const int *handles, void *A, void *Bm,
                           float *C, double *flops)
{
    int failed = 0;
    const size_t es = ib_precision_size(dt), tt = tile_elems(T, hd);
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (int bh = 0; bh < BH; bh++) {
        const int t = omp_get_thread_num();
        for (int i = 0; i < 6; i++)
            failed |= cpu_gemm_run_local(g, handles[i], (char *)A + t * tt * es, (char *)Bm + t * tt * es, C + t * tt,
                                         NULL) != 0;
    }
    *flops += 6.0 * 2.0 * BH * (double)T * T * hd;
    return failed ? -1 : 0;
}

/* Aligned as the step's own buffers are (cpu/vit.c: every arena buffer on a 4096-byte boundary).
 * calloc's large blocks start 16 bytes into a page: oneDNN's AVX-512 kernels then split every
 * 64-byte load across two cache lines, and on a 2-vCPU EPYC the fp32 rate read 0.35 TFLOP/s
 * against the step's 0.41 (MFU 116%); B, never written, was read from the kernel's one zero page,
 * always cached (the bf16 rate read 0.89 where operands in memory give 0.74).
 * tests/cpu/engine_rate_operands.c checks both. */
static void *probe_buffer(size_t bytes)
{
    const size_t n = (bytes + 4095) / 4096 * 4096;
    return n ? aligned_alloc(4096, n) : NULL;
}

static void fill(void *buf, size_t elems, ib_precision dt, int period)
{
    for (size_t i = 0; i < elems; i++) {
        const float v = 0.01f * (float)(i % (size_t)period) - 0.02f;
        if (dt == IB_PREC_BF16) ((bf16 *)buf)[i] = cpu_bf16_from_f32(v);
        else ((float *)buf)[i] = v;
    }
}

int cpu_gemm_rate(const ib_train_config *cfg, double min_seconds, const volatile sig_atomic_t *stop,
                  double *flops_per_s, ib_error *err)
{
    *flops_per_s = 0;
    const vit_config *c = &cfg->model;
    if (model_validate(c, err)) return -1;
    if (cfg->batch_size < 1) return ib_error_set(err, IB_EXIT_USAGE, "batch size must be positive");
    const int keep = omp_get_max_threads(); /* the caller's setting, given back at the end */
    const int B = cfg->batch_size, T = model_seq_len(c), N = model_num_patches(c), D = c->embed_dim;
    const int H = c->num_heads, hd = D / H, F = model_mlp_hidden(c), C = c->num_classes;
    const int K = c->in_chans * c->patch_size * c->patch_size, BT = B * T, BH = B * H;
    /* Linear layers (M rows, out, in): forward y = x W^T, backward dW = dy^T x and dx = dy W. */
    const int lin[][4] = {{B * N, D, K, 1},     {BT, 3 * D, D, c->depth}, {BT, D, D, c->depth},
                          {BT, F, D, c->depth}, {BT, D, F, c->depth},     {B, C, D, 1}};
    shape s[32];
    int reps[32], ns = 0;
    for (int i = 0; i < 6; i++) {
        const int M = lin[i][0], o = lin[i][1], in = lin[i][2];
        s[ns] = (shape){1, M, o, in, 0, 1}, reps[ns++] = lin[i][3];
        s[ns] = (shape){1, o, in, M, 1, 0}, reps[ns++] = lin[i][3];
        if (i > 0) s[ns] = (shape){1, M, in, o, 0, 0}, reps[ns++] = lin[i][3]; /* no dx for the images */
    }
    /* attention (per head, see attention_round) */
    const shape att[] = {{1, T, T, hd, 0, 1}, {1, T, hd, T, 0, 0}, {1, T, T, hd, 0, 1},
                         {1, T, hd, T, 1, 0}, {1, T, hd, T, 0, 0}, {1, T, hd, T, 1, 0}};

    const ib_precision dt = cfg->precision == IB_PREC_BF16 ? IB_PREC_BF16 : IB_PREC_FP32;
    const int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    const int cfg_nt = cfg->threads > 0 ? cfg->threads : nt;
    size_t amax = (size_t)cfg_nt * tile_elems(T, hd), bmax = amax, cmax = amax; /* per-thread attention tiles */
    for (int i = 0; i < ns; i++) {
        size_t a = (size_t)s[i].batch * s[i].M * s[i].K, b = (size_t)s[i].batch * s[i].K * s[i].N,
               cc = (size_t)s[i].batch * s[i].M * s[i].N;
        amax = a > amax ? a : amax, bmax = b > bmax ? b : bmax, cmax = cc > cmax ? cc : cmax;
    }
    const size_t es = ib_precision_size(dt);
    void *A = probe_buffer(amax * es), *Bm = probe_buffer(bmax * es);
    float *Cm = probe_buffer(cmax * sizeof(float));
    cpu_gemm *g = NULL;
    int rc = -1;
    if (!A || !Bm || !Cm) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    /* small non-zero values: denormal-free, same cost as real data (C is only written: beta 0) */
    fill(A, amax, dt, 7);
    fill(Bm, bmax, dt, 5);
    if (cfg->threads > 0) omp_set_num_threads(cfg->threads);
    if (cpu_gemm_create(&g, 0, err)) goto done;
    int handles[6];
    for (int i = 0; i < 6; i++) {
        const cpu_gemm_desc d = {1, att[i].M, att[i].N, att[i].K, dt, IB_PREC_FP32, att[i].tA, att[i].tB,
                                 0, 0,        0,        0,        0};
        if (cpu_gemm_prepare_local(g, &d, &handles[i], err)) goto done;
    }
    double flops = 0, t0 = 0;
    for (int round = 0;; round++) {
        if (round == 1) t0 = util_now_seconds(), flops = 0;
        for (int i = 0; i < ns; i++)
            for (int r = 0; r < reps[i]; r++) {
                if (stop && *stop) goto interrupted;
                if (cpu_gemm_run(g, dt, s[i].batch, s[i].M, s[i].N, s[i].K, A, s[i].tA, Bm, s[i].tB, Cm, s[i].N, NULL,
                                 0, err))
                    goto done;
                flops += 2.0 * s[i].batch * s[i].M * s[i].N * s[i].K;
            }
        for (int l = 0; l < c->depth; l++)
            if ((stop && *stop) || attention_round(g, dt, BH, T, hd, handles, A, Bm, Cm, &flops)) {
                if (stop && *stop) goto interrupted;
                ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: attention GEMM failed");
                goto done;
            }
        if (round >= 1 && util_now_seconds() - t0 >= min_seconds) break;
    }
    *flops_per_s = flops / (util_now_seconds() - t0);
    rc = 0;
    goto done;
interrupted:
    ib_error_set(err, IB_EXIT_RUNTIME, "interrupted");
done:
    omp_set_num_threads(keep);
    cpu_gemm_destroy(g);
    free(A);
    free(Bm);
    free(Cm);
    return rc;
}
