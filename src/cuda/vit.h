/* cuda/vit: the ViT training step on one GPU, op for op the step of src/cpu/vit.c (same layout,
 * same op order, same bf16 autocast rounding points, same Adam), over src/cuda/kernels/<op>.cu and
 * cuBLASLt.
 * Everything lives in one device allocation: the fp32 parameter, gradient, Adam m and v blocks
 * (model_layout order), the bf16 weight copy, and the activations. */
#ifndef INSTBENCH_CUDA_VIT_H
#define INSTBENCH_CUDA_VIT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cuda/gemm.h"
#include "instbench/backend.h"

/* Saved activations of one block (B batch, T tokens, D width, F mlp hidden, H heads, hd = D/H). */
typedef struct cuda_block_acts {
    float *x_in;            /* [B,T,D] residual stream entering the block */
    void *ln1;              /* act [B,T,D] */
    float *mean1, *rstd1;   /* [B*T] */
    void *qkvh;             /* act [3][B,H,T,hd]: q, k, v split by head (attention's batched layout) */
    void *P;                /* act [B,H,T,Tp] softmax probabilities (T valid columns per row), saved in
                             * the act dtype as the CPU backend (and autocast) keep them */
    void *att;              /* act [B,T,D] attention output, heads merged (proj input) */
    float *x_mid;           /* [B,T,D] after the attention residual */
    void *ln2;              /* act [B,T,D] */
    float *mean2, *rstd2;   /* [B*T] */
    float *h;               /* [B,T,F] fc1 output (+ bias) before GELU */
    void *a;                /* act [B,T,F] GELU output (fc2 input) */
} cuda_block_acts;

/* Element offsets of one block's tensors in the parameter block. */
typedef struct cuda_block_params {
    size_t norm1_w, norm1_b, qkv_w, qkv_b, proj_w, proj_b, norm2_w, norm2_b, fc1_w, fc1_b, fc2_w, fc2_b;
} cuda_block_params;

typedef struct cuda_vit {
    ib_train_config cfg;
    const model_layout *layout;
    ib_precision dt;                     /* IB_PREC_BF16 under autocast */
    int B, T, N, D, H, hd, F, C, K, L;   /* K = 3*P*P patch length */
    int Tp;                              /* row stride of the T x T attention matrices: T rounded up to 8 */
    int device;
    cudaStream_t stream;
    cuda_gemm *gemm;
    void *pool;                          /* the one device allocation */
    size_t bytes;                        /* its size */

    float *params, *grads, *m, *v;       /* [total] each */
    uint16_t *wbf;                       /* [total] bf16 copy of params under autocast */
    cuda_block_params *bp;               /* [L] host */
    size_t patch_w, patch_b, cls, pos, norm_w, norm_b, head_w, head_b;
    int step;

    float *images;                       /* [B,3,S,S] */
    int32_t *labels;                     /* [B] */
    int have_inputs;

    cuda_block_acts *blk;                /* [L] host array of device pointers */
    float *x_final;                      /* [B,T,D] (class-token rows used) */
    void *patches;                       /* act [B*N,K] */
    float *meanf, *rstdf;                /* [B] */
    void *lnf;                           /* act [B,D] */
    float *logits, *dlogits;             /* [B,C] */
    void *dlogits_act;                   /* act [B,C] */
    float *dlnf;                         /* [B,D] */
    /* scratch shared by all blocks */
    float *big;                          /* [B*T, max(3D,F)] fp32 GEMM outputs */
    void *big_act;                       /* act [B*T, max(3D,F)] */
    float *f;                            /* [B*T,D] */
    float *dx;                           /* [B*T,D] gradient of the residual stream */
    void *datt;                          /* act [B*T,D] gradient of the attention output */
    void *heads_act;                     /* act [B,H,T,hd]: o in forward, dO in backward */
    void *tt_act;                        /* act [B*H,T,Tp]: dS cast for its GEMMs (bf16 only) */
    float *dP;                           /* [B*H,T,Tp] fp32: the scores S in forward (bf16), dP/dS in backward */
    float *dqkvh;                        /* [3][B,H,T,hd] */
    float *partial;                      /* column-reduction partial sums */
    double *row_loss;                    /* [B] */
    float *loss_dev;                     /* [1] */
    float *loss_host;                    /* pinned [1] */
    cudaEvent_t loss_ready;
    float last_loss;
} cuda_vit;

/* estimate_only: computes v->bytes without touching the GPU. */
int cuda_vit_init(cuda_vit *v, const ib_train_config *cfg, const model_layout *layout, int estimate_only,
                  ib_error *err);
void cuda_vit_free(cuda_vit *v);
/* Queue the forward pass (the loss lands in loss_host when loss_ready fires). */
int cuda_vit_forward(cuda_vit *v, ib_error *err);
int cuda_vit_backward(cuda_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err);
int cuda_vit_optimizer_step(cuda_vit *v, ib_error *err);
int cuda_vit_refresh_bf16(cuda_vit *v, ib_error *err);
int cuda_vit_read_loss(cuda_vit *v, float *loss, ib_error *err);

#endif
