/* cpu: the CPU backend's table, and its specifics beyond backend.h.
 * Threads: the backend runs every op on an OpenMP team of ib_train_config.threads (0 = all cores;
 * OMP_NUM_THREADS applies), the runtime Debian's oneDNN uses too.  INSTBENCH_CPU_PROFILE=1 in
 * the environment prints seconds per op family (GEMMs, layernorm, attention, gelu, bias,
 * patch_embed, adam) to stderr when a CPU backend is destroyed. */
#ifndef INSTBENCH_CPU_H
#define INSTBENCH_CPU_H

#include <signal.h>
#include <stddef.h>
#include "instbench/backend.h"
#include "instbench/util.h"

/* The backend (instbench/backend.h): host ranks, bf16_mode native or emulated, a measured peak
 * (cpu_gemm_rate, the INSTBENCH_CPU_PEAK_SECONDS environment variable shortens its window). */
extern const ib_backend_ops cpu_backend_ops;
int cpu_backend_create(const ib_train_config *cfg, ib_backend **out, ib_error *err);
size_t cpu_backend_memory_estimate(const ib_train_config *cfg);

/* The GEMM roofline of this CPU for this config: runs every matmul of one training step (forward,
 * backward-data and backward-weight shapes of patch embed, qkv, proj, fc1, fc2, head, and the
 * batched attention products) through the same cached oneDNN primitives and precision the
 * backend uses, repeating the whole set until min_seconds have passed (after one warm-up round),
 * and returns the achieved rate in FLOP/s (2*M*N*K per matmul).  measure uses it as the CPU's
 * "peak" for MFU; bench_cpu_vs_torch.sh for the roofline fraction.  threads as in ib_train_config.
 * STOP (may be NULL), set asynchronously by a signal, is looked at before every matmul: the
 * probe then ends within one GEMM and fails with "interrupted". */
int cpu_gemm_rate(const ib_train_config *cfg, double min_seconds, const volatile sig_atomic_t *stop,
                  double *flops_per_s, ib_error *err);
/* How bf16 GEMMs run here: 1 native (oneDNN has a bf16 matmul on this CPU: AVX512-BF16, AMX, or
 * its own AVX-512 path), 0 emulated (AVX2-only CPUs: operands widened to fp32 for an fp32 GEMM,
 * autocast's numerics; cpu/gemm.c).  Honours DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA; asked once. */
int cpu_bf16_native(void);

#endif
