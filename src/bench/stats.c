/* stats: summary statistics of per-step times.  Percentiles interpolate linearly between order
 * statistics, the definition numpy uses by default, so tests can check against numpy/statistics. */
#include "instbench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_percentile(const double *sorted, size_t n, double q)
{
    if (n == 0) return NAN;
    if (n == 1) return sorted[0];
    double pos = q / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double stats_median(const double *x, size_t n)
{
    if (n == 0) return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double m = stats_percentile(s, n, 50.0);
    free(s);
    return m;
}

int stats_compute(const double *x, size_t n, bench_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return -1;
    double *s = malloc(n * sizeof *s);
    if (!s) return -1;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->median = stats_percentile(s, n, 50.0);
    out->p10 = stats_percentile(s, n, 10.0);
    out->p90 = stats_percentile(s, n, 90.0);
    /* Two passes: the mean first, then squared deviations, for accuracy on near-equal times. */
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += x[i];
    out->mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - out->mean) * (x[i] - out->mean);
    out->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    out->cv = out->mean > 0 ? out->stdev / out->mean : 0.0;
    free(s);
    return 0;
}
