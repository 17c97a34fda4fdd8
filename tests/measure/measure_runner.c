/* bench_run against a mock backend whose steps take known times (nanosleep), so the runner's
 * clock, step accounting, breakdown, stop handling and gradient averaging are checked against
 * references that are not the runner's own output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instbench/bench.h"

#include "check.h"

enum { GRAD_N = 1000 };

typedef struct mock_ctl {
    double fb_s, opt_s; /* sleep in forward_backward / optimizer_step */
    volatile sig_atomic_t *stop;
    int stop_after; /* set *stop during this fb call (1-based); 0 never */
    int fail_at;    /* fb call that fails (1-based); 0 never */
    int fb_calls[8], opt_calls[8], inputs[8], bad_grads[8];
} mock_ctl;

typedef struct mock_impl {
    mock_ctl *ctl;
    int rank;
    float grads[GRAD_N];
} mock_impl;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static int m_set_inputs(ib_backend *b, const float *img, const int32_t *lab, ib_error *e)
{
    mock_impl *m = b->impl;
    m->ctl->inputs[m->rank]++;
    return (img && lab) ? 0 : ib_error_set(e, 1, "null inputs");
}

static int m_fb(ib_backend *b, float *loss, ib_grad_ready_fn fn, void *u, ib_error *e)
{
    mock_impl *m = b->impl;
    mock_ctl *c = m->ctl;
    int n = ++c->fb_calls[m->rank];
    if (c->fail_at && n == c->fail_at) return ib_error_set(e, IB_EXIT_RUNTIME, "mock failure at step %d", n);
    sleep_s(c->fb_s);
    for (int i = 0; i < GRAD_N; i++) m->grads[i] = (float)(m->rank + 1); /* mean over 2 ranks: 1.5 */
    if (loss) *loss = (float)n;
    if (c->stop_after && n == c->stop_after && m->rank == 0) *c->stop = SIGINT;
    return 0;
}

static int m_fwd(ib_backend *b, float *loss, ib_error *e) { return 0; }

static int m_opt(ib_backend *b, ib_error *e)
{
    mock_impl *m = b->impl;
    mock_ctl *c = m->ctl;
    c->opt_calls[m->rank]++;
    sleep_s(c->opt_s);
    return 0;
}

static int m_sync(ib_backend *b, ib_error *e) { return 0; }
static float *m_grad_block(ib_backend *b) { return ((mock_impl *)b->impl)->grads; }
static void m_destroy(ib_backend *b)
{
    free(b->impl);
    free(b);
}

/* For ranks > 1 the averaged gradient is checked in the optimizer step. */
static int m_opt_check(ib_backend *b, ib_error *e)
{
    mock_impl *m = b->impl;
    for (int i = 0; i < GRAD_N; i++)
        if (m->grads[i] != 1.5f) {
            m->ctl->bad_grads[m->rank]++;
            break;
        }
    return m_opt(b, e);
}

/* The runner hands rank r a config with device r, which the mock takes as its rank; the control
 * block of the case running is a global (bench_run makes backends through the table's create). */
static mock_ctl *g_ctl;

static int mock_create(const ib_train_config *cfg, ib_backend **out, ib_error *err);
static const ib_backend_ops mock_ops = {
    .name = "mock",
    .device = IB_DEVICE_HOST,
    .create = mock_create,
    .set_inputs = m_set_inputs,
    .forward_backward = m_fb,
    .forward = m_fwd,
    .optimizer_step = m_opt,
    .synchronize = m_sync,
    .grad_block = m_grad_block,
    .destroy = m_destroy,
};
/* the same, with an optimizer step that checks the gradients were averaged */
static int mock_create_checking(const ib_train_config *cfg, ib_backend **out, ib_error *err);
static const ib_backend_ops mock_checking_ops = {
    .name = "mock",
    .device = IB_DEVICE_HOST,
    .create = mock_create_checking,
    .set_inputs = m_set_inputs,
    .forward_backward = m_fb,
    .forward = m_fwd,
    .optimizer_step = m_opt_check,
    .synchronize = m_sync,
    .grad_block = m_grad_block,
    .destroy = m_destroy,
};

static int mock_create_with(const ib_backend_ops *ops, const ib_train_config *cfg, ib_backend **out)
{
    ib_backend *b = calloc(1, sizeof *b);
    mock_impl *m = calloc(1, sizeof *m);
    m->ctl = g_ctl;
    m->rank = cfg->device;
    b->ops = ops;
    b->cfg = *cfg;
    b->impl = m;
    b->layout.total = GRAD_N;
    *out = b;
    return 0;
}

static int mock_create(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    return mock_create_with(&mock_ops, cfg, out);
}

static int mock_create_checking(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    return mock_create_with(&mock_checking_ops, cfg, out);
}

static void base_config(bench_run_config *rc, mock_ctl *ctl, volatile sig_atomic_t *stop)
{
    memset(rc, 0, sizeof *rc);
    rc->train.batch_size = 4;
    rc->train.model.in_chans = 3;
    rc->train.model.img_size = 16;
    rc->train.model.num_classes = 10;
    rc->backend = &mock_ops;
    rc->ranks = 1;
    rc->data = BENCH_DATA_DEVICE;
    rc->workers = 1;
    rc->warmup = 2;
    rc->steps = 10;
    rc->stop = stop;
    g_ctl = ctl;
}

int main(void)
{
    volatile sig_atomic_t stop = 0;
    mock_ctl ctl;
    bench_run_config rc;
    bench_result r;
    ib_error err = {0};

    /* 1. Fixed steps: 20 ms + 5 ms per step. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.020;
    ctl.opt_s = 0.005;
    base_config(&rc, &ctl, &stop);
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(r.steps == 10 && r.warmup_steps == 2, "steps %d warmup %d", r.steps, r.warmup_steps);
    CHECK(ctl.fb_calls[0] == 12 && ctl.opt_calls[0] == 12, "fb %d opt %d", ctl.fb_calls[0], ctl.opt_calls[0]);
    CHECK(ctl.inputs[0] == 1, "device data sets inputs once, got %d", ctl.inputs[0]);
    /* Sleeps never end early; the upper bounds only leave room for a loaded machine. */
    CHECK(r.step_time.median >= 0.025 && r.step_time.median < 0.1, "median %g", r.step_time.median);
    CHECK(r.step_time.p10 <= r.step_time.median && r.step_time.median <= r.step_time.p90, "order");
    CHECK(r.compute_s >= 0.025 && r.compute_s <= r.step_time.median + 1e-6, "compute %g", r.compute_s);
    CHECK(r.data_s < 0.002 && r.comm_s < 0.002, "data %g comm %g", r.data_s, r.comm_s);
    CHECK(r.duration_s >= 10 * 0.025, "duration %g shorter than the sleeps", r.duration_s);
    CHECK(fabs(r.samples_per_second * r.duration_s - 10 * 4) < 1e-6, "sps x duration %g != 40",
          r.samples_per_second * r.duration_s);
    CHECK(fabs(r.step_time.mean * 10 - r.duration_s) < 0.1 * r.duration_s, "mean x steps %g vs duration %g",
          r.step_time.mean * 10, r.duration_s);
    CHECK(r.first_loss == 1.0 && r.last_loss == 12.0, "losses %g %g (first warm-up, last timed)", r.first_loss,
          r.last_loss);
    CHECK(!r.interrupted, "not interrupted");

    /* 2. Stop requested during step 5: the step finishes, nothing more runs, result interrupted. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.002;
    ctl.stop = &stop;
    ctl.stop_after = 5;
    base_config(&rc, &ctl, &stop);
    rc.steps = 1000;
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(r.interrupted, "interrupted flag");
    CHECK(ctl.fb_calls[0] == 5 && ctl.opt_calls[0] == 5, "stopped at the boundary: fb %d opt %d", ctl.fb_calls[0],
          ctl.opt_calls[0]);
    stop = 0;

    /* 3. Two ranks: gradients averaged before every optimizer step, both ranks in lockstep. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.003;
    base_config(&rc, &ctl, &stop);
    rc.ranks = 2;
    rc.backend = &mock_checking_ops;
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(ctl.fb_calls[0] == 12 && ctl.fb_calls[1] == 12, "rank steps %d %d", ctl.fb_calls[0], ctl.fb_calls[1]);
    CHECK(ctl.bad_grads[0] == 0 && ctl.bad_grads[1] == 0, "gradients not averaged: %d %d", ctl.bad_grads[0],
          ctl.bad_grads[1]);
    CHECK(fabs(r.samples_per_second * r.duration_s - 10 * 4 * 2) < 1e-6, "global samples %g != 80",
          r.samples_per_second * r.duration_s);
    CHECK(fabs(r.samples_per_second_per_device * 2 - r.samples_per_second) < 1e-9, "per device");

    /* 4. Duration mode: 0.3 s of 20 ms steps. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.020;
    base_config(&rc, &ctl, &stop);
    rc.steps = 0;
    rc.duration_s = 0.3;
    rc.min_steps = 3;
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(r.duration_s >= 0.3 && r.duration_s < 0.3 + 0.2, "duration %g", r.duration_s);
    CHECK(r.steps >= 3 && r.steps <= 15 && r.duration_s >= r.steps * 0.020, "steps %d in 0.3 s of 20 ms steps",
          r.steps);

    /* 5. Auto warm-up on steady steps settles, from the minimum of 3 on.  The steps are real
     * sleeps, which a loaded machine stretches unevenly (7 and 9 steps were seen with the other
     * core busy), so the bound is "settled before the cap of 30", not "at 3"; the rule itself is
     * checked exactly on fixed times below. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.010;
    base_config(&rc, &ctl, &stop);
    rc.warmup = -1;
    rc.steps = 3;
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(r.warmup_steps >= 3 && r.warmup_steps < 30, "auto warm-up %d", r.warmup_steps);
    double settled[] = {0.5, 0.11, 0.10, 0.105}, unsettled[] = {0.1, 0.1, 0.2};
    CHECK(bench_warmup_settled(settled, 4) == 1, "settled");
    CHECK(bench_warmup_settled(unsettled, 3) == 0, "not settled");

    /* 6. Host data: one worker making 224x224 images for a 1 ms step leaves the step waiting. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fb_s = 0.001;
    base_config(&rc, &ctl, &stop);
    rc.data = BENCH_DATA_HOST;
    rc.train.batch_size = 16;
    rc.train.model.img_size = 224;
    rc.steps = 24;
    CHECK(bench_run(&rc, &r, &err) == 0, "%s", err.msg);
    CHECK(ctl.inputs[0] == 26, "set_inputs every step: %d", ctl.inputs[0]);
    CHECK(r.data_s > 0.003 && r.data_s > r.compute_s, "data %g compute %g", r.data_s, r.compute_s);
    CHECK(r.pipeline_sps > 0, "pipeline throughput recorded");
    /* The step is data-bound, so the pipeline's capacity bounds the throughput (slack for the one
     * batch that may be ready before the window opens: 1/24). */
    CHECK(r.samples_per_second <= 1.15 * r.pipeline_sps, "sps %g > pipeline %g", r.samples_per_second, r.pipeline_sps);

    /* 7. A backend error mid-run ends the run with that error, no result. */
    memset(&ctl, 0, sizeof ctl);
    ctl.fail_at = 4;
    base_config(&rc, &ctl, &stop);
    ib_error_clear(&err);
    CHECK(bench_run(&rc, &r, &err) != 0, "error not reported");
    CHECK(strstr(err.msg, "mock failure at step 4") != NULL && err.code == IB_EXIT_RUNTIME, "message '%s'", err.msg);
    CHECK(ctl.fb_calls[0] == 4 && ctl.opt_calls[0] == 3, "no step after the failure: fb %d opt %d", ctl.fb_calls[0],
          ctl.opt_calls[0]);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("measure_runner: all checks passed\n");
    return failures ? 1 : 0;
}
