/* cuda_gemm_plan: the row-major -> column-major operand swap of the CUDA backend's GEMMs, checked
 * on the CPU.  For random shapes, transposes, padded row strides and batch strides (plus the exact
 * attention and Linear shapes the ViT step issues), a column-major BLAS emulated here, called with
 * the plan's arguments as cuBLASLt/cuBLAS would be, must reproduce the row-major product computed
 * straight from the contract in src/cuda/gemm_plan.h: C[b] = op(A[b]) op(B[b]). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gemm_plan.h"

static int failures;

/* Column-major GEMM as BLAS defines it: C(i,j) = sum_l op(X)(i,l) op(Y)(l,j), element (r,c) of a
 * stored matrix at r + c*ld. */
static void blas_gemm(const cuda_gemm_plan *p, const float *X, const float *Y, float *C)
{
    for (int b = 0; b < p->batch; b++) {
        const float *x = X + b * p->first.stride, *y = Y + b * p->second.stride;
        float *c = C + b * p->out.stride;
        for (int i = 0; i < p->m; i++)
            for (int j = 0; j < p->n; j++) {
                double s = 0;
                for (int l = 0; l < p->k; l++) {
                    const float xv = p->first.trans ? x[l + (size_t)i * p->first.ld] : x[i + (size_t)l * p->first.ld];
                    const float yv =
                        p->second.trans ? y[j + (size_t)l * p->second.ld] : y[l + (size_t)j * p->second.ld];
                    s += (double)xv * yv;
                }
                c[i + (size_t)j * p->out.ld] = (float)s;
            }
    }
}

/* The contract, row-major: A stored M x K (K x M if transA) with row stride lda, etc. */
static void rowmajor_ref(const cuda_gemm_desc *d, const float *A, const float *B, float *C)
{
    for (int b = 0; b < d->batch; b++) {
        const float *a = A + b * d->strideA, *bb = B + b * d->strideB;
        float *c = C + b * d->strideC;
        for (int i = 0; i < d->M; i++)
            for (int j = 0; j < d->N; j++) {
                double s = 0;
                for (int l = 0; l < d->K; l++) {
                    const float av = d->transA ? a[(size_t)l * d->lda + i] : a[(size_t)i * d->lda + l];
                    const float bv = d->transB ? bb[(size_t)j * d->ldb + l] : bb[(size_t)l * d->ldb + j];
                    s += (double)av * bv;
                }
                c[(size_t)i * d->ldc + j] = (float)s;
            }
    }
}

static size_t span(long long stride, int batch, int rows, int ld)
{
    return (size_t)stride * (batch - 1) + (size_t)rows * ld;
}

static void check(const char *what, cuda_gemm_desc d)
{
    cuda_gemm_desc_defaults(&d);
    cuda_gemm_plan p;
    cuda_gemm_plan_make(&d, &p);
    /* what cuBLAS(Lt) would refuse: a leading dimension shorter than the stored rows */
    if (p.first.ld < p.first.rows || p.second.ld < p.second.rows || p.out.ld < p.out.rows) {
        fprintf(stderr, "FAIL %s: ld < rows (%d<%d, %d<%d, %d<%d)\n", what, p.first.ld, p.first.rows, p.second.ld,
                p.second.rows, p.out.ld, p.out.rows);
        failures++;
        return;
    }
    const int arows = d.transA ? d.K : d.M, brows = d.transB ? d.N : d.K;
    const size_t na = span(d.strideA, d.batch, arows, d.lda), nb = span(d.strideB, d.batch, brows, d.ldb);
    const size_t nc = span(d.strideC, d.batch, d.M, d.ldc);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = calloc(nc, 4), *C2 = calloc(nc, 4);
    for (size_t i = 0; i < na; i++) A[i] = (float)(rand() % 17 - 8) / 8;
    for (size_t i = 0; i < nb; i++) B[i] = (float)(rand() % 13 - 6) / 4;
    rowmajor_ref(&d, A, B, C1);
    blas_gemm(&p, B, A, C2); /* the BLAS's first operand is our B */
    for (size_t i = 0; i < nc; i++)
        if (C1[i] != C2[i]) {
            fprintf(stderr, "FAIL %s: batch %d M %d N %d K %d tA %d tB %d: element %zu %g != %g\n", what, d.batch, d.M,
                    d.N, d.K, d.transA, d.transB, i, C2[i], C1[i]);
            failures++;
            break;
        }
    free(A), free(B), free(C1), free(C2);
}

int main(void)
{
    srand(7);
    /* the ViT step's shapes at a small size: B 2, T 5, D 8, H 2, hd 4, F 16 */
    const int B = 2, T = 5, D = 8, H = 2, hd = 4, F = 16, BT = B * T;
    check("linear forward", (cuda_gemm_desc){.M = BT, .N = 3 * D, .K = D, .transB = 1});
    check("linear dW", (cuda_gemm_desc){.M = F, .N = D, .K = BT, .transA = 1});
    check("linear dx", (cuda_gemm_desc){.M = BT, .N = D, .K = F});
    const long long tt = (long long)T * T, th = (long long)T * hd;
    check("S = q k^T",
          (cuda_gemm_desc){
              .batch = B * H, .M = T, .N = T, .K = hd, .transB = 1, .strideA = th, .strideB = th, .strideC = tt});
    check("o = P v",
          (cuda_gemm_desc){.batch = B * H, .M = T, .N = hd, .K = T, .strideA = tt, .strideB = th, .strideC = th});
    check("dv = P^T dO",
          (cuda_gemm_desc){
              .batch = B * H, .M = T, .N = hd, .K = T, .transA = 1, .strideA = tt, .strideB = th, .strideC = th});
    check("dk = dS^T q",
          (cuda_gemm_desc){
              .batch = B * H, .M = T, .N = hd, .K = T, .transA = 1, .strideA = tt, .strideB = th, .strideC = th});
    /* random shapes, transposes, padded strides and batch strides */
    for (int it = 0; it < 300; it++) {
        cuda_gemm_desc d = {.batch = 1 + rand() % 3,
                            .M = 1 + rand() % 9,
                            .N = 1 + rand() % 9,
                            .K = 1 + rand() % 9,
                            .transA = rand() % 2,
                            .transB = rand() % 2};
        if (rand() % 2) d.lda = (d.transA ? d.M : d.K) + rand() % 3;
        if (rand() % 2) d.ldb = (d.transB ? d.K : d.N) + rand() % 3;
        if (rand() % 2) d.ldc = d.N + rand() % 3;
        cuda_gemm_desc e = d;
        cuda_gemm_desc_defaults(&e);
        if (rand() % 2) d.strideA = (long long)(e.transA ? e.K : e.M) * e.lda + rand() % 5;
        if (rand() % 2) d.strideB = (long long)(e.transB ? e.N : e.K) * e.ldb + rand() % 5;
        if (rand() % 2) d.strideC = (long long)e.M * e.ldc + rand() % 5;
        check("random", d);
    }
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cuda_gemm_plan: all passed\n");
    return 0;
}
