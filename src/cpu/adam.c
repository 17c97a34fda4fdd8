/* cpu/adam: torch.optim.Adam / AdamW (torch 1.13, single-tensor path, non-capturable):
 *   (AdamW: p *= 1 - lr*wd;  Adam: g += wd*p)
 *   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g
 *   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 * Scalars are formed in double as Python does, then applied in fp32 as torch's kernels do. */
/* Built with -fno-math-errno (CMakeLists.txt): sqrt of v >= 0 never sets errno, and without the
 * flag GCC keeps a scalar errno branch per element and cannot vectorise the update. */
#include "cpu/ops.h"
#include "cpu/simd.h"

#include <math.h>

typedef struct adam_scalars {
    float beta1, beta2, omb1, omb2, step_size, bc2_sqrt, eps, wd, decay;
    int decoupled;
} adam_scalars;

/* The loop body with the branches as compile-time constants, so each instance vectorises. */
static inline __attribute__((always_inline)) void adam_body(float *restrict p, const float *restrict g,
                                                            float *restrict m, float *restrict v, bf16 *restrict wbf,
                                                            size_t n, const adam_scalars *s, const int decoupled,
                                                            const int weight_decay, const int bf)
{
    const adam_scalars k = *s;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i], pi = p[i];
        if (weight_decay) {
            if (decoupled) pi *= k.decay;
            else gi += k.wd * pi;
        }
        const float mi = m[i] * k.beta1 + gi * k.omb1;
        const float vi = v[i] * k.beta2 + k.omb2 * gi * gi;
        const float denom = __builtin_sqrtf(vi) / k.bc2_sqrt + k.eps;
        pi = pi + (-k.step_size * mi) / denom; /* addcdiv_(m, denom, value=-step_size) */
        m[i] = mi, v[i] = vi, p[i] = pi;
        if (bf) wbf[i] = cpu_bf16_rne(pi);
    }
}

CPU_KERNEL static void adam_chunk(float *restrict p, const float *restrict g, float *restrict m, float *restrict v,
                                  bf16 *restrict wbf, size_t n, const adam_scalars *s)
{
    const int wd = s->wd != 0;
    if (wbf) {
        if (!wd) adam_body(p, g, m, v, wbf, n, s, 0, 0, 1);
        else if (s->decoupled) adam_body(p, g, m, v, wbf, n, s, 1, 1, 1);
        else adam_body(p, g, m, v, wbf, n, s, 0, 1, 1);
    } else {
        if (!wd) adam_body(p, g, m, v, wbf, n, s, 0, 0, 0);
        else if (s->decoupled) adam_body(p, g, m, v, wbf, n, s, 1, 1, 0);
        else adam_body(p, g, m, v, wbf, n, s, 0, 1, 0);
    }
}

void cpu_adam_step(float *p, const float *g, float *m, float *v, bf16 *wbf, size_t n, int step, float lr, float beta1,
                   float beta2, float eps, float weight_decay, int decoupled)
{
    const double bc1 = 1.0 - pow((double)beta1, step), bc2 = 1.0 - pow((double)beta2, step);
    adam_scalars s;
    s.beta1 = beta1, s.beta2 = beta2;
    s.omb1 = (float)(1.0 - (double)beta1), s.omb2 = (float)(1.0 - (double)beta2);
    s.step_size = (float)(lr / bc1), s.bc2_sqrt = (float)sqrt(bc2), s.eps = eps;
    /* weight decay 0: AdamW's factor is exactly 1 and Adam adds 0 * p, so both are no-ops */
    s.wd = weight_decay, s.decay = (float)(1.0 - (double)lr * weight_decay), s.decoupled = decoupled;
    const size_t chunk = 1 << 15;
    const long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        const size_t lo = (size_t)c * chunk, len = lo + chunk < n ? chunk : n - lo;
        adam_chunk(p + lo, g + lo, m + lo, v + lo, wbf ? wbf + lo : NULL, len, &s);
    }
}
