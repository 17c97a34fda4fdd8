/* cpu/rate: the MFU denominator on a CPU must be oneDNN's rate on operands like the step's own.
 * rate.c is built here over a recording stand-in of the GEMM layer (cpu/ops.h's cpu_gemm_*): every
 * operand it hands over must sit on a 64-byte boundary, as the step's arena buffers do (cpu/vit.c
 * aligns each to 4096), and hold data, not zeros.  calloc'd operands (16 bytes into a page, B never
 * written) made oneDNN's AVX-512 kernels split every load across two cache lines and read B from
 * the kernel's one zero page: on a 2-vCPU EPYC the fp32 probe read 0.35 TFLOP/s against the step's
 * 0.41 (MFU 116%), and the bf16 one 0.89 where operands in memory give 0.74. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "instbench/cpu.h"
#include "instbench/model.h"

static int failures, calls;

/* the first 20 failures said, the rest counted */
#define CHECK(cond, ...)                               \
    do {                                               \
        if (!(cond)) {                                 \
            if (failures++ < 20) {                     \
                fprintf(stderr, "FAIL: " __VA_ARGS__); \
                fputc('\n', stderr);                   \
            }                                          \
        }                                              \
    } while (0)

struct cpu_gemm {
    cpu_gemm_desc local[8];
    int n;
    ib_precision dt;
};

/* an operand of ELEMS elements of DT: aligned, and not all zeros in its first row's worth */
static void look(const char *what, const void *p, size_t elems, ib_precision dt)
{
    CHECK(((uintptr_t)p & 63) == 0, "%s operand at %p: not on a 64-byte boundary", what, p);
    const size_t es = ib_precision_size(dt), n = elems < 64 ? elems : 64;
    int nonzero = 0;
    for (size_t i = 0; i < n * es; i++) nonzero |= ((const unsigned char *)p)[i] != 0;
    CHECK(nonzero, "%s operand at %p: its first %zu elements are all zero (no data)", what, p, n);
}

int cpu_gemm_create(cpu_gemm **g, int nthreads, ib_error *err)
{
    (void)nthreads, (void)err;
    *g = calloc(1, sizeof **g);
    return *g ? 0 : -1;
}

void cpu_gemm_destroy(cpu_gemm *g) { free(g); }

int cpu_gemm_prepare_local(cpu_gemm *g, const cpu_gemm_desc *d, int *handle, ib_error *err)
{
    (void)err;
    if (g->n >= 8) return -1;
    g->local[g->n] = *d;
    *handle = g->n++;
    return 0;
}

int cpu_gemm_run_local(cpu_gemm *g, int handle, const void *A, const void *B, void *C, const void *bias)
{
    (void)bias;
    const cpu_gemm_desc *d = &g->local[handle];
#pragma omp critical
    {
        calls++;
        look("attention A", A, (size_t)d->M * d->K, (ib_precision)d->ab);
        look("attention B", B, (size_t)d->K * d->N, (ib_precision)d->ab);
        CHECK(((uintptr_t)C & 63) == 0, "attention C at %p: not on a 64-byte boundary", C);
    }
    return 0;
}

int cpu_gemm_run(cpu_gemm *g, ib_precision dt, int batch, int M, int N, int K, const void *A, int transA, const void *B,
                 int transB, float *C, int ldc, const float *bias, int accumulate, ib_error *err)
{
    (void)g, (void)batch, (void)transA, (void)transB, (void)ldc, (void)bias, (void)accumulate, (void)err;
    calls++;
    look("A", A, (size_t)M * K, dt);
    look("B", B, (size_t)K * N, dt);
    CHECK(((uintptr_t)C & 63) == 0, "C at %p: not on a 64-byte boundary", (void *)C);
    return 0;
}

int main(void)
{
    ib_error err = {0};
    for (int p = 0; p < 2; p++) {
        ib_train_config cfg;
        memset(&cfg, 0, sizeof cfg);
        if (model_preset("vit_tiny_patch16_224", &cfg.model, &err)) {
            fprintf(stderr, "FAIL: %s\n", err.msg);
            return 1;
        }
        cfg.batch_size = 2, cfg.precision = p ? IB_PREC_BF16 : IB_PREC_FP32;
        double fps = 0;
        calls = 0;
        CHECK(cpu_gemm_rate(&cfg, 0.001, NULL, &fps, &err) == 0, "cpu_gemm_rate: %s", err.msg);
        CHECK(calls > 0, "the probe ran no GEMM");
    }
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("engine_rate_operands: every operand aligned and filled\n");
    return failures != 0;
}
