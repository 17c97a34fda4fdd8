/* cpu/ops: the training step's op families on the CPU, one file each (gemm, layernorm, attention,
 * gelu, crossentropy, adam, patch_embed, bias).  The CUDA backend mirrors these op for op.
 * Tensors are row-major; shapes in comments use B batch, T tokens (patches + class token),
 * D embed dim, H heads, hd = D/H, F mlp hidden, C classes, K = 3*P*P.
 * "act" buffers are a GEMM's inputs or a block Linear's outputs and hold ib_precision elements
 * (fp32, or bf16 under autocast); everything else is fp32. */
#ifndef INSTBENCH_CPU_OPS_H
#define INSTBENCH_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "instbench/precision.h"
#include "instbench/util.h"

typedef uint16_t bf16;

/* fp32 -> bf16 round to nearest even (what torch's .to(bfloat16) does); NaN stays NaN. */
static inline bf16 cpu_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16)(u >> 16);
}
static inline float cpu_f32_from_bf16(bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* dst[i] = src[i] in dtype dt (dst is an act buffer; element offset applies to dst). */
void cpu_store(void *dst, ib_precision dt, size_t dst_off, const float *src, size_t n);
void cpu_convert_bf16(bf16 *dst, const float *src, size_t n); /* parallel */
void cpu_load_bf16(float *dst, const bf16 *src, size_t n);    /* bf16 -> fp32, exact */
void cpu_widen_bf16(float *dst, const bf16 *src, size_t n);   /* the same, parallel */

/* ---- gemm: oneDNN matmul, primitives created once per shape and cached ----
 * C[b] (M x N, row stride ldc) = op(A[b]) (M x K) * op(B[b]) (K x N) (+ bias[N]) (+ C if accumulate)
 * A, B in dtype dt; the fp32 sum rounded once into C's dtype.  The bias has C's dtype (as cuBLASLt's
 * bias epilogue, and autocast's F.linear, which casts the bias with the weight): a bf16 output adds
 * the bf16 copy of the bias.  transA: A stored K x M; transB: B stored N x K.  Batched operands are
 * contiguous (stride M*K, K*N, M*ldc). */
typedef struct cpu_gemm cpu_gemm;
/* General form: op(A) is M x K, op(B) is K x N, C is M x N; lda/ldb/ldc are the row strides (in
 * elements) of the matrices as stored (0 = dense).  ab: dtype of A and B; c: dtype of C. */
typedef struct cpu_gemm_desc {
    int batch, M, N, K;
    int ab, c; /* ib_precision */
    int transA, transB;
    int lda, ldb, ldc;
    int bias, accumulate;
} cpu_gemm_desc;
/* nthreads: the most OpenMP threads that will call cpu_gemm_run_local (<= 0: omp_get_max_threads()). */
int cpu_gemm_create(cpu_gemm **g, int nthreads, ib_error *err);
/* All threads (oneDNN parallelises the one GEMM). */
int cpu_gemm_exec(cpu_gemm *g, const cpu_gemm_desc *d, const void *A, const void *B, void *C, const void *bias,
                  ib_error *err);
/* One GEMM per thread inside an OpenMP parallel region: prepare outside the region (creates and
 * caches the primitive and per-thread resources), then run_local from any thread of the region. */
int cpu_gemm_prepare_local(cpu_gemm *g, const cpu_gemm_desc *d, int *handle, ib_error *err);
int cpu_gemm_run_local(cpu_gemm *g, int handle, const void *A, const void *B, void *C, const void *bias);
void cpu_gemm_destroy(cpu_gemm *g);
/* NULL in a build with oneDNN (gemm.c); else why there are no GEMMs (gemm_none.c), which the
 * backend reports as its unavailable_reason. */
const char *cpu_gemm_unavailable(void);
int cpu_gemm_run(cpu_gemm *g, ib_precision dt, int batch, int M, int N, int K, const void *A, int transA, const void *B,
                 int transB, float *C, int ldc, const float *bias, int accumulate, ib_error *err);

/* ---- patch_embed ---- */
/* images [B,C,S,S] fp32 -> patches [B*N, C*P*P] act, columns ordered (c, kh, kw) like the conv weight. */
void cpu_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt);
/* x [B,T,D] = concat(cls, pe [B,N,D]) + pos [T,D]. */
void cpu_tokens_forward(const float *pe, const float *cls, const float *pos, float *x, int B, int T, int D);
/* From dx [B,T,D]: dcls [D], dpos [T,D] (sums over batch), dpe [B*N,D] fp32 = dx[:,1:]. */
void cpu_tokens_backward(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T, int D);

/* ---- layernorm (eps 1e-6, as timm), statistics in fp32 ---- */
/* If res != NULL: x = x_in + res is written to x_out first (fused residual add; res is the output
 * of the Linear before it, in the act dtype dt, rows at x_stride as x's), then
 * y [R,D] act = LN(x) * w + b; mean, rstd [R]. */
void cpu_layernorm_forward(const float *x_in, const void *res, float *x_out, const float *w, const float *b, void *y,
                           ib_precision dt, float *mean, float *rstd, int R, int D, ptrdiff_t x_stride);
/* dx [R,D] += dLN/dx (dy [R,D] in dtype dy_dt: the bf16 dgrad of the Linear after the norm under
 * autocast, fp32 for the head's); dw, db [D] overwritten. x rows at x_stride elements.
 * Fused for the Linear that produced this norm's input (dx is its output gradient): if dx_colsum,
 * it gets the column sums of the finished dx (that Linear's bias grad), and if dx_act (bf16 only)
 * the act copy of dx [R,D] for its GEMMs. */
void cpu_layernorm_backward(const void *dy, ib_precision dy_dt, const float *x, const float *mean, const float *rstd,
                            const float *w, float *dx, ptrdiff_t dx_stride, float *dw, float *db, int R, int D,
                            ptrdiff_t x_stride, void *dx_act, ib_precision dt, float *dx_colsum);

/* ---- bias: db [N] = column sums of dy [M,N]; optionally dy -> act copy for the next GEMMs ---- */
void cpu_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N);
/* The task grid of a column reduction over rows [M, N] (bias.c; the bias and GELU backward share
 * it): BLOCK gets the whole x, y and act (row stride N; their dtypes are the block's to know), adds
 * the column sums of rows [r0, r1) and columns [c0, c0 + w) into acc[0..w) (w <= CPU_COLSUM_COLS),
 * and does its own elementwise work on the way; out [N] gets the sums, added over row blocks in a
 * fixed order (deterministic for any thread count). */
#define CPU_COLSUM_COLS 256
typedef void (*cpu_colsum_block_fn)(const void *x, void *y, bf16 *act, float *acc, size_t ld, long r0, long r1, int c0,
                                    int w);
void cpu_colsum_tasks(cpu_colsum_block_fn block, const void *x, void *y, bf16 *act, int M, int N, float *out);

/* ---- gelu (exact erf) ---- */
/* a [n] = GELU(h), h (fc1's output) and a in the act dtype dt, computed in fp32. */
void cpu_gelu_forward(const void *h, void *a, ib_precision dt, size_t n);
/* g [M,F] in place, in the act dtype dt as h: in da, out dh = da * GELU'(h) (fp32, rounded once
 * under bf16), and db [F] = column sums of dh's fp32 values (fc1's bias grad), fused so dh is made
 * in one pass. */
void cpu_gelu_backward(const void *h, void *g, float *db, ib_precision dt, int M, int F);

/* ---- attention core: softmax(q k^T * scale) v per (batch, head) ----
 * qkv: act [B,T,3,H,hd] (the qkv Linear's output); P: act [B,H,T,T] softmax probabilities, saved
 * for backward (computed in fp32, kept in the act dtype: under bf16 autocast as bf16, as torch
 * keeps the softmax output that feeds the bf16 P v matmul); att: act [B,T,H*hd]; datt: act
 * [B,T,H*hd]; dqkv: act [B,T,3,H,hd] (overwritten, the qkv GEMMs' input) and dbias [3*H*hd] its
 * column sums (the qkv bias gradient, fused here so dqkv is written once).
 * scratch: cpu_attention_scratch_bytes(T, hd, omp_get_max_threads()) bytes. */
size_t cpu_attention_scratch_bytes(int T, int hd, int nthreads);
int cpu_attention_forward(cpu_gemm *g, ib_precision dt, const void *qkv, void *P, void *att, void *scratch, int B,
                          int T, int H, int hd, ib_error *err);
int cpu_attention_backward(cpu_gemm *g, ib_precision dt, const void *qkv, const void *P, const void *datt, void *dqkv,
                           float *dbias, void *scratch, int B, int T, int H, int hd, ib_error *err);

/* ---- crossentropy (mean over the batch) ---- */
/* logits [B,C] -> loss (mean), dlogits [B,C] = (softmax - onehot) / B (if non-NULL). */
double cpu_crossentropy(const float *logits, const int32_t *labels, float *dlogits, int B, int C);

/* ---- adam / adamw (torch.optim semantics, single-tensor path) ----
 * step is the 1-based step count after increment.  If wbf != NULL the updated params are also
 * written as bf16 there (the GEMM copy of the weights). */
void cpu_adam_step(float *p, const float *g, float *m, float *v, bf16 *wbf, size_t n, int step, float lr, float beta1,
                   float beta2, float eps, float weight_decay, int decoupled);

#endif
