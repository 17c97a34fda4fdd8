/* cuda/gemm_plan: the row-major -> column-major operand swap (see gemm_plan.h). */
#include "cuda/gemm_plan.h"

void cuda_gemm_desc_defaults(cuda_gemm_desc *d)
{
    if (d->batch < 1) d->batch = 1;
    if (!d->lda) d->lda = d->transA ? d->M : d->K; /* A stored M x K, or K x M when transA */
    if (!d->ldb) d->ldb = d->transB ? d->K : d->N; /* B stored K x N, or N x K when transB */
    if (!d->ldc) d->ldc = d->N;
    if (!d->strideA) d->strideA = (long long)d->M * d->K;
    if (!d->strideB) d->strideB = (long long)d->K * d->N;
    if (!d->strideC) d->strideC = (long long)d->M * d->ldc;
}

void cuda_gemm_plan_make(const cuda_gemm_desc *d, cuda_gemm_plan *p)
{
    p->m = d->N, p->n = d->M, p->k = d->K, p->batch = d->batch;
    /* our B (K x N; stored N x K when transB) is column-major N x K (or K x N): the BLAS needs
     * op(first) = N x K, so it transposes exactly when our B is stored transposed */
    p->first.trans = d->transB;
    p->first.rows = d->transB ? d->K : d->N;
    p->first.cols = d->transB ? d->N : d->K;
    p->first.ld = d->ldb;
    p->first.stride = d->strideB;
    /* our A (M x K; stored K x M when transA) is column-major K x M (or M x K): op(second) = K x M */
    p->second.trans = d->transA;
    p->second.rows = d->transA ? d->M : d->K;
    p->second.cols = d->transA ? d->K : d->M;
    p->second.ld = d->lda;
    p->second.stride = d->strideA;
    /* our C (M x N, row stride ldc) is column-major N x M */
    p->out.trans = 0;
    p->out.rows = d->N;
    p->out.cols = d->M;
    p->out.ld = d->ldc;
    p->out.stride = d->strideC;
}
