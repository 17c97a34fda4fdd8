/* cuda/gemm_rate: the rate cuBLASLt reaches on one training step's Linear-layer GEMMs on the GPU
 * at hand (issue 37): the in-situ yardstick a GPU row is measured against beside the datasheet
 * MFU, as src/cpu/rate.c measures oneDNN's on a CPU.  A step that took a slow path (attention
 * unfused, a GEMM falling back to cuBLAS) shows as a low share of it even on a GPU whose datasheet
 * figure no one here has checked. */
#ifndef INSTBENCH_CUDA_GEMM_RATE_H
#define INSTBENCH_CUDA_GEMM_RATE_H

#include <signal.h>

#include "instbench/backend.h"

/* The most rows (B*T) a probe GEMM has: past 32,768 rows the rate no longer grows, and the cap
 * keeps the probe's buffers near 1 GiB for ViT-L (its operands: 32,768 x 4,096 in bf16, twice,
 * and an fp32 output of the same shape). */
#define CUDA_GEMM_RATE_MAX_ROWS 32768

/* FLOP/s of the step's GEMMs on cfg->device: every Linear layer's forward (with its bias
 * epilogue), weight gradient and input gradient (patch embedding: no input gradient), in cfg's
 * precision (bf16 operands, fp32 accumulate and output, as the step's; fp32 without TF32), each
 * as many times as the model has it, one untimed round first (plans, heuristics, clocks), then
 * rounds until MIN_SECONDS of the GPU's time (two events) have passed, the host waiting for the
 * stream after each.  Attention's
 * own GEMMs are left out (cuDNN's SDPA has none).  STOP (may be NULL) ends it with an error. */
int cuda_gemm_rate(const ib_train_config *cfg, double min_seconds, const volatile sig_atomic_t *stop,
                   double *flops_per_s, ib_error *err);

#endif
