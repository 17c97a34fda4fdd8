/* bench_probe_step against a mock backend whose forward+backward sleeps a known time per sample
 * (and, on chosen calls, a stall), and bench_estimate_run's arithmetic against figures worked by
 * hand from docs/usage.md's formula.  Sleeps only ever lengthen a step, so every timing check
 * below asks which side of a wide margin a figure falls. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/bench.h"

#include "check.h"

static struct {
    double per_sample_s, opt_s;
    int stall_call; /* this forward+backward call of a backend (1 = its warm-up) stalls */
    double stall_s;
    int creates, destroys, fail_create_at_batch;
    int fb_calls, opt_calls; /* over every backend */
    int batches[8];          /* the batch of each backend created */
} M;

typedef struct mock_impl {
    int batch, calls;
    float grads[4];
} mock_impl;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static int m_set_inputs(ib_backend *b, const float *img, const int32_t *lab, ib_error *e) { return 0; }
static int m_fb(ib_backend *b, float *loss, ib_grad_ready_fn fn, void *u, ib_error *e)
{
    mock_impl *m = b->impl;
    m->calls++;
    M.fb_calls++;
    sleep_s(M.per_sample_s * m->batch + (m->calls == M.stall_call ? M.stall_s : 0));
    return 0;
}
static int m_opt(ib_backend *b, ib_error *e)
{
    M.opt_calls++;
    sleep_s(M.opt_s);
    return 0;
}
static int m_sync(ib_backend *b, ib_error *e) { return 0; }
static void m_destroy(ib_backend *b)
{
    M.destroys++;
    free(b->impl);
    free(b);
}
static int m_create(const ib_train_config *cfg, ib_backend **out, ib_error *err);
static const ib_backend_ops mock_ops = {.name = "mock",
                                        .device = IB_DEVICE_HOST,
                                        .create = m_create,
                                        .set_inputs = m_set_inputs,
                                        .forward_backward = m_fb,
                                        .optimizer_step = m_opt,
                                        .synchronize = m_sync,
                                        .destroy = m_destroy};
static int m_create(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    if (cfg->batch_size == M.fail_create_at_batch)
        return ib_error_set(err, IB_EXIT_RUNTIME, "mock: no memory at batch %d", cfg->batch_size);
    ib_backend *b = calloc(1, sizeof *b);
    mock_impl *m = calloc(1, sizeof *m);
    b->ops = &mock_ops;
    b->cfg = *cfg;
    b->impl = m;
    m->batch = cfg->batch_size;
    if (M.creates < 8) M.batches[M.creates] = cfg->batch_size;
    M.creates++;
    *out = b;
    return 0;
}

static ib_train_config config(int batch)
{
    ib_train_config t;
    memset(&t, 0, sizeof t);
    ib_error err = {0};
    CHECK(model_preset("vit_tiny_patch16_224", &t.model, &err) == 0, "preset: %s", err.msg);
    t.model.img_size = 32, t.model.patch_size = 16, t.model.num_classes = 10;
    t.batch_size = batch;
    return t;
}

static void reset(double per_sample, double opt)
{
    memset(&M, 0, sizeof M);
    M.per_sample_s = per_sample, M.opt_s = opt;
}

static void test_growth(void)
{
    /* 1 ms a sample, target huge: the four rounds alone decide, 1, 8, 64, 512, under a run of 1000 */
    reset(0.0001, 0);
    ib_train_config t = config(1000);
    bench_probe p;
    ib_error err = {0};
    CHECK(bench_probe_step(&mock_ops, &t, 1e9, NULL, &p, &err) == 0, "growth: %s", err.msg);
    CHECK(p.batch == 512 && M.creates == 4 && M.batches[0] == 1 && M.batches[1] == 8 && M.batches[2] == 64 &&
              M.batches[3] == 512,
          "rounds: batch %d after %d creates (%d, %d, %d, %d)", p.batch, M.creates, M.batches[0], M.batches[1],
          M.batches[2], M.batches[3]);
    CHECK(M.destroys == M.creates, "%d backends created, %d destroyed", M.creates, M.destroys);
    /* never past the run's batch: 1, 8, then 20 */
    reset(0.0001, 0);
    t = config(20);
    CHECK(bench_probe_step(&mock_ops, &t, 1e9, NULL, &p, &err) == 0 && p.batch == 20 && M.creates == 3,
          "a run of 20: probe batch %d after %d creates", p.batch, M.creates);
    /* 40 ms a sample, target 0.25 s: batch 1 (0.04 s) is under it, batch 8 (0.32 s) is not */
    reset(0.04, 0);
    t = config(128);
    CHECK(bench_probe_step(&mock_ops, &t, 0.25, NULL, &p, &err) == 0 && p.batch == 8 && M.creates == 2,
          "target 0.25 s at 40 ms a sample: probe batch %d after %d creates", p.batch, M.creates);
    CHECK(p.forward_backward_s >= 0.32 && p.forward_backward_s < 1.0, "batch 8: forward+backward %.3f s, slept 0.32",
          p.forward_backward_s);
}

static void test_timing(void)
{
    /* the optimizer timed apart from forward+backward */
    reset(0.01, 0.05);
    ib_train_config t = config(1);
    bench_probe p;
    ib_error err = {0};
    CHECK(bench_probe_step(&mock_ops, &t, 0, NULL, &p, &err) == 0, "%s", err.msg);
    CHECK(p.batch == 1 && p.forward_backward_s >= 0.01 && p.forward_backward_s < 0.04 && p.optimizer_s >= 0.05 &&
              p.optimizer_s < 0.2,
          "fb %.4f s (slept 0.01), opt %.4f s (slept 0.05)", p.forward_backward_s, p.optimizer_s);
    /* one warm-up step, then three timed ones (a step under a second): whole steps, optimizer included */
    CHECK(M.fb_calls == 4 && M.opt_calls == 4, "%d forward+backward and %d optimizer calls, want 4 and 4", M.fb_calls,
          M.opt_calls);
    /* a stalled warm-up step is not the step time */
    reset(0.01, 0);
    M.stall_call = 1, M.stall_s = 0.5;
    CHECK(bench_probe_step(&mock_ops, &t, 0, NULL, &p, &err) == 0 && p.forward_backward_s < 0.3,
          "the warm-up's 0.5 s stall counted: fb %.3f s", p.forward_backward_s);
    /* a stalled timed step among three short ones: the fastest is taken */
    reset(0.01, 0);
    M.stall_call = 2, M.stall_s = 0.5;
    CHECK(bench_probe_step(&mock_ops, &t, 0, NULL, &p, &err) == 0 && p.forward_backward_s < 0.3,
          "a timed step's 0.5 s stall counted: fb %.3f s", p.forward_backward_s);
}

static void test_failures(void)
{
    reset(0.0001, 0);
    M.fail_create_at_batch = 8;
    ib_train_config t = config(64);
    bench_probe p;
    ib_error err = {0};
    CHECK(bench_probe_step(&mock_ops, &t, 1e9, NULL, &p, &err) == -1 && strstr(err.msg, "no memory at batch 8"),
          "a backend that cannot be built: '%s'", err.msg);
    CHECK(M.destroys == M.creates, "%d backends created, %d destroyed", M.creates, M.destroys);
    reset(0.0001, 0);
    volatile sig_atomic_t stop = SIGINT;
    memset(&err, 0, sizeof err);
    CHECK(bench_probe_step(&mock_ops, &t, 1e9, &stop, &p, &err) == -1 && strstr(err.msg, "interrupted") &&
              M.creates == 1 && M.destroys == 1,
          "stop raised: '%s', %d created", err.msg, M.creates);
}

static void estimate_is(bench_probe p, int batch, int warmup, int steps, double duration, double step, int w, int timed,
                        double total)
{
    bench_estimate e;
    bench_estimate_run(&p, batch, warmup, steps, duration, 5, &e);
    CHECK(fabs(e.step_s - step) < 1e-9 && e.warmup_steps == w && e.timed_steps == timed &&
              fabs(e.total_s - total) < 1e-6 * (total > 1 ? total : 1),
          "batch %d warmup %d steps %d duration %g: step %.9g (want %g), %d + %d steps (want %d + %d), total %.9g "
          "(want %g)",
          batch, warmup, steps, duration, e.step_s, step, e.warmup_steps, e.timed_steps, w, timed, e.total_s, total);
}

static void test_estimate(void)
{
    const bench_probe p = {2, 0.5, 0.1};                           /* step at batch 8: 0.5 x 8/2 + 0.1 = 2.1 s */
    estimate_is(p, 8, -1, 0, 10, 2.1, 3, 5, 3 * 2.1 + 5 * 2.1);    /* ceil(10/2.1) = 5 = the minimum */
    estimate_is(p, 8, -1, 0, 100, 2.1, 3, 48, 3 * 2.1 + 48 * 2.1); /* ceil(47.6) */
    estimate_is(p, 8, 2, 7, 0, 2.1, 2, 7, 9 * 2.1);
    estimate_is(p, 2, 0, 0, 1, 0.6, 0, 5, 5 * 0.6); /* unscaled; 5 steps outlast 1 s */
    const bench_probe zero = {1, 0, 0};             /* a step too short to time: the window still lasts */
    estimate_is(zero, 8, -1, 0, 30, 0, 3, 5, 30);
    const bench_probe tiny = {1, 1e-12, 0}; /* a week of 8e-12 s steps: the count saturates */
    estimate_is(tiny, 8, 0, 0, 7 * 86400.0, 8e-12, 0, INT_MAX, 7 * 86400.0);
}

int main(void)
{
    test_estimate();
    test_growth();
    test_timing();
    test_failures();
    if (failures) fprintf(stderr, "measure_probe: %d failure(s)\n", failures);
    return failures != 0;
}
