/* kernels/layernorm: LayerNorm over the last dim (eps 1e-6 as timm's ViT) with the preceding
 * residual add fused in; fp32 statistics, two-pass variance.  Mirrors src/cpu/layernorm.c.
 * Forward: one warp per row.  Backward: one pass over dy, x and dx that also forms dw, db and,
 * when asked, finishes the gradient of the Linear whose output dx is (its act copy and bias column
 * sums), as the CPU backend does: each block owns a chunk of rows, its warps stride over them,
 * and the column sums are reduced in a fixed order (per block, then over the chunks: deterministic,
 * no atomics).
 * The residual added in forward (the Linear's output before the norm) is in the act dtype, as the
 * dy of the backward (the Linear after it's dgrad) may be: both read and widened to fp32 exactly.
 * The float4 paths (a lane owns columns 4*lane + 128*j, the row in registers) take D a multiple of
 * 4 up to 128 * LN_MAX_NV and 16-byte aligned rows; other shapes take the scalar kernels. */
#include "common.cuh"

#define LN_EPS 1e-6f
#define LN_CHUNKS 256 /* row chunks of the dw/db reduction: enough blocks to fill the GPU */
#define WARPS 8
#define LN_MAX_NV 8 /* float4 per lane: D <= 1024 on the vector paths (ViT-L's 1024 included) */

__global__ static void ln_forward_kernel(const float *x_in, const void *res, float *x_out, const float *w,
                                         const float *b, void *y, int dt, float *mean, float *rstd, int R, int D,
                                         ptrdiff_t x_stride)
{
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= R) return;
    const float *x = x_in + row * x_stride;
    if (res) { /* each lane re-reads only the columns it wrote: no cross-lane ordering needed */
        float *xo = x_out + row * x_stride;
        for (int d = lane; d < D; d += 32) xo[d] = x[d] + act_load(res, dt, (size_t)(row * x_stride + d));
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

/* The same with each lane's NV float4 of the row held in registers (x read once). */
template <int NV>
__global__ static void ln_forward_vec_kernel(const float *x_in, const void *res, float *x_out, const float *w,
                                             const float *b, void *y, int dt, float *mean, float *rstd, int R, int D,
                                             ptrdiff_t x_stride)
{
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= R) return;
    float4 v[NV];
    float s = 0;
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int d = (j * 32 + lane) * 4;
        if (d >= D) continue;
        v[j] = *(const float4 *)(x_in + row * x_stride + d);
        if (res) {
            const float4 r = act_load4(res, dt, (size_t)(row * x_stride + d));
            v[j] = make_float4(v[j].x + r.x, v[j].y + r.y, v[j].z + r.z, v[j].w + r.w);
            *(float4 *)(x_out + row * x_stride + d) = v[j];
        }
        s += v[j].x + v[j].y + v[j].z + v[j].w;
    }
    const float m = warp_sum(s) / D;
    float q = 0;
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int d = (j * 32 + lane) * 4;
        if (d >= D) continue;
        const float a = v[j].x - m, bb = v[j].y - m, c = v[j].z - m, e = v[j].w - m;
        q += a * a + bb * bb + c * c + e * e;
    }
    const float rs = 1.0f / sqrtf(warp_sum(q) / D + LN_EPS);
#pragma unroll
    for (int j = 0; j < NV; j++) {
        const int d = (j * 32 + lane) * 4;
        if (d >= D) continue;
        const float4 o = make_float4((v[j].x - m) * rs * w[d] + b[d], (v[j].y - m) * rs * w[d + 1] + b[d + 1],
                                     (v[j].z - m) * rs * w[d + 2] + b[d + 2], (v[j].w - m) * rs * w[d + 3] + b[d + 3]);
        act_store4(y, dt, (size_t)row * D + d, o);
    }
    if (lane == 0) mean[row] = m, rstd[row] = rs;
}

/* NV for a row of D floats on the float4 paths, or 0 where they do not apply */
static int ln_vec_nv(int D, ptrdiff_t stride_a, ptrdiff_t stride_b)
{
    if (D % 4 || D > 128 * LN_MAX_NV || stride_a % 4 || stride_b % 4) return 0;
    return (D + 127) / 128;
}

/* FN<NV>(ARGS) for NV in 1..LN_MAX_NV */
#define LN_NV_SWITCH(nv, fn, ...)               \
    switch (nv) {                               \
    case 1: fn<1>(__VA_ARGS__); break;          \
    case 2: fn<2>(__VA_ARGS__); break;          \
    case 3: fn<3>(__VA_ARGS__); break;          \
    case 4: fn<4>(__VA_ARGS__); break;          \
    case 5: fn<5>(__VA_ARGS__); break;          \
    case 6: fn<6>(__VA_ARGS__); break;          \
    case 7: fn<7>(__VA_ARGS__); break;          \
    default: fn<LN_MAX_NV>(__VA_ARGS__); break; \
    }

template <int NV>
static void ln_forward_vec(unsigned blocks, cudaStream_t s, const float *x_in, const void *res, float *x_out,
                           const float *w, const float *b, void *y, int dt, float *mean, float *rstd, int R, int D,
                           ptrdiff_t x_stride)
{
    CUK_LAUNCH(ln_forward_vec_kernel<NV>, blocks, WARPS * 32, 0, s)
    (x_in, res, x_out, w, b, y, dt, mean, rstd, R, D, x_stride);
}

extern "C" cudaError_t cuk_layernorm_forward(const float *x_in, const void *res, float *x_out, const float *w,
                                             const float *b, void *y, ib_precision dt, float *mean, float *rstd, int R,
                                             int D, ptrdiff_t x_stride, cudaStream_t s)
{
    const unsigned blocks = (unsigned)((R + WARPS - 1) / WARPS);
    const int nv = aligned16(x_in, res, x_out, y) ? ln_vec_nv(D, x_stride, D) : 0;
    if (nv) {
        LN_NV_SWITCH(nv, ln_forward_vec, blocks, s, x_in, res, x_out, w, b, y, dt, mean, rstd, R, D, x_stride);
    } else {
        CUK_LAUNCH(ln_forward_kernel, blocks, WARPS * 32, 0, s)
        (x_in, res, x_out, w, b, y, dt, mean, rstd, R, D, x_stride);
    }
    return cudaGetLastError();
}

/* dx[r] += rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)),  g = dy[r] (dtype gdt) */
__global__ static void ln_backward_dx_kernel(const void *dy, int gdt, const float *x, const float *mean,
                                             const float *rstd, const float *w, float *dx, ptrdiff_t dx_stride, int R,
                                             int D, ptrdiff_t x_stride)
{
    const int lane = threadIdx.x & 31;
    const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= R) return;
    const float *xr = x + row * x_stride;
    const size_t g0 = (size_t)row * D;
    float *o = dx + row * dx_stride;
    const float m = mean[row], rs = rstd[row];
    float sg = 0, sgx = 0;
    for (int d = lane; d < D; d += 32) {
        const float xh = (xr[d] - m) * rs, gw = act_load(dy, gdt, g0 + d) * w[d];
        sg += gw;
        sgx += gw * xh;
    }
    sg = warp_sum(sg) / D;
    sgx = warp_sum(sgx) / D;
    for (int d = lane; d < D; d += 32) {
        const float xh = (xr[d] - m) * rs;
        o[d] += rs * (act_load(dy, gdt, g0 + d) * w[d] - sg - xh * sgx);
    }
}

/* partial[c][0][d] = sum over chunk c's rows of dy*xhat; partial[c][1][d] = of dy.
 * grid (ceil(D/256), chunks) */
__global__ static void ln_backward_dwdb_kernel(const void *dy, int gdt, const float *x, const float *mean,
                                               const float *rstd, int R, int D, ptrdiff_t x_stride, int rows_per,
                                               float *partial)
{
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= D) return;
    const long r0 = (long)blockIdx.y * rows_per, r1 = r0 + rows_per < R ? r0 + rows_per : R;
    float aw = 0, ab = 0;
    for (long r = r0; r < r1; r++) {
        const float g = act_load(dy, gdt, (size_t)r * D + d);
        aw += g * (x[r * x_stride + d] - mean[r]) * rstd[r];
        ab += g;
    }
    float *p = partial + (size_t)blockIdx.y * 2 * D;
    p[d] = aw;
    p[D + d] = ab;
}

/* The float4 backward: block c owns rows [c*rows_per, ...), its warps stride over them.  Per row
 * (g = dy[r], xhat = (x - mean) * rstd): dx[r] += rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat));
 * the lane's column sums of g*xhat (dw), g (db) and, with want_next, of the new dx (the bias
 * gradient of the Linear whose output dx is) stay in registers; if next_act, the new dx row is
 * also stored in dtype dt (that Linear's dy as its GEMMs read it).  Then the warps' sums are
 * added in warp order through shared memory into partial[c][a][D] (a: dw, db, next). */
template <int NV>
__global__ static void __launch_bounds__(WARPS * 32)
    ln_backward_vec_kernel(const void *dy, int gdt, const float *x, const float *mean, const float *rstd,
                           const float *w, float *dx, ptrdiff_t dx_stride, int R, int D, ptrdiff_t x_stride,
                           int rows_per, void *next_act, int dt, int want_next, float *partial)
{
    __shared__ float red[WARPS * NV * 128];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long r0 = (long)blockIdx.x * rows_per, r1 = r0 + rows_per < R ? r0 + rows_per : R;
    float4 adw[NV], adb[NV], anx[NV];
#pragma unroll
    for (int j = 0; j < NV; j++) adw[j] = adb[j] = anx[j] = make_float4(0, 0, 0, 0);
    for (long row = r0 + warp; row < r1; row += WARPS) {
        const float m = mean[row], rs = rstd[row];
        float4 g[NV], xh[NV], o[NV];
        float sg = 0, sgx = 0;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            const int d = (j * 32 + lane) * 4;
            if (d >= D) continue;
            g[j] = act_load4(dy, gdt, (size_t)row * D + d);
            const float4 xv = *(const float4 *)(x + row * x_stride + d);
            o[j] = *(const float4 *)(dx + row * dx_stride + d);
            xh[j] = make_float4((xv.x - m) * rs, (xv.y - m) * rs, (xv.z - m) * rs, (xv.w - m) * rs);
            const float gw0 = g[j].x * w[d], gw1 = g[j].y * w[d + 1], gw2 = g[j].z * w[d + 2], gw3 = g[j].w * w[d + 3];
            sg += gw0 + gw1 + gw2 + gw3;
            sgx += gw0 * xh[j].x + gw1 * xh[j].y + gw2 * xh[j].z + gw3 * xh[j].w;
        }
        sg = warp_sum(sg) / D;
        sgx = warp_sum(sgx) / D;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            const int d = (j * 32 + lane) * 4;
            if (d >= D) continue;
            o[j].x += rs * (g[j].x * w[d] - sg - xh[j].x * sgx);
            o[j].y += rs * (g[j].y * w[d + 1] - sg - xh[j].y * sgx);
            o[j].z += rs * (g[j].z * w[d + 2] - sg - xh[j].z * sgx);
            o[j].w += rs * (g[j].w * w[d + 3] - sg - xh[j].w * sgx);
            *(float4 *)(dx + row * dx_stride + d) = o[j];
            adw[j].x += g[j].x * xh[j].x, adw[j].y += g[j].y * xh[j].y;
            adw[j].z += g[j].z * xh[j].z, adw[j].w += g[j].w * xh[j].w;
            adb[j].x += g[j].x, adb[j].y += g[j].y, adb[j].z += g[j].z, adb[j].w += g[j].w;
            if (want_next) anx[j].x += o[j].x, anx[j].y += o[j].y, anx[j].z += o[j].z, anx[j].w += o[j].w;
            if (next_act) act_store4(next_act, dt, (size_t)row * D + d, o[j]);
        }
    }
    const int nacc = want_next ? 3 : 2;
    for (int a = 0; a < nacc; a++) {
#pragma unroll
        for (int j = 0; j < NV; j++) {
            const int d = (j * 32 + lane) * 4;
            if (d < D) *(float4 *)(red + warp * NV * 128 + d) = a == 0 ? adw[j] : a == 1 ? adb[j] : anx[j];
        }
        __syncthreads();
        for (int d = threadIdx.x; d < D; d += WARPS * 32) {
            float t = 0;
            for (int k = 0; k < WARPS; k++) t += red[k * NV * 128 + d];
            partial[((size_t)blockIdx.x * nacc + a) * D + d] = t;
        }
        __syncthreads();
    }
}

template <int NV>
static void ln_backward_vec(unsigned chunks, cudaStream_t s, const void *dy, int gdt, const float *x, const float *mean,
                            const float *rstd, const float *w, float *dx, ptrdiff_t dx_stride, int R, int D,
                            ptrdiff_t x_stride, int rows_per, void *next_act, int dt, int want_next, float *partial)
{
    CUK_LAUNCH(ln_backward_vec_kernel<NV>, chunks, WARPS * 32, 0, s)
    (dy, gdt, x, mean, rstd, w, dx, dx_stride, R, D, x_stride, rows_per, next_act, dt, want_next, partial);
}

/* out_a[j] = sum_c partial[c][a][j] for a < nacc (chunks in order; out2 only with nacc 3) */
__global__ static void chunk_sum_kernel(const float *partial, int chunks, int nacc, int N, float *out0, float *out1,
                                        float *out2)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    float a = 0, b = 0, c = 0;
    for (int k = 0; k < chunks; k++) {
        const float *p = partial + (size_t)k * nacc * N;
        a += p[j];
        b += p[N + j];
        if (nacc == 3) c += p[2 * N + j];
    }
    out0[j] = a;
    out1[j] = b;
    if (nacc == 3) out2[j] = c;
}

extern "C" size_t cuk_layernorm_partial_floats(int D)
{
    const size_t c = cuk_colsum_partial_floats(D);
    return (size_t)LN_CHUNKS * 3 * D > c ? (size_t)LN_CHUNKS * 3 * D : c;
}

extern "C" cudaError_t cuk_layernorm_backward(const void *dy, ib_precision dy_dt, const float *x, const float *mean,
                                              const float *rstd, const float *w, float *dx, ptrdiff_t dx_stride,
                                              float *dw, float *db, int R, int D, ptrdiff_t x_stride, void *next_act,
                                              ib_precision dt, float *next_db, float *partial, cudaStream_t s)
{
    if ((next_act || next_db) && dx_stride != D) return cudaErrorInvalidValue; /* the Linear's dy is dense */
    const int chunks = R < LN_CHUNKS ? R : LN_CHUNKS, rows_per = (R + chunks - 1) / chunks;
    const int nv = aligned16(dy, x, dx, next_act) ? ln_vec_nv(D, x_stride, dx_stride) : 0;
    cudaError_t e;
    if (nv) {
        LN_NV_SWITCH(nv, ln_backward_vec, (unsigned)chunks, s, dy, (int)dy_dt, x, mean, rstd, w, dx, dx_stride, R, D,
                     x_stride, rows_per, next_act, (int)dt, next_db != NULL, partial);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        const int nacc = next_db ? 3 : 2;
        CUK_LAUNCH(chunk_sum_kernel, (unsigned)((D + 255) / 256), 256, 0, s)(partial, chunks, nacc, D, dw, db, next_db);
        return cudaGetLastError();
    }
    const unsigned blocks = (unsigned)((R + WARPS - 1) / WARPS);
    CUK_LAUNCH(ln_backward_dx_kernel, blocks, WARPS * 32, 0, s)
    (dy, (int)dy_dt, x, mean, rstd, w, dx, dx_stride, R, D, x_stride);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    const dim3 grid((unsigned)((D + 255) / 256), (unsigned)chunks);
    CUK_LAUNCH(ln_backward_dwdb_kernel, grid, 256, 0, s)
    (dy, (int)dy_dt, x, mean, rstd, R, D, x_stride, rows_per, partial);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    CUK_LAUNCH(chunk_sum_kernel, (unsigned)((D + 255) / 256), 256, 0, s)(partial, chunks, 2, D, dw, db, nullptr);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    /* the next Linear's bias gradient and act copy from the finished dx, in a pass of their own */
    if (next_db) return cuk_bias_backward(dx, next_db, next_act, dt, R, D, partial, s);
    return next_act ? cuk_store_act(next_act, dt, dx, (size_t)R * D, s) : cudaSuccess;
}
