/* cpu/vit: timm's VisionTransformer training step, op by op (see docs/design.md, numerics and fidelity).
 * Per block:  x_mid = x + proj(attn(LN1(x)));  x_out = x_mid + fc2(GELU(fc1(LN2(x_mid))))
 * The residual add is fused into the LayerNorm that follows it (LN1 of the next block, or the
 * final norm), and the final norm and head run on the class token only (the only row timm's
 * token pooling reads).  Under bf16 autocast every GEMM reads bf16 operands (weights from a bf16
 * copy refreshed by the optimizer) and accumulates in fp32; it writes fp32 except where its output
 * only ever feeds other GEMMs (qkv, the attention output and its gradient), which it writes in
 * bf16 directly, as the cast autocast would make next.  LayerNorm, softmax, GELU, the loss and
 * Adam run in fp32 on fp32 master weights. */
#include "cpu/vit.h"
#include "instbench/cpu.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define W(name_) (v->params + tensor_off(v, (name_)))
#define G(name_) (v->grads + tensor_off(v, (name_)))

static size_t tensor_off(const cpu_vit *v, const char *name)
{
    const model_tensor *t = model_layout_find(v->layout, name);
    return t ? t->offset : 0;   /* names are built from the same layout: always found */
}

/* GEMM weight operand: the bf16 copy under autocast, else the fp32 master. */
static const void *wgt(const cpu_vit *v, const char *name)
{
    size_t off = tensor_off(v, name);
    return v->dt == IB_PREC_BF16 ? (const void *)(v->wbf + off) : (const void *)(v->params + off);
}

/* Tensors of block l by suffix; each call formats its own name, so several may share one
 * argument list. */
static size_t block_off(const cpu_vit *v, int l, const char *suffix)
{
    char n[64];
    snprintf(n, sizeof n, "blocks.%d.%s", l, suffix);
    return tensor_off(v, n);
}
#define BW(s_) (v->params + block_off(v, l, (s_)))
#define BG(s_) (v->grads + block_off(v, l, (s_)))
#define BWGT(s_)                                                                                            \
    (v->dt == IB_PREC_BF16 ? (const void *)(v->wbf + block_off(v, l, (s_))) : (const void *)(v->params + block_off(v, l, (s_))))

static void set_threads(const cpu_vit *v);

static size_t maxz(size_t a, size_t b) { return a > b ? a : b; }

/* Allocation helper: counts bytes; when estimating, allocates nothing. */
typedef struct arena { size_t bytes; int estimate; int failed; } arena;
static void *take(arena *a, size_t n, size_t elem)
{
    size_t bytes = n * elem;
    a->bytes += bytes;
    if (a->estimate || bytes == 0) return NULL;
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) a->failed = 1;
    return p;
}

int cpu_vit_init(cpu_vit *v, const ib_train_config *cfg, const model_layout *layout, int estimate_only,
                 ib_error *err)
{
    memset(v, 0, sizeof *v);
    v->cfg = *cfg;
    v->layout = layout;
    const vit_config *c = &cfg->model;
    v->dt = cfg->precision == IB_PREC_BF16 ? IB_PREC_BF16 : IB_PREC_FP32;
    v->nthreads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    v->B = cfg->batch_size, v->T = model_seq_len(c), v->N = model_num_patches(c), v->D = c->embed_dim;
    v->H = c->num_heads, v->hd = v->D / v->H, v->F = model_mlp_hidden(c), v->C = c->num_classes;
    v->K = c->in_chans * c->patch_size * c->patch_size, v->L = c->depth;
    const size_t B = v->B, T = v->T, D = v->D, F = v->F, C = v->C, H = v->H, BT = B * T, P = layout->total;
    const size_t as = ib_precision_size(v->dt);
    arena a = {0, estimate_only, 0};
    v->params = take(&a, P, 4), v->grads = take(&a, P, 4), v->m = take(&a, P, 4), v->v = take(&a, P, 4);
    if (v->dt == IB_PREC_BF16) v->wbf = take(&a, P, 2);
    v->images = take(&a, B * c->in_chans * c->img_size * c->img_size, 4);
    v->labels = take(&a, B, 4);
    if (!estimate_only) v->blk = calloc(v->L, sizeof *v->blk);
    for (int l = 0; l < v->L; l++) {
        cpu_block_acts tmp, *k = estimate_only ? &tmp : &v->blk[l];
        k->x_in = take(&a, BT * D, 4);
        k->ln1 = take(&a, BT * D, as);
        k->mean1 = take(&a, BT, 4), k->rstd1 = take(&a, BT, 4);
        k->qkv = take(&a, BT * 3 * D, as);
        k->P = take(&a, B * H * T * T, as);
        k->att = take(&a, BT * D, as);
        k->x_mid = take(&a, BT * D, 4);
        k->ln2 = take(&a, BT * D, as);
        k->mean2 = take(&a, BT, 4), k->rstd2 = take(&a, BT, 4);
        k->h = take(&a, BT * F, 4);
        k->a = take(&a, BT * F, as);
    }
    v->x_final = take(&a, BT * D, 4);
    v->patches = take(&a, B * v->N * v->K, as);
    v->meanf = take(&a, B, 4), v->rstdf = take(&a, B, 4);
    v->lnf = take(&a, B * D, as);
    v->logits = take(&a, B * C, 4), v->dlogits = take(&a, B * C, 4);
    v->dlogits_act = take(&a, B * C, as);
    v->dlnf = take(&a, B * D, 4);
    const size_t wide = BT * maxz(3 * D, F);
    v->big = take(&a, wide, 4);
    v->big_act = take(&a, wide, as);
    v->f = take(&a, BT * D, 4);
    v->dx = take(&a, BT * D, 4);
    v->datt = take(&a, BT * D, as);
    if (v->dt == IB_PREC_BF16) v->dx_act = take(&a, BT * D, 2);
    v->attn_scratch = take(&a, cpu_attention_scratch_bytes(T, v->hd, v->nthreads), 1);
    v->bytes = a.bytes;
    if (v->dt == IB_PREC_BF16 && !cpu_bf16_native()) {
        /* cpu/gemm widens bf16 operands into fp32 buffers it owns: the largest Linear's A + B (+ a
         * bf16 output) on the all-threads path, and per thread the attention tiles' T x T + two
         * T x hd.  Counted here so the memory check sees them. */
        const size_t Wd = maxz(3 * D, F), BN = B * v->N, hdz = v->hd;
        const size_t lin = maxz(BT * (Wd + D) + Wd * D, BN * v->K + D * v->K);
        v->bytes += 4 * (lin + (size_t)v->nthreads * (T * T + 2 * T * hdz + 48));
    }
    if (estimate_only) return 0;
    if (a.failed || !v->blk) {
        cpu_vit_free(v);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory: the CPU backend needs %.2f GiB for this config",
                            a.bytes / 1073741824.0);
    }
    memset(v->grads, 0, P * 4), memset(v->m, 0, P * 4), memset(v->v, 0, P * 4);
    model_init_params(c, layout, v->params, cfg->seed);
    cpu_vit_refresh_bf16(v);
    const char *prof = getenv("INSTBENCH_CPU_PROFILE");
    v->profile = prof && prof[0] && strcmp(prof, "0");
    if (cpu_gemm_create(&v->gemm, v->nthreads, err)) {
        cpu_vit_free(v);
        return -1;
    }
    return 0;
}

void cpu_vit_free(cpu_vit *v)
{
    if (v->profile) {
        static const char *names[PROF_COUNT] = {"linear gemm", "layernorm", "attention", "gelu", "bias",
                                                "patch_embed", "adam"};
        double total = 0;
        for (int i = 0; i < PROF_COUNT; i++) total += v->prof[i];
        fprintf(stderr, "cpu profile (%d optimizer steps), seconds per op family:\n", v->step);
        for (int i = 0; i < PROF_COUNT; i++)
            fprintf(stderr, "  %-12s %8.3f  %5.1f%%\n", names[i], v->prof[i], total > 0 ? 100 * v->prof[i] / total : 0);
    }
    void **all[] = {(void **)&v->params, (void **)&v->grads, (void **)&v->m, (void **)&v->v, (void **)&v->wbf,
                    (void **)&v->images, (void **)&v->labels, (void **)&v->x_final, &v->patches,
                    (void **)&v->meanf, (void **)&v->rstdf, &v->lnf, (void **)&v->logits, (void **)&v->dlogits,
                    &v->dlogits_act, (void **)&v->dlnf, (void **)&v->big, &v->big_act, (void **)&v->f,
                    (void **)&v->dx, &v->datt, &v->dx_act, &v->attn_scratch};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
    if (v->blk) {
        for (int l = 0; l < v->L; l++) {
            cpu_block_acts *k = &v->blk[l];
            void *p[] = {k->x_in, k->ln1, k->mean1, k->rstd1, k->qkv, k->P, k->att, k->x_mid,
                         k->ln2, k->mean2, k->rstd2, k->h, k->a};
            for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
        }
        free(v->blk);
        v->blk = NULL;
    }
    cpu_gemm_destroy(v->gemm);
    v->gemm = NULL;
}

void cpu_vit_refresh_bf16(cpu_vit *v)
{
    if (v->wbf) cpu_convert_bf16(v->wbf, v->params, v->layout->total);
}

/* Per-op-family wall time, printed at destroy when INSTBENCH_CPU_PROFILE is set. */
#define TIMED(fam, stmt)                                      \
    do {                                                      \
        double t0_ = v->profile ? util_now_seconds() : 0;     \
        stmt;                                                 \
        if (v->profile) v->prof[fam] += util_now_seconds() - t0_; \
    } while (0)

#define GEMM(...)                                                                            \
    do {                                                                                     \
        int rc_;                                                                             \
        TIMED(PROF_GEMM, rc_ = cpu_gemm_run(v->gemm, v->dt, __VA_ARGS__, err));              \
        if (rc_) return -1;                                                                  \
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

static int forward_impl(cpu_vit *v, float *loss, ib_error *err)
{
    if (!v->have_inputs) return ib_error_set(err, IB_EXIT_RUNTIME, "forward before set_inputs");
    const vit_config *c = &v->cfg.model;
    const int B = v->B, T = v->T, D = v->D, H = v->H, hd = v->hd, F = v->F, BT = B * T;
    const ib_precision dt = v->dt;

    /* patch embedding: [B*N,K] x [K,D] + bias -> f, then tokens -> x_in of block 0 */
    TIMED(PROF_PATCH, cpu_patchify(v->images, B, c->in_chans, c->img_size, c->patch_size, v->patches, dt));
    GEMM(1, B * v->N, D, v->K, v->patches, 0, wgt(v, "patch_embed.proj.weight"), 1, v->f, D,
         W("patch_embed.proj.bias"), 0);
    TIMED(PROF_PATCH, cpu_tokens_forward(v->f, W("cls_token"), W("pos_embed"), v->blk[0].x_in, B, T, D));

    for (int l = 0; l < v->L; l++) {
        cpu_block_acts *k = &v->blk[l];
        if (l == 0)
            TIMED(PROF_LAYERNORM, cpu_layernorm_forward(k->x_in, NULL, NULL, BW("norm1.weight"), BW("norm1.bias"), k->ln1, dt,
                                  k->mean1, k->rstd1, BT, D, D));
        else   /* x_in = previous x_mid + previous fc2 output (still in f) */
            TIMED(PROF_LAYERNORM, cpu_layernorm_forward(v->blk[l - 1].x_mid, v->f, k->x_in, BW("norm1.weight"), BW("norm1.bias"),
                                  k->ln1, dt, k->mean1, k->rstd1, BT, D, D));
        {   /* qkv written straight in the act dtype: attention only ever reads it as GEMM input */
            const cpu_gemm_desc d = {1, BT, 3 * D, D, dt, dt, 0, 1, 0, 0, 0, 1, 0};
            int rc_;
            TIMED(PROF_GEMM, rc_ = cpu_gemm_exec(v->gemm, &d, k->ln1, BWGT("attn.qkv.weight"), k->qkv,
                                                 BW("attn.qkv.bias"), err));
            if (rc_) return -1;
        }
        {
            int rc_;
            TIMED(PROF_ATTENTION, rc_ = cpu_attention_forward(v->gemm, dt, k->qkv, k->P, k->att, v->attn_scratch, B, T,
                                                              H, hd, err));
            if (rc_) return -1;
        }
        GEMM(1, BT, D, D, k->att, 0, BWGT("attn.proj.weight"), 1, v->f, D, BW("attn.proj.bias"), 0);
        TIMED(PROF_LAYERNORM, cpu_layernorm_forward(k->x_in, v->f, k->x_mid, BW("norm2.weight"), BW("norm2.bias"), k->ln2, dt,
                              k->mean2, k->rstd2, BT, D, D));
        GEMM(1, BT, F, D, k->ln2, 0, BWGT("mlp.fc1.weight"), 1, k->h, F, BW("mlp.fc1.bias"), 0);
        TIMED(PROF_GELU, cpu_gelu_forward(k->h, k->a, dt, (size_t)BT * F));
        GEMM(1, BT, D, F, k->a, 0, BWGT("mlp.fc2.weight"), 1, v->f, D, BW("mlp.fc2.bias"), 0);
    }
    /* final residual + norm on the class-token rows only (row stride T*D), then the head */
    TIMED(PROF_LAYERNORM, cpu_layernorm_forward(v->blk[v->L - 1].x_mid, v->f, v->x_final, W("norm.weight"), W("norm.bias"), v->lnf, dt,
                          v->meanf, v->rstdf, B, D, (ptrdiff_t)T * D));
    GEMM(1, B, v->C, D, v->lnf, 0, wgt(v, "head.weight"), 1, v->logits, v->C, W("head.bias"), 0);
    v->last_loss = (float)cpu_crossentropy(v->logits, v->labels, v->dlogits, B, v->C);
    if (loss) *loss = v->last_loss;
    return 0;
}

/* Linear backward for y = x W^T + b given dy (fp32, [M,out]; under bf16 its act copy dy_act):
 * db = colsum(dy) unless bias_done (a fused op upstream already wrote db and dy_act);
 * dW [out,in] = dy^T x; dx [M,in] = dy W, fp32 or (dx_act) in the act dtype. */
static int linear_backward(cpu_vit *v, const float *dy, const void *x, const char *wname, const char *bname,
                           int bias_done, void *dx, int dx_act, int M, int out, int in, void *dy_act, ib_error *err)
{
    const ib_precision dt = v->dt;
    if (!bias_done) TIMED(PROF_BIAS, cpu_bias_backward(dy, G(bname), dt == IB_PREC_BF16 ? dy_act : NULL, dt, M, out));
    const void *dya = dt == IB_PREC_BF16 ? dy_act : (const void *)dy;
    GEMM(1, out, in, M, dya, 1, x, 0, G(wname), in, NULL, 0);
    if (dx) {
        const cpu_gemm_desc d = {1, M, in, out, dt, dx_act ? dt : IB_PREC_FP32, 0, 0, 0, 0, 0, 0, 0};
        int rc_;
        TIMED(PROF_GEMM, rc_ = cpu_gemm_exec(v->gemm, &d, dya, wgt(v, wname), dx, NULL, err));
        if (rc_) return -1;
    }
    return 0;
}

static int fire(cpu_vit *v, ib_grad_ready_fn cb, void *user, int range, ib_error *err)
{
    if (!cb) return 0;
    size_t off, cnt;
    model_grad_range(v->layout, &v->cfg.model, range, &off, &cnt);
    if (cb(user, off, cnt)) return ib_error_set(err, IB_EXIT_RUNTIME, "gradient hook failed for range %d", range);
    return 0;
}

static int backward_impl(cpu_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    const vit_config *c = &v->cfg.model;
    const int B = v->B, T = v->T, D = v->D, H = v->H, hd = v->hd, F = v->F, BT = B * T;
    const ib_precision dt = v->dt;
    char n[64], n2[64];

    /* head and final norm (class-token rows of the residual stream only) */
    if (linear_backward(v, v->dlogits, v->lnf, "head.weight", "head.bias", 0, v->dlnf, 0, B, v->C, D, v->dlogits_act, err))
        return -1;
    memset(v->dx, 0, (size_t)BT * D * sizeof(float));
    TIMED(PROF_LAYERNORM, cpu_layernorm_backward(v->dlnf, v->x_final, v->meanf, v->rstdf, W("norm.weight"), v->dx, (ptrdiff_t)T * D,
                           G("norm.weight"), G("norm.bias"), B, D, (ptrdiff_t)T * D, NULL, dt, NULL));
    if (fire(v, cb, user, 0, err)) return -1;

    for (int l = v->L - 1; l >= 0; l--) {
        cpu_block_acts *k = &v->blk[l];
#define P_(s) (snprintf(n, sizeof n, "blocks.%d." s, l), n)
#define P2_(s) (snprintf(n2, sizeof n2, "blocks.%d." s, l), n2)
        /* Each LayerNorm backward also finishes the gradient of the Linear before it (its output
         * is the norm's input): bias grad and act copy of dx come out of the same pass. */
        void *dxa = dt == IB_PREC_BF16 ? v->dx_act : NULL;
        /* MLP: dx -> fc2 -> GELU (+ fc1 bias) -> fc1 -> LN2 (+ proj bias), accumulated into dx */
        if (linear_backward(v, v->dx, k->a, P_("mlp.fc2.weight"), P2_("mlp.fc2.bias"), l < v->L - 1, v->big, 0, BT, D,
                            F, dxa, err))
            return -1;
        TIMED(PROF_GELU, cpu_gelu_backward(k->h, v->big, v->big_act, BG("mlp.fc1.bias"), dt, BT, F));
        if (linear_backward(v, v->big, k->ln2, P_("mlp.fc1.weight"), P2_("mlp.fc1.bias"), 1, v->f, 0, BT, F, D,
                            v->big_act, err))
            return -1;
        TIMED(PROF_LAYERNORM, cpu_layernorm_backward(v->f, k->x_mid, k->mean2, k->rstd2, BW("norm2.weight"), v->dx, D,
                                                     BG("norm2.weight"), BG("norm2.bias"), BT, D, D, dxa, dt,
                                                     BG("attn.proj.bias")));
        /* attention: dx -> proj -> attention core -> qkv -> LN1 (+ previous block's fc2 bias) */
        /* datt comes out of the proj GEMM in the act dtype: attention reads it only as GEMM input */
        if (linear_backward(v, v->dx, k->att, P_("attn.proj.weight"), P2_("attn.proj.bias"), 1, v->datt, 1, BT, D, D,
                            dxa, err))
            return -1;
        {
            int rc_;
            /* dqkv straight in the act dtype, with the qkv bias grad (big under fp32, big_act under bf16) */
            TIMED(PROF_ATTENTION, rc_ = cpu_attention_backward(v->gemm, dt, k->qkv, k->P, v->datt,
                                                               dt == IB_PREC_BF16 ? v->big_act : (void *)v->big,
                                                               BG("attn.qkv.bias"), v->attn_scratch, B, T, H, hd, err));
            if (rc_) return -1;
        }
        if (linear_backward(v, v->big, k->ln1, P_("attn.qkv.weight"), P2_("attn.qkv.bias"), 1, v->f, 0, BT, 3 * D, D,
                            v->big_act, err))
            return -1;
        float *prev_fc2_bias = l > 0 ? v->grads + block_off(v, l - 1, "mlp.fc2.bias") : NULL;
        TIMED(PROF_LAYERNORM, cpu_layernorm_backward(v->f, k->x_in, k->mean1, k->rstd1, BW("norm1.weight"), v->dx, D,
                                                     BG("norm1.weight"), BG("norm1.bias"), BT, D, D,
                                                     l > 0 ? dxa : NULL, dt, prev_fc2_bias));
#undef P_
#undef P2_
        if (fire(v, cb, user, v->L - l, err)) return -1;
    }
    /* embeddings: dx -> cls, pos, and the patch GEMM */
    TIMED(PROF_PATCH, cpu_tokens_backward(v->dx, G("cls_token"), G("pos_embed"), v->f, B, T, D));
    if (linear_backward(v, v->f, v->patches, "patch_embed.proj.weight", "patch_embed.proj.bias", 0, NULL, 0, B * v->N, D,
                        v->K, v->big_act, err))
        return -1;
    (void)c;
    return fire(v, cb, user, v->L + 1, err);
}

int cpu_vit_optimizer_step(cpu_vit *v, ib_error *err)
{
    const int keep = omp_get_max_threads();
    set_threads(v);
    const ib_optim_config *o = &v->cfg.optim;
    v->step++;
    TIMED(PROF_ADAM, cpu_adam_step(v->params, v->grads, v->m, v->v, v->wbf, v->layout->total, v->step, o->lr, o->beta1, o->beta2,
                  o->eps, o->weight_decay, o->kind == IB_OPT_ADAMW));
    omp_set_num_threads(keep);
    return 0;
}
