/* kernels/bias: a Linear layer's bias gradient (column sums of dy) fused with the cast of dy to
 * the GEMM input dtype, so dy is read once for both; for fc1 also with GELU's backward (dy =
 * incoming gradient * GELU'(h), in place in the act dtype).  Mirrors src/cpu/bias.c.  One
 * thread per column (four adjacent columns, or eight in bf16, with 16-byte accesses where N and
 * the buffers allow) over a chunk of rows (coalesced across the warp), then a fixed-order sum of
 * the chunks. */
#include "common.cuh"

#define COLSUM_CHUNKS 256 /* row chunks: enough blocks to keep every SM streaming */

/* partial[c][j] = sum of g[r, j] over chunk c's rows, g = dy (dtype dy_dt; * GELU'(gelu_in) if
 * given, gelu_in in dtype dy_dt too), also stored to act (dtype dt; may be dy itself, in place);
 * grid (ceil(N/256), chunks) */
__global__ static void colsum_kernel(const void *dy, int dy_dt, const void *gelu_in, void *act, int dt, int M, int N,
                                     int rows_per, float *partial)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    const long r0 = (long)blockIdx.y * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
    float acc = 0;
    for (long r = r0; r < r1; r++) {
        const size_t i = (size_t)r * N + j;
        const float d = act_load(dy, dy_dt, i);
        const float g = gelu_in ? d * gelu_grad(act_load(gelu_in, dy_dt, i)) : d;
        acc += g;
        if (act) act_store(act, dt, i, g);
    }
    partial[(size_t)blockIdx.y * N + j] = acc;
}

/* The same with four adjacent columns a thread (16-byte loads and stores; N a multiple of 4, every
 * buffer 16-byte aligned); grid (ceil(N/(4*COLSUM_VEC_THREADS)), chunks).  The rows are taken
 * COLSUM_VEC_UNROLL at a time, every load of the group issued before the first store: act may
 * alias dy (GELU's backward works in place), so the compiler would otherwise keep each row's loads behind the
 * previous row's store, one row in flight per thread.  The sum still runs row by row. */
#define COLSUM_VEC_THREADS 64 /* 256 columns a block: ViT's 768, 2304 and 3072 split evenly */
#define COLSUM_VEC_UNROLL 4
__global__ static void colsum_vec_kernel(const void *dy, int dy_dt, const void *gelu_in, void *act, int dt, int M,
                                         int N, int rows_per, float *partial)
{
    const int j = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (j >= N) return;
    const long r0 = (long)blockIdx.y * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
    float4 acc = make_float4(0, 0, 0, 0);
    for (long r = r0; r < r1; r += COLSUM_VEC_UNROLL) {
        const int n = r1 - r < COLSUM_VEC_UNROLL ? (int)(r1 - r) : COLSUM_VEC_UNROLL;
        float4 g[COLSUM_VEC_UNROLL], h[COLSUM_VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < COLSUM_VEC_UNROLL; u++) {
            if (u >= n) break;
            const size_t i = (size_t)(r + u) * N + j;
            g[u] = act_load4(dy, dy_dt, i);
            if (gelu_in) h[u] = act_load4(gelu_in, dy_dt, i);
        }
#pragma unroll
        for (int u = 0; u < COLSUM_VEC_UNROLL; u++) {
            if (u >= n) break;
            if (gelu_in)
                g[u] = make_float4(g[u].x * gelu_grad(h[u].x), g[u].y * gelu_grad(h[u].y), g[u].z * gelu_grad(h[u].z),
                                   g[u].w * gelu_grad(h[u].w));
            acc.x += g[u].x, acc.y += g[u].y, acc.z += g[u].z, acc.w += g[u].w;
            if (act) act_store4(act, dt, (size_t)(r + u) * N + j, g[u]);
        }
    }
    *(float4 *)(partial + (size_t)blockIdx.y * N + j) = acc;
}

/* The same, all in bf16 (dy, gelu_in and act when given), with eight adjacent columns a thread in
 * one 16-byte access (N a multiple of 8, every buffer 16-byte aligned): the step's case, fc1's
 * GELU backward and the qkv bias gradient.  A warp covers 256 columns, as colsum_vec_kernel's
 * block does, and threadIdx.y picks one of the block's COLSUM_X8_CHUNKS row chunks, so the sums
 * are the same, in the same order; grid (ceil(N/256), ceil(chunks/COLSUM_X8_CHUNKS)). */
#define COLSUM_X8_LANES 32
#define COLSUM_X8_CHUNKS 2
__global__ static void colsum_bf16x8_kernel(const void *dy, const void *gelu_in, void *act, int M, int N, int rows_per,
                                            int chunks, float *partial)
{
    const int j = (blockIdx.x * blockDim.x + threadIdx.x) * 8, c = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= N || c >= chunks) return;
    const long r0 = (long)c * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (long r = r0; r < r1; r += COLSUM_VEC_UNROLL) {
        const int n = r1 - r < COLSUM_VEC_UNROLL ? (int)(r1 - r) : COLSUM_VEC_UNROLL;
        uint4 g[COLSUM_VEC_UNROLL], h[COLSUM_VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < COLSUM_VEC_UNROLL; u++) {
            if (u >= n) break;
            g[u] = bf16x8_load(dy, (size_t)(r + u) * N + j);
            if (gelu_in) h[u] = bf16x8_load(gelu_in, (size_t)(r + u) * N + j);
        }
#pragma unroll
        for (int u = 0; u < COLSUM_VEC_UNROLL; u++) {
            if (u >= n) break;
            float x[8];
            bf16x8_unpack(g[u], x);
            if (gelu_in) {
                float y[8];
                bf16x8_unpack(h[u], y);
#pragma unroll
                for (int k = 0; k < 8; k++) x[k] = x[k] * gelu_grad(y[k]);
            }
#pragma unroll
            for (int k = 0; k < 8; k++) acc[k] += x[k];
            if (act) bf16x8_store(act, (size_t)(r + u) * N + j, x);
        }
    }
    float *out = partial + (size_t)c * N + j;
    *(float4 *)out = make_float4(acc[0], acc[1], acc[2], acc[3]);
    *(float4 *)(out + 4) = make_float4(acc[4], acc[5], acc[6], acc[7]);
}

__global__ static void colsum_finish_kernel(const float *partial, int chunks, int N, float *db)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    float s = 0;
    for (int c = 0; c < chunks; c++) s += partial[(size_t)c * N + j];
    db[j] = s;
}

extern "C" size_t cuk_colsum_partial_floats(int N) { return (size_t)COLSUM_CHUNKS * N; }

static cudaError_t colsum(const void *dy, ib_precision dy_dt, const void *gelu_in, float *db, void *act,
                          ib_precision dt, int M, int N, float *partial, cudaStream_t s)
{
    const int chunks = M < COLSUM_CHUNKS ? M : COLSUM_CHUNKS, rows_per = (M + chunks - 1) / chunks;
    if (dy_dt == IB_PREC_BF16 && (!act || dt == IB_PREC_BF16) && N % 8 == 0 && aligned16(dy, gelu_in, act, partial)) {
        const dim3 grid((unsigned)((N + 8 * COLSUM_X8_LANES - 1) / (8 * COLSUM_X8_LANES)),
                        (unsigned)((chunks + COLSUM_X8_CHUNKS - 1) / COLSUM_X8_CHUNKS));
        CUK_LAUNCH(colsum_bf16x8_kernel, grid, dim3(COLSUM_X8_LANES, COLSUM_X8_CHUNKS), 0, s)
        (dy, gelu_in, act, M, N, rows_per, chunks, partial);
    } else if (N % 4 == 0 && aligned16(dy, gelu_in, act, partial)) {
        const dim3 grid((unsigned)((N + 4 * COLSUM_VEC_THREADS - 1) / (4 * COLSUM_VEC_THREADS)), (unsigned)chunks);
        CUK_LAUNCH(colsum_vec_kernel, grid, COLSUM_VEC_THREADS, 0, s)
        (dy, dy_dt, gelu_in, act, dt, M, N, rows_per, partial);
    } else {
        const dim3 grid((unsigned)((N + 255) / 256), (unsigned)chunks);
        CUK_LAUNCH(colsum_kernel, grid, 256, 0, s)(dy, dy_dt, gelu_in, act, dt, M, N, rows_per, partial);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    CUK_LAUNCH(colsum_finish_kernel, (unsigned)((N + 255) / 256), 256, 0, s)(partial, chunks, N, db);
    return cudaGetLastError();
}

extern "C" cudaError_t cuk_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N,
                                         float *partial, cudaStream_t s)
{
    return colsum(dy, IB_PREC_FP32, NULL, db, dy_act, dt, M, N, partial, s);
}

extern "C" cudaError_t cuk_bias_backward_act(const void *dy, ib_precision dy_dt, float *db, int M, int N,
                                             float *partial, cudaStream_t s)
{
    return colsum(dy, dy_dt, NULL, db, NULL, IB_PREC_FP32, M, N, partial, s);
}

extern "C" cudaError_t cuk_gelu_bias_backward(const void *h, void *g, float *db, ib_precision dt, int M, int F,
                                              float *partial, cudaStream_t s)
{
    return colsum(g, dt, h, db, g, dt, M, F, partial, s);
}

/* C [M,N] (row stride ldc) = bias [N] in every row, C and bias in dtype dt: what the GEMMs of
 * src/cuda/gemm.c accumulate onto (beta 1) when cuBLASLt's bias epilogue cannot run. */
__global__ static void fill_bias_kernel(void *C, int dt, const void *bias, int M, int N, int ldc)
{
    const size_t n = (size_t)M * N;
    CUK_GRID_STRIDE(i, n)
    {
        const size_t r = i / N;
        const int j = (int)(i % N);
        act_store(C, dt, r * ldc + j, act_load(bias, dt, j));
    }
}

extern "C" cudaError_t cuk_fill_bias(void *C, ib_precision dt, const void *bias, int M, int N, int ldc, cudaStream_t s)
{
    const size_t n = (size_t)M * N;
    if (n == 0) return cudaSuccess;
    CUK_LAUNCH(fill_bias_kernel, cuk_blocks(n, 256), 256, 0, s)(C, dt, bias, M, N, ldc);
    return cudaGetLastError();
}
