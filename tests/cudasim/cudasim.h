/* cudasim: runs the CUDA kernels of src/cuda/kernels, unmodified, on the CPU (issue 12).  Each .cu
 * file is compiled as C++ by the host compiler with this header force-included (-include); it
 * supplies what nvcc would: the execution-space keywords, threadIdx / blockIdx / blockDim /
 * gridDim, __syncthreads, warp shuffles, block-shared memory and the round-to-nearest intrinsics;
 * the tensor-core fragments of <mma.h> (nvcuda::wmma, below); the types and the host bf16
 * conversions come from CUDA's own headers.  Kernel launches go
 * through CUK_LAUNCH (kernels/common.cuh), which is <<<...>>> under nvcc and cudasim_launch here.
 *
 * Execution model (cudasim.cpp): a launch is work on its stream, run when the scheduler of
 * tests/cuda_host_runtime.c lets it (cudasim turns its ordered mode on); the blocks of a grid run
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

/* ---- tensor-core fragments (nvcuda::wmma, the m16n16k16 bf16 shape with fp32 accumulators) ----
 * CUDA leaves unspecified which lane holds which element of a fragment; here each fragment kind
 * (matrix_a, matrix_b, accumulator) spreads its 256 elements over the 32 lanes, 8 each, by a
 * seeded random permutation, so a kernel that assumes a mapping (reads x[i] as a row) computes
 * wrong numbers.  load/store touch only the calling lane's own elements and are no barrier: a
 * lane may load before another lane's shared-memory store unless a __syncwarp or __syncthreads
 * orders them, as on a GPU.  mma_sync is warp-collective: every lane of the warp must call it
 * (an exited lane is an error); the products are bf16 x bf16 exact in fp32, summed over k in
 * order into the fp32 accumulator.  As <mma.h> requires, pointers must be 32-byte aligned and ldm
 * a multiple of 16 bytes (8 bf16, 4 floats); a violation is reported. */
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

/* the element of kind K (0 a, 1 b, 2 accumulator) that lane L holds as x[E]: row * 16 + col */
int cudasim_frag_index(int kind, unsigned lane, int e);
unsigned cudasim_lane();
void cudasim_check_tile(const void *p, unsigned ldm, unsigned elem_bytes, const char *what);
/* every lane posts its fragments; returns with all of the warp's posted (warp barrier) */
void cudasim_mma_post(const void *a, const void *b, const void *c);
/* what lane LANE posted (0: its a fragment, 1: its b fragment, 2: its c accumulator) */
const void *cudasim_mma_peer(unsigned lane, int which);
/* the warp's 16 x 16 result of this mma_sync; true for the one lane that is to compute it (the
 * others then read it: the product is formed once per warp, not once per lane) */
bool cudasim_mma_result(float **d);
void cudasim_mma_done();   /* warp barrier: every lane has read what the others posted */

template <typename Use> struct frag_kind;
template <> struct frag_kind<matrix_a> { static const int value = 0; };
template <> struct frag_kind<matrix_b> { static const int value = 1; };
template <> struct frag_kind<accumulator> { static const int value = 2; };

template <typename Use, int M, int N, int K, typename T, typename Layout = void> struct fragment {
    static_assert(M == 16 && N == 16 && K == 16, "cudasim emulates the m16n16k16 shape only");
    enum { num_elements = 8 };
    T x[8];
};

template <typename Use, typename T, typename Layout>
inline void fill_fragment(fragment<Use, 16, 16, 16, T, Layout> &f, T v)
{
    for (int e = 0; e < 8; e++) f.x[e] = v;
}

/* matrix_a / matrix_b: the layout is the fragment's (row_major: element (r, c) at p[r * ldm + c]) */
template <typename Use, typename T, typename Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout> &f, const T *p, unsigned ldm)
{
    cudasim_check_tile(p, ldm, sizeof(T), "load_matrix_sync");
    const unsigned lane = cudasim_lane();
    for (int e = 0; e < 8; e++) {
        const int i = cudasim_frag_index(frag_kind<Use>::value, lane, e), r = i / 16, c = i % 16;
        f.x[e] = std::is_same<Layout, col_major>::value ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
    }
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &f, const float *p, unsigned ldm, layout_t l)
{
    cudasim_check_tile(p, ldm, sizeof(float), "load_matrix_sync");
    const unsigned lane = cudasim_lane();
    for (int e = 0; e < 8; e++) {
        const int i = cudasim_frag_index(2, lane, e), r = i / 16, c = i % 16;
        f.x[e] = l == mem_col_major ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
    }
}

inline void store_matrix_sync(float *p, const fragment<accumulator, 16, 16, 16, float> &f, unsigned ldm, layout_t l)
{
    cudasim_check_tile(p, ldm, sizeof(float), "store_matrix_sync");
    const unsigned lane = cudasim_lane();
    for (int e = 0; e < 8; e++) {
        const int i = cudasim_frag_index(2, lane, e), r = i / 16, c = i % 16;
        (l == mem_col_major ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c]) = f.x[e];
    }
}

/* d = a b + c over the whole warp */
template <typename LA, typename LB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d, const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> &a,
                     const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> &b,
                     const fragment<accumulator, 16, 16, 16, float> &c)
{
    typedef fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> fa;
    typedef fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> fb;
    typedef fragment<accumulator, 16, 16, 16, float> fc;
    cudasim_mma_post(&a, &b, &c);
    float *D;
    if (cudasim_mma_result(&D)) {
        /* the whole 16 x 16 operands, gathered from every lane's elements */
        float A[256], Bm[256];
        for (unsigned l = 0; l < 32; l++) {
            const fa *pa = static_cast<const fa *>(cudasim_mma_peer(l, 0));
            const fb *pb = static_cast<const fb *>(cudasim_mma_peer(l, 1));
            const fc *pc = static_cast<const fc *>(cudasim_mma_peer(l, 2));
            for (int e = 0; e < 8; e++) {
                A[cudasim_frag_index(0, l, e)] = __bfloat162float(pa->x[e]);
                Bm[cudasim_frag_index(1, l, e)] = __bfloat162float(pb->x[e]);
                D[cudasim_frag_index(2, l, e)] = pc->x[e];
            }
        }
        for (int r = 0; r < 16; r++)
            for (int col = 0; col < 16; col++) {
                float acc = D[r * 16 + col];
                for (int k = 0; k < 16; k++) acc += A[r * 16 + k] * Bm[k * 16 + col];
                D[r * 16 + col] = acc;
            }
    }
    const unsigned lane = cudasim_lane();
    float out[8];
    for (int e = 0; e < 8; e++) out[e] = D[cudasim_frag_index(2, lane, e)];
    cudasim_mma_done();
    for (int e = 0; e < 8; e++) d.x[e] = out[e];
}
}  // namespace wmma
}  // namespace nvcuda

/* ---- launches ---- */
typedef void (*cudasim_block_fn)(void *closure);
/* Checks the launch configuration at the call (a refused launch runs nothing; its error is
 * returned and left for cudaGetLastError, as a real launch does), then queues GRID x BLOCK
 * threads, each calling fn(closure), on stream S (tests/cuda_host_runtime.c decides when they
 * run); release(closure) once they have. */
cudaError_t cudasim_run(const char *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, cudasim_block_fn fn,
                        void *closure, void (*release)(void *closure));
/* CUDASIM_TRACE (tests/cuda_host_runtime.h): "launch NAME", NAME the kernel as CUK_LAUNCH's first
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
