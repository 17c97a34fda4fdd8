/* kernels/crossentropy: mean cross-entropy over the batch (nn.CrossEntropyLoss()), fp32 logits
 * with double sums as src/cpu/crossentropy.c.  One block per sample, then one thread adds the
 * per-sample losses in batch order (deterministic). */
#include "common.cuh"

#define CE_THREADS 256

__global__ static void ce_row_kernel(const float *logits, const int32_t *labels, float *dlogits, double *row_loss,
                                     int B, int C)
{
    __shared__ float smax[CE_THREADS];
    __shared__ double ssum[CE_THREADS];
    const int b = blockIdx.x, tid = threadIdx.x;
    const float *z = logits + (size_t)b * C;
    float mx = -INFINITY;
    for (int c = tid; c < C; c += CE_THREADS) mx = fmaxf(mx, z[c]);
    smax[tid] = mx;
    __syncthreads();
    for (int o = CE_THREADS / 2; o > 0; o >>= 1) {
        if (tid < o) smax[tid] = fmaxf(smax[tid], smax[tid + o]);
        __syncthreads();
    }
    mx = smax[0];
    double sum = 0;
    for (int c = tid; c < C; c += CE_THREADS) sum += exp((double)z[c] - mx);
    ssum[tid] = sum;
    __syncthreads();
    for (int o = CE_THREADS / 2; o > 0; o >>= 1) {
        if (tid < o) ssum[tid] += ssum[tid + o];
        __syncthreads();
    }
    const double lse = mx + log(ssum[0]);
    const int y = labels[b];
    if (tid == 0) row_loss[b] = lse - z[y];
    if (dlogits) {
        float *g = dlogits + (size_t)b * C;
        for (int c = tid; c < C; c += CE_THREADS) {
            float v = (float)(exp((double)z[c] - lse) / B);
            if (c == y) v -= 1.0f / B;
            g[c] = v;
        }
    }
}

__global__ static void ce_mean_kernel(const double *row_loss, int B, float *loss)
{
    double t = 0;
    for (int b = 0; b < B; b++) t += row_loss[b];
    *loss = (float)(t / B);
}

extern "C" cudaError_t cuk_crossentropy(const float *logits, const int32_t *labels, float *dlogits, double *row_loss,
                                        float *loss, int B, int C, cudaStream_t s)
{
    CUK_LAUNCH(ce_row_kernel, (unsigned)B, CE_THREADS, 0, s)(logits, labels, dlogits, row_loss, B, C);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    CUK_LAUNCH(ce_mean_kernel, 1, 1, 0, s)(row_loss, B, loss);
    return cudaGetLastError();
}
