/* cpu/gelu: exact GELU, 0.5 x (1 + erf(x / sqrt 2)) as nn.GELU() (timm's default act_layer). */
#include "cpu/ops.h"
#include "cpu/simd.h"

#define CHUNK 4096

CPU_KERNEL static void gelu_fwd(const float *restrict h, float *restrict out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float x = h[i];
        out[i] = 0.5f * x * (1.0f + cpu_erff(x * 0.70710678118654752f));
    }
}

/* d/dx GELU = Phi(x) + x phi(x) */
CPU_KERNEL static void gelu_bwd(const float *restrict h, float *restrict g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float x = h[i];
        const float cdf = 0.5f * (1.0f + cpu_erff(x * 0.70710678118654752f));
        const float pdf = cpu_expf(-0.5f * x * x) * 0.39894228040143268f;
        g[i] *= cdf + x * pdf;
    }
}

void cpu_gelu_forward(const float *h, void *a, cpu_dtype dt, size_t n)
{
    const long nchunks = (long)((n + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        float buf[CHUNK];
        const size_t lo = (size_t)c * CHUNK, len = lo + CHUNK < n ? CHUNK : n - lo;
        if (dt == CPU_F32) {
            gelu_fwd(h + lo, (float *)a + lo, len);
        } else {
            gelu_fwd(h + lo, buf, len);
            cpu_store(a, dt, lo, buf, len);
        }
    }
}

void cpu_gelu_backward(const float *h, float *g, size_t n)
{
    const long nchunks = (long)((n + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        const size_t lo = (size_t)c * CHUNK, len = lo + CHUNK < n ? CHUNK : n - lo;
        gelu_bwd(h + lo, g + lo, len);
    }
}
