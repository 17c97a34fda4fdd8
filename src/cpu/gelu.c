/* cpu/gelu: exact GELU, 0.5 x (1 + erf(x / sqrt 2)) as nn.GELU() (timm's default act_layer). */
#include "cpu/ops.h"

#include <math.h>

void cpu_gelu_forward(const float *h, void *a, cpu_dtype dt, size_t n)
{
    const size_t chunk = 4096;
    const long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        float buf[4096];
        const size_t lo = (size_t)c * chunk, len = lo + chunk < n ? chunk : n - lo;
        for (size_t i = 0; i < len; i++) {
            const float x = h[lo + i];
            buf[i] = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        }
        cpu_store(a, dt, lo, buf, len);
    }
}

void cpu_gelu_backward(const float *h, float *g, size_t n)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)n; i++) {
        const float x = h[i];
        const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
        const float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
        g[i] *= cdf + x * pdf;
    }
}
