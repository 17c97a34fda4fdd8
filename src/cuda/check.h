/* cuda/check: every CUDA runtime, cuBLASLt and NCCL status becomes an ib_error naming the call,
 * so a failure on a GPU machine says what failed and why; nothing below cmd/ exits. */
#ifndef INSTBENCH_CUDA_CHECK_H
#define INSTBENCH_CUDA_CHECK_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "instbench/util.h"

static inline int cuda_check(cudaError_t e, const char *what, ib_error *err)
{
    if (e == cudaSuccess) return 0;
    return ib_error_set(err, IB_EXIT_RUNTIME, "CUDA: %s failed: %s (%s)", what, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}

static inline int cublaslt_check(cublasStatus_t st, const char *what, ib_error *err)
{
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    return ib_error_set(err, IB_EXIT_RUNTIME, "cuBLASLt: %s failed: status %d", what, (int)st);
}

/* In functions taking `ib_error *err` and returning int: return -1 on failure. */
#define CUDA_TRY(call)                                 \
    do {                                               \
        if (cuda_check((call), #call, err)) return -1; \
    } while (0)
#define CUBLASLT_TRY(call)                                 \
    do {                                                   \
        if (cublaslt_check((call), #call, err)) return -1; \
    } while (0)

#endif
