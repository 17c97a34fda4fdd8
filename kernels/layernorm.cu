/* kernels/layernorm: LayerNorm over the last dim (eps 1e-6 as timm's ViT) with the preceding
 * residual add fused in; fp32 statistics, two-pass variance.  Mirrors src/cpu/layernorm.c.
 * Forward and dx: one warp per row (each lane owns columns lane, lane+32, ...).
 * dw, db: one thread per column over a chunk of rows, then a fixed-order sum of the chunks
 * (deterministic, no atomics). */
#include "common.cuh"

#define LN_EPS 1e-6f
#define LN_CHUNKS 256 /* row chunks of the dw/db reduction: enough blocks to fill the GPU */
#define WARPS 8

__global__ static void ln_forward_kernel(const float *x_in, const float *res, float *x_out, const float *w,
                                         const float *b, void *y, int dt, float *mean, float *rstd, int R, int D,
                                         ptrdiff_t x_stride)
{
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= R) return;
    const float *x = x_in + row * x_stride;
    if (res) { /* each lane re-reads only the columns it wrote: no cross-lane ordering needed */
        const float *r = res + row * x_stride;
        float *xo = x_out + row * x_stride;
        for (int d = lane; d < D; d += 32) xo[d] = x[d] + r[d];
        x = xo;
    }
    float s = 0;
    for (int d = lane; d < D; d += 32) s += x[d];
    const float m = warp_sum(s) / D;
    float v = 0;
    for (int d = lane; d < D; d += 32) v += (x[d] - m) * (x[d] - m);
    const float rs = 1.0f / sqrtf(warp_sum(v) / D + LN_EPS);
    for (int d = lane; d < D; d += 32) act_store(y, dt, (size_t)row * D + d, (x[d] - m) * rs * w[d] + b[d]);
    if (lane == 0) mean[row] = m, rstd[row] = rs;
}

extern "C" cudaError_t cuk_layernorm_forward(const float *x_in, const float *res, float *x_out, const float *w,
                                             const float *b, void *y, ib_precision dt, float *mean, float *rstd, int R,
                                             int D, ptrdiff_t x_stride, cudaStream_t s)
{
    const unsigned blocks = (unsigned)((R + WARPS - 1) / WARPS);
    CUK_LAUNCH(ln_forward_kernel, blocks, WARPS * 32, 0, s)(x_in, res, x_out, w, b, y, dt, mean, rstd, R, D, x_stride);
    return cudaGetLastError();
}

/* dx[r] += rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)),  g = dy[r] */
__global__ static void ln_backward_dx_kernel(const float *dy, const float *x, const float *mean, const float *rstd,
                                             const float *w, float *dx, ptrdiff_t dx_stride, int R, int D,
                                             ptrdiff_t x_stride)
{
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= R) return;
    const float *g = dy + (size_t)row * D, *xr = x + row * x_stride;
    float *o = dx + row * dx_stride;
    const float m = mean[row], rs = rstd[row];
    float sg = 0, sgx = 0;
    for (int d = lane; d < D; d += 32) {
        const float xh = (xr[d] - m) * rs, gw = g[d] * w[d];
        sg += gw;
        sgx += gw * xh;
    }
    sg = warp_sum(sg) / D;
    sgx = warp_sum(sgx) / D;
    for (int d = lane; d < D; d += 32) {
        const float xh = (xr[d] - m) * rs;
        o[d] += rs * (g[d] * w[d] - sg - xh * sgx);
    }
}

/* partial[c][0][d] = sum over chunk c's rows of dy*xhat; partial[c][1][d] = of dy.
 * grid (ceil(D/256), chunks) */
__global__ static void ln_backward_dwdb_kernel(const float *dy, const float *x, const float *mean, const float *rstd,
                                               int R, int D, ptrdiff_t x_stride, int rows_per, float *partial)
{
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= D) return;
    const long r0 = (long)blockIdx.y * rows_per, r1 = r0 + rows_per < R ? r0 + rows_per : R;
    float aw = 0, ab = 0;
    for (long r = r0; r < r1; r++) {
        const float g = dy[(size_t)r * D + d];
        aw += g * (x[r * x_stride + d] - mean[r]) * rstd[r];
        ab += g;
    }
    float *p = partial + (size_t)blockIdx.y * 2 * D;
    p[d] = aw;
    p[D + d] = ab;
}

/* out0[j] = sum_c partial[c][0][j], out1[j] = sum_c partial[c][1][j]  (chunks in order) */
__global__ static void chunk_sum_kernel(const float *partial, int chunks, int N, float *out0, float *out1)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    float a = 0, b = 0;
    for (int c = 0; c < chunks; c++) {
        a += partial[(size_t)c * 2 * N + j];
        b += partial[(size_t)c * 2 * N + N + j];
    }
    out0[j] = a;
    out1[j] = b;
}

extern "C" size_t cuk_layernorm_partial_floats(int D) { return (size_t)LN_CHUNKS * 2 * D; }

extern "C" cudaError_t cuk_layernorm_backward(const float *dy, const float *x, const float *mean, const float *rstd,
                                              const float *w, float *dx, ptrdiff_t dx_stride, float *dw, float *db,
                                              int R, int D, ptrdiff_t x_stride, float *partial, cudaStream_t s)
{
    const unsigned blocks = (unsigned)((R + WARPS - 1) / WARPS);
    CUK_LAUNCH(ln_backward_dx_kernel, blocks, WARPS * 32, 0, s)(dy, x, mean, rstd, w, dx, dx_stride, R, D, x_stride);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    const int chunks = R < LN_CHUNKS ? R : LN_CHUNKS, rows_per = (R + chunks - 1) / chunks;
    const dim3 grid((unsigned)((D + 255) / 256), (unsigned)chunks);
    CUK_LAUNCH(ln_backward_dwdb_kernel, grid, 256, 0, s)(dy, x, mean, rstd, R, D, x_stride, rows_per, partial);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    CUK_LAUNCH(chunk_sum_kernel, (unsigned)((D + 255) / 256), 256, 0, s)(partial, chunks, D, dw, db);
    return cudaGetLastError();
}
