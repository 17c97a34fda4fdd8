/* precision: the one enum for a number format, used as the training precision (fp32, or bf16
 * autocast) and as the dtype of an "act" tensor (a GEMM operand: fp32, or bf16 under autocast).
 * Plain C that C++ (the .cu kernels, compiled by nvcc) includes as well. */
#ifndef INSTBENCH_PRECISION_H
#define INSTBENCH_PRECISION_H

typedef enum ib_precision { IB_PREC_FP32 = 0, IB_PREC_BF16 = 1 } ib_precision;

/* Bytes of one element: 4 or 2. */
static inline unsigned ib_precision_size(ib_precision p) { return p == IB_PREC_BF16 ? 2u : 4u; }

#endif
