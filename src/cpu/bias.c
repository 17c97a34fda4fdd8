/* cpu/bias: a Linear layer's bias gradient (column sums of dy) fused with the cast of dy to the
 * GEMM input dtype, so dy is read once for both. */
#include "cpu/ops.h"
#include "cpu/simd.h"

#include <stdlib.h>

#define CB CPU_COLSUM_COLS /* columns per task */

/* Column sums of dy and, if act, its bf16 copy (rows at stride ld, w columns). */
CPU_KERNEL static void colsum_rows(const float *restrict dy, bf16 *restrict act, float *restrict acc, size_t ld,
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

/* A cpu_colsum_block_fn: fp32 dy (y unused) from column c0. */
static void colsum_block(const void *dy, void *y, bf16 *act, float *acc, size_t ld, long r0, long r1, int c0, int w)
{
    (void)y;
    colsum_rows((const float *)dy + c0, act ? act + c0 : NULL, acc, ld, r0, r1, w);
}

void cpu_colsum_tasks(cpu_colsum_block_fn block, const void *x, void *y, bf16 *act, int M, int N, float *out)
{
    /* Tasks are (row block, column block); row blocks give every thread work even when N is
     * narrow, and their partial sums are added in a fixed order (deterministic). */
    enum { RB = 8 };
    const int nblk = (N + CB - 1) / CB;
    const long rows_per = (M + RB - 1) / RB;
    float *part = calloc((size_t)RB * N, sizeof *part);
    const int rb_n = part ? RB : 1; /* out of memory: one row block summing straight into out */
    if (!part) memset(out, 0, (size_t)N * sizeof *out);
#pragma omp parallel for schedule(static) collapse(2)
    for (int rb = 0; rb < rb_n; rb++)
        for (int blk = 0; blk < nblk; blk++) {
            const int c0 = blk * CB, w = c0 + CB < N ? CB : N - c0;
            const long r0 = part ? rb * rows_per : 0, r1 = !part ? M : r0 + rows_per < M ? r0 + rows_per : M;
            if (r0 < r1) block(x, y, act, (part ? part + (size_t)rb * N : out) + c0, (size_t)N, r0, r1, c0, w);
        }
    if (!part) return;
    for (int j = 0; j < N; j++) {
        float s = 0;
        for (int rb = 0; rb < RB; rb++) s += part[(size_t)rb * N + j];
        out[j] = s;
    }
    free(part);
}

void cpu_bias_backward(const float *dy, float *db, void *dy_act, ib_precision dt, int M, int N)
{
    cpu_colsum_tasks(colsum_block, dy, NULL, dt == IB_PREC_BF16 ? (bf16 *)dy_act : NULL, M, N, db);
}
