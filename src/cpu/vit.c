/* cpu/vit: timm's VisionTransformer training step, op by op (see docs/design.md, numerics and fidelity).
 * Per block:  x_mid = x + proj(attn(LN1(x)));  x_out = x_mid + fc2(GELU(fc1(LN2(x_mid))))
 * The residual add is fused into the LayerNorm that follows it (LN1 of the next block, or the
 * final norm), and the final norm and head run on the class token only (the only row timm's
 * token pooling reads).  Under bf16 autocast every GEMM reads bf16 operands (weights and biases
 * from a bf16 copy refreshed by the optimizer) and accumulates in fp32.  Every block Linear writes
 * its output in bf16 with the bf16 bias added in its epilogue, as autocast's F.linear does (qkv,
 * proj, fc1's h, fc2 forward; the dgrads backward); the residual stream and its gradient, the
 * patch embedding and the head stay fp32.  LayerNorm, softmax, GELU, the loss and Adam compute in
 * fp32 (bf16 inputs widened exactly) on fp32 master weights. */
#include "cpu/vit.h"
#include "instbench/cpu.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* GEMM weight operand at element offset OFF: the bf16 copy under autocast, else the fp32 master. */
static const void *wgt(const cpu_vit *v, size_t off)
{
    return v->buf.wbf ? (const void *)(v->buf.wbf + off) : (const void *)(v->buf.params + off);
}

static int team_size(const ib_train_config *cfg) { return cfg->threads > 0 ? cfg->threads : omp_get_max_threads(); }

int cpu_vit_plan(const ib_train_config *cfg, model_plan *p, ib_error *err)
{
    if (cfg->threads < 0 || cfg->threads > 4096)
        return ib_error_set(err, IB_EXIT_USAGE, "threads %d out of range [0, 4096]", cfg->threads);
    /* every buffer page-aligned, as when each was an allocation of its own */
    if (model_plan_build(&cfg->model, cfg->batch_size, cfg->precision, 1, 4096, p, err)) return -1;
    const size_t B = p->B, T = p->T, D = p->D, F = p->F, BT = B * T, nt = team_size(cfg);
    model_plan_add(p, "attn_scratch", MODEL_DT_BYTE, offsetof(cpu_vit, attn_scratch),
                   MODEL_DIMS(cpu_attention_scratch_bytes(p->T, p->hd, (int)nt)));
    /* host bookkeeping besides the arena: the layout, the block pointer array, oneDNN's primitives
     * and scratch (about 60 KB for vit_tiny at batch 4; a margin so the estimate stays an upper bound) */
    p->outside += (size_t)1 << 20;
    if (p->act == IB_PREC_BF16 && !cpu_bf16_native()) {
        /* cpu/gemm widens bf16 operands into fp32 buffers it owns: the largest Linear's A + B (+ a
         * bf16 output) on the all-threads path, and per thread the attention tiles' T x T + two
         * T x hd.  Counted so the memory check sees them. */
        const size_t Wd = 3 * D > F ? 3 * D : F, BN = B * p->N, K = p->K, lin1 = BT * (Wd + D) + Wd * D + Wd;
        const size_t lin = lin1 > BN * K + D * K ? lin1 : BN * K + D * K;
        p->outside += 4 * (lin + nt * (T * T + 2 * T * (size_t)p->hd + 48));
    }
    return 0;
}

int cpu_vit_init(cpu_vit *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err)
{
    memset(v, 0, sizeof *v);
    v->cfg = *cfg;
    v->layout = layout;
    v->nthreads = team_size(cfg);
    if (cpu_vit_plan(cfg, &v->plan, err)) return -1;
    const model_plan *p = &v->plan;
    if (!(v->arena = aligned_alloc(p->align, (p->bytes + p->align - 1) / p->align * p->align)))
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory: the CPU backend needs %.2f GiB for this config",
                     (p->bytes + p->outside) / 1073741824.0);
    if (!v->arena || model_plan_carve(p, v->arena, &v->buf, v, err) || cpu_gemm_create(&v->gemm, v->nthreads, err)) {
        cpu_vit_free(v);
        return -1;
    }
    const size_t P = layout->total;
    memset(v->buf.grads, 0, P * 4), memset(v->buf.m, 0, P * 4), memset(v->buf.v, 0, P * 4);
    model_init_params(&cfg->model, layout, v->buf.params, cfg->seed);
    cpu_vit_refresh_bf16(v);
    const char *prof = getenv("INSTBENCH_CPU_PROFILE");
    v->profile = prof && prof[0] && strcmp(prof, "0");
    return 0;
}

void cpu_vit_free(cpu_vit *v)
{
    if (v->profile) {
        static const char *names[PROF_COUNT] = {"linear gemm", "layernorm",   "attention", "gelu",
                                                "bias",        "patch_embed", "adam"};
        double total = 0;
        for (int i = 0; i < PROF_COUNT; i++) total += v->prof[i];
        fprintf(stderr, "cpu profile (%d optimizer steps), seconds per op family:\n", v->step);
        for (int i = 0; i < PROF_COUNT; i++)
            fprintf(stderr, "  %-12s %8.3f  %5.1f%%\n", names[i], v->prof[i], total > 0 ? 100 * v->prof[i] / total : 0);
    }
    free(v->arena);
    v->arena = NULL;
    model_plan_free(&v->plan, &v->buf);
    cpu_gemm_destroy(v->gemm);
    v->gemm = NULL;
}

void cpu_vit_refresh_bf16(cpu_vit *v)
{
    if (v->buf.wbf) cpu_convert_bf16(v->buf.wbf, v->buf.params, v->layout->total);
}

/* Per-op-family wall time, printed at destroy when INSTBENCH_CPU_PROFILE is set. */
#define TIMED(fam, stmt)                                          \
    do {                                                          \
        double t0_ = v->profile ? util_now_seconds() : 0;         \
        stmt;                                                     \
        if (v->profile) v->prof[fam] += util_now_seconds() - t0_; \
    } while (0)

#define GEMM(...)                                                                     \
    do {                                                                              \
        int rc_;                                                                      \
        TIMED(PROF_GEMM, rc_ = cpu_gemm_run(v->gemm, v->plan.act, __VA_ARGS__, err)); \
        if (rc_) return -1;                                                           \
    } while (0)

/* Every entry point runs with the calling thread's OpenMP team size pinned to the one fixed at
 * init (the per-thread GEMM resources and scratch were sized for it, and the caller may be any
 * thread), and gives the caller its own setting back afterwards. */
static void set_threads(const cpu_vit *v) { omp_set_num_threads(v->nthreads); }

static int forward_impl(cpu_vit *v, float *loss, ib_error *err);
static int backward_impl(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err);

int cpu_vit_forward(cpu_vit *v, float *loss, ib_error *err)
{
    const int keep = omp_get_max_threads();
    set_threads(v);
    int rc = forward_impl(v, loss, err);
    omp_set_num_threads(keep);
    return rc;
}

int cpu_vit_backward(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    const int keep = omp_get_max_threads();
    set_threads(v);
    int rc = backward_impl(v, cb, user, err);
    omp_set_num_threads(keep);
    return rc;
}

/* A block Linear's forward: y [M,out] act = x [M,in] W^T + b, the bias in the act dtype too (the
 * bf16 copy under autocast, added to the fp32 sum before the one rounding, as F.linear's epilogue). */
static int linear(cpu_vit *v, const void *x, size_t w_off, size_t b_off, void *y, int M, int out, int in, ib_error *err)
{
    const ib_precision dt = v->plan.act;
    const cpu_gemm_desc d = {1, M, out, in, dt, dt, 0, 1, 0, 0, 0, 1, 0};
    int rc_;
    TIMED(PROF_GEMM, rc_ = cpu_gemm_exec(v->gemm, &d, x, wgt(v, w_off), y, wgt(v, b_off), err));
    return rc_ ? -1 : 0;
}

static int forward_impl(cpu_vit *v, float *loss, ib_error *err)
{
    if (!v->have_inputs) return ib_error_set(err, IB_EXIT_RUNTIME, "forward before set_inputs");
    const vit_config *c = &v->cfg.model;
    const model_plan *pl = &v->plan;
    const model_layout *o = v->layout; /* parameter offsets */
    model_buffers *b = &v->buf;
    const int B = pl->B, T = pl->T, D = pl->D, H = pl->H, hd = pl->hd, F = pl->F, C = pl->C, BT = B * T;
    const ib_precision dt = pl->act;
    const float *W = b->params;

    /* patch embedding: [B*N,K] x [K,D] + bias -> f, then tokens -> x_in of block 0 */
    TIMED(PROF_PATCH, cpu_patchify(b->images, B, c->in_chans, c->img_size, c->patch_size, b->patches, dt));
    GEMM(1, B * pl->N, D, pl->K, b->patches, 0, wgt(v, o->patch_w), 1, b->f, D, W + o->patch_b, 0);
    TIMED(PROF_PATCH, cpu_tokens_forward(b->f, W + o->cls, W + o->pos, b->blk[0].x_in, B, T, D));

    for (int l = 0; l < pl->L; l++) {
        model_block_acts *k = &b->blk[l];
        const model_block_params *p = &o->blk[l];
        if (l == 0)
            TIMED(PROF_LAYERNORM, cpu_layernorm_forward(k->x_in, NULL, NULL, W + p->norm1_w, W + p->norm1_b, k->ln1, dt,
                                                        k->mean1, k->rstd1, BT, D, D));
        else /* x_in = previous x_mid + previous fc2 output (still in big_act) */
            TIMED(PROF_LAYERNORM, cpu_layernorm_forward(b->blk[l - 1].x_mid, b->big_act, k->x_in, W + p->norm1_w,
                                                        W + p->norm1_b, k->ln1, dt, k->mean1, k->rstd1, BT, D, D));
        /* qkv [BT,3D] act (+ bias) */
        if (linear(v, k->ln1, p->qkv_w, p->qkv_b, k->qkv, BT, 3 * D, D, err)) return -1;
        {
            int rc_;
            TIMED(PROF_ATTENTION,
                  rc_ = cpu_attention_forward(v->gemm, dt, k->qkv, k->P, k->att, v->attn_scratch, B, T, H, hd, err));
            if (rc_) return -1;
        }
        if (linear(v, k->att, p->proj_w, p->proj_b, b->big_act, BT, D, D, err)) return -1;
        TIMED(PROF_LAYERNORM, cpu_layernorm_forward(k->x_in, b->big_act, k->x_mid, W + p->norm2_w, W + p->norm2_b,
                                                    k->ln2, dt, k->mean2, k->rstd2, BT, D, D));
        /* h = fc1 + bias (saved for backward), a = GELU(h), both act */
        if (linear(v, k->ln2, p->fc1_w, p->fc1_b, k->h, BT, F, D, err)) return -1;
        TIMED(PROF_GELU, cpu_gelu_forward(k->h, k->a, dt, (size_t)BT * F));
        if (linear(v, k->a, p->fc2_w, p->fc2_b, b->big_act, BT, D, F, err)) return -1;
    }
    /* final residual + norm on the class-token rows only (row stride T*D), then the head */
    TIMED(PROF_LAYERNORM, cpu_layernorm_forward(b->blk[pl->L - 1].x_mid, b->big_act, b->x_final, W + o->norm_w,
                                                W + o->norm_b, b->lnf, dt, b->meanf, b->rstdf, B, D, (ptrdiff_t)T * D));
    GEMM(1, B, C, D, b->lnf, 0, wgt(v, o->head_w), 1, b->logits, C, W + o->head_b, 0);
    v->last_loss = (float)cpu_crossentropy(b->logits, b->labels, b->dlogits, B, C);
    if (loss) *loss = v->last_loss;
    return 0;
}

/* Linear backward for y = x W^T + b (W, b at element offsets w_off, b_off) given dy ([M,out]; fp32
 * unless bias_done, then the act dtype; under bf16 the GEMMs read its act copy dy_act): db =
 * colsum(dy) unless bias_done (a fused op upstream already wrote db and dy_act); dW [out,in] =
 * dy^T x; dx [M,in] = dy W, fp32 or (dx_act) in the act dtype. */
static int linear_backward(cpu_vit *v, const void *dy, const void *x, size_t w_off, size_t b_off, int bias_done,
                           void *dx, int dx_act, int M, int out, int in, void *dy_act, ib_error *err)
{
    const ib_precision dt = v->plan.act;
    float *G = v->buf.grads;
    if (!bias_done)
        TIMED(PROF_BIAS,
              cpu_bias_backward((const float *)dy, G + b_off, dt == IB_PREC_BF16 ? dy_act : NULL, dt, M, out));
    const void *dya = dt == IB_PREC_BF16 ? dy_act : dy;
    GEMM(1, out, in, M, dya, 1, x, 0, G + w_off, in, NULL, 0);
    if (dx) {
        const cpu_gemm_desc d = {1, M, in, out, dt, dx_act ? dt : IB_PREC_FP32, 0, 0, 0, 0, 0, 0, 0};
        int rc_;
        TIMED(PROF_GEMM, rc_ = cpu_gemm_exec(v->gemm, &d, dya, wgt(v, w_off), dx, NULL, err));
        if (rc_) return -1;
    }
    return 0;
}

static int backward_impl(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    const vit_config *c = &v->cfg.model;
    const model_plan *pl = &v->plan;
    const model_layout *o = v->layout; /* parameter offsets */
    model_buffers *b = &v->buf;
    const int B = pl->B, T = pl->T, D = pl->D, H = pl->H, hd = pl->hd, F = pl->F, BT = B * T, L = pl->L;
    const ib_precision dt = pl->act;
    const float *W = b->params;
    float *G = b->grads;

    /* head and final norm (class-token rows of the residual stream only) */
    if (linear_backward(v, b->dlogits, b->lnf, o->head_w, o->head_b, 0, b->dlnf, 0, B, pl->C, D, b->dlogits_act, err))
        return -1;
    memset(b->dx, 0, (size_t)BT * D * sizeof(float));
    TIMED(PROF_LAYERNORM, cpu_layernorm_backward(b->dlnf, IB_PREC_FP32, b->x_final, b->meanf, b->rstdf, W + o->norm_w,
                                                 b->dx, (ptrdiff_t)T * D, G + o->norm_w, G + o->norm_b, B, D,
                                                 (ptrdiff_t)T * D, NULL, dt, NULL));
    if (model_grad_range_ready(o, c, 0, cb, user, err)) return -1;

    for (int l = L - 1; l >= 0; l--) {
        model_block_acts *k = &b->blk[l];
        const model_block_params *p = &o->blk[l];
        /* Each LayerNorm backward also finishes the gradient of the Linear before it (its output
         * is the norm's input): bias grad and act copy of dx come out of the same pass.  The
         * dgrads of the Linears come out in the act dtype, as autocast's: fc2's into big_act,
         * fc1's and qkv's into dln (f under fp32). */
        void *dxa = b->dx_act; /* NULL under fp32 */
        void *dln = dt == IB_PREC_BF16 ? b->dln : (void *)b->f;
        /* MLP: dx -> fc2 -> GELU in place (+ fc1 bias) -> fc1 -> LN2 (+ proj bias), accumulated into dx */
        if (linear_backward(v, b->dx, k->a, p->fc2_w, p->fc2_b, l < L - 1, b->big_act, 1, BT, D, F, dxa, err))
            return -1;
        TIMED(PROF_GELU, cpu_gelu_backward(k->h, b->big_act, G + p->fc1_b, dt, BT, F));
        if (linear_backward(v, b->big_act, k->ln2, p->fc1_w, p->fc1_b, 1, dln, 1, BT, F, D, b->big_act, err)) return -1;
        TIMED(PROF_LAYERNORM, cpu_layernorm_backward(dln, dt, k->x_mid, k->mean2, k->rstd2, W + p->norm2_w, b->dx, D,
                                                     G + p->norm2_w, G + p->norm2_b, BT, D, D, dxa, dt, G + p->proj_b));
        /* attention: dx -> proj -> attention core -> qkv -> LN1 (+ previous block's fc2 bias) */
        /* datt comes out of the proj GEMM in the act dtype: attention reads it only as GEMM input */
        if (linear_backward(v, b->dx, k->att, p->proj_w, p->proj_b, 1, b->datt, 1, BT, D, D, dxa, err)) return -1;
        {
            int rc_;
            /* dqkv straight in the act dtype into big_act, with the qkv bias grad */
            TIMED(PROF_ATTENTION, rc_ = cpu_attention_backward(v->gemm, dt, k->qkv, k->P, b->datt, b->big_act,
                                                               G + p->qkv_b, v->attn_scratch, B, T, H, hd, err));
            if (rc_) return -1;
        }
        if (linear_backward(v, b->big_act, k->ln1, p->qkv_w, p->qkv_b, 1, dln, 1, BT, 3 * D, D, b->big_act, err))
            return -1;
        float *prev_fc2_bias = l > 0 ? G + o->blk[l - 1].fc2_b : NULL;
        TIMED(PROF_LAYERNORM,
              cpu_layernorm_backward(dln, dt, k->x_in, k->mean1, k->rstd1, W + p->norm1_w, b->dx, D, G + p->norm1_w,
                                     G + p->norm1_b, BT, D, D, l > 0 ? dxa : NULL, dt, prev_fc2_bias));
        if (model_grad_range_ready(o, c, L - l, cb, user, err)) return -1;
    }
    /* embeddings: dx -> cls, pos, and the patch GEMM */
    TIMED(PROF_PATCH, cpu_tokens_backward(b->dx, G + o->cls, G + o->pos, b->f, B, T, D));
    if (linear_backward(v, b->f, b->patches, o->patch_w, o->patch_b, 0, NULL, 0, B * pl->N, D, pl->K, b->big_act, err))
        return -1;
    return model_grad_range_ready(o, c, L + 1, cb, user, err);
}

int cpu_vit_optimizer_step(cpu_vit *v, ib_error *err)
{
    const int keep = omp_get_max_threads();
    set_threads(v);
    const ib_optim_config *o = &v->cfg.optim;
    v->step++;
    const model_buffers *b = &v->buf;
    TIMED(PROF_ADAM, cpu_adam_step(b->params, b->grads, b->m, b->v, b->wbf, v->layout->total, v->step, o->lr, o->beta1,
                                   o->beta2, o->eps, o->weight_decay, o->kind == IB_OPT_ADAMW));
    omp_set_num_threads(keep);
    return 0;
}
