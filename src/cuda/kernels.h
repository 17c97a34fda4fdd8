/* cuda/kernels: launchers of the kernels in kernels/<op>.cu, callable from C (one op family per .cu,
 * mirroring src/cpu/ops.h).  Every launcher enqueues on `s` and returns cudaGetLastError()'s
 * result, so a bad launch configuration is reported at the call that made it.
 * Tensors are row-major; shapes use B batch, T tokens, D embed dim, H heads, hd = D/H,
 * F mlp hidden, C classes, K = 3*P*P.  "act" buffers are a GEMM's inputs or a block Linear's
 * outputs and hold fp32 (dt IB_PREC_FP32) or bf16 (IB_PREC_BF16, torch's autocast dtype, round to
 * nearest even); everything else is fp32. */
#ifndef INSTBENCH_CUDA_KERNELS_H
#define INSTBENCH_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "instbench/precision.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- convert.cu ---- */
/* dst[i] (act dtype dt) = src[i]. */
cudaError_t cuk_store_act(void *dst, ib_precision dt, const float *src, size_t n, cudaStream_t s);

/* ---- patch_embed.cu ---- */
/* images [B,C,S,S] -> patches act [B*N, C*P*P], columns ordered (c, ky, kx) like the conv weight. */
cudaError_t cuk_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt,
                         cudaStream_t s);
/* x [B,T,D] = concat(cls [D], pe [B,N,D]) + pos [T,D]   (N = T-1). */
cudaError_t cuk_tokens_forward(const float *pe, const float *cls, const float *pos, float *x, int B, int T, int D,
                               cudaStream_t s);
/* dpos [T,D] = sum_b dx[b]; dcls [D] = dpos[0]; dpe [B*N,D] = dx[:,1:]. */
cudaError_t cuk_tokens_backward(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T, int D,
                                cudaStream_t s);

/* ---- layernorm.cu (eps 1e-6, fp32 statistics, two-pass variance) ---- */
/* Rows r of x at x_in + r*x_stride.  If res != NULL: x_out = x_in + res first (same strides; res,
 * the Linear's output before the norm, in the act dtype dt as y).
 * y [R,D] act (dense) = (x - mean) * rstd * w + b;  mean, rstd [R]. */
cudaError_t cuk_layernorm_forward(const float *x_in, const void *res, float *x_out, const float *w, const float *b,
                                  void *y, ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t x_stride,
                                  cudaStream_t s);
/* dx [R rows at dx_stride] += dLN/dx for dy [R,D] (dense, dtype dy_dt: the Linear after the norm's
 * dgrad, bf16 under autocast; fp32 for the head's); dw, db [D] overwritten.  When dx is
 * the output of a Linear (dense, dx_stride D), the same pass finishes that Linear's dy as
 * src/cpu/layernorm.c does: next_db [D] (if not NULL) = column sums of the new dx, next_act [R,D]
 * (if not NULL, dtype dt) = the new dx.
 * partial: scratch of cuk_layernorm_partial_floats(D) floats. */
size_t cuk_layernorm_partial_floats(int D);
cudaError_t cuk_layernorm_backward(const void *dy, ib_precision dy_dt, const float *x, const float *mean,
                                   const float *rstd, const float *w, float *dx, ptrdiff_t dx_stride, float *dw,
                                   float *db, int R, int D, ptrdiff_t x_stride, void *next_act, ib_precision dt,
                                   float *next_db, float *partial, cudaStream_t s);

/* ---- bias.cu ---- */
/* db [N] = column sums of dy [M,N]; if dy_act != NULL also dy_act [M,N] (dtype dt) = dy.
 * partial: scratch of cuk_colsum_partial_floats(N) floats. */
size_t cuk_colsum_partial_floats(int N);
cudaError_t cuk_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N, float *partial,
                              cudaStream_t s);

/* db [N] = column sums of dy [M,N] held in dtype dy_dt (bf16: a gradient that arrives rounded, as
 * cuDNN's attention backward returns dq, dk, dv). */
cudaError_t cuk_bias_backward_act(const void *dy, ib_precision dy_dt, float *db, int M, int N, float *partial,
                                  cudaStream_t s);

/* GELU's backward fused with fc1's bias gradient: g [M,F] in place = g * GELU'(h) (computed in
 * fp32, rounded once under bf16), db [F] = column sums of those fp32 values; h and g in the act
 * dtype dt (autocast keeps fc1's output and fc2's dgrad in bf16). */
cudaError_t cuk_gelu_bias_backward(const void *h, void *g, float *db, ib_precision dt, int M, int F, float *partial,
                                   cudaStream_t s);

/* Every row of C [M,N] (row stride ldc, dtype dt) = bias [N] (dtype dt): what a GEMM accumulates
 * onto when cuBLASLt's bias epilogue cannot run (src/cuda/gemm.c), so the sum is rounded once. */
cudaError_t cuk_fill_bias(void *C, ib_precision dt, const void *bias, int M, int N, int ldc, cudaStream_t s);

/* ---- gelu.cu (exact erf GELU, nn.GELU()) ---- */
/* a [n] act = GELU(h) (h: fc1's output with its bias, saved for backward, in the act dtype too). */
cudaError_t cuk_gelu_forward(const void *h, void *a, ib_precision dt, size_t n, cudaStream_t s);

/* ---- attention.cu: everything around the cuBLASLt batched GEMMs ---- */
/* qkv act [B,T,3,H,hd] -> qkvh act [3][B,H,T,hd] (q, k, v each B*H*T*hd elements; a permutation). */
cudaError_t cuk_qkv_split(const void *qkv, void *qkvh, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s);
/* dqkvh fp32 [3][B,H,T,hd] -> dqkv fp32 [B,T,3,H,hd]. */
cudaError_t cuk_qkv_merge(const float *dqkvh, float *dqkv, int B, int T, int H, int hd, cudaStream_t s);
/* o act [B,H,T,hd] -> att act [B,T,H*hd] (same dtype: a pure permutation). */
cudaError_t cuk_heads_merge(const void *o, void *att, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s);
/* datt act [B,T,H*hd] -> dO act [B,H,T,hd]. */
cudaError_t cuk_heads_split(const void *datt, void *dO, ib_precision dt, int B, int T, int H, int hd, cudaStream_t s);
/* Rows of S [rows,T] fp32, row stride ld >= T (the T x T score matrices are stored with rows
 * padded to a multiple of 8 elements, so every row starts 16-byte aligned for tensor-core GEMMs;
 * the padding is never read as data):
 * P = softmax(S * scale) (max subtracted first), written in place into S when p_act is NULL, else
 * to p_act only (dtype dt, same strides; S is then scratch: it holds the unnormalised exponentials). */
cudaError_t cuk_softmax_forward(float *S, void *p_act, ib_precision dt, size_t rows, int T, int ld, float scale,
                                cudaStream_t s);
/* Rows (stride ld): g <- P * (g - <P, g>) * scale (fp32, in place), P read in dtype dt (the saved
 * act copy, as the CPU backend keeps it); if ds_act != NULL also ds_act (dtype dt) = g. */
cudaError_t cuk_softmax_backward(const void *P, float *g, void *ds_act, ib_precision dt, size_t rows, int T, int ld,
                                 float scale, cudaStream_t s);

/* ---- crossentropy.cu (nn.CrossEntropyLoss(), mean over the batch) ---- */
/* logits [B,C] -> dlogits [B,C] = (softmax - onehot)/B; row_loss [B] double; loss [1] float = mean. */
cudaError_t cuk_crossentropy(const float *logits, const int32_t *labels, float *dlogits, double *row_loss, float *loss,
                             int B, int C, cudaStream_t s);

/* ---- adam.cu (torch.optim.Adam / AdamW, single-tensor path; scalars as src/cpu/adam.c) ---- */
typedef struct cuk_adam_scalars {
    float beta1, beta2, omb1, omb2, step_size, bc2_sqrt, eps, wd, decay;
    int decoupled;
} cuk_adam_scalars;
/* p, m, v [n] updated from g [n]; if wbf != NULL also wbf [n] = bf16(p). */
cudaError_t cuk_adam_step(float *p, const float *g, float *m, float *v, uint16_t *wbf, size_t n,
                          const cuk_adam_scalars *k, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
