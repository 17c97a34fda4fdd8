/* cuda_cublaslt_standin: a host stand-in for the part of cuBLASLt, cuBLAS and the CUDA runtime that
 * src/cuda/gemm.c calls, so gemm.c itself (descriptors, layouts, epilogues, alignment preferences,
 * the heuristic, the cuBLAS fallback, the algorithm cache) runs unmodified on a machine without a
 * GPU (tests/cuda/cuda_gemm.c).  Written from cuBLASLt's and cuBLAS's documented semantics (column-major
 * operands, op(A) m x k, op(B) k x n, D = alpha op(A) op(B) + beta C (+ bias[m] per column, per
 * batch), leading dimensions, strided batches, CUBLAS_COMPUTE_32F), independently of gemm_plan.c
 * and of the CPU backend's GEMM.  Device memory comes from cuda_host_runtime.c, which registers
 * every allocation: an operand that reaches outside its allocation fails the call (a wrong
 * leading dimension or stride shows) instead of reading a neighbour. */
#ifndef INSTBENCH_TESTS_CUDA_CUBLASLT_STANDIN_H
#define INSTBENCH_TESTS_CUDA_CUBLASLT_STANDIN_H

#include <stddef.h>

/* What the heuristic answers (set by the test before a GEMM shape is first seen). */
typedef enum {
    STANDIN_HEURISTIC_ALGO,          /* one algorithm, for the alignments asked */
    STANDIN_HEURISTIC_ZERO,          /* success with zero results */
    STANDIN_HEURISTIC_NOT_SUPPORTED, /* CUBLAS_STATUS_NOT_SUPPORTED (what a real arch may return) */
    STANDIN_HEURISTIC_FAIL           /* CUBLAS_STATUS_INTERNAL_ERROR: a real failure, not a fallback */
} standin_heuristic;

enum { STANDIN_MAX_ALGOS = 8 };

typedef struct standin_state {
    standin_heuristic heuristic;
    /* n_algos > 1: the heuristic offers that many algorithms, in this order; a GEMM run with the
     * k-th computes as the others do and takes 2 m n k batch / algo_gflops[k] ns of the device's
     * virtual clock (cudaEventElapsedTime's: tests/fakes/cuda_host_runtime.h).  0 or 1: one
     * algorithm that takes no time.  CUBLASLT_STANDIN_ALGOS=G0,G1,... sets both for a whole
     * program run where no test sets them. */
    int n_algos;
    double algo_gflops[STANDIN_MAX_ALGOS];
    int algo_runs[STANDIN_MAX_ALGOS]; /* cublasLtMatmul calls accepted, per algorithm */
    unsigned algo_unfit;              /* bit k: the heuristic returns its k-th with a state other than SUCCESS */
    int matmul_not_supported;         /* cublasLtMatmul answers NOT_SUPPORTED (the pick refused at launch) */
    int lt_create_fails;              /* cublasLtCreate fails */
    /* called, if set, after each cublasLtMatmul accepted (queued, run if the streams are immediate)
     * with its algorithm's index: a test's way to put other work between a caller's GEMMs */
    void (*after_matmul)(int algo);
    /* counters, reset by standin_reset (live_objects: of the process, never reset) */
    int heuristic_calls, lt_matmuls, blas_gemms, blas_handles, live_objects;
    double lt_flops;     /* 2 m n k batch summed over the cublasLtMatmul calls accepted */
    char violation[256]; /* the first misuse seen (out of bounds, bad layout, ...); "" if none */
} standin_state;

extern standin_state standin;

void standin_reset(void); /* modes to defaults, counters to zero, violation cleared */

#endif
