/* precision: the one enum for a number format, used as the training precision (fp32, or bf16
 * autocast) and as the dtype of an "act" tensor (a GEMM operand: fp32, or bf16 under autocast).
 * Plain C that C++ (the .cu kernels, compiled by nvcc) includes as well. */
#ifndef INSTBENCH_PRECISION_H
#define INSTBENCH_PRECISION_H

typedef enum ib_precision { IB_PREC_FP32 = 0, IB_PREC_BF16 = 1 } ib_precision;

/* The oldest NVIDIA GPU that has bf16 matmuls, as compute capability x10: Ampere's tensor cores
 * (8.0); Turing (T4, 7.5) and Volta (V100, 7.0) have none.  The CUDA backend refuses bf16 below it
 * on the device it finds, a sweep on the GPUs the instance catalogue names. */
#define IB_BF16_MIN_COMPUTE_CAPABILITY 80

/* Bytes of one element: 4 or 2. */
static inline unsigned ib_precision_size(ib_precision p) { return p == IB_PREC_BF16 ? 2u : 4u; }

#endif
