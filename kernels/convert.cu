/* kernels/convert: fp32 -> act dtype copies (bf16 round to nearest even, as autocast casts). */
#include "common.cuh"

__global__ static void store_act_kernel(void *dst, int dt, const float *src, size_t n)
{
    CUK_GRID_STRIDE(i, n) act_store(dst, dt, i, src[i]);
}

/* n4 float4 of src (16-byte accesses: n a multiple of 4, both buffers aligned) */
__global__ static void store_act_vec_kernel(void *dst, int dt, const float *src, size_t n4)
{
    CUK_GRID_STRIDE(i, n4) act_store4(dst, dt, 4 * i, ((const float4 *)src)[i]);
}

extern "C" cudaError_t cuk_store_act(void *dst, ib_precision dt, const float *src, size_t n, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    if (n % 4 == 0 && aligned16(dst, src))
        CUK_LAUNCH(store_act_vec_kernel, cuk_blocks(n / 4, 256), 256, 0, s)(dst, dt, src, n / 4);
    else CUK_LAUNCH(store_act_kernel, cuk_blocks(n, 256), 256, 0, s)(dst, dt, src, n);
    return cudaGetLastError();
}
