/* model_plan: the memory of one training step, resolved once for a configuration (model, batch
 * per device, precision) and shared by both backends.  A plan lists every buffer the step uses:
 * the parameter, gradient and Adam blocks, the inputs, each block's saved activations, the head's,
 * and the scratch all blocks share, each with its name, shape, dtype and byte offset in one arena.
 * A backend appends the buffers only it has (model_plan_add), allocates plan.bytes once (host or
 * device memory) and carves the arena (model_plan_carve); its memory estimate is plan.bytes +
 * plan.outside, known without allocating anything.  Parameter offsets by role are in
 * model_layout (model.h).  Knows nothing of devices: an address here is only ever stored. */
#ifndef INSTBENCH_MODEL_PLAN_H
#define INSTBENCH_MODEL_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/model.h"
#include "instbench/precision.h"
#include "instbench/util.h"

/* Saved activations of one block (B batch, T tokens, D width, F mlp hidden, H heads, hd = D/H).
 * "act" buffers are GEMM inputs or block Linear outputs and hold the plan's act dtype (fp32, or
 * bf16 under autocast). */
typedef struct model_block_acts {
    float *x_in;          /* [B,T,D] residual stream entering the block */
    void *ln1;            /* act [B,T,D] */
    float *mean1, *rstd1; /* [B*T] */
    void *qkv;            /* act [B,T,3D]: the CPU keeps the qkv Linear's output [B,T,3,H,hd]; the
                             * CUDA backend q, k, v split by head, [3][B,H,T,hd] */
    void *P;              /* act [B,H,T,Ts] softmax probabilities (T valid columns of Ts per row);
                             * NULL without them (model_plan_build's tt_align 0) */
    void *att;            /* act [B,T,D] attention output, heads merged (proj input) */
    float *x_mid;         /* [B,T,D] after the attention residual */
    void *ln2;            /* act [B,T,D] */
    float *mean2, *rstd2; /* [B*T] */
    void *h;              /* act [B,T,F] fc1 output (+ bias) before GELU */
    void *a;              /* act [B,T,F] GELU output (fc2 input) */
} model_block_acts;

/* The buffers both backends have, where model_plan_carve put them (P parameters, C classes,
 * N patches, K = 3*P*P patch length). */
typedef struct model_buffers {
    float *params, *grads, *m, *v; /* [P] fp32 each, model_layout order */
    uint16_t *wbf;                 /* [P] bf16 copy of params (the GEMM weights) under autocast, else NULL */
    float *images;                 /* [B,3,S,S] */
    int32_t *labels;               /* [B] */
    model_block_acts *blk;         /* [L] (a host array) */
    float *x_final;                /* [B,T,D] (only the class-token rows are used) */
    void *patches;                 /* act [B*N,K] */
    float *meanf, *rstdf;          /* [B] */
    void *lnf;                     /* act [B,D] */
    float *logits, *dlogits;       /* [B,C] */
    void *dlogits_act;             /* act [B,C] */
    float *dlnf;                   /* [B,D] */
    /* scratch shared by all blocks.  Every block Linear writes its output in the act dtype, as
     * autocast does: forward, proj's and fc2's into big_act (the residual add reads them there);
     * backward, fc2's dgrad into big_act (GELU's backward works on it in place), fc1's and qkv's
     * into dln (f under fp32), the LayerNorm backward's dy; the attention backward's dqkv into
     * big_act too (the CUDA backend's unfused path merges it in fp32 first, a buffer of its own) */
    void *big_act; /* act [B*T, max(3D,F)] */
    float *f;      /* [B*T,D] the patch embedding's output and gradient; fc1's, qkv's dgrads under fp32 */
    float *dx;     /* [B*T,D] gradient of the residual stream */
    void *datt;    /* act [B*T,D] gradient of the attention output */
    void *dx_act;  /* bf16 [B*T,D] dx as the GEMMs after it read it (fc2's, proj's dy); bf16 only */
    void *dln;     /* bf16 [B*T,D] fc1's and qkv's dgrads (the LayerNorms' dy); bf16 only */
} model_buffers;

/* dtypes of planned buffers besides the number formats of ib_precision */
enum { MODEL_DT_I32 = 8, MODEL_DT_F64, MODEL_DT_BYTE };
size_t model_dtype_size(int dtype);

/* Where carving stores an entry's address: block >= 0: in blk[block] (model_block_acts);
 * MODEL_AT_BUFFERS: in model_buffers; MODEL_AT_EXT: in the struct the backend passes to carve. */
enum { MODEL_AT_BUFFERS = -1, MODEL_AT_EXT = -2 };

typedef struct model_plan_entry {
    char name[32]; /* "params", "blocks.3.qkv", "logits", a backend's "dP", ... */
    int dtype;     /* IB_PREC_FP32, IB_PREC_BF16 or MODEL_DT_* */
    int ndim;
    size_t shape[4];
    size_t offset, bytes; /* in the arena; offset a multiple of the plan's alignment */
    int block;            /* where its address goes (above) */
    size_t field;         /* offsetof of that pointer in its struct */
} model_plan_entry;

typedef struct model_plan {
    int B, T, N, D, H, hd, F, C, K, L; /* batch, tokens, patches, width, heads, D/H, mlp hidden,
                                          * classes, patch length, blocks */
    int Ts;                            /* row stride of the T x T attention matrices: T rounded up to tt_align */
    ib_precision act;                  /* dtype of the act buffers */
    size_t P;                          /* parameters */
    size_t align;                      /* of every buffer */
    model_plan_entry *entries;
    size_t count, cap;
    int failed;     /* an entry could not be stored (out of memory): carving fails */
    size_t bytes;   /* the arena: every entry, aligned */
    size_t outside; /* bytes the backend allocates apart from the arena (counted in estimates) */
} model_plan;

/* What every backend requires of a config: a valid model, batch in [1, 2^20], a known precision. */
int model_plan_check(const vit_config *c, int batch, ib_precision prec, ib_error *err);
/* ... and of the labels of a batch: B of them, each in [0, C). */
int model_plan_check_labels(const model_plan *p, const int32_t *labels, ib_error *err);
/* The shared buffers for (c, batch, prec), each aligned to ALIGN bytes (a power of two), T x T rows
 * at a stride of T rounded up to TT_ALIGN; TT_ALIGN 0: no T x T probabilities at all (blk[l].P
 * NULL, Ts = T), for a backend whose attention keeps none (the CUDA backend's cuDNN attention).  Counts bytes in size_t for any batch model_plan_check
 * accepts, so estimates stay linear in the batch (up to alignment).  Free with model_plan_free. */
int model_plan_build(const vit_config *c, int batch, ib_precision prec, int tt_align, size_t align, model_plan *p,
                     ib_error *err);
/* A backend's own buffer, its address stored at offset FIELD of carve's ext struct.  Shape as
 * MODEL_DIMS(d0, ...). */
void model_plan_add(model_plan *p, const char *name, int dtype, size_t field, int ndim, const size_t *shape);
#define MODEL_DIMS(...) \
    (int)(sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t)), (const size_t[]) { __VA_ARGS__ }
/* Stores every entry's address in BASE (plan.bytes of memory) into buf (allocating buf->blk) and
 * ext.  -1 when the plan failed or out of memory. */
int model_plan_carve(const model_plan *p, void *base, model_buffers *buf, void *ext, ib_error *err);
/* Frees the entries and buf->blk (buf may be NULL). */
void model_plan_free(model_plan *p, model_buffers *buf);
/* A memory estimate's answer: plan.bytes + plan.outside, the plan freed. */
size_t model_plan_footprint(model_plan *p);

#endif
