/* kernels/gelu: exact GELU (common.cuh's gelu_f) on fc1's output.  The bias is added by the fc1
 * GEMM's epilogue, as on the CPU (the same fp32 sum, so the same h); the backward, GELU' times the
 * incoming gradient, is fused with fc1's bias gradient in bias.cu (cuk_gelu_bias_backward). */
#include "common.cuh"

__global__ static void gelu_forward_kernel(const float *h, void *a, int dt, size_t n)
{
    CUK_GRID_STRIDE(i, n) act_store(a, dt, i, gelu_f(h[i]));
}

/* n4 float4 of h (16-byte accesses: n a multiple of 4, both buffers aligned) */
__global__ static void gelu_forward_vec_kernel(const float *h, void *a, int dt, size_t n4)
{
    CUK_GRID_STRIDE(i, n4)
    {
        const float4 x = ((const float4 *)h)[i];
        act_store4(a, dt, 4 * i, make_float4(gelu_f(x.x), gelu_f(x.y), gelu_f(x.z), gelu_f(x.w)));
    }
}

extern "C" cudaError_t cuk_gelu_forward(const float *h, void *a, ib_precision dt, size_t n, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    if (n % 4 == 0 && aligned16(h, a))
        CUK_LAUNCH(gelu_forward_vec_kernel, cuk_blocks(n / 4, 256), 256, 0, s)(h, a, dt, n / 4);
    else CUK_LAUNCH(gelu_forward_kernel, cuk_blocks(n, 256), 256, 0, s)(h, a, dt, n);
    return cudaGetLastError();
}
