/* Reads numbers (one per line) on stdin, prints stats_compute's six figures: the Python test
 * compares them with its statistics module. */
#include <stdio.h>
#include <stdlib.h>

#include "instbench/bench.h"

int main(void)
{
    size_t n = 0, cap = 1024;
    double *x = malloc(cap * sizeof *x), v;
    while (scanf("%lf", &v) == 1) {
        if (n == cap) x = realloc(x, (cap *= 2) * sizeof *x);
        x[n++] = v;
    }
    bench_stats s;
    if (stats_compute(x, n, &s) != 0) return 1;
    printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", s.median, s.p10, s.p90, s.mean, s.stdev, s.cv);
    free(x);
    return 0;
}
