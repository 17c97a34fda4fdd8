/* kernels/gelu: the fc1 bias add fused with exact GELU, 0.5 x (1 + erf(x / sqrt 2)) (nn.GELU(),
 * timm's default), and its derivative.  Mirrors src/cpu/gelu.c; the bias add is the fc1 GEMM's
 * epilogue on the CPU (same fp32 sum, so the same h). */
#include "common.cuh"

__global__ static void bias_gelu_kernel(float *h, const float *bias, void *a, int dt, size_t n, int F)
{
    CUK_GRID_STRIDE(i, n) {
        const float x = h[i] + bias[i % F];
        h[i] = x;
        act_store(a, dt, i, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)));
    }
}

extern "C" cudaError_t cuk_bias_gelu_forward(float *h, const float *bias, void *a, ib_precision dt, int M, int F,
                                             cudaStream_t s)
{
    const size_t n = (size_t)M * F;
    CUK_LAUNCH(bias_gelu_kernel, cuk_blocks(n, 256), 256, 0, s)(h, bias, a, dt, n, F);
    return cudaGetLastError();
}

/* d/dx GELU = Phi(x) + x phi(x) */
__global__ static void gelu_backward_kernel(const float *h, float *g, size_t n)
{
    CUK_GRID_STRIDE(i, n) {
        const float x = h[i];
        const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
        const float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
        g[i] *= cdf + x * pdf;
    }
}

extern "C" cudaError_t cuk_gelu_backward(const float *h, float *g, size_t n, cudaStream_t s)
{
    CUK_LAUNCH(gelu_backward_kernel, cuk_blocks(n, 256), 256, 0, s)(h, g, n);
    return cudaGetLastError();
}
