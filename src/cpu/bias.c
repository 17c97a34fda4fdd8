/* cpu/bias: a Linear layer's bias gradient (column sums of dy) fused with the cast of dy to the
 * GEMM input dtype, so dy is read once for both. */
#include "cpu/ops.h"
#include "cpu/simd.h"

#include <stdlib.h>

#define CB 256   /* columns per task */

CPU_KERNEL static void colsum_block(const float *restrict dy, float *restrict acc, bf16 *restrict act, size_t ld,
                                    long r0, long r1, int w)
{
    for (long r = r0; r < r1; r++) {
        const float *row = dy + (size_t)r * ld;
        for (int j = 0; j < w; j++) acc[j] += row[j];
        if (act) {
            bf16 *o = act + (size_t)r * ld;
            for (int j = 0; j < w; j++) o[j] = cpu_bf16_rne(row[j]);
        }
    }
}

void cpu_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N)
{
    /* Tasks are (column block, row block); row blocks give every thread work even when N is
     * narrow, and their partial sums are added in a fixed order (deterministic). */
    const int nblk = (N + CB - 1) / CB, RB = 8;
    const long rows_per = (M + RB - 1) / RB;
    float *part = calloc((size_t)RB * N, sizeof *part);
    bf16 *act = dt == IB_PREC_BF16 ? (bf16 *)dy_act : NULL;
#pragma omp parallel for schedule(static) collapse(2)
    for (int rb = 0; rb < RB; rb++)
        for (int blk = 0; blk < nblk; blk++) {
            const int c0 = blk * CB, w = c0 + CB < N ? CB : N - c0;
            const long r0 = rb * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
            if (r0 < r1) colsum_block(dy + c0, part + (size_t)rb * N + c0, act ? act + c0 : NULL, N, r0, r1, w);
        }
    for (int j = 0; j < N; j++) {
        float s = 0;
        for (int rb = 0; rb < RB; rb++) s += part[(size_t)rb * N + j];
        db[j] = s;
    }
    free(part);
}
