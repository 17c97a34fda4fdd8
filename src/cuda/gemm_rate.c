/* cuda/gemm_rate: see gemm_rate.h. */
#include "cuda/gemm_rate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/gemm.h"
#include "instbench/model.h"
#include "instbench/util.h"

typedef struct probe {
    cuda_gemm_desc d;
    int reps; /* how many times one step runs it (depth for the blocks' layers) */
} probe;

/* Operands filled with small non-zero values (zeros would let a GPU clock higher than on real
 * data): host pattern, copied once. */
static int fill(void *dev, size_t elems, ib_precision dt, cudaStream_t s, ib_error *err)
{
    const size_t es = ib_precision_size(dt);
    void *h = malloc(elems * es);
    if (!h) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < elems; i++) {
        const float v = 0.01f * (float)(i % 7) - 0.03f;
        if (dt == IB_PREC_BF16) {
            uint32_t u;
            memcpy(&u, &v, 4);
            ((uint16_t *)h)[i] = (uint16_t)(u >> 16); /* truncated: any small value will do */
        } else {
            ((float *)h)[i] = v;
        }
    }
    /* pageable source: the copy is done with it when the call returns; the sync keeps it simple */
    const int rc = cuda_check(cudaMemcpyAsync(dev, h, elems * es, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync", err) ||
                   cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize", err);
    free(h);
    return rc;
}

int cuda_gemm_rate(const ib_train_config *cfg, double min_seconds, const volatile sig_atomic_t *stop,
                   double *flops_per_s, ib_error *err)
{
    *flops_per_s = 0;
    const vit_config *c = &cfg->model;
    if (model_validate(c, err)) return -1;
    if (cfg->batch_size < 1) return ib_error_set(err, IB_EXIT_USAGE, "batch size must be positive");
    const ib_precision dt = cfg->precision == IB_PREC_BF16 ? IB_PREC_BF16 : IB_PREC_FP32;
    const long long cap = CUDA_GEMM_RATE_MAX_ROWS;
    const long long B = cfg->batch_size, T = model_seq_len(c), N = model_num_patches(c);
    const int D = c->embed_dim, F = model_mlp_hidden(c), C = c->num_classes;
    const int K = c->in_chans * c->patch_size * c->patch_size;
    const int BT = (int)(B * T < cap ? B * T : cap), BN = (int)(B * N < cap ? B * N : cap);
    const int Bh = (int)(B < cap ? B : cap);
    /* Linear layers: rows M, out, in, how many per step, whether the step wants its input gradient */
    const int lin[][5] = {{BN, D, K, 1, 0},        {BT, 3 * D, D, c->depth, 1}, {BT, D, D, c->depth, 1},
                          {BT, F, D, c->depth, 1}, {BT, D, F, c->depth, 1},     {Bh, C, D, 1, 1}};
    probe p[18];
    int np = 0;
    size_t amax = 0, bmax = 0, cmax = 0, nmax = 0;
    for (int i = 0; i < 6; i++) {
        const int M = lin[i][0], o = lin[i][1], in = lin[i][2], reps = lin[i][3];
        /* y [M,o] = x [M,in] W^T (+ bias); dW [o,in] = dy^T x; dx [M,in] = dy W (vit.c's linear and
         * linear_backward_gemms): the block Linears (rows 1-4) write y and dx in the act dtype, the
         * patch embedding and the head fp32 */
        const int y = i >= 1 && i <= 4 ? dt : IB_PREC_FP32;
        p[np++] = (probe){{.batch = 1, .M = M, .N = o, .K = in, .ab = dt, .c = y, .transB = 1, .bias = 1}, reps};
        p[np++] = (probe){{.batch = 1, .M = o, .N = in, .K = M, .ab = dt, .c = IB_PREC_FP32, .transA = 1}, reps};
        if (lin[i][4]) p[np++] = (probe){{.batch = 1, .M = M, .N = in, .K = o, .ab = dt, .c = y}, reps};
    }
    for (int i = 0; i < np; i++) {
        const cuda_gemm_desc *d = &p[i].d;
        const size_t a = (size_t)d->M * d->K, b = (size_t)d->K * d->N, o = (size_t)d->M * d->N;
        amax = a > amax ? a : amax, bmax = b > bmax ? b : bmax, cmax = o > cmax ? o : cmax;
        nmax = (size_t)d->N > nmax ? (size_t)d->N : nmax;
    }
    const size_t es = ib_precision_size(dt);
    void *A = NULL, *Bm = NULL, *Cm = NULL, *bias = NULL, *bias_act = NULL; /* a bias in each output dtype */
    cuda_gemm *g = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    int rc = -1;
    if (cuda_check(cudaSetDevice(cfg->device), "cudaSetDevice", err) ||
        cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", err) ||
        cuda_check(cudaMalloc(&A, amax * es), "cudaMalloc (GEMM rate operands)", err) ||
        cuda_check(cudaMalloc(&Bm, bmax * es), "cudaMalloc (GEMM rate operands)", err) ||
        cuda_check(cudaMalloc(&Cm, cmax * sizeof(float)), "cudaMalloc (GEMM rate output)", err) ||
        cuda_check(cudaMalloc(&bias, nmax * sizeof(float)), "cudaMalloc (GEMM rate bias)", err) ||
        cuda_check(cudaMalloc(&bias_act, nmax * es), "cudaMalloc (GEMM rate bias)", err) || fill(A, amax, dt, s, err) ||
        fill(Bm, bmax, dt, s, err) || fill(bias, nmax, IB_PREC_FP32, s, err) || fill(bias_act, nmax, dt, s, err) ||
        cuda_gemm_create(&g, (size_t)32 << 20, err) ||
        cuda_check(cudaEventCreateWithFlags(&t0, cudaEventDefault), "cudaEventCreate (GEMM rate)", err) ||
        cuda_check(cudaEventCreateWithFlags(&t1, cudaEventDefault), "cudaEventCreate (GEMM rate)", err))
        goto done;
    /* The GPU's own time between two events, not the host's clock: what the GEMMs took on the
     * device, however busy the host is (and, on the stand-ins, the virtual device clock, so the
     * rate a test sets is the rate read back on any machine). */
    double flops = 0, host_t0 = 0;
    float ms = 0;
    for (int round = 0;; round++) {
        if (round == 1) {
            flops = 0, host_t0 = util_now_seconds();
            if (cuda_check(cudaEventRecord(t0, s), "cudaEventRecord (GEMM rate)", err)) goto done;
        }
        for (int i = 0; i < np; i++)
            for (int r = 0; r < p[i].reps; r++) {
                if (stop && *stop) {
                    ib_error_set(err, IB_EXIT_RUNTIME, "interrupted");
                    goto done;
                }
                const void *bv = !p[i].d.bias ? NULL : p[i].d.c == IB_PREC_FP32 ? bias : bias_act;
                if (cuda_gemm_exec(g, &p[i].d, A, Bm, Cm, bv, s, err)) goto done;
                flops += 2.0 * p[i].d.M * p[i].d.N * p[i].d.K;
            }
        if (round >= 1 && cuda_check(cudaEventRecord(t1, s), "cudaEventRecord (GEMM rate)", err)) goto done;
        if (cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize (GEMM rate)", err)) goto done;
        if (round >= 1 && cuda_check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime (GEMM rate)", err))
            goto done;
        /* the host's clock only bounds it: a device clock that never advances must not hang measure */
        if (round >= 1 && (ms * 1e-3 >= min_seconds || util_now_seconds() - host_t0 >= 10 * min_seconds + 10)) break;
    }
    const double dt_s = ms * 1e-3;
    if (!(dt_s > 0)) {
        ib_error_set(err, IB_EXIT_RUNTIME, "GEMM rate: no time measured");
        goto done;
    }
    *flops_per_s = flops / dt_s;
    rc = 0;
done:
    cuda_gemm_destroy(g);
    if (s) cudaStreamSynchronize(s), cudaStreamDestroy(s);
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    cudaFree(A), cudaFree(Bm), cudaFree(Cm), cudaFree(bias), cudaFree(bias_act);
    cudaGetLastError(); /* a failed allocation must not stay sticky for the run after it */
    return rc;
}
