/* kernels/convert: fp32 -> act dtype copies (bf16 round to nearest even, as autocast casts). */
#include "common.cuh"

__global__ static void store_act_kernel(void *dst, int dt, const float *src, size_t n)
{
    CUK_GRID_STRIDE(i, n) act_store(dst, dt, i, src[i]);
}

extern "C" cudaError_t cuk_store_act(void *dst, ib_precision dt, const float *src, size_t n, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    CUK_LAUNCH(store_act_kernel, cuk_blocks(n, 256), 256, 0, s)(dst, dt, src, n);
    return cudaGetLastError();
}
