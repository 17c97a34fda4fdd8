/* cpu/bias: a Linear layer's bias gradient (column sums of dy) fused with the cast of dy to the
 * GEMM input dtype, so dy is read once for both. */
#include "cpu/ops.h"

#include <stdlib.h>

void cpu_bias_backward(const float *dy, float *db, void *dy_act, cpu_dtype dt, int M, int N)
{
    const int CB = 64;   /* column block per task: rows are read in 256-byte strips */
    const int nblk = (N + CB - 1) / CB;
#pragma omp parallel for schedule(dynamic, 1)
    for (int blk = 0; blk < nblk; blk++) {
        const int c0 = blk * CB, c1 = c0 + CB < N ? c0 + CB : N, w = c1 - c0;
        float acc[64] = {0};
        for (long r = 0; r < M; r++) {
            const float *row = dy + (size_t)r * N + c0;
            for (int j = 0; j < w; j++) acc[j] += row[j];
            if (dy_act) cpu_store(dy_act, dt, (size_t)r * N + c0, row, w);
        }
        for (int j = 0; j < w; j++) db[c0 + j] = acc[j];
    }
}
