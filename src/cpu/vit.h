/* cpu/vit: the ViT training step on the CPU (forward, backward, optimizer) over cpu/ops, in one
 * host allocation laid out by the model's plan (instbench/model_plan.h). */
#ifndef INSTBENCH_CPU_VIT_H
#define INSTBENCH_CPU_VIT_H

#include "cpu/ops.h"
#include "instbench/backend.h"
#include "instbench/model_plan.h"

/* op families for INSTBENCH_CPU_PROFILE: linear = the Linear/patch/head GEMMs; attention = its
 * GEMMs and softmax together (they run fused per head) */
enum { PROF_GEMM, PROF_LAYERNORM, PROF_ATTENTION, PROF_GELU, PROF_BIAS, PROF_PATCH, PROF_ADAM, PROF_COUNT };

typedef struct cpu_vit {
    ib_train_config cfg;
    const model_layout *layout; /* parameter offsets by role (layout->blk[l].qkv_w, ...) */
    model_plan plan;            /* dimensions (B, T, D, ...) and the place of every buffer */
    model_buffers buf;          /* the buffers both backends have (params, activations, ...) */
    void *arena;                /* the one host allocation they are carved from */
    int nthreads;               /* OpenMP team size of every op (cfg.threads or all cores) */
    int step;                   /* optimizer steps taken */
    cpu_gemm *gemm;
    int have_inputs;
    /* the CPU backend's own plan entries */
    void *attn_scratch; /* per-thread T x T buffers of the attention tasks */
    float last_loss;
    int profile;             /* INSTBENCH_CPU_PROFILE set: time op families */
    double prof[PROF_COUNT]; /* seconds per op family */
} cpu_vit;

/* The CPU backend's plan for cfg: the shared buffers, its own, and (plan.outside) what cpu/gemm
 * allocates apart.  What cpu_vit_init allocates and cpu_backend_memory_estimate reports. */
int cpu_vit_plan(const ib_train_config *cfg, model_plan *p, ib_error *err);
int cpu_vit_init(cpu_vit *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err);
void cpu_vit_free(cpu_vit *v);
int cpu_vit_forward(cpu_vit *v, float *loss, ib_error *err);
int cpu_vit_backward(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err);
int cpu_vit_optimizer_step(cpu_vit *v, ib_error *err);
void cpu_vit_refresh_bf16(cpu_vit *v);

#endif
