/* cuda/vit: timm's VisionTransformer training step on one GPU, mirroring src/cpu/vit.c op for op:
 * Per block:  x_mid = x + proj(attn(LN1(x)));  x_out = x_mid + fc2(GELU(fc1(LN2(x_mid))))
 * The residual add is fused into the LayerNorm that follows it, and the final norm and head run
 * on the class-token rows only.  Under bf16 autocast every GEMM reads bf16 operands and
 * accumulates in fp32; the bf16 casts happen at the same points as on the CPU.  Everything is
 * queued on one stream; the host waits only in cuda_vit_read_loss and the backend's synchronize. */
#include "cuda/vit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/check.h"
#include "cuda/kernels.h"

#define KTRY(call)                                              \
    do {                                                        \
        if (cuda_check((call), #call, err)) return -1;          \
    } while (0)

#define ALIGN 256   /* every buffer starts on 256 bytes: cuBLASLt's preferred operand alignment */

/* Two passes over the same list: counting (base NULL) then assigning offsets into the pool. */
typedef struct arena {
    char *base;
    size_t bytes;
} arena;

static void *take(arena *a, size_t n, size_t elem)
{
    size_t off = a->bytes;
    a->bytes += (n * elem + ALIGN - 1) / ALIGN * ALIGN;
    return a->base ? a->base + off : NULL;
}

static size_t maxz(size_t a, size_t b) { return a > b ? a : b; }

static void carve(cuda_vit *v, arena *a)
{
    const vit_config *c = &v->cfg.model;
    const size_t B = v->B, T = v->T, D = v->D, F = v->F, C = v->C, H = v->H, BT = B * T, P = v->layout->total;
    const size_t TT = T * (size_t)v->Tp;   /* one padded T x T matrix */
    const size_t as = v->dt == IB_PREC_BF16 ? 2 : 4;
    v->params = take(a, P, 4), v->grads = take(a, P, 4), v->m = take(a, P, 4), v->v = take(a, P, 4);
    v->wbf = v->dt == IB_PREC_BF16 ? take(a, P, 2) : NULL;
    v->images = take(a, B * c->in_chans * c->img_size * c->img_size, 4);
    v->labels = take(a, B, 4);
    for (int l = 0; l < v->L; l++) {
        cuda_block_acts tmp, *k = v->blk ? &v->blk[l] : &tmp;
        k->x_in = take(a, BT * D, 4);
        k->ln1 = take(a, BT * D, as);
        k->mean1 = take(a, BT, 4), k->rstd1 = take(a, BT, 4);
        k->qkvh = take(a, BT * 3 * D, as);
        k->P = take(a, B * H * TT, as);
        k->att = take(a, BT * D, as);
        k->x_mid = take(a, BT * D, 4);
        k->ln2 = take(a, BT * D, as);
        k->mean2 = take(a, BT, 4), k->rstd2 = take(a, BT, 4);
        k->h = take(a, BT * F, 4);
        k->a = take(a, BT * F, as);
    }
    v->x_final = take(a, BT * D, 4);
    v->patches = take(a, B * v->N * v->K, as);
    v->meanf = take(a, B, 4), v->rstdf = take(a, B, 4);
    v->lnf = take(a, B * D, as);
    v->logits = take(a, B * C, 4), v->dlogits = take(a, B * C, 4);
    v->dlogits_act = take(a, B * C, as);
    v->dlnf = take(a, B * D, 4);
    const size_t wide = BT * maxz(3 * D, F);
    v->big = take(a, wide, 4);
    v->big_act = take(a, wide, as);
    v->f = take(a, BT * D, 4);
    v->dx = take(a, BT * D, 4);
    v->datt = take(a, BT * D, as);
    v->heads_act = take(a, BT * D, as);
    v->tt_act = v->dt == IB_PREC_BF16 ? take(a, B * H * TT, 2) : NULL;
    v->dP = take(a, B * H * TT, 4);
    v->dqkvh = take(a, 3 * BT * D, 4);
    const size_t widest = maxz(maxz(3 * D, F), maxz(C, D));
    v->partial = take(a, maxz(cuk_layernorm_partial_floats(v->D), cuk_colsum_partial_floats((int)widest)), 4);
    v->row_loss = take(a, B, 8);
    v->loss_dev = take(a, 1, 4);
}

static size_t off_of(const cuda_vit *v, const char *name)
{
    const model_tensor *t = model_layout_find(v->layout, name);
    return t ? t->offset : 0;   /* names come from the same layout: always found */
}

static void resolve_offsets(cuda_vit *v)
{
    char n[96];
#define O_(s) (snprintf(n, sizeof n, "blocks.%d." s, l), off_of(v, n))
    for (int l = 0; l < v->L; l++) {
        cuda_block_params *p = &v->bp[l];
        p->norm1_w = O_("norm1.weight"), p->norm1_b = O_("norm1.bias");
        p->qkv_w = O_("attn.qkv.weight"), p->qkv_b = O_("attn.qkv.bias");
        p->proj_w = O_("attn.proj.weight"), p->proj_b = O_("attn.proj.bias");
        p->norm2_w = O_("norm2.weight"), p->norm2_b = O_("norm2.bias");
        p->fc1_w = O_("mlp.fc1.weight"), p->fc1_b = O_("mlp.fc1.bias");
        p->fc2_w = O_("mlp.fc2.weight"), p->fc2_b = O_("mlp.fc2.bias");
    }
#undef O_
    v->patch_w = off_of(v, "patch_embed.proj.weight"), v->patch_b = off_of(v, "patch_embed.proj.bias");
    v->cls = off_of(v, "cls_token"), v->pos = off_of(v, "pos_embed");
    v->norm_w = off_of(v, "norm.weight"), v->norm_b = off_of(v, "norm.bias");
    v->head_w = off_of(v, "head.weight"), v->head_b = off_of(v, "head.bias");
}

int cuda_vit_init(cuda_vit *v, const ib_train_config *cfg, const model_layout *layout, int estimate_only,
                  ib_error *err)
{
    memset(v, 0, sizeof *v);
    v->cfg = *cfg;
    v->layout = layout;
    v->device = cfg->device;
    const vit_config *c = &cfg->model;
    v->dt = cfg->precision == IB_PREC_BF16 ? IB_PREC_BF16 : IB_PREC_FP32;
    v->B = cfg->batch_size, v->T = model_seq_len(c), v->N = model_num_patches(c), v->D = c->embed_dim;
    v->H = c->num_heads, v->hd = v->D / v->H, v->F = model_mlp_hidden(c), v->C = c->num_classes;
    v->K = c->in_chans * c->patch_size * c->patch_size, v->L = c->depth;
    v->Tp = (v->T + 7) / 8 * 8;
    arena count = {NULL, 0};
    carve(v, &count);
    v->bytes = count.bytes;
    if (estimate_only) return 0;

    v->blk = calloc((size_t)v->L, sizeof *v->blk);
    v->bp = calloc((size_t)v->L, sizeof *v->bp);
    float *host = malloc(layout->total * sizeof(float));
    if (!v->blk || !v->bp || !host) {
        free(host);
        cuda_vit_free(v);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }
    resolve_offsets(v);
    int rc = -1;
    if (cuda_check(cudaSetDevice(v->device), "cudaSetDevice", err)) goto out;
    cudaError_t e = cudaMalloc(&v->pool, v->bytes);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        cudaGetLastError();   /* clear the sticky-free allocation error before asking */
        cudaMemGetInfo(&fr, &tot);
        v->pool = NULL;
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "GPU %d out of memory: this config needs %.2f GiB, %.2f GiB of %.2f GiB are free (%s)", v->device,
                     v->bytes / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0, cudaGetErrorString(e));
        goto out;
    }
    arena real = {v->pool, 0};
    carve(v, &real);
    if (cuda_check(cudaStreamCreateWithFlags(&v->stream, cudaStreamNonBlocking), "cudaStreamCreate", err) ||
        cuda_check(cudaEventCreateWithFlags(&v->loss_ready, cudaEventDisableTiming), "cudaEventCreate", err) ||
        cuda_check(cudaMallocHost((void **)&v->loss_host, sizeof(float)), "cudaMallocHost", err) ||
        cuda_gemm_create(&v->gemm, (size_t)32 << 20, err))
        goto out;
    const size_t P = layout->total;
    /* zeroed once (on the stream: a plain cudaMemset may still run when it returns, on the legacy
     * stream, which this non-blocking stream does not wait for): the padding of the T x T attention
     * buffers then holds zeros, never stale bits */
    if (cuda_check(cudaMemsetAsync(v->pool, 0, v->bytes, v->stream), "cudaMemsetAsync(pool)", err)) goto out;
    model_init_params(c, layout, host, cfg->seed);
    /* every copy goes through the compute stream: a legacy-stream cudaMemcpy from pageable memory
     * may still be in flight when it returns, and the non-blocking stream would not wait for it */
    if (cuda_check(cudaMemcpyAsync(v->params, host, P * sizeof(float), cudaMemcpyHostToDevice, v->stream),
                   "cudaMemcpyAsync(params)", err) ||
        cuda_vit_refresh_bf16(v, err) ||
        cuda_check(cudaStreamSynchronize(v->stream), "cudaStreamSynchronize(init)", err))
        goto out;
    rc = 0;
out:
    free(host);
    if (rc) cuda_vit_free(v);
    return rc;
}

void cuda_vit_free(cuda_vit *v)
{
    if (v->stream) cudaStreamSynchronize(v->stream);
    cuda_gemm_destroy(v->gemm);
    v->gemm = NULL;
    if (v->loss_host) cudaFreeHost(v->loss_host);
    if (v->loss_ready) cudaEventDestroy(v->loss_ready);
    if (v->stream) cudaStreamDestroy(v->stream);
    if (v->pool) cudaFree(v->pool);
    free(v->blk);
    free(v->bp);
    v->loss_host = NULL, v->loss_ready = NULL, v->stream = NULL, v->pool = NULL, v->blk = NULL, v->bp = NULL;
}

int cuda_vit_refresh_bf16(cuda_vit *v, ib_error *err)
{
    if (v->wbf) KTRY(cuk_store_act(v->wbf, IB_PREC_BF16, v->params, v->layout->total, v->stream));
    return 0;
}

/* GEMM weight operand: the bf16 copy under autocast, else the fp32 master. */
static const void *wgt(const cuda_vit *v, size_t off)
{
    return v->dt == IB_PREC_BF16 ? (const void *)(v->wbf + off) : (const void *)(v->params + off);
}

/* y [M,out] (dtype c) = x [M,in] W^T (+ bias), W stored [out,in] as nn.Linear. */
static int linear(cuda_vit *v, const void *x, size_t w_off, const float *bias, void *y, int c, int M, int out, int in,
                  ib_error *err)
{
    const cuda_gemm_desc d = {.batch = 1, .M = M, .N = out, .K = in, .ab = v->dt, .c = c, .transB = 1};
    return cuda_gemm_exec(v->gemm, &d, x, wgt(v, w_off), y, bias, v->stream, err);
}

int cuda_vit_forward(cuda_vit *v, ib_error *err)
{
    if (!v->have_inputs) return ib_error_set(err, IB_EXIT_RUNTIME, "forward before set_inputs");
    KTRY(cudaSetDevice(v->device));
    const vit_config *c = &v->cfg.model;
    const int B = v->B, T = v->T, Tp = v->Tp, D = v->D, H = v->H, hd = v->hd, F = v->F, BT = B * T, dt = v->dt;
    const cudaStream_t s = v->stream;
    const float *W = v->params;
    const float scale = 1.0f / sqrtf((float)hd);
    const long long tt = (long long)T * Tp, th = (long long)T * hd;
    const size_t plane = (size_t)BT * D;   /* one of q, k, v in qkvh */
    const size_t es = dt == IB_PREC_BF16 ? 2 : 4;

    /* patch embedding: [B*N,K] x [K,D] + bias -> f, then tokens -> x_in of block 0 */
    KTRY(cuk_patchify(v->images, B, c->in_chans, c->img_size, c->patch_size, v->patches, dt, s));
    if (linear(v, v->patches, v->patch_w, W + v->patch_b, v->f, IB_PREC_FP32, B * v->N, D, v->K, err)) return -1;
    KTRY(cuk_tokens_forward(v->f, W + v->cls, W + v->pos, v->blk[0].x_in, B, T, D, s));

    for (int l = 0; l < v->L; l++) {
        cuda_block_acts *k = &v->blk[l];
        const cuda_block_params *p = &v->bp[l];
        if (l == 0)
            KTRY(cuk_layernorm_forward(k->x_in, NULL, NULL, W + p->norm1_w, W + p->norm1_b, k->ln1, dt, k->mean1,
                                       k->rstd1, BT, D, D, s));
        else   /* x_in = previous x_mid + previous fc2 output (still in f) */
            KTRY(cuk_layernorm_forward(v->blk[l - 1].x_mid, v->f, k->x_in, W + p->norm1_w, W + p->norm1_b, k->ln1,
                                       dt, k->mean1, k->rstd1, BT, D, D, s));
        /* qkv [BT,3D] fp32 (+ bias) -> q, k, v [B,H,T,hd] in the act dtype */
        if (linear(v, k->ln1, p->qkv_w, W + p->qkv_b, v->big, IB_PREC_FP32, BT, 3 * D, D, err)) return -1;
        KTRY(cuk_qkv_split(v->big, k->qkvh, dt, B, T, H, hd, s));
        const char *q = k->qkvh, *kk = q + plane * es, *vv = q + 2 * plane * es;
        /* scores and softmax in fp32: in place in the saved P under fp32; under bf16 in the dP
         * scratch, with P saved as the bf16 copy the P v GEMM reads */
        float *S = dt == IB_PREC_BF16 ? v->dP : (float *)k->P;
        {   /* S [B*H,T,T] fp32 = q k^T  (rows at stride Tp) */
            const cuda_gemm_desc d = {.batch = B * H, .M = T, .N = T, .K = hd, .ab = dt, .c = IB_PREC_FP32, .transB = 1,
                                      .ldc = Tp, .strideA = th, .strideB = th, .strideC = tt};
            if (cuda_gemm_exec(v->gemm, &d, q, kk, S, NULL, s, err)) return -1;
        }
        KTRY(cuk_softmax_forward(S, dt == IB_PREC_BF16 ? k->P : NULL, dt, (size_t)B * H * T, T, Tp, scale, s));
        {   /* o [B*H,T,hd] act = P v */
            const cuda_gemm_desc d = {.batch = B * H, .M = T, .N = hd, .K = T, .ab = dt, .c = dt, .lda = Tp,
                                      .strideA = tt, .strideB = th, .strideC = th};
            if (cuda_gemm_exec(v->gemm, &d, k->P, vv, v->heads_act, NULL, s, err)) return -1;
        }
        KTRY(cuk_heads_merge(v->heads_act, k->att, dt, B, T, H, hd, s));
        if (linear(v, k->att, p->proj_w, W + p->proj_b, v->f, IB_PREC_FP32, BT, D, D, err)) return -1;
        KTRY(cuk_layernorm_forward(k->x_in, v->f, k->x_mid, W + p->norm2_w, W + p->norm2_b, k->ln2, dt, k->mean2,
                                   k->rstd2, BT, D, D, s));
        /* fc1 without bias: the bias add is fused into the GELU kernel (h keeps fc1's output + bias) */
        if (linear(v, k->ln2, p->fc1_w, NULL, k->h, IB_PREC_FP32, BT, F, D, err)) return -1;
        KTRY(cuk_bias_gelu_forward(k->h, W + p->fc1_b, k->a, dt, BT, F, s));
        if (linear(v, k->a, p->fc2_w, W + p->fc2_b, v->f, IB_PREC_FP32, BT, D, F, err)) return -1;
    }
    /* final residual + norm on the class-token rows only (row stride T*D), then the head */
    KTRY(cuk_layernorm_forward(v->blk[v->L - 1].x_mid, v->f, v->x_final, W + v->norm_w, W + v->norm_b, v->lnf, dt,
                               v->meanf, v->rstdf, B, D, (ptrdiff_t)T * D, s));
    if (linear(v, v->lnf, v->head_w, W + v->head_b, v->logits, IB_PREC_FP32, B, v->C, D, err)) return -1;
    KTRY(cuk_crossentropy(v->logits, v->labels, v->dlogits, v->row_loss, v->loss_dev, B, v->C, s));
    KTRY(cudaMemcpyAsync(v->loss_host, v->loss_dev, sizeof(float), cudaMemcpyDeviceToHost, s));
    KTRY(cudaEventRecord(v->loss_ready, s));
    return 0;
}

int cuda_vit_read_loss(cuda_vit *v, float *loss, ib_error *err)
{
    KTRY(cudaEventSynchronize(v->loss_ready));
    v->last_loss = *v->loss_host;
    if (loss) *loss = v->last_loss;
    return 0;
}

/* Linear backward for y = x W^T + b given dy (fp32, [M,out]):
 * db = colsum(dy); dW [out,in] = dy^T x; dx [M,in] = dy W (fp32, or the act dtype if dx_act). */
static int linear_backward(cuda_vit *v, const float *dy, const void *x, size_t w_off, size_t b_off, void *dx,
                           int dx_act, int M, int out, int in, void *dy_act, ib_error *err)
{
    const ib_precision dt = v->dt;
    KTRY(cuk_bias_backward(dy, v->grads + b_off, dt == IB_PREC_BF16 ? dy_act : NULL, dt, M, out, v->partial, v->stream));
    const void *dya = dt == IB_PREC_BF16 ? dy_act : (const void *)dy;
    const cuda_gemm_desc dw = {.batch = 1, .M = out, .N = in, .K = M, .ab = dt, .c = IB_PREC_FP32, .transA = 1};
    if (cuda_gemm_exec(v->gemm, &dw, dya, x, v->grads + w_off, NULL, v->stream, err)) return -1;
    if (dx) {
        const cuda_gemm_desc dd = {.batch = 1, .M = M, .N = in, .K = out, .ab = dt, .c = dx_act ? dt : IB_PREC_FP32};
        if (cuda_gemm_exec(v->gemm, &dd, dya, wgt(v, w_off), dx, NULL, v->stream, err)) return -1;
    }
    return 0;
}

/* Attention backward of one block: datt act [B,T,D] -> dqkv fp32 [B,T,3,H,hd] (into big). */
static int attention_backward(cuda_vit *v, const cuda_block_acts *k, ib_error *err)
{
    const int B = v->B, T = v->T, Tp = v->Tp, D = v->D, H = v->H, hd = v->hd, dt = v->dt, BH = B * H;
    const cudaStream_t s = v->stream;
    const size_t plane = (size_t)B * T * D, es = dt == IB_PREC_BF16 ? 2 : 4;
    const float scale = 1.0f / sqrtf((float)hd);
    const char *q = k->qkvh, *kk = q + plane * es, *vv = q + 2 * plane * es;
    float *dq = v->dqkvh, *dk = dq + plane, *dv = dq + 2 * plane;
    const long long tt = (long long)T * Tp, th = (long long)T * hd;
    KTRY(cuk_heads_split(v->datt, v->heads_act, dt, B, T, H, hd, s));   /* dO [B,H,T,hd] */
    {   /* dP [BH,T,T] = dO v^T  (rows at stride Tp) */
        const cuda_gemm_desc d = {.batch = BH, .M = T, .N = T, .K = hd, .ab = dt, .c = IB_PREC_FP32, .transB = 1,
                                  .ldc = Tp, .strideA = th, .strideB = th, .strideC = tt};
        if (cuda_gemm_exec(v->gemm, &d, v->heads_act, vv, v->dP, NULL, s, err)) return -1;
    }
    {   /* dv [BH,T,hd] = P^T dO  (P saved in the act dtype) */
        const cuda_gemm_desc d = {.batch = BH, .M = T, .N = hd, .K = T, .ab = dt, .c = IB_PREC_FP32, .transA = 1,
                                  .lda = Tp, .strideA = tt, .strideB = th, .strideC = th};
        if (cuda_gemm_exec(v->gemm, &d, k->P, v->heads_act, dv, NULL, s, err)) return -1;
    }
    /* dS = P * (dP - <P, dP>) * scale: in place in dP (P read back exactly from its act copy), and
     * cast to bf16 for the dq, dk GEMMs */
    KTRY(cuk_softmax_backward(k->P, v->dP, v->tt_act, dt, (size_t)BH * T, T, Tp, scale, s));
    const void *dS = dt == IB_PREC_BF16 ? v->tt_act : (const void *)v->dP;
    {   /* dq = dS k */
        const cuda_gemm_desc d = {.batch = BH, .M = T, .N = hd, .K = T, .ab = dt, .c = IB_PREC_FP32, .lda = Tp,
                                  .strideA = tt, .strideB = th, .strideC = th};
        if (cuda_gemm_exec(v->gemm, &d, dS, kk, dq, NULL, s, err)) return -1;
    }
    {   /* dk = dS^T q */
        const cuda_gemm_desc d = {.batch = BH, .M = T, .N = hd, .K = T, .ab = dt, .c = IB_PREC_FP32, .transA = 1,
                                  .lda = Tp, .strideA = tt, .strideB = th, .strideC = th};
        if (cuda_gemm_exec(v->gemm, &d, dS, q, dk, NULL, s, err)) return -1;
    }
    KTRY(cuk_qkv_merge(v->dqkvh, v->big, B, T, H, hd, s));
    return 0;
}

static int fire(cuda_vit *v, ib_grad_ready_fn cb, void *user, int range, ib_error *err)
{
    if (!cb) return 0;
    size_t off, cnt;
    model_grad_range(v->layout, &v->cfg.model, range, &off, &cnt);
    if (cb(user, off, cnt)) return ib_error_set(err, IB_EXIT_RUNTIME, "gradient hook failed for range %d", range);
    return 0;
}

int cuda_vit_backward(cuda_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    KTRY(cudaSetDevice(v->device));
    const int B = v->B, T = v->T, D = v->D, F = v->F, BT = B * T;
    const cudaStream_t s = v->stream;
    const float *W = v->params;
    float *G = v->grads;

    /* head and final norm (class-token rows of the residual stream only) */
    if (linear_backward(v, v->dlogits, v->lnf, v->head_w, v->head_b, v->dlnf, 0, B, v->C, D, v->dlogits_act, err))
        return -1;
    KTRY(cudaMemsetAsync(v->dx, 0, (size_t)BT * D * sizeof(float), s));
    KTRY(cuk_layernorm_backward(v->dlnf, v->x_final, v->meanf, v->rstdf, W + v->norm_w, v->dx, (ptrdiff_t)T * D,
                                G + v->norm_w, G + v->norm_b, B, D, (ptrdiff_t)T * D, v->partial, s));
    if (fire(v, cb, user, 0, err)) return -1;

    for (int l = v->L - 1; l >= 0; l--) {
        const cuda_block_acts *k = &v->blk[l];
        const cuda_block_params *p = &v->bp[l];
        /* MLP: dx -> fc2 -> GELU -> fc1 -> LN2, accumulated into dx */
        if (linear_backward(v, v->dx, k->a, p->fc2_w, p->fc2_b, v->big, 0, BT, D, F, v->big_act, err)) return -1;
        KTRY(cuk_gelu_backward(k->h, v->big, (size_t)BT * F, s));
        if (linear_backward(v, v->big, k->ln2, p->fc1_w, p->fc1_b, v->f, 0, BT, F, D, v->big_act, err)) return -1;
        KTRY(cuk_layernorm_backward(v->f, k->x_mid, k->mean2, k->rstd2, W + p->norm2_w, v->dx, D, G + p->norm2_w,
                                    G + p->norm2_b, BT, D, D, v->partial, s));
        /* attention: dx -> proj (datt in the act dtype: attention reads it only as GEMM input) */
        if (linear_backward(v, v->dx, k->att, p->proj_w, p->proj_b, v->datt, 1, BT, D, D, v->big_act, err)) return -1;
        if (attention_backward(v, k, err)) return -1;
        if (linear_backward(v, v->big, k->ln1, p->qkv_w, p->qkv_b, v->f, 0, BT, 3 * D, D, v->big_act, err)) return -1;
        KTRY(cuk_layernorm_backward(v->f, k->x_in, k->mean1, k->rstd1, W + p->norm1_w, v->dx, D, G + p->norm1_w,
                                    G + p->norm1_b, BT, D, D, v->partial, s));
        if (fire(v, cb, user, v->L - l, err)) return -1;
    }
    /* embeddings: dx -> cls, pos, and the patch GEMM */
    KTRY(cuk_tokens_backward(v->dx, G + v->cls, G + v->pos, v->f, B, T, D, s));
    if (linear_backward(v, v->f, v->patches, v->patch_w, v->patch_b, NULL, 0, B * v->N, D, v->K, v->big_act, err))
        return -1;
    return fire(v, cb, user, v->L + 1, err);
}

int cuda_vit_optimizer_step(cuda_vit *v, ib_error *err)
{
    KTRY(cudaSetDevice(v->device));
    const ib_optim_config *o = &v->cfg.optim;
    v->step++;
    /* scalars exactly as src/cpu/adam.c forms them (double, then fp32) */
    const double bc1 = 1.0 - pow((double)o->beta1, v->step), bc2 = 1.0 - pow((double)o->beta2, v->step);
    cuk_adam_scalars k;
    k.beta1 = o->beta1, k.beta2 = o->beta2;
    k.omb1 = (float)(1.0 - (double)o->beta1), k.omb2 = (float)(1.0 - (double)o->beta2);
    k.step_size = (float)(o->lr / bc1), k.bc2_sqrt = (float)sqrt(bc2), k.eps = o->eps;
    k.wd = o->weight_decay, k.decay = (float)(1.0 - (double)o->lr * o->weight_decay);
    k.decoupled = o->kind == IB_OPT_ADAMW;
    KTRY(cuk_adam_step(v->params, v->grads, v->m, v->v, v->wbf, v->layout->total, &k, v->stream));
    return 0;
}
