/* cpu/vit: the ViT training step on the CPU (forward, backward, optimizer) over cpu/ops. */
#ifndef INSTBENCH_CPU_VIT_H
#define INSTBENCH_CPU_VIT_H

#include "cpu/ops.h"
#include "instbench/backend.h"

/* Saved activations of one block (B batch, T tokens, D width, F mlp hidden, H heads). */
typedef struct cpu_block_acts {
    float *x_in;            /* [B,T,D] residual stream entering the block */
    void *ln1;              /* act [B,T,D] */
    float *mean1, *rstd1;   /* [B*T] */
    void *qkv;              /* act [B,T,3,H,hd] qkv Linear output (attention gathers q, k, v per head) */
    void *P;                /* act [B,H,T,T] softmax probabilities (bf16 under autocast) */
    void *att;              /* act [B,T,D] attention output, heads merged (proj input) */
    float *x_mid;           /* [B,T,D] after the attention residual */
    void *ln2;              /* act [B,T,D] */
    float *mean2, *rstd2;
    float *h;               /* [B,T,F] fc1 output before GELU */
    void *a;                /* act [B,T,F] GELU output (fc2 input) */
} cpu_block_acts;

/* op families for INSTBENCH_CPU_PROFILE: linear = the Linear/patch/head GEMMs; attention = its
 * GEMMs and softmax together (they run fused per head) */
enum { PROF_GEMM, PROF_LAYERNORM, PROF_ATTENTION, PROF_GELU, PROF_BIAS, PROF_PATCH, PROF_ADAM, PROF_COUNT };

typedef struct cpu_vit {
    ib_train_config cfg;
    const model_layout *layout;
    ib_precision dt;
    int nthreads;                        /* OpenMP team size of every op (cfg.threads or all cores) */
    int B, T, N, D, H, hd, F, C, K, L;   /* K = 3*P*P patch length */
    float *params, *grads, *m, *v;       /* one contiguous block each, model_layout order */
    bf16 *wbf;                           /* bf16 copy of params (GEMM weights) under autocast */
    int step;                            /* optimizer steps taken */
    cpu_gemm *gemm;

    float *images;                       /* [B,3,S,S] */
    int32_t *labels;                     /* [B] */
    int have_inputs;

    cpu_block_acts *blk;                 /* [L] */
    float *x_final;                      /* [B,T,D] (only class-token rows used) */
    void *patches;                       /* act [B*N,K] */
    float *meanf, *rstdf;                /* [B] */
    void *lnf;                           /* act [B,D] */
    float *logits, *dlogits;             /* [B,C] */
    void *dlogits_act;                   /* act [B,C] */
    float *dlnf;                         /* [B,D] */
    /* scratch shared by all blocks */
    float *big;                          /* [B*T, max(3D,F)] GEMM outputs */
    void *big_act;                       /* act [B*T, max(3D,F)] */
    float *f;                            /* [B*T,D] */
    float *dx;                           /* [B*T,D] gradient of the residual stream */
    void *datt;                          /* act [B*T,D] gradient of the attention output */
    void *dx_act;                        /* act [B*T,D] bf16 copy of dx for the GEMMs (bf16 only) */
    void *attn_scratch;                  /* per-thread T x T buffers of the attention tasks */
    size_t bytes;                        /* everything allocated */
    float last_loss;
    int profile;                         /* INSTBENCH_CPU_PROFILE set: time op families */
    double prof[PROF_COUNT];             /* seconds per op family */
} cpu_vit;

/* Allocates everything (estimate_only: only counts bytes into v->bytes). */
int cpu_vit_init(cpu_vit *v, const ib_train_config *cfg, const model_layout *layout, int estimate_only,
                 ib_error *err);
void cpu_vit_free(cpu_vit *v);
int cpu_vit_forward(cpu_vit *v, float *loss, ib_error *err);
int cpu_vit_backward(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err);
int cpu_vit_optimizer_step(cpu_vit *v, ib_error *err);
void cpu_vit_refresh_bf16(cpu_vit *v);

#endif
