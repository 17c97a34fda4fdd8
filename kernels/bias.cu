/* kernels/bias: a Linear layer's bias gradient (column sums of dy) fused with the cast of dy to
 * the GEMM input dtype, so dy is read once for both; for fc1 also with GELU's backward (dy =
 * incoming gradient * GELU'(h)), so the fp32 dh is never stored.  Mirrors src/cpu/bias.c.  One
 * thread per column over a chunk of rows (coalesced across the warp), then a fixed-order sum of
 * the chunks. */
#include "common.cuh"

#define COLSUM_CHUNKS 256 /* row chunks: enough blocks to keep every SM streaming */

/* partial[c][j] = sum of g[r, j] over chunk c's rows, g = dy (dtype dy_dt; * GELU'(gelu_in) if
 * given), also stored to act (dtype dt; may be dy itself in fp32);  grid (ceil(N/256), chunks) */
__global__ static void colsum_kernel(const void *dy, int dy_dt, const float *gelu_in, void *act, int dt, int M, int N,
                                     int rows_per, float *partial)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    const long r0 = (long)blockIdx.y * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
    float acc = 0;
    for (long r = r0; r < r1; r++) {
        const size_t i = (size_t)r * N + j;
        const float d = act_load(dy, dy_dt, i);
        const float g = gelu_in ? d * gelu_grad(gelu_in[i]) : d;
        acc += g;
        if (act) act_store(act, dt, i, g);
    }
    partial[(size_t)blockIdx.y * N + j] = acc;
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

static cudaError_t colsum(const void *dy, ib_precision dy_dt, const float *gelu_in, float *db, void *act,
                          ib_precision dt, int M, int N, float *partial, cudaStream_t s)
{
    const int chunks = M < COLSUM_CHUNKS ? M : COLSUM_CHUNKS, rows_per = (M + chunks - 1) / chunks;
    const dim3 grid((unsigned)((N + 255) / 256), (unsigned)chunks);
    CUK_LAUNCH(colsum_kernel, grid, 256, 0, s)(dy, dy_dt, gelu_in, act, dt, M, N, rows_per, partial);
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

extern "C" cudaError_t cuk_gelu_bias_backward(const float *h, const float *g, float *db, void *dh, ib_precision dt,
                                              int M, int F, float *partial, cudaStream_t s)
{
    return colsum(g, IB_PREC_FP32, h, db, dh, dt, M, F, partial, s);
}

/* C [M,N] (row stride ldc) += bias [N]: the epilogue of the cuBLAS fallback GEMM in src/cuda/gemm.c. */
__global__ static void add_bias_kernel(float *C, const float *bias, int M, int N, int ldc)
{
    const size_t n = (size_t)M * N;
    CUK_GRID_STRIDE(i, n)
    {
        const size_t r = i / N;
        const int j = (int)(i % N);
        C[r * ldc + j] += bias[j];
    }
}

extern "C" cudaError_t cuk_add_bias(float *C, const float *bias, int M, int N, int ldc, cudaStream_t s)
{
    const size_t n = (size_t)M * N;
    if (n == 0) return cudaSuccess;
    CUK_LAUNCH(add_bias_kernel, cuk_blocks(n, 256), 256, 0, s)(C, bias, M, N, ldc);
    return cudaGetLastError();
}
