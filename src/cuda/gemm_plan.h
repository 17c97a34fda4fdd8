/* cuda/gemm_plan: how a row-major GEMM (cuda_gemm_desc) is put to a column-major BLAS: the pure
 * arithmetic of the operand swap, free of CUDA so a CPU test can check it against a plain
 * row-major product (tests/cuda/cuda_gemm_plan.c).
 * A row-major X (R x C, row stride ld) is the column-major X^T (C x R, leading dimension ld), so
 * C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: the BLAS's first operand is our B, its
 * second our A, m = N, n = M, k = K. */
#ifndef INSTBENCH_CUDA_GEMM_PLAN_H
#define INSTBENCH_CUDA_GEMM_PLAN_H

typedef struct cuda_gemm_desc {
    int batch, M, N, K;
    int ab, c; /* IB_PREC_FP32 / IB_PREC_BF16 */
    int transA, transB;
    int lda, ldb, ldc;                   /* row strides as stored, 0 = dense */
    long long strideA, strideB, strideC; /* batch strides in elements, 0 = dense */
    int bias, accumulate;                /* bias: [N] in C's dtype, added in the epilogue */
} cuda_gemm_desc;

/* One column-major operand as the BLAS sees it: stored rows x cols with leading dimension ld,
 * transposed by the BLAS when trans is set. */
typedef struct cuda_blas_operand {
    int trans;
    int rows, cols, ld;
    long long stride;
} cuda_blas_operand;

typedef struct cuda_gemm_plan {
    int m, n, k, batch;
    cuda_blas_operand first;  /* our B */
    cuda_blas_operand second; /* our A */
    cuda_blas_operand out;    /* our C, never transposed */
} cuda_gemm_plan;

/* Fills the defaults of d in place (batch >= 1, dense ld and strides), then the plan. */
void cuda_gemm_desc_defaults(cuda_gemm_desc *d);
void cuda_gemm_plan_make(const cuda_gemm_desc *d, cuda_gemm_plan *p);

#endif
