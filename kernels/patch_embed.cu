/* kernels/patch_embed: the 16x16 stride-16 conv as patchify + GEMM (the GEMM is cuBLASLt), and
 * the token assembly around it: class token first, then the patches, plus the position embedding.
 * Mirrors src/cpu/patch_embed.c. */
#include "common.cuh"

/* One thread per patch element: patches[bn, (c*P + ky)*P + kx] = images[b, c, gy*P+ky, gx*P+kx]. */
__global__ static void patchify_kernel(const float *images, int B, int C, int S, int P, void *patches, int dt)
{
    const size_t n = (size_t)B * (S / P) * (S / P) * C * P * P;
    CUK_GRID_STRIDE(i, n) act_store(patches, dt, i, images[cuk_patch_src(i, C, S, P)]);
}

extern "C" cudaError_t cuk_patchify(const float *images, int B, int C, int S, int P, void *patches, ib_precision dt,
                                    cudaStream_t s)
{
    const size_t n = (size_t)B * (S / P) * (S / P) * C * P * P;
    CUK_LAUNCH(patchify_kernel, cuk_blocks(n, 256), 256, 0, s)(images, B, C, S, P, patches, dt);
    return cudaGetLastError();
}

/* x[b,t,d] = (t == 0 ? cls[d] : pe[b, t-1, d]) + pos[t, d] */
__global__ static void tokens_forward_kernel(const float *pe, const float *cls, const float *pos, float *x, int B,
                                             int T, int D)
{
    const size_t n = (size_t)B * T * D;
    CUK_GRID_STRIDE(i, n)
    {
        const size_t bt = i / D;
        const int d = (int)(i % D), b = (int)(bt / T), t = (int)(bt % T);
        const float src = t == 0 ? cls[d] : pe[((size_t)b * (T - 1) + t - 1) * D + d];
        x[i] = src + pos[(size_t)t * D + d];
    }
}

extern "C" cudaError_t cuk_tokens_forward(const float *pe, const float *cls, const float *pos, float *x, int B, int T,
                                          int D, cudaStream_t s)
{
    const size_t n = (size_t)B * T * D;
    CUK_LAUNCH(tokens_forward_kernel, cuk_blocks(n, 256), 256, 0, s)(pe, cls, pos, x, B, T, D);
    return cudaGetLastError();
}

/* One thread per (t, d): the batch sum in b order (as the CPU), and the patch rows copied out. */
__global__ static void tokens_backward_kernel(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T,
                                              int D)
{
    const size_t n = (size_t)T * D;
    CUK_GRID_STRIDE(i, n)
    {
        const int t = (int)(i / D), d = (int)(i % D);
        float acc = 0;
        for (int b = 0; b < B; b++) {
            const float g = dx[((size_t)b * T + t) * D + d];
            acc += g;
            if (t > 0) dpe[((size_t)b * (T - 1) + t - 1) * D + d] = g;
        }
        dpos[i] = acc;
        if (t == 0) dcls[d] = acc;
    }
}

extern "C" cudaError_t cuk_tokens_backward(const float *dx, float *dcls, float *dpos, float *dpe, int B, int T, int D,
                                           cudaStream_t s)
{
    const size_t n = (size_t)T * D;
    CUK_LAUNCH(tokens_backward_kernel, cuk_blocks(n, 256), 256, 0, s)(dx, dcls, dpos, dpe, B, T, D);
    return cudaGetLastError();
}
