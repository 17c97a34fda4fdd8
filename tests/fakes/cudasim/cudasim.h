/* cudasim: runs the CUDA kernels of kernels/, unmodified, on the CPU (issue 12).  Each .cu
 * file is compiled as C++ by the host compiler with this header force-included (-include); it
 * supplies what nvcc would: the execution-space keywords, threadIdx / blockIdx / blockDim /
 * gridDim, __syncthreads, warp shuffles, block-shared memory and the round-to-nearest intrinsics;
 * the types and the host bf16 conversions come from CUDA's own headers.  Kernel launches go
 * through CUK_LAUNCH (kernels/common.cuh), which is <<<...>>> under nvcc and cudasim_launch here.
 *
 * Execution model (cudasim.cpp): a launch is work on its stream, run when the scheduler of
 * tests/fakes/cuda_host_runtime.c lets it (cudasim turns its ordered mode on); the blocks of a grid run
 * one after another (per launch, in a seeded order); the threads of a block are cooperative fibers (ucontext) that each run until
 * they reach a barrier (__syncthreads, or a warp-synchronous shuffle) or end, and under the
 * default schedule (CUDASIM_SCHEDULE=switch) also give way at random shared-memory accesses.  So
 * a value another thread writes before a barrier is visible after it, and one read without the
 * barrier is stale, as on a GPU.  Barrier misuse is an error, not a hang: __syncthreads that not
 * every live thread of the block reaches, a shuffle whose mask names a lane that has exited.
 * Launch limits are checked (1024 threads per block, grid dimensions, 48 KiB of shared memory).
 * Block-shared memory is undefined at every block start and checked for races (shared.h). */
#ifndef INSTBENCH_TESTS_CUDASIM_H
#define INSTBENCH_TESTS_CUDASIM_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

/* nvcc's keywords: kernels and device functions are plain C++ functions here */
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#undef __launch_bounds__
#define __launch_bounds__(...) /* an occupancy hint to ptxas: nothing to do on the CPU */
/* block-shared memory: one copy per OS thread running blocks, which runs one block at a time;
 * every access is checked (shared.h), so the kernels' sources keep CUDA's declarations */
#define __shared__ static thread_local

struct cudasim_dim {
    unsigned x, y, z;
};

/* The calling fiber's coordinates (cudasim.cpp). */
const cudasim_dim &cudasim_thread_idx();
const cudasim_dim &cudasim_block_idx();
const cudasim_dim &cudasim_block_dim();
const cudasim_dim &cudasim_grid_dim();
#define threadIdx (cudasim_thread_idx())
#define blockIdx (cudasim_block_idx())
#define blockDim (cudasim_block_dim())
#define gridDim (cudasim_grid_dim())

void cudasim_syncthreads();
/* Every live lane of the calling warp in MASK posts V; returns lane (this ^ LANE_MASK)'s. */
float cudasim_shfl_xor(unsigned mask, float v, int lane_mask);
#define __syncthreads() cudasim_syncthreads()
static inline float __shfl_xor_sync(unsigned mask, float v, int lane_mask, int = 32)
{
    return cudasim_shfl_xor(mask, v, lane_mask);
}

/* A warp barrier: every live lane of the warp waits until all have reached it (mask must name the
 * calling lane; lanes it leaves out are still waited for, stricter than a GPU). */
void cudasim_syncwarp(unsigned mask);
static inline void __syncwarp(unsigned mask = 0xffffffffu) { cudasim_syncwarp(mask); }

/* IEEE round-to-nearest arithmetic, never contracted into an FMA (built with -ffp-contract=off) */
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fsqrt_rn(float a) { return std::sqrt(a); }


/* ---- launches ---- */
typedef void (*cudasim_block_fn)(void *closure);
/* Checks the launch configuration at the call (a refused launch runs nothing; its error is
 * returned and left for cudaGetLastError, as a real launch does), then queues GRID x BLOCK
 * threads, each calling fn(closure), on stream S (tests/fakes/cuda_host_runtime.c decides when they
 * run); release(closure) once they have. */
cudaError_t cudasim_run(const char *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, cudasim_block_fn fn,
                        void *closure, void (*release)(void *closure));
/* CUDASIM_TRACE (tests/fakes/cuda_host_runtime.h): "launch NAME", NAME the kernel as CUK_LAUNCH's first
 * argument spells it, without parentheses or template arguments. */
void cudasim_trace_launch(const char *spelled);

template <typename... P> struct cudasim_launcher {
    void (*kernel)(P...);
    const char *name;
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    template <typename... A> void operator()(A &&...args) const
    {
        /* the arguments by value, as a launch copies them: the kernel may run after the caller's
         * variables are gone */
        struct closure {
            void (*k)(P...);
            std::tuple<P...> args;
        };
        closure *c = new closure{kernel, std::tuple<P...>(static_cast<P>(std::forward<A>(args))...)};
        cudasim_trace_launch(name);
        cudasim_run(
            name, grid, block, smem, stream,
            [](void *p) {
                closure *c = static_cast<closure *>(p);
                std::apply(c->k, c->args);
            },
            c, [](void *p) { delete static_cast<closure *>(p); });
    }
};
template <typename... P>
cudasim_launcher<P...> cudasim_launch(void (*kernel)(P...), const char *name, dim3 grid, dim3 block, size_t smem,
                                      cudaStream_t s)
{
    return cudasim_launcher<P...>{kernel, name, grid, block, smem, s};
}
#define CUK_LAUNCH(kernel, grid, block, smem, stream) cudasim_launch(kernel, #kernel, grid, block, smem, stream)

#endif
