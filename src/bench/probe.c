/* probe: measure --dry-run's time estimate.  A dry run takes seconds, while one step of the run
 * itself may take a minute (ViT-B at batch 128 on two CPU cores), so the probe times one real
 * training step (after a warm-up step) at a small batch, on the run's backend with its model,
 * precision, optimizer, thread count and device, and bench_estimate_run scales it to the run's
 * batch and planned steps (the formula is docs/usage.md's, under --dry-run).
 *
 * Forward + backward and the optimizer step are timed apart: the first grows with the batch, the
 * second is one pass over the parameters whatever the batch, so scaling the whole step by the
 * batch would multiply the optimizer's cost too. */
#include "instbench/bench.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

enum { PROBE_ROUNDS = 4, PROBE_GROWTH = 8, PROBE_STEPS = 3 };
static const double PROBE_SHORT_S = 1.0; /* a step this short is timed PROBE_STEPS times */

/* One step, its two halves each timed to the device's completion. */
static int timed_step(ib_backend *b, double *forward_backward_s, double *optimizer_s, ib_error *err)
{
    const double t0 = util_now_seconds();
    if (b->ops->forward_backward(b, NULL, NULL, NULL, err) || b->ops->synchronize(b, err)) return -1;
    const double t1 = util_now_seconds();
    if (b->ops->optimizer_step(b, err) || b->ops->synchronize(b, err)) return -1;
    *forward_backward_s = t1 - t0;
    *optimizer_s = util_now_seconds() - t1;
    return 0;
}

/* The run's configuration at BATCH: built, a warm-up step, a timed step, destroyed.  Inputs are
 * made once (images [batch, C, H, W] fp32, labels [batch] int32), as --data device does. */
static int probe_at(const ib_backend_ops *ops, const ib_train_config *train, int batch,
                    const volatile sig_atomic_t *stop, bench_probe *out, ib_error *err)
{
    ib_train_config tc = *train;
    tc.batch_size = batch;
    const vit_config *m = &tc.model;
    const size_t pixels = (size_t)m->in_chans * m->img_size * m->img_size;
    float *images = malloc((size_t)batch * pixels * sizeof *images);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    ib_backend *b = NULL;
    int rc = -1;
    double fb = 0, opt = 0; /* the warm-up step's, not used */
    if (!images || !labels) {
        ib_error_set(err, IB_EXIT_RUNTIME, "out of memory for the probe's batch of %d", batch);
        goto done;
    }
    datapipe_fill(images, labels, pixels, batch, m->num_classes, tc.seed + 7919u);
    if (ops->create(&tc, &b, err)) goto done;
    if (b->ops->set_inputs(b, images, labels, err) || b->ops->synchronize(b, err)) goto done;
    /* the first step pays for what only a first step does (page faults, oneDNN primitives, cuDNN
     * plans, a CUDA graph's capture): not the run's step time */
    if (timed_step(b, &fb, &opt, err)) goto done;
    if (stop && *stop) {
        ib_error_set(err, IB_EXIT_RUNTIME, "interrupted");
        goto done;
    }
    /* Under a second a step, the fastest of three: on a shared machine (or one whose CPU quota is
     * spent) a step can stall for a scheduler's period, and one stalled step at batch 1, scaled to
     * the run's batch, would be the whole estimate. */
    double fbs[PROBE_STEPS], opts[PROBE_STEPS];
    int n = 0;
    do {
        if (timed_step(b, &fbs[n], &opts[n], err)) goto done;
        n++;
    } while (n < PROBE_STEPS && fbs[0] + opts[0] < PROBE_SHORT_S && !(stop && *stop));
    int best = 0;
    for (int i = 1; i < n; i++)
        if (fbs[i] + opts[i] < fbs[best] + opts[best]) best = i;
    out->batch = batch;
    out->forward_backward_s = fbs[best];
    out->optimizer_s = opts[best];
    rc = 0;
done:
    if (b) b->ops->destroy(b);
    free(images);
    free(labels);
    return rc;
}

int bench_probe_step(const ib_backend_ops *ops, const ib_train_config *train, double target_s,
                     const volatile sig_atomic_t *stop, bench_probe *out, ib_error *err)
{
    /* From batch 1 up by eights while a step stays under TARGET_S: a GPU at batch 1 mostly waits
     * on kernel launches, which scaling by the batch would count 128 times over; a CPU step is
     * already linear in the batch at 1. */
    int batch = 1;
    for (int round = 1;; round++) {
        /* -v: when the probe runs (tests/measure/measure_cli_estimate.py interrupts it then) */
        ib_debug("dry-run probe: timing a step at batch %d", batch);
        if (probe_at(ops, train, batch, stop, out, err)) return -1;
        if (stop && *stop) return ib_error_set(err, IB_EXIT_RUNTIME, "interrupted");
        if (batch >= train->batch_size || round == PROBE_ROUNDS ||
            out->forward_backward_s + out->optimizer_s >= target_s)
            return 0;
        batch = batch > train->batch_size / PROBE_GROWTH ? train->batch_size : batch * PROBE_GROWTH;
    }
}

void bench_estimate_run(const bench_probe *p, int batch, int warmup, int steps, double duration_s, int min_steps,
                        bench_estimate *out)
{
    out->step_s = p->forward_backward_s * batch / p->batch + p->optimizer_s;
    out->warmup_steps = warmup >= 0 ? warmup : BENCH_WARMUP_MIN;
    if (steps > 0) {
        out->timed_steps = steps;
        out->total_s = (out->warmup_steps + (double)steps) * out->step_s;
        return;
    }
    /* the window ends at the first step boundary past duration_s, with at least min_steps */
    const double n = out->step_s > 0 ? ceil(duration_s / out->step_s) : 0;
    out->timed_steps = n < min_steps ? min_steps : n > INT_MAX ? INT_MAX : (int)n;
    const double window = out->timed_steps * out->step_s;
    out->total_s = out->warmup_steps * out->step_s + (window > duration_s ? window : duration_s);
}
