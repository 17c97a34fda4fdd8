/* cuda/gemm: cuBLASLt matmuls in the row-major terms of src/cpu/ops.h's cpu_gemm_desc.
 *   C[b] (M x N, row stride ldc) = op(A[b]) (M x K) * op(B[b]) (K x N) (+ bias[N]) (+ C if accumulate)
 * transA: A stored K x M; transB: B stored N x K.  A and B in dtype ab, C in dtype c (IB_PREC_FP32 or
 * IB_PREC_BF16); fp32 accumulation always (CUBLAS_COMPUTE_32F: bf16 inputs with fp32 accumulate under
 * autocast, true fp32 without TF32 otherwise, as torch's default).  Batched operands are strided
 * (strideA/B/C elements, 0 = dense M*K etc.).  The bias has C's dtype (cuBLASLt's bias epilogue
 * default, and autocast's F.linear, which casts the bias with the weight): added to the fp32 sum
 * before its one rounding into C.  The matmul descriptor and the heuristic's algorithm
 * are cached per shape and pointer alignment, so a training step does no heuristic queries after
 * the first.  With INSTBENCH_GEMM_TUNE=1 a shape's first call also times the heuristic's top
 * algorithms on its own operands and keeps the fastest (gemm.c, gemm_tune). */
#ifndef INSTBENCH_CUDA_GEMM_H
#define INSTBENCH_CUDA_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "instbench/util.h"

#include "cuda/gemm_plan.h" /* cuda_gemm_desc */

typedef struct cuda_gemm cuda_gemm;

/* workspace_bytes: cuBLASLt scratch (32 MiB suits Hopper). */
int cuda_gemm_create(cuda_gemm **g, size_t workspace_bytes, ib_error *err);
int cuda_gemm_exec(cuda_gemm *g, const cuda_gemm_desc *d, const void *A, const void *B, void *C, const void *bias,
                   cudaStream_t s, ib_error *err);
/* The roads the GEMMs run so far took, counted over the distinct shapes cached (dimensions, layout,
 * dtypes and pointer alignment: one entry each): *shapes in all; *cublas_fallback, those cuBLASLt
 * offered no algorithm for or refused at launch (cuBLAS ran them); *bias_kernel, those whose bias
 * a kernel wrote into C before the GEMM accumulated onto it (the fallback, or a bias not 16-byte
 * aligned).  Both slower roads than the epilogue's: measure records them (hardware.gemm).
 * *tuned: those whose algorithm timing chose over the heuristic's first (INSTBENCH_GEMM_TUNE=1). */
void cuda_gemm_paths(const cuda_gemm *g, int *shapes, int *cublas_fallback, int *bias_kernel, int *tuned);
void cuda_gemm_destroy(cuda_gemm *g);

#endif
