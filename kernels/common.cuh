/* kernels/common: what every op family shares: the act-dtype store (fp32, or bf16 round to
 * nearest even as torch's .to(bfloat16)), warp reductions and the 1-D launch geometry. */
#ifndef INSTBENCH_KERNELS_COMMON_CUH
#define INSTBENCH_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/kernels.h"
#include "cuda/layout.h"

/* act[i] = x in dtype dt (IB_PREC_FP32 or IB_PREC_BF16). */
__device__ __forceinline__ void act_store(void *act, int dt, size_t i, float x)
{
    if (dt == IB_PREC_BF16) ((__nv_bfloat16 *)act)[i] = __float2bfloat16_rn(x);
    else ((float *)act)[i] = x;
}

__device__ __forceinline__ float act_load(const void *act, int dt, size_t i)
{
    if (dt == IB_PREC_BF16) return __bfloat162float(((const __nv_bfloat16 *)act)[i]);
    return ((const float *)act)[i];
}

/* The 16-byte forms (i a multiple of 4, the buffer 16-byte aligned): one float4, or four bf16 in
 * one 8-byte access; each element rounded as act_store rounds it. */
union act_bf16x4 {
    __nv_bfloat162 h[2];
    uint2 u;
};

__device__ __forceinline__ void act_store4(void *act, int dt, size_t i, float4 v)
{
    if (dt == IB_PREC_BF16) {
        act_bf16x4 p;
        p.h[0] = __floats2bfloat162_rn(v.x, v.y);
        p.h[1] = __floats2bfloat162_rn(v.z, v.w);
        *(uint2 *)((__nv_bfloat16 *)act + i) = p.u;
    } else *(float4 *)((float *)act + i) = v;
}

__device__ __forceinline__ float4 act_load4(const void *act, int dt, size_t i)
{
    if (dt == IB_PREC_BF16) {
        act_bf16x4 p;
        p.u = *(const uint2 *)((const __nv_bfloat16 *)act + i);
        const float2 lo = __bfloat1622float2(p.h[0]), hi = __bfloat1622float2(p.h[1]);
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    return *(const float4 *)((const float *)act + i);
}

/* Eight bf16 in one 16-byte access (i a multiple of 8, the buffer 16-byte aligned), as floats;
 * each element rounded as act_store rounds it.  The bf16 paths of the streaming kernels: four bf16
 * a thread (act_load4's 8 bytes) ran GELU's forward at 2.3 TB/s on the H200, where PyTorch's
 * kernel, eight a thread, ran at 3.0 (docs/gpu-runs/2026-11-30-h200, the kernel traces). */
union act_bf16x8 {
    __nv_bfloat162 h[4];
    uint4 u;
};

__device__ __forceinline__ void bf16x8_unpack(uint4 u, float v[8])
{
    act_bf16x8 p;
    p.u = u;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 f = __bfloat1622float2(p.h[k]);
        v[2 * k] = f.x, v[2 * k + 1] = f.y;
    }
}

__device__ __forceinline__ uint4 bf16x8_load(const void *act, size_t i)
{
    return *(const uint4 *)((const __nv_bfloat16 *)act + i);
}

__device__ __forceinline__ void bf16x8_store(void *act, size_t i, const float v[8])
{
    act_bf16x8 p;
#pragma unroll
    for (int k = 0; k < 4; k++) p.h[k] = __floats2bfloat162_rn(v[2 * k], v[2 * k + 1]);
    *(uint4 *)((__nv_bfloat16 *)act + i) = p.u;
}

/* whether every pointer given is 16-byte aligned (the float4 paths' condition, with sizes and
 * strides multiples of 4 elements) */
static inline bool aligned16(const void *a, const void *b = 0, const void *c = 0, const void *d = 0)
{
    return (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)d) & 15) == 0;
}

/* exact GELU, 0.5 x (1 + erf(x / sqrt 2)) (nn.GELU(), timm's default), and its derivative
 * Phi(x) + x phi(x); as src/cpu/gelu.c */
__device__ __forceinline__ float gelu_f(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float gelu_grad(float x)
{
    return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) + x * expf(-0.5f * x * x) * 0.39894228040143268f;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Grid-stride elementwise launches: enough blocks to fill any current GPU, capped so the grid
 * dimension stays far below its limit (the loops stride over the rest). */
static inline unsigned cuk_blocks(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    if (b > 65535u * 8u) b = 65535u * 8u;
    return b ? (unsigned)b : 1u;
}

/* Every launch: CUK_LAUNCH(kernel, grid, block, smem, stream)(args...).  Under nvcc the launch
 * syntax itself; the CPU test build (tests/fakes/cudasim) defines it first to run the kernel there. */
#ifndef CUK_LAUNCH
#define CUK_LAUNCH(kernel, grid, block, smem, stream) kernel<<<grid, block, smem, stream>>>
#endif

#define CUK_GRID_STRIDE(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

#endif
