/* cuda/vit: timm's VisionTransformer training step on one GPU, mirroring src/cpu/vit.c op for op:
 * Per block:  x_mid = x + proj(attn(LN1(x)));  x_out = x_mid + fc2(GELU(fc1(LN2(x_mid))))
 * The residual add is fused into the LayerNorm that follows it, and the final norm and head run
 * on the class-token rows only.  Under bf16 autocast every GEMM reads bf16 operands and
 * accumulates in fp32, and every block Linear writes bf16 with the bf16 bias in cuBLASLt's epilogue
 * (qkv, proj, fc1's h, fc2; their dgrads backward), as autocast's F.linear does; the bf16 casts
 * happen at the same points as on the CPU.  Attention runs on
 * the path cuda/attention_path.h chooses: under bf16 cuDNN's fused SDPA where it passes its gates
 * (q, k, v read from the qkv GEMM's bf16 output through strides, dq, dk, dv written back into that
 * layout in bf16, as PyTorch's SDPA backward returns them), else unfused; fp32 runs attention
 * unfused, op for op as the CPU.  Everything is queued on one stream; the host waits only in
 * cuda_vit_read_loss and the backend's synchronize. */
#include "cuda/vit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/attention_path.h"
#include "cuda/check.h"
#include "cuda/cudnn_sdpa.h"
#include "cuda/kernels.h"

#define KTRY(call)                                     \
    do {                                               \
        if (cuda_check((call), #call, err)) return -1; \
    } while (0)

/* The path the memory plan assumes: the one that will run (cuda_attention_choose decides it once,
 * gates, graphs and self-check included, before anything is planned), so a fallback to the
 * unfused path is planned as such and never ends in an out-of-memory failure. */
static int planned_path(const ib_train_config *cfg, size_t *cudnn_workspace)
{
    const int asked = cuda_attention_asked(NULL);
    if (cfg->precision != IB_PREC_BF16 || cfg->model.num_heads < 1 || asked == CUDA_ATT_UNFUSED)
        return CUDA_ATT_UNFUSED;
    cuda_attention_choice ch;
    cuda_attention_choose(cfg, &ch);
    if (cudnn_workspace) *cudnn_workspace = ch.cudnn_workspace;
    return ch.refused ? CUDA_ATT_UNFUSED : ch.path;
}

/* Floats from one block's cuDNN statistics [B,H,T] to the next's: B*H*T rounded up to 256 bytes, as
 * every buffer of the plan, since cuDNN's graphs declare every tensor 16-byte aligned (the
 * frontend's default) and B*H*T need not be a multiple of 4 (ViT-S's 6 heads x 197 tokens at an odd
 * batch: block 1's would start 8-byte aligned). */
static size_t lse_stride(const model_plan *p) { return ((size_t)p->B * p->H * p->T + 63) & ~(size_t)63; }

/* The plan for attention path PATH (CUDA_ATT_*); WS: cuDNN's workspace as its built graphs say. */
static int plan_for(const ib_train_config *cfg, int path, size_t ws, model_plan *p, ib_error *err)
{
    const int cudnn = path == CUDA_ATT_CUDNN;
    /* every buffer on 256 bytes (cuBLASLt's preferred operand alignment), T x T rows at a stride of
     * T rounded up to 8 (unfused only: cuDNN keeps no T x T matrix) */
    if (model_plan_build(&cfg->model, cfg->batch_size, cfg->precision, cudnn ? 0 : 8, 256, p, err)) return -1;
    const size_t B = p->B, T = p->T, H = p->H, hd = p->hd, BH = B * H, Ts = p->Ts;
    const int wide = 3 * p->D > p->F ? 3 * p->D : p->F, cd = p->C > p->D ? p->C : p->D; /* widest column sum */
    const size_t ln = cuk_layernorm_partial_floats(p->D), col = cuk_colsum_partial_floats(wide > cd ? wide : cd);
#define EXT(name, dt, ...) model_plan_add(p, #name, dt, offsetof(cuda_vit, name), MODEL_DIMS(__VA_ARGS__))
    if (path == CUDA_ATT_CUDNN) { /* cuDNN's statistics: max + log(sum exp) per row */
        EXT(lse, IB_PREC_FP32, (size_t)p->L, lse_stride(p));
    } else {
        EXT(heads_act, p->act, B, H, T, hd);
        if (p->act == IB_PREC_BF16) EXT(tt_act, IB_PREC_BF16, BH, T, Ts);
        EXT(dP, IB_PREC_FP32, BH, T, Ts), EXT(dqkvh, IB_PREC_FP32, 3, BH, T, hd);
        /* dqkv merged in fp32 for the qkv bias sums before its cast (under fp32 big_act is fp32) */
        if (p->act == IB_PREC_BF16) EXT(dqkv32, IB_PREC_FP32, B, T, 3 * p->D);
    }
    EXT(partial, IB_PREC_FP32, ln > col ? ln : col), EXT(row_loss, MODEL_DT_F64, B), EXT(loss_dev, IB_PREC_FP32, 1);
#undef EXT
    /* the cuBLASLt workspace cuda_gemm_create allocates, and the workspace cuBLAS takes for itself
     * should a GEMM fall back to it (32 MiB on Hopper) */
    p->outside = (size_t)64 << 20;
    /* cuDNN's workspace, allocated beside the pool: what its graphs, built for this shape before
     * anything was planned, report (the deterministic backward's dP scratch is B*H*pad64(T)*
     * pad128(T) bf16, the other's fp32 dq accumulator B*H*T*hd: no estimate fits both) */
    if (path == CUDA_ATT_CUDNN) p->outside += ws;
    return 0;
}

int cuda_vit_plan(const ib_train_config *cfg, model_plan *p, ib_error *err)
{
    size_t ws = 0;
    const int path = planned_path(cfg, &ws);
    return plan_for(cfg, path, ws, p, err);
}

int cuda_vit_init(cuda_vit *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err)
{
    memset(v, 0, sizeof *v);
    v->cfg = *cfg;
    v->layout = layout;
    v->device = cfg->device;
    if (cudaSetDevice(v->device) != cudaSuccess) cudaGetLastError(); /* reported below */
    cuda_attention_choice ch;
    cuda_attention_choose(cfg, &ch);
    if (ch.refused) return ib_error_set(err, IB_EXIT_USAGE, "%s", ch.why);
    v->attn_path = ch.path;
    if (plan_for(cfg, v->attn_path, ch.cudnn_workspace, &v->plan, err)) return -1;
    const size_t bytes = v->plan.bytes, P = layout->total;
    float *host = malloc(P * sizeof(float));
    int rc = -1;
    if (!host) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        goto out;
    }
    if (cuda_check(cudaSetDevice(v->device), "cudaSetDevice", err)) goto out;
    cudaError_t e = cudaMalloc(&v->pool, bytes);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        cudaGetLastError(); /* clear the sticky-free allocation error before asking */
        cudaMemGetInfo(&fr, &tot);
        v->pool = NULL;
        ib_error_set(err, IB_EXIT_RUNTIME,
                     "GPU %d out of memory: this config needs %.2f GiB, %.2f GiB of %.2f GiB are free (%s)", v->device,
                     bytes / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0, cudaGetErrorString(e));
        goto out;
    }
    if (model_plan_carve(&v->plan, v->pool, &v->buf, v, err) ||
        cuda_check(cudaStreamCreateWithFlags(&v->stream, cudaStreamNonBlocking), "cudaStreamCreate", err) ||
        cuda_check(cudaEventCreateWithFlags(&v->loss_ready, cudaEventDisableTiming), "cudaEventCreate", err) ||
        cuda_check(cudaStreamCreateWithFlags(&v->copy_stream, cudaStreamNonBlocking), "cudaStreamCreate", err) ||
        cuda_check(cudaEventCreateWithFlags(&v->inputs_free, cudaEventDisableTiming), "cudaEventCreate", err) ||
        cuda_check(cudaEventCreateWithFlags(&v->inputs_ready, cudaEventDisableTiming), "cudaEventCreate", err) ||
        cuda_check(cudaMallocHost((void **)&v->loss_host, sizeof(float)), "cudaMallocHost", err) ||
        cuda_gemm_create(&v->gemm, (size_t)32 << 20, err))
        goto out;
    if (v->attn_path == CUDA_ATT_CUDNN) { /* the graphs the choice built and checked (cached) */
        const model_plan *pl = &v->plan;
        char why[512];
        v->sdpa = cudnn_sdpa_get(pl->B, pl->T, pl->H, pl->hd, 1.0f / sqrtf((float)pl->hd), ch.cudnn_deterministic, why,
                                 sizeof why);
        if (!v->sdpa) {
            ib_error_set(err, IB_EXIT_RUNTIME, "%s", why);
            goto out;
        }
        const size_t ws = cudnn_sdpa_workspace(v->sdpa);
        if (ws && cuda_check(cudaMalloc(&v->sdpa_ws, ws), "cudaMalloc(cuDNN workspace)", err)) goto out;
    }
    /* zeroed once (on the stream: a plain cudaMemset may still run when it returns, on the legacy
     * stream, which this non-blocking stream does not wait for): the padding of the T x T attention
     * buffers then holds zeros, never stale bits */
    if (cuda_check(cudaMemsetAsync(v->pool, 0, bytes, v->stream), "cudaMemsetAsync(pool)", err)) goto out;
    model_init_params(&cfg->model, layout, host, cfg->seed);
    /* every copy goes through the compute stream: a legacy-stream cudaMemcpy from pageable memory
     * may still be in flight when it returns, and the non-blocking stream would not wait for it */
    if (cuda_check(cudaMemcpyAsync(v->buf.params, host, P * sizeof(float), cudaMemcpyHostToDevice, v->stream),
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
    if (v->copy_stream) cudaStreamSynchronize(v->copy_stream);
    if (v->stream) cudaStreamSynchronize(v->stream);
    if (v->graph) cudaGraphExecDestroy(v->graph);
    v->graph = NULL;
    cuda_gemm_destroy(v->gemm);
    v->gemm = NULL;
    if (v->loss_host) cudaFreeHost(v->loss_host);
    if (v->loss_ready) cudaEventDestroy(v->loss_ready);
    if (v->inputs_free) cudaEventDestroy(v->inputs_free);
    if (v->inputs_ready) cudaEventDestroy(v->inputs_ready);
    if (v->copy_stream) cudaStreamDestroy(v->copy_stream);
    if (v->stream) cudaStreamDestroy(v->stream);
    if (v->pool) cudaFree(v->pool);
    if (v->sdpa_ws) cudaFree(v->sdpa_ws);
    v->sdpa_ws = NULL, v->sdpa = NULL;
    model_plan_free(&v->plan, &v->buf);
    v->loss_host = NULL, v->loss_ready = NULL, v->stream = NULL, v->pool = NULL;
    v->copy_stream = NULL, v->inputs_free = v->inputs_ready = NULL;
}

int cuda_vit_refresh_bf16(cuda_vit *v, ib_error *err)
{
    if (v->buf.wbf) KTRY(cuk_store_act(v->buf.wbf, IB_PREC_BF16, v->buf.params, v->layout->total, v->stream));
    return 0;
}

/* GEMM weight operand: the bf16 copy under autocast, else the fp32 master. */
static const void *wgt(const cuda_vit *v, size_t off)
{
    return v->buf.wbf ? (const void *)(v->buf.wbf + off) : (const void *)(v->buf.params + off);
}

/* y [M,out] (dtype c) = x [M,in] W^T (+ bias), W stored [out,in] as nn.Linear; the bias (element
 * offset b_off) in c's dtype: the fp32 master for fp32 outputs, else the act copy. */
static int linear(cuda_vit *v, const void *x, size_t w_off, size_t b_off, void *y, int c, int M, int out, int in,
                  ib_error *err)
{
    const cuda_gemm_desc d = {.batch = 1, .M = M, .N = out, .K = in, .ab = v->plan.act, .c = c, .transB = 1};
    const void *bias = c == IB_PREC_FP32 ? (const void *)(v->buf.params + b_off) : wgt(v, b_off);
    return cuda_gemm_exec(v->gemm, &d, x, wgt(v, w_off), y, bias, v->stream, err);
}

/* The unfused attention's GEMMs, batched over the B*H heads: q, k, v, dO [B*H,T,hd] act, and the
 * T x T matrices [B*H,T,T] at a row stride of Ts.  This one: C [T,T] fp32 = A B^T, A, B [T,hd]. */
static int heads_gemm_tt(cuda_vit *v, const void *a, const void *b, float *c, ib_error *err)
{
    const model_plan *pl = &v->plan;
    const long long tt = (long long)pl->T * pl->Ts, th = (long long)pl->T * pl->hd;
    cuda_gemm_desc d = {.batch = pl->B * pl->H, .M = pl->T, .N = pl->T, .K = pl->hd, .ab = pl->act};
    d.c = IB_PREC_FP32, d.transB = 1, d.ldc = pl->Ts, d.strideA = d.strideB = th, d.strideC = tt;
    return cuda_gemm_exec(v->gemm, &d, a, b, c, NULL, v->stream, err);
}

/* ... and C [T,hd] (dtype c_dt) = op(A) B: A [T,T] (transposed if trans_a), B [T,hd]. */
static int heads_gemm_th(cuda_vit *v, const void *a, int trans_a, const void *b, void *c, int c_dt, ib_error *err)
{
    const model_plan *pl = &v->plan;
    const long long tt = (long long)pl->T * pl->Ts, th = (long long)pl->T * pl->hd;
    cuda_gemm_desc d = {.batch = pl->B * pl->H, .M = pl->T, .N = pl->hd, .K = pl->T, .ab = pl->act, .c = c_dt};
    d.transA = trans_a, d.lda = pl->Ts, d.strideA = tt, d.strideB = d.strideC = th;
    return cuda_gemm_exec(v->gemm, &d, a, b, c, NULL, v->stream, err);
}

/* Unfused attention of one block: big_act = qkv [BT,3D] act -> k->qkv (q, k, v [B,H,T,hd] act),
 * the probabilities k->P, and k->att [B,T,D] act. */
static int attention_forward_unfused(cuda_vit *v, model_block_acts *k, ib_error *err)
{
    const model_plan *pl = &v->plan;
    const int B = pl->B, T = pl->T, Ts = pl->Ts, D = pl->D, H = pl->H, hd = pl->hd, BT = B * T, dt = pl->act;
    const cudaStream_t s = v->stream;
    const float scale = 1.0f / sqrtf((float)hd);
    const size_t plane = (size_t)BT * D; /* one of q, k, v in the split qkv */
    const size_t es = ib_precision_size(dt);
    KTRY(cuk_qkv_split(v->buf.big_act, k->qkv, dt, B, T, H, hd, s));
    const char *q = k->qkv, *kk = q + plane * es, *vv = q + 2 * plane * es;
    /* scores and softmax in fp32: in place in the saved P under fp32; under bf16 in the dP
     * scratch, with P saved as the bf16 copy the P v GEMM reads */
    float *S = dt == IB_PREC_BF16 ? v->dP : (float *)k->P;
    if (heads_gemm_tt(v, q, kk, S, err)) return -1; /* S [B*H,T,T] fp32 = q k^T  (rows at stride Ts) */
    KTRY(cuk_softmax_forward(S, dt == IB_PREC_BF16 ? k->P : NULL, dt, (size_t)B * H * T, T, Ts, scale, s));
    if (heads_gemm_th(v, k->P, 0, vv, v->heads_act, dt, err)) return -1; /* o [B*H,T,hd] act = P v */
    KTRY(cuk_heads_merge(v->heads_act, k->att, dt, B, T, H, hd, s));
    return 0;
}

/* A cuDNN call's result (RC, with the reason in v->sdpa_why) as the step's error. */
static int sdpa_call(cuda_vit *v, int rc, ib_error *err)
{
    return rc ? ib_error_set(err, IB_EXIT_RUNTIME, "%s", v->sdpa_why) : 0;
}

/* The forward pass's work on the stream, up to the loss copied into pinned loss_host; the
 * caller records loss_ready (outside any capture: an event recorded inside a graph does not
 * signal the host). */
static int forward_ops(cuda_vit *v, ib_error *err)
{
    if (!v->have_inputs) return ib_error_set(err, IB_EXIT_RUNTIME, "forward before set_inputs");
    KTRY(cudaSetDevice(v->device));
    const vit_config *c = &v->cfg.model;
    const model_plan *pl = &v->plan;
    const model_layout *o = v->layout; /* parameter offsets */
    model_buffers *b = &v->buf;
    const int B = pl->B, T = pl->T, D = pl->D, F = pl->F, BT = B * T, dt = pl->act;
    const cudaStream_t s = v->stream;
    const float *W = b->params;

    /* patch embedding: [B*N,K] x [K,D] + bias -> f, then tokens -> x_in of block 0 */
    KTRY(cuk_patchify(b->images, B, c->in_chans, c->img_size, c->patch_size, b->patches, dt, s));
    if (linear(v, b->patches, o->patch_w, o->patch_b, b->f, IB_PREC_FP32, B * pl->N, D, pl->K, err)) return -1;
    KTRY(cuk_tokens_forward(b->f, W + o->cls, W + o->pos, b->blk[0].x_in, B, T, D, s));

    for (int l = 0; l < pl->L; l++) {
        model_block_acts *k = &b->blk[l];
        const model_block_params *p = &o->blk[l];
        if (l == 0)
            KTRY(cuk_layernorm_forward(k->x_in, NULL, NULL, W + p->norm1_w, W + p->norm1_b, k->ln1, dt, k->mean1,
                                       k->rstd1, BT, D, D, s));
        else /* x_in = previous x_mid + previous fc2 output (still in big_act) */
            KTRY(cuk_layernorm_forward(b->blk[l - 1].x_mid, b->big_act, k->x_in, W + p->norm1_w, W + p->norm1_b, k->ln1,
                                       dt, k->mean1, k->rstd1, BT, D, D, s));
        if (v->attn_path == CUDA_ATT_CUDNN) {
            /* qkv [BT,3D] act (+ bias) saved as it lies, [B,T,3,H,hd], where cuDNN reads q, k, v
             * through strides; att [B,T,D] bf16 and the statistics out */
            if (linear(v, k->ln1, p->qkv_w, p->qkv_b, k->qkv, dt, BT, 3 * D, D, err)) return -1;
            if (sdpa_call(v,
                          cudnn_sdpa_forward(v->sdpa, k->qkv, k->att, v->lse + (size_t)l * lse_stride(pl), v->sdpa_ws,
                                             s, v->sdpa_why, sizeof v->sdpa_why),
                          err))
                return -1;
        } else {
            if (linear(v, k->ln1, p->qkv_w, p->qkv_b, b->big_act, dt, BT, 3 * D, D, err) ||
                attention_forward_unfused(v, k, err))
                return -1;
        }
        /* proj's output (+ bias) act in big_act, added to the residual stream by the next norm */
        if (linear(v, k->att, p->proj_w, p->proj_b, b->big_act, dt, BT, D, D, err)) return -1;
        KTRY(cuk_layernorm_forward(k->x_in, b->big_act, k->x_mid, W + p->norm2_w, W + p->norm2_b, k->ln2, dt, k->mean2,
                                   k->rstd2, BT, D, D, s));
        /* h = fc1 + bias (the GEMM's epilogue; saved for backward), a = GELU(h), both act */
        if (linear(v, k->ln2, p->fc1_w, p->fc1_b, k->h, dt, BT, F, D, err)) return -1;
        KTRY(cuk_gelu_forward(k->h, k->a, dt, (size_t)BT * F, s));
        if (linear(v, k->a, p->fc2_w, p->fc2_b, b->big_act, dt, BT, D, F, err)) return -1;
    }
    /* final residual + norm on the class-token rows only (row stride T*D), then the head */
    KTRY(cuk_layernorm_forward(b->blk[pl->L - 1].x_mid, b->big_act, b->x_final, W + o->norm_w, W + o->norm_b, b->lnf,
                               dt, b->meanf, b->rstdf, B, D, (ptrdiff_t)T * D, s));
    if (linear(v, b->lnf, o->head_w, o->head_b, b->logits, IB_PREC_FP32, B, pl->C, D, err)) return -1;
    KTRY(cuk_crossentropy(b->logits, b->labels, b->dlogits, v->row_loss, v->loss_dev, B, pl->C, s));
    KTRY(cudaMemcpyAsync(v->loss_host, v->loss_dev, sizeof(float), cudaMemcpyDeviceToHost, s));
    return 0;
}

int cuda_vit_forward(cuda_vit *v, ib_error *err)
{
    if (forward_ops(v, err)) return -1;
    KTRY(cudaEventRecord(v->loss_ready, v->stream));
    return 0;
}

int cuda_vit_read_loss(cuda_vit *v, float *loss, ib_error *err)
{
    KTRY(cudaEventSynchronize(v->loss_ready));
    v->last_loss = *v->loss_host;
    if (loss) *loss = v->last_loss;
    return 0;
}

/* The GEMMs of a Linear's backward from dya, dy [M,out] already in the act dtype:
 * dW [out,in] = dy^T x; dx [M,in] = dy W (fp32, or the act dtype if dx_act). */
static int linear_backward_gemms(cuda_vit *v, const void *dya, const void *x, size_t w_off, void *dx, int dx_act, int M,
                                 int out, int in, ib_error *err)
{
    const ib_precision dt = v->plan.act;
    float *G = v->buf.grads;
    const cuda_gemm_desc dw = {.batch = 1, .M = out, .N = in, .K = M, .ab = dt, .c = IB_PREC_FP32, .transA = 1};
    if (cuda_gemm_exec(v->gemm, &dw, dya, x, G + w_off, NULL, v->stream, err)) return -1;
    if (dx) {
        const cuda_gemm_desc dd = {.batch = 1, .M = M, .N = in, .K = out, .ab = dt, .c = dx_act ? dt : IB_PREC_FP32};
        if (cuda_gemm_exec(v->gemm, &dd, dya, wgt(v, w_off), dx, NULL, v->stream, err)) return -1;
    }
    return 0;
}

/* Linear backward for y = x W^T + b given dy (fp32, [M,out]): db = colsum(dy), fused with dy's
 * cast into dy_act under bf16, then the GEMMs. */
static int linear_backward(cuda_vit *v, const float *dy, const void *x, size_t w_off, size_t b_off, void *dx,
                           int dx_act, int M, int out, int in, void *dy_act, ib_error *err)
{
    const ib_precision dt = v->plan.act;
    KTRY(cuk_bias_backward(dy, v->buf.grads + b_off, dt == IB_PREC_BF16 ? dy_act : NULL, dt, M, out, v->partial,
                           v->stream));
    return linear_backward_gemms(v, dt == IB_PREC_BF16 ? dy_act : (const void *)dy, x, w_off, dx, dx_act, M, out, in,
                                 err);
}

/* Where the unfused attention's backward leaves dqkv in fp32: its own buffer under bf16 (the act
 * copy goes to big_act), big_act itself under fp32. */
static float *dqkv32(cuda_vit *v) { return v->plan.act == IB_PREC_BF16 ? v->dqkv32 : (float *)v->buf.big_act; }

/* Attention backward of block l: datt act [B,T,D] -> dqkv fp32 [B,T,3,H,hd] (into dqkv32 under
 * bf16, big_act under fp32). */
static int attention_backward(cuda_vit *v, int l, const model_block_acts *k, ib_error *err)
{
    const model_plan *pl = &v->plan;
    const int B = pl->B, T = pl->T, Ts = pl->Ts, D = pl->D, H = pl->H, hd = pl->hd, dt = pl->act, BH = B * H;
    const cudaStream_t s = v->stream;
    const size_t plane = (size_t)B * T * D, es = ib_precision_size(dt);
    const float scale = 1.0f / sqrtf((float)hd);
    const char *q = k->qkv, *kk = q + plane * es, *vv = q + 2 * plane * es;
    float *dq = v->dqkvh, *dk = dq + plane, *dv = dq + 2 * plane;
    KTRY(cuk_heads_split(v->buf.datt, v->heads_act, dt, B, T, H, hd, s)); /* dO [B,H,T,hd] */
    /* dP [BH,T,T] = dO v^T  (rows at stride Ts); dv [BH,T,hd] = P^T dO  (P saved in the act dtype) */
    if (heads_gemm_tt(v, v->heads_act, vv, v->dP, err) ||
        heads_gemm_th(v, k->P, 1, v->heads_act, dv, IB_PREC_FP32, err))
        return -1;
    /* dS = P * (dP - <P, dP>) * scale: in place in dP (P read back exactly from its act copy), and
     * cast to bf16 for the dq, dk GEMMs */
    KTRY(cuk_softmax_backward(k->P, v->dP, v->tt_act, dt, (size_t)BH * T, T, Ts, scale, s));
    const void *dS = dt == IB_PREC_BF16 ? v->tt_act : (const void *)v->dP;
    /* dq = dS k; dk = dS^T q */
    if (heads_gemm_th(v, dS, 0, kk, dq, IB_PREC_FP32, err) || heads_gemm_th(v, dS, 1, q, dk, IB_PREC_FP32, err))
        return -1;
    KTRY(cuk_qkv_merge(v->dqkvh, dqkv32(v), B, T, H, hd, s));
    return 0;
}

int cuda_vit_backward(cuda_vit *v, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    KTRY(cudaSetDevice(v->device));
    const vit_config *c = &v->cfg.model;
    const model_plan *pl = &v->plan;
    const model_layout *o = v->layout; /* parameter offsets */
    model_buffers *b = &v->buf;
    const int B = pl->B, T = pl->T, D = pl->D, F = pl->F, BT = B * T, L = pl->L, dt = pl->act;
    const cudaStream_t s = v->stream;
    const float *W = b->params;
    float *G = b->grads;

    /* head and final norm (class-token rows of the residual stream only) */
    if (linear_backward(v, b->dlogits, b->lnf, o->head_w, o->head_b, b->dlnf, 0, B, pl->C, D, b->dlogits_act, err))
        return -1;
    KTRY(cudaMemsetAsync(b->dx, 0, (size_t)BT * D * sizeof(float), s));
    KTRY(cuk_layernorm_backward(b->dlnf, IB_PREC_FP32, b->x_final, b->meanf, b->rstdf, W + o->norm_w, b->dx,
                                (ptrdiff_t)T * D, G + o->norm_w, G + o->norm_b, B, D, (ptrdiff_t)T * D, NULL, dt, NULL,
                                v->partial, s));
    if (model_grad_range_ready(o, c, 0, cb, user, err)) return -1;

    for (int l = L - 1; l >= 0; l--) {
        const model_block_acts *k = &b->blk[l];
        const model_block_params *p = &o->blk[l];
        /* Each LayerNorm backward also finishes the gradient of the Linear before it (its output is
         * the norm's input, dx): that Linear's bias gradient and, under bf16, the act copy of dx
         * (dx_act) come out of the norm's pass, as on the CPU.  The last block's fc2 follows the
         * final norm, which covers the class-token rows only: its dy is finished here.  Every
         * dgrad comes out in the act dtype, as autocast's: fc2's into big_act, fc1's and qkv's into
         * dln (f under fp32).
         * MLP: dx -> fc2 -> GELU -> fc1 -> LN2 (+ proj's dy), accumulated into dx.  GELU's backward
         * works in place on fc2's dgrad, fused with fc1's bias gradient: dh = big_act * GELU'(h) */
        void *dxa = b->dx_act; /* NULL under fp32 */
        void *dln = dt == IB_PREC_BF16 ? b->dln : (void *)b->f;
        if (l == L - 1) {
            if (linear_backward(v, b->dx, k->a, p->fc2_w, p->fc2_b, b->big_act, 1, BT, D, F, dxa, err)) return -1;
        } else if (linear_backward_gemms(v, dxa ? dxa : (const void *)b->dx, k->a, p->fc2_w, b->big_act, 1, BT, D, F,
                                         err))
            return -1;
        KTRY(cuk_gelu_bias_backward(k->h, b->big_act, G + p->fc1_b, dt, BT, F, v->partial, s));
        if (linear_backward_gemms(v, b->big_act, k->ln2, p->fc1_w, dln, 1, BT, F, D, err)) return -1;
        KTRY(cuk_layernorm_backward(dln, dt, k->x_mid, k->mean2, k->rstd2, W + p->norm2_w, b->dx, D, G + p->norm2_w,
                                    G + p->norm2_b, BT, D, D, dxa, dt, G + p->proj_b, v->partial, s));
        /* attention: dx -> proj (datt in the act dtype: attention reads it only as GEMM input) */
        if (linear_backward_gemms(v, dxa ? dxa : (const void *)b->dx, k->att, p->proj_w, b->datt, 1, BT, D, D, err))
            return -1;
        if (v->attn_path == CUDA_ATT_CUDNN) {
            /* dq, dk, dv bf16 into big_act in the qkv layout: the qkv Linear's dy as its GEMMs read
             * it; its bias gradient sums those bf16 values (as PyTorch's, after SDPA's backward) */
            if (sdpa_call(v,
                          cudnn_sdpa_backward(v->sdpa, k->qkv, k->att, b->datt, v->lse + (size_t)l * lse_stride(pl),
                                              b->big_act, v->sdpa_ws, s, v->sdpa_why, sizeof v->sdpa_why),
                          err))
                return -1;
            KTRY(cuk_bias_backward_act(b->big_act, dt, G + p->qkv_b, BT, 3 * D, v->partial, s));
            if (linear_backward_gemms(v, b->big_act, k->ln1, p->qkv_w, dln, 1, BT, 3 * D, D, err)) return -1;
        } else {
            if (attention_backward(v, l, k, err)) return -1;
            if (linear_backward(v, dqkv32(v), k->ln1, p->qkv_w, p->qkv_b, dln, 1, BT, 3 * D, D, b->big_act, err))
                return -1;
        }
        /* LN1 (+ the previous block's fc2 dy; block 0's dx goes to the embeddings, no Linear) */
        KTRY(cuk_layernorm_backward(dln, dt, k->x_in, k->mean1, k->rstd1, W + p->norm1_w, b->dx, D, G + p->norm1_w,
                                    G + p->norm1_b, BT, D, D, l > 0 ? dxa : NULL, dt,
                                    l > 0 ? G + o->blk[l - 1].fc2_b : NULL, v->partial, s));
        if (model_grad_range_ready(o, c, L - l, cb, user, err)) return -1;
    }
    /* embeddings: dx -> cls, pos, and the patch GEMM */
    KTRY(cuk_tokens_backward(b->dx, G + o->cls, G + o->pos, b->f, B, T, D, s));
    if (linear_backward(v, b->f, b->patches, o->patch_w, o->patch_b, NULL, 0, B * pl->N, D, pl->K, b->big_act, err))
        return -1;
    return model_grad_range_ready(o, c, L + 1, cb, user, err);
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
    const model_buffers *b = &v->buf;
    KTRY(cuk_adam_step(b->params, b->grads, b->m, b->v, b->wbf, v->layout->total, &k, v->stream));
    return 0;
}

int cuda_vit_forward_backward_graph(cuda_vit *v, ib_error *err)
{
    KTRY(cudaSetDevice(v->device));
    if (!v->graph && v->graph_eager_steps < 1) {
        v->graph_eager_steps++;
        return cuda_vit_forward(v, err) || cuda_vit_backward(v, NULL, NULL, err) ? -1 : 0;
    }
    if (!v->graph) {
        cudaGraph_t g = NULL;
        KTRY(cudaStreamBeginCapture(v->stream, cudaStreamCaptureModeThreadLocal));
        const int rc = forward_ops(v, err) || cuda_vit_backward(v, NULL, NULL, err);
        const cudaError_t e = cudaStreamEndCapture(v->stream, &g);
        if (rc) {
            if (g) cudaGraphDestroy(g);
            return -1;
        }
        KTRY(e);
        const cudaError_t ei = cudaGraphInstantiate(&v->graph, g, 0);
        cudaGraphDestroy(g);
        if (ei != cudaSuccess) v->graph = NULL;
        KTRY(ei);
    }
    KTRY(cudaGraphLaunch(v->graph, v->stream));
    KTRY(cudaEventRecord(v->loss_ready, v->stream));
    return 0;
}
