/* Included before every kernel file when NVRTC compiles it (scripts/ci/check_cuda12_kernels.sh).
 * NVRTC compiles device code only: a host function is an error in it, so the kernel files'
 * launchers (extern "C" cuk_*: geometry, CUK_LAUNCH, cudaGetLastError) are compiled as device
 * functions (-default-device), where a launch becomes a call that type-checks the arguments
 * against the kernel's parameters as the <<<...>>> launch does, and launches nothing.  Every
 * __global__ kernel and template instantiation the launchers name is compiled for real. */
#pragma once
#include <cuda_runtime.h>
#include <math.h>

static __device__ cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static __device__ cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *, const void *) { return cudaSuccess; }

template <typename... P> struct cuk_nvrtc_launcher {
    __device__ void operator()(P... args) const { (void)sizeof...(args); }
};
template <typename... P>
__device__ cuk_nvrtc_launcher<P...> cuk_nvrtc_launch(void (*)(P...), dim3, dim3, unsigned, cudaStream_t)
{
    return {};
}
#define CUK_LAUNCH(kernel, grid, block, smem, stream) cuk_nvrtc_launch(kernel, grid, block, smem, stream)
