/* kernels/attention: the data movement and softmax around attention's cuBLASLt strided-batched
 * GEMMs (S = q k^T and o = P v, and their backward, issued from src/cuda/vit.c):
 *   qkv [B,T,3,H,hd] -> q, k, v [B,H,T,hd] (one batch stride for all B*H products);
 *   P = softmax(S * scale) per row of S [B*H,T,T], computed in fp32;  o [B,H,T,hd] -> att [B,T,H*hd].
 * Mirrors src/cpu/attention.c (same rounding points: q, k, v, P and dS are cast to the act dtype
 * before their GEMMs; P is saved in the act dtype and the softmax backward reads that copy;
 * S, dP and dS are computed in fp32). */
#include "common.cuh"

#define WARPS 8

/* i over [B,T,3,H,hd] (source order: coalesced reads) */
__global__ static void qkv_split_kernel(const void *qkv, void *qkvh, int dt, int B, int T, int H, int hd)
{
    const size_t n = (size_t)B * T * 3 * H * hd;
    CUK_GRID_STRIDE(i, n) act_store(qkvh, dt, cuk_qkv_split_index(i, B, T, H, hd), act_load(qkv, dt, i));
}

extern "C" cudaError_t cuk_qkv_split(const void *qkv, void *qkvh, ib_precision dt, int B, int T, int H, int hd,
                                     cudaStream_t s)
{
    const size_t n = (size_t)B * T * 3 * H * hd;
    CUK_LAUNCH(qkv_split_kernel, cuk_blocks(n, 256), 256, 0, s)(qkv, qkvh, dt, B, T, H, hd);
    return cudaGetLastError();
}

/* i over [B,T,3,H,hd] (destination order: coalesced writes) */
__global__ static void qkv_merge_kernel(const float *dqkvh, float *dqkv, int B, int T, int H, int hd)
{
    const size_t n = (size_t)B * T * 3 * H * hd;
    CUK_GRID_STRIDE(i, n) dqkv[i] = dqkvh[cuk_qkv_split_index(i, B, T, H, hd)];
}

extern "C" cudaError_t cuk_qkv_merge(const float *dqkvh, float *dqkv, int B, int T, int H, int hd, cudaStream_t s)
{
    const size_t n = (size_t)B * T * 3 * H * hd;
    CUK_LAUNCH(qkv_merge_kernel, cuk_blocks(n, 256), 256, 0, s)(dqkvh, dqkv, B, T, H, hd);
    return cudaGetLastError();
}

/* i over [B,T,H,hd];  j the same element in [B,H,T,hd].  to_heads: dst[j] = src[i], else dst[i] = src[j]. */
template <typename TY>
__global__ static void heads_permute_kernel(const TY *src, TY *dst, int B, int T, int H, int hd, int to_heads)
{
    const size_t n = (size_t)B * T * H * hd;
    CUK_GRID_STRIDE(i, n)
    {
        const size_t j = cuk_heads_index(i, T, H, hd);
        if (to_heads) dst[j] = src[i];
        else dst[i] = src[j];
    }
}

static cudaError_t heads_permute(const void *src, void *dst, int dt, int B, int T, int H, int hd, int to_heads,
                                 cudaStream_t s)
{
    const size_t n = (size_t)B * T * H * hd;
    if (dt == IB_PREC_BF16) {
        CUK_LAUNCH(heads_permute_kernel<uint16_t>, cuk_blocks(n, 256), 256, 0, s)
        ((const uint16_t *)src, (uint16_t *)dst, B, T, H, hd, to_heads);
    } else {
        CUK_LAUNCH(heads_permute_kernel<float>, cuk_blocks(n, 256), 256, 0, s)
        ((const float *)src, (float *)dst, B, T, H, hd, to_heads);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t cuk_heads_merge(const void *o, void *att, ib_precision dt, int B, int T, int H, int hd,
                                       cudaStream_t s)
{
    return heads_permute(o, att, dt, B, T, H, hd, 0, s);
}

extern "C" cudaError_t cuk_heads_split(const void *datt, void *dO, ib_precision dt, int B, int T, int H, int hd,
                                       cudaStream_t s)
{
    return heads_permute(datt, dO, dt, B, T, H, hd, 1, s);
}

/* One warp per row (row stride ld, T valid columns): s <- exp((s - max) * scale) / sum, as
 * src/cpu/attention.c's softmax_row. */
__global__ static void softmax_forward_kernel(float *S, void *p_act, int dt, size_t rows, int T, int ld, float scale)
{
    const int lane = threadIdx.x & 31;
    const size_t row = (size_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    float *s = S + row * ld;
    float mx = -INFINITY;
    for (int j = lane; j < T; j += 32) mx = fmaxf(mx, s[j]);
    mx = warp_max(mx);
    float sum = 0;
    for (int j = lane; j < T; j += 32) {
        const float e = expf((s[j] - mx) * scale);
        s[j] = e;
        sum += e;
    }
    const float inv = 1.0f / warp_sum(sum);
    /* with p_act the fp32 probabilities are read by nobody (the P v GEMM and backward read p_act):
     * skip T stores per row, S keeps the exponentials as scratch */
    if (p_act)
        for (int j = lane; j < T; j += 32) act_store(p_act, dt, row * ld + j, s[j] * inv);
    else
        for (int j = lane; j < T; j += 32) s[j] *= inv;
}

extern "C" cudaError_t cuk_softmax_forward(float *S, void *p_act, ib_precision dt, size_t rows, int T, int ld,
                                           float scale, cudaStream_t s)
{
    const size_t blocks = (rows + WARPS - 1) / WARPS;
    if (blocks > 0x7fffffffu) return cudaErrorInvalidValue;
    CUK_LAUNCH(softmax_forward_kernel, (unsigned)blocks, WARPS * 32, 0, s)(S, p_act, dt, rows, T, ld, scale);
    return cudaGetLastError();
}

/* One warp per row: g <- p * (g - <p, g>) * scale, p read exactly from its act dtype */
__global__ static void softmax_backward_kernel(const void *P, float *G, void *ds_act, int dt, size_t rows, int T,
                                               int ld, float scale)
{
    const int lane = threadIdx.x & 31;
    const size_t row = (size_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    const size_t p0 = row * ld;
    float *g = G + row * ld;
    float dot = 0;
    for (int j = lane; j < T; j += 32) dot += act_load(P, dt, p0 + j) * g[j];
    dot = warp_sum(dot);
    for (int j = lane; j < T; j += 32) {
        const float v = act_load(P, dt, p0 + j) * (g[j] - dot) * scale;
        g[j] = v;
        if (ds_act) act_store(ds_act, dt, row * ld + j, v);
    }
}

extern "C" cudaError_t cuk_softmax_backward(const void *P, float *g, void *ds_act, ib_precision dt, size_t rows, int T,
                                            int ld, float scale, cudaStream_t s)
{
    const size_t blocks = (rows + WARPS - 1) / WARPS;
    if (blocks > 0x7fffffffu) return cudaErrorInvalidValue;
    CUK_LAUNCH(softmax_backward_kernel, (unsigned)blocks, WARPS * 32, 0, s)(P, g, ds_act, dt, rows, T, ld, scale);
    return cudaGetLastError();
}
