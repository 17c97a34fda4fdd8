/* cpu/crossentropy: mean cross-entropy over the batch (nn.CrossEntropyLoss()), in fp32 with a
 * double accumulator for the mean. */
#include "cpu/ops.h"

#include <math.h>

double cpu_crossentropy(const float *logits, const int32_t *labels, float *dlogits, int B, int C)
{
    double total = 0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (size_t)b * C;
        float mx = -INFINITY;
        for (int c = 0; c < C; c++) mx = z[c] > mx ? z[c] : mx;
        double sum = 0;
        for (int c = 0; c < C; c++) sum += exp((double)z[c] - mx);
        const double lse = mx + log(sum);
        total += lse - z[labels[b]];
        if (dlogits) {
            float *g = dlogits + (size_t)b * C;
            for (int c = 0; c < C; c++) g[c] = (float)(exp((double)z[c] - lse) / B);
            g[labels[b]] -= 1.0f / B;
        }
    }
    return total / B;
}
