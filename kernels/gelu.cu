/* kernels/gelu: exact GELU (common.cuh's gelu_f) on fc1's output h, in the act dtype as the fc1
 * GEMM wrote it with its bias (the same sum, rounded once, as on the CPU); computed in fp32.  The
 * backward, GELU' times the incoming gradient, is fused with fc1's bias gradient in bias.cu
 * (cuk_gelu_bias_backward). */
#include "common.cuh"

__global__ static void gelu_forward_kernel(const void *h, void *a, int dt, size_t n)
{
    CUK_GRID_STRIDE(i, n) act_store(a, dt, i, gelu_f(act_load(h, dt, i)));
}

/* n4 groups of 4 elements (16- or 8-byte accesses: n a multiple of 4, both buffers aligned) */
__global__ static void gelu_forward_vec_kernel(const void *h, void *a, int dt, size_t n4)
{
    CUK_GRID_STRIDE(i, n4)
    {
        const float4 x = act_load4(h, dt, 4 * i);
        act_store4(a, dt, 4 * i, make_float4(gelu_f(x.x), gelu_f(x.y), gelu_f(x.z), gelu_f(x.w)));
    }
}

/* bf16 in and out, n8 groups of 8 (one 16-byte access each: n a multiple of 8, both buffers
 * aligned): the step's case, fc1's h [B*T, 4*D] */
__global__ static void gelu_forward_bf16x8_kernel(const void *h, void *a, size_t n8)
{
    CUK_GRID_STRIDE(i, n8)
    {
        float x[8];
        bf16x8_unpack(bf16x8_load(h, 8 * i), x);
#pragma unroll
        for (int k = 0; k < 8; k++) x[k] = gelu_f(x[k]);
        bf16x8_store(a, 8 * i, x);
    }
}

extern "C" cudaError_t cuk_gelu_forward(const void *h, void *a, ib_precision dt, size_t n, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    if (dt == IB_PREC_BF16 && n % 8 == 0 && aligned16(h, a))
        CUK_LAUNCH(gelu_forward_bf16x8_kernel, cuk_blocks(n / 8, 256), 256, 0, s)(h, a, n / 8);
    else if (n % 4 == 0 && aligned16(h, a))
        CUK_LAUNCH(gelu_forward_vec_kernel, cuk_blocks(n / 4, 256), 256, 0, s)(h, a, dt, n / 4);
    else CUK_LAUNCH(gelu_forward_kernel, cuk_blocks(n, 256), 256, 0, s)(h, a, dt, n);
    return cudaGetLastError();
}
