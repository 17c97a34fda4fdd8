/* The host data pipeline makes what PyTorch's FakeDataset makes: every batch new, images
 * N(0,1) float32, labels uniform over the classes.  Checked against the distribution itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/bench.h"

#include "check.h"

enum { B = 64, C = 3, S = 32, K = 10 };

/* Standard normal CDF, for the expected share of values in a band. */
static double phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* host_alloc / host_free of a stand-in backend: counted, and the blocks it handed out remembered */
static int host_allocs, host_frees;
static void *given[8];
static void *count_alloc(ib_backend *b, size_t n)
{
    (void)b;
    void *m = malloc(n);
    if (m && host_allocs < 8) given[host_allocs++] = m;
    return m;
}
static void count_free(ib_backend *b, void *m)
{
    (void)b;
    for (int i = 0; i < host_allocs; i++)
        if (given[i] == m) host_frees++, given[i] = NULL;
    free(m);
}
static int owned(const void *m)
{
    for (int i = 0; i < host_allocs; i++)
        if (given[i] == m) return 1;
    return 0;
}
static const ib_backend_ops counting_ops = {.name = "counting", .host_alloc = count_alloc, .host_free = count_free};
static ib_backend counting_backend;

int main(void)
{
    bench_datapipe *p;
    ib_error err = {0};
    const size_t n = (size_t)B * C * S * S;
    CHECK(datapipe_create(B, C, S, K, 3, 42, NULL, &p, &err) == 0, "%s", err.msg);
    if (!p) return 1;
    float *prev = malloc(n * sizeof *prev);
    int label_hist[K] = {0};
    for (int batch = 0; batch < 6; batch++) {
        const float *img;
        const int32_t *lab;
        double wait = -1;
        CHECK(datapipe_acquire(p, &img, &lab, &wait, &err) == 0, "%s", err.msg);
        CHECK(wait >= 0, "wait %g", wait);
        double sum = 0, sq = 0, m4 = 0;
        size_t in1 = 0, nonfinite = 0;
        for (size_t i = 0; i < n; i++) {
            double x = img[i];
            if (!isfinite(x)) nonfinite++;
            sum += x;
            sq += x * x;
            m4 += x * x * x * x;
            if (fabs(x) < 1) in1++;
        }
        double mean = sum / n, var = sq / n - mean * mean, kurt = m4 / n;
        /* Sampling bounds at ~5 sigma for n = 196608 values. */
        CHECK(nonfinite == 0, "non-finite values %zu", nonfinite);
        CHECK(fabs(mean) < 5 / sqrt((double)n), "batch %d mean %g", batch, mean);
        CHECK(fabs(var - 1) < 5 * sqrt(2.0 / n), "batch %d variance %g", batch, var);
        CHECK(fabs(kurt - 3) < 5 * sqrt(96.0 / n), "batch %d 4th moment %g (normal: 3)", batch, kurt);
        double share = (double)in1 / n, want = phi(1) - phi(-1);
        CHECK(fabs(share - want) < 5 * sqrt(want * (1 - want) / n), "batch %d P(|x|<1) %g vs %g", batch, share, want);
        for (int b = 0; b < B; b++) {
            CHECK(lab[b] >= 0 && lab[b] < K, "label %d", lab[b]);
            if (lab[b] >= 0 && lab[b] < K) label_hist[lab[b]]++;
        }
        if (batch > 0) {
            size_t same = 0;
            for (size_t i = 0; i < n; i++) same += img[i] == prev[i];
            CHECK(same < n / 100, "batch %d repeats the previous one (%zu equal values)", batch, same);
        }
        memcpy(prev, img, n * sizeof *prev);
        datapipe_release(p);
    }
    /* 384 labels over 10 classes: every class appears. */
    for (int k = 0; k < K; k++) CHECK(label_hist[k] > 0, "class %d never drawn", k);
    CHECK(datapipe_throughput(p) > 0, "throughput");
    datapipe_destroy(p);

    /* Bad arguments are errors, not crashes. */
    CHECK(datapipe_create(0, 3, 8, 10, 1, 0, NULL, &p, &err) != 0 && p == NULL, "batch 0 rejected");
    CHECK(datapipe_create(4, 3, 8, 10, 0, 0, NULL, &p, &err) != 0 && p == NULL, "0 workers rejected");
    /* A backend with its own host memory (cuda: pinned): every slot comes from it and goes back. */
    counting_backend.ops = &counting_ops;
    CHECK(datapipe_create(4, 3, 8, 10, 2, 7, &counting_backend, &p, &err) == 0, "%s", err.msg);
    const float *img;
    const int32_t *lab;
    double w;
    CHECK(p && datapipe_acquire(p, &img, &lab, &w, &err) == 0, "acquire from backend memory: %s", err.msg);
    CHECK(host_allocs == 4 && owned(img) && owned(lab), "%d slot allocations through host_alloc, batch %s", host_allocs,
          owned(img) && owned(lab) ? "in them" : "elsewhere");
    if (p) datapipe_release(p);
    datapipe_destroy(p);
    CHECK(host_frees == 4, "%d of 4 slots handed back through host_free", host_frees);
    free(prev);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_datapipe: all checks passed\n");
    return failures ? 1 : 0;
}
