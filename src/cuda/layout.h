/* cuda/layout: the index arithmetic of the CUDA backend's data-movement kernels, shared by the
 * kernels (kernels/patch_embed.cu, attention.cu) and a CPU test that checks it against
 * the CPU backend and plain nested loops (tests/cuda/cuda_layout.c).  Each maps the flat index of an
 * element in one layout to its index in another. */
#ifndef INSTBENCH_CUDA_LAYOUT_H
#define INSTBENCH_CUDA_LAYOUT_H

#include <stddef.h>

#ifdef __CUDACC__
#define CUK_HD __host__ __device__ __forceinline__
#else
#define CUK_HD static inline
#endif

/* Element i of patches [B*N, C*P*P] (columns (c, ky, kx), N = (S/P)^2) -> its pixel in images
 * [B, C, S, S]: patch n of image b covers rows (n / (S/P))*P.. and columns (n % (S/P))*P.. */
CUK_HD size_t cuk_patch_src(size_t i, int C, int S, int P)
{
    const int G = S / P, N = G * G, K = C * P * P;
    const size_t bn = i / K;
    const int col = (int)(i % K);
    const int b = (int)(bn / N), p = (int)(bn % N), gy = p / G, gx = p % G;
    const int c = col / (P * P), ky = (col / P) % P, kx = col % P;
    return (((size_t)b * C + c) * S + (size_t)gy * P + ky) * S + (size_t)gx * P + kx;
}

/* Element i of qkv [B,T,3,H,hd] (the qkv Linear's output, columns (which, h, e)) -> its index in
 * qkvh [3][B,H,T,hd] (q, k, v planes of B*H*T*hd, each head's T x hd matrix contiguous). */
CUK_HD size_t cuk_qkv_split_index(size_t i, int B, int T, int H, int hd)
{
    const int D = H * hd;
    const size_t plane = (size_t)B * H * T * hd, bt = i / (3 * (size_t)D);
    const int r = (int)(i % (3 * (size_t)D)), which = r / D, h = (r % D) / hd, e = r % hd;
    const int b = (int)(bt / T), t = (int)(bt % T);
    return which * plane + (((size_t)b * H + h) * T + t) * hd + e;
}

/* Element i of [B,T,H*hd] (heads merged) -> its index in [B,H,T,hd] (heads split). */
CUK_HD size_t cuk_heads_index(size_t i, int T, int H, int hd)
{
    const int D = H * hd;
    const size_t bt = i / D;
    const int d = (int)(i % D), h = d / hd, e = d % hd, b = (int)(bt / T), t = (int)(bt % T);
    return (((size_t)b * H + h) * T + t) * hd + e;
}

#endif
