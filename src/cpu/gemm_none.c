/* cpu/gemm_none: the GEMM entry points of a build without oneDNN 2.x (CMakeLists.txt compiles this
 * file instead of gemm.c then).  The CPU backend reports itself unavailable with the reason below
 * (cpu_gemm_unavailable), so nothing reaches a GEMM; these answer an error all the same. */
#include "cpu/ops.h"
#include "instbench/cpu.h"

#define WHY "built without oneDNN 2.x (configure with libdnnl-dev 2.x installed)"

const char *cpu_gemm_unavailable(void) { return WHY; }

int cpu_bf16_native(void) { return 0; }

int cpu_gemm_create(cpu_gemm **g, int nthreads, ib_error *err)
{
    *g = NULL;
    return ib_error_set(err, IB_EXIT_RUNTIME, "cpu backend: %s", WHY);
}

void cpu_gemm_destroy(cpu_gemm *g) {}

int cpu_gemm_exec(cpu_gemm *g, const cpu_gemm_desc *d, const void *A, const void *B, void *C, const void *bias,
                  ib_error *err)
{
    return ib_error_set(err, IB_EXIT_RUNTIME, "cpu backend: %s", WHY);
}

int cpu_gemm_prepare_local(cpu_gemm *g, const cpu_gemm_desc *d, int *handle, ib_error *err)
{
    return ib_error_set(err, IB_EXIT_RUNTIME, "cpu backend: %s", WHY);
}

int cpu_gemm_run_local(cpu_gemm *g, int handle, const void *A, const void *B, void *C, const void *bias) { return -1; }

int cpu_gemm_run(cpu_gemm *g, ib_precision dt, int batch, int M, int N, int K, const void *A, int transA, const void *B,
                 int transB, float *C, int ldc, const float *bias, int accumulate, ib_error *err)
{
    return ib_error_set(err, IB_EXIT_RUNTIME, "cpu backend: %s", WHY);
}
