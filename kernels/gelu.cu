/* kernels/gelu: exact GELU (common.cuh's gelu_f) on fc1's output.  The bias is added by the fc1
 * GEMM's epilogue, as on the CPU (the same fp32 sum, so the same h); the backward, GELU' times the
 * incoming gradient, is fused with fc1's bias gradient in bias.cu (cuk_gelu_bias_backward). */
#include "common.cuh"

__global__ static void gelu_forward_kernel(const float *h, void *a, int dt, size_t n)
{
    CUK_GRID_STRIDE(i, n) act_store(a, dt, i, gelu_f(h[i]));
}

extern "C" cudaError_t cuk_gelu_forward(const float *h, void *a, ib_precision dt, size_t n, cudaStream_t s)
{
    CUK_LAUNCH(gelu_forward_kernel, cuk_blocks(n, 256), 256, 0, s)(h, a, dt, n);
    return cudaGetLastError();
}
