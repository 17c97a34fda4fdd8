/* kernels/adam: torch.optim.Adam / AdamW (torch 1.13 single-tensor path), the exact operation
 * order of src/cpu/adam.c so both backends round alike:
 *   (AdamW: p *= 1 - lr*wd;  Adam: g += wd*p)
 *   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g
 *   p += (-lr/(1-b1^t) * m) / (sqrt(v)/sqrt(1-b2^t) + eps)
 * The scalars are formed on the host in double, as Python does.  No fast-math: sqrtf and the
 * division are IEEE round-to-nearest (nvcc's defaults). */
#include "common.cuh"

__global__ static void adam_kernel(float *__restrict__ p, const float *__restrict__ g, float *__restrict__ m,
                                   float *__restrict__ v, __nv_bfloat16 *__restrict__ wbf, size_t n, cuk_adam_scalars k)
{
    CUK_GRID_STRIDE(i, n)
    {
        float gi = g[i], pi = p[i];
        if (k.decoupled) pi *= k.decay;
        else gi = __fadd_rn(gi, __fmul_rn(k.wd, pi));
        /* __fmul_rn/__fadd_rn keep nvcc from contracting into FMAs the CPU does not use */
        const float mi = __fadd_rn(__fmul_rn(m[i], k.beta1), __fmul_rn(gi, k.omb1));
        const float vi = __fadd_rn(__fmul_rn(v[i], k.beta2), __fmul_rn(__fmul_rn(k.omb2, gi), gi));
        const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), k.bc2_sqrt), k.eps);
        pi = __fadd_rn(pi, __fdiv_rn(__fmul_rn(-k.step_size, mi), denom));
        m[i] = mi, v[i] = vi, p[i] = pi;
        if (wbf) wbf[i] = __float2bfloat16_rn(pi);
    }
}

extern "C" cudaError_t cuk_adam_step(float *p, const float *g, float *m, float *v, uint16_t *wbf, size_t n,
                                     const cuk_adam_scalars *k, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    CUK_LAUNCH(adam_kernel, cuk_blocks(n, 256), 256, 0, s)(p, g, m, v, (__nv_bfloat16 *)wbf, n, *k);
    return cudaGetLastError();
}
