/* cuda/vit: the ViT training step on one GPU, op for op the step of src/cpu/vit.c (same layout,
 * same op order, same bf16 autocast rounding points, same Adam), over kernels/<op>.cu and
 * cuBLASLt.
 * Everything lives in one device allocation laid out by the model's plan (instbench/model_plan.h):
 * the fp32 parameter, gradient, Adam m and v blocks (model_layout order), the bf16 weight copy, and
 * the activations. */
#ifndef INSTBENCH_CUDA_VIT_H
#define INSTBENCH_CUDA_VIT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cuda/gemm.h"
#include "instbench/backend.h"
#include "instbench/model_plan.h"

typedef struct cuda_vit {
    ib_train_config cfg;
    const model_layout *layout; /* parameter offsets by role (layout->blk[l].qkv_w, ...) */
    model_plan plan;            /* dimensions (B, T, Ts = T rounded up to 8, ...) and places */
    model_buffers buf;          /* the buffers both backends have: device pointers into pool
                                          * (blk[l].qkv: cuDNN attention: the qkv GEMM's output
                                          * [B,T,3,H,hd] in bf16; unfused: q, k, v split by head,
                                          * [3][B,H,T,hd]; blk[l].P only unfused) */
    int device;
    cudaStream_t stream;
    cuda_gemm *gemm;
    void *pool; /* the one device allocation, plan.bytes */
    int step;
    int have_inputs;
    int attn_path; /* CUDA_ATT_* (cuda/attention_path.h), chosen at init */
    /* cuDNN attention's (cuda/cudnn_sdpa.h): the shape's graphs, their workspace (beside the pool),
     * and the reason of a failed call */
    struct cudnn_sdpa *sdpa;
    void *sdpa_ws;
    char sdpa_why[512];
    /* the CUDA backend's own plan entries: scratch shared by all blocks (unfused attention) */
    void *heads_act; /* act [B,H,T,hd]: o in forward, dO in backward */
    void *tt_act;    /* act [B*H,T,Ts]: dS cast for its GEMMs (bf16 only) */
    float *dP;       /* [B*H,T,Ts] fp32: the scores S in forward (bf16), dP/dS in backward */
    float *dqkvh;    /* [3][B,H,T,hd] */
    float *dqkv32;   /* [B,T,3D] fp32, bf16 only: dqkv merged, before the bias sums and the cast */
    /* cuDNN attention's */
    float *lse;       /* [L][B,H,T] each block's row log-sum-exps (saved), blocks lse_stride apart (vit.c) */
    float *partial;   /* column-reduction partial sums */
    double *row_loss; /* [B] */
    float *loss_dev;  /* [1] */
    float *loss_host; /* pinned [1] */
    cudaEvent_t loss_ready;
    /* inputs from pinned memory (backend_cuda.c set_inputs): copied on copy_stream once the
     * compute stream has done with the previous batch (inputs_free), the step waiting for the
     * copy on the GPU (inputs_ready), so the host never blocks on it */
    cudaStream_t copy_stream;
    cudaEvent_t inputs_free, inputs_ready;
    /* cfg.cuda_graphs: forward + backward captured once, then launched as one graph */
    cudaGraphExec_t graph;
    int graph_eager_steps;
    float last_loss;
} cuda_vit;

/* The CUDA backend's plan for cfg: the shared buffers, its own, and (plan.outside) the cuBLASLt
 * workspace.  What cuda_vit_init allocates and cuda_backend_memory_estimate reports; no GPU needed. */
int cuda_vit_plan(const ib_train_config *cfg, model_plan *p, ib_error *err);
int cuda_vit_init(cuda_vit *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err);
void cuda_vit_free(cuda_vit *v);
/* Queue the forward pass (the loss lands in loss_host when loss_ready fires). */
int cuda_vit_forward(cuda_vit *v, ib_error *err);
int cuda_vit_backward(cuda_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err);
/* Forward and backward (no gradient hook) as one CUDA graph: the first call runs them eagerly (so
 * cuBLASLt's algorithms are chosen and every workspace exists outside any capture), the second
 * captures and instantiates them, every call after launches the graph.  The loss lands as with
 * cuda_vit_forward. */
int cuda_vit_forward_backward_graph(cuda_vit *v, ib_error *err);
int cuda_vit_optimizer_step(cuda_vit *v, ib_error *err);
int cuda_vit_refresh_bf16(cuda_vit *v, ib_error *err);
int cuda_vit_read_loss(cuda_vit *v, float *loss, ib_error *err);

#endif
