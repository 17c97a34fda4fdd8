/* cpu/adam: torch.optim.Adam / AdamW (torch 1.13, single-tensor path, non-capturable):
 *   (AdamW: p *= 1 - lr*wd;  Adam: g += wd*p)
 *   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g
 *   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 * Scalars are formed in double as Python does, then applied in fp32 as torch's kernels do. */
#include "cpu/ops.h"

#include <math.h>

void cpu_adam_step(float *p, const float *g, float *m, float *v, bf16 *wbf, size_t n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decoupled)
{
    const double bc1 = 1.0 - pow((double)beta1, step), bc2 = 1.0 - pow((double)beta2, step);
    const float step_size = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2);
    const float decay = (float)(1.0 - (double)lr * weight_decay);
    const float omb1 = (float)(1.0 - (double)beta1), omb2 = (float)(1.0 - (double)beta2);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)n; i++) {
        float gi = g[i], pi = p[i];
        if (weight_decay != 0) {
            if (decoupled) pi *= decay;
            else gi += weight_decay * pi;
        }
        const float mi = m[i] * beta1 + gi * omb1;
        const float vi = v[i] * beta2 + omb2 * gi * gi;
        const float denom = sqrtf(vi) / bc2_sqrt + eps;
        pi = pi + (-step_size * mi) / denom;   /* addcdiv_(m, denom, value=-step_size) */
        m[i] = mi, v[i] = vi, p[i] = pi;
        if (wbf) wbf[i] = cpu_bf16_from_f32(pi);
    }
}
