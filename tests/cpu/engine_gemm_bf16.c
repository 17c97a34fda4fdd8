/* engine_gemm_bf16: every bf16 GEMM form the engine uses (transposes, row strides wider than the
 * matrix, batches, bias, accumulate, bf16 and fp32 outputs, all-threads and per-thread paths)
 * against a naive double-precision product of the same bf16 operands.  Run natively and with
 * DNNL_MAX_CPU_ISA=AVX2 (tests/cpu/cpu.cmake), so a CPU with bf16 hardware proves the emulated
 * path (bf16 widened to fp32) and one without proves it is the path taken.
 * Tolerance: fp32 accumulation of K exact products, |err| <= K * 2^-23 * sum|a b| (+ one bf16
 * rounding step, 2^-8 relative, for bf16 outputs, where the two roundings may straddle a tie). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "instbench/cpu.h"

#include "check.h"

static unsigned long long lcg = 777;
static float urand(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(((lcg >> 11) + 0.5) / 9007199254740992.0 * 2.0 - 1.0);
}

typedef struct gcase {
    int batch, M, N, K, tA, tB, lda, ldb, ldc, bias, acc, cbf, local;
} gcase;

/* element (r, c) of op(X) where X is stored rows x ld (transposed: op(X)[r][c] = X[c][r]) */
static double at(const bf16 *X, size_t base, int t, int ld, int r, int c)
{
    return cpu_f32_from_bf16(X[base + (t ? (size_t)c * ld + r : (size_t)r * ld + c)]);
}

static void run_case(cpu_gemm *g, const gcase *k)
{
    const int rowsA = k->tA ? k->K : k->M, colsA = k->tA ? k->M : k->K;
    const int rowsB = k->tB ? k->N : k->K, colsB = k->tB ? k->K : k->N;
    const int lda = k->lda ? k->lda : colsA, ldb = k->ldb ? k->ldb : colsB, ldc = k->ldc ? k->ldc : k->N;
    const size_t na = (size_t)k->batch * rowsA * lda, nb = (size_t)k->batch * rowsB * ldb,
                 nc = (size_t)k->batch * k->M * ldc;
    bf16 *A = malloc(na * 2), *B = malloc(nb * 2);
    float *bias = malloc(k->N * 4), *C0 = malloc(nc * 4);
    void *C = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) A[i] = cpu_bf16_from_f32(urand());
    for (size_t i = 0; i < nb; i++) B[i] = cpu_bf16_from_f32(urand());
    /* the bias has C's dtype: a bf16 output adds a bf16 bias (the value rounded here is the one
     * the reference adds, and the engine must read it as bf16) */
    bf16 *bias_bf = malloc(k->N * 2);
    for (int i = 0; i < k->N; i++) {
        bias[i] = urand();
        if (k->cbf) bias[i] = cpu_f32_from_bf16(bias_bf[i] = cpu_bf16_from_f32(bias[i]));
    }
    const void *bias_arg = !k->bias ? NULL : k->cbf ? (const void *)bias_bf : (const void *)bias;
    for (size_t i = 0; i < nc; i++) { /* prior C: what accumulate adds to, and what gaps must keep */
        C0[i] = cpu_f32_from_bf16(cpu_bf16_from_f32(urand()));
        if (k->cbf) ((bf16 *)C)[i] = cpu_bf16_from_f32(C0[i]);
        else ((float *)C)[i] = C0[i];
    }
    const cpu_gemm_desc d = {k->batch, k->M,  k->N,   k->K,   IB_PREC_BF16, k->cbf ? IB_PREC_BF16 : IB_PREC_FP32,
                             k->tA,    k->tB, k->lda, k->ldb, k->ldc,       k->bias,
                             k->acc};
    ib_error err = {0};
    int rc;
    if (k->local) {
        int h = -1;
        rc = cpu_gemm_prepare_local(g, &d, &h, &err);
        if (!rc) {
            int failed = 0;
#pragma omp parallel reduction(| : failed)
            { /* every thread runs it on its own copy would race on C: thread 0 alone */
                if (omp_get_thread_num() == 0) failed |= cpu_gemm_run_local(g, h, A, B, C, bias_arg) != 0;
            }
            rc = failed;
        }
    } else {
        rc = cpu_gemm_exec(g, &d, A, B, C, bias_arg, &err);
    }
    CHECK(rc == 0, "case %dx%dx%d: %s", k->M, k->N, k->K, err.msg);
    double worst = 0;
    int gap_changed = 0;
    for (int b = 0; b < k->batch && !rc; b++)
        for (int i = 0; i < k->M; i++)
            for (int j = 0; j < ldc; j++) {
                const size_t ci = ((size_t)b * k->M + i) * ldc + j;
                const double got = k->cbf ? cpu_f32_from_bf16(((bf16 *)C)[ci]) : ((float *)C)[ci];
                if (j >= k->N) { /* columns between rows belong to someone else */
                    gap_changed |= got != C0[ci];
                    continue;
                }
                double ref = 0, mag = 0;
                for (int p = 0; p < k->K; p++) {
                    const double x = at(A, (size_t)b * rowsA * lda, k->tA, lda, i, p) *
                                     at(B, (size_t)b * rowsB * ldb, k->tB, ldb, p, j);
                    ref += x, mag += fabs(x);
                }
                if (k->bias) ref += bias[j], mag += fabs(bias[j]);
                if (k->acc) ref += C0[ci], mag += fabs(C0[ci]);
                double tol = (k->K + 2) * 0x1p-23 * mag + 1e-30;
                if (k->cbf) tol += fabs(ref) * 0x1p-8;
                const double e = fabs(got - ref) / tol;
                worst = e > worst ? e : worst;
            }
    CHECK(worst <= 1.0,
          "batch %d %dx%dx%d tA %d tB %d ld %d/%d/%d bias %d acc %d bf16-out %d local %d: error %.3g "
          "of the tolerance",
          k->batch, k->M, k->N, k->K, k->tA, k->tB, lda, ldb, ldc, k->bias, k->acc, k->cbf, k->local, worst);
    CHECK(!gap_changed, "case %dx%dx%d: a strided C changed between its rows", k->M, k->N, k->K);
    free(A), free(B), free(bias), free(bias_bf), free(C0), free(C);
}

int main(void)
{
    const char *cap = getenv("DNNL_MAX_CPU_ISA");
    printf("bf16 GEMMs here: %s (DNNL_MAX_CPU_ISA=%s)\n", cpu_backend_ops.bf16_mode(), cap ? cap : "unset");
    /* AVX2 has no bf16 matmul in oneDNN: capped there, the engine must be emulating */
    if (cap && !strcmp(cap, "AVX2")) CHECK(!cpu_bf16_native(), "bf16 reported native under DNNL_MAX_CPU_ISA=AVX2");
    cpu_gemm *g = NULL;
    ib_error err = {0};
    CHECK(cpu_gemm_create(&g, 0, &err) == 0, "create: %s", err.msg);
    if (!g) return 1;
    const gcase cases[] = {
        {1, 37, 29, 53, 0, 1, 0, 0, 0, 1, 0, 0, 0},    /* Linear forward y = x W^T + b */
        {1, 37, 29, 53, 0, 1, 0, 0, 0, 1, 0, 1, 0},    /* ... written in bf16 with a bf16 bias (autocast) */
        {1, 29, 53, 37, 1, 0, 0, 0, 0, 0, 0, 0, 0},    /* dW = dy^T x */
        {1, 37, 53, 29, 0, 0, 0, 0, 0, 0, 0, 1, 0},    /* dx = dy W in bf16 (datt) */
        {1, 37, 53, 29, 0, 0, 0, 0, 0, 0, 1, 0, 0},    /* accumulate into fp32 */
        {1, 21, 17, 30, 0, 1, 40, 35, 24, 1, 1, 1, 0}, /* strided everything, bf16 out, accumulate */
        {3, 19, 16, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0},     /* batched */
        {2, 16, 19, 19, 1, 0, 0, 0, 0, 0, 0, 1, 0},    /* batched, transposed A, bf16 out */
        {1, 23, 23, 8, 0, 1, 0, 0, 0, 0, 0, 0, 1},     /* attention S = q k^T, per thread */
        {1, 23, 8, 23, 0, 0, 0, 0, 0, 0, 0, 1, 1},     /* o = P v in bf16, per thread */
        {1, 23, 8, 23, 1, 0, 0, 0, 0, 0, 0, 0, 1},     /* dv = P^T dO, per thread */
        {1, 300, 700, 190, 0, 1, 0, 0, 0, 1, 0, 1, 0}, /* big enough to split across threads */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(g, &cases[i]);
    cpu_gemm_destroy(g);
    printf("%zu cases, %d failures\n", sizeof cases / sizeof cases[0], failures);
    return failures != 0;
}
