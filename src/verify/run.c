/* verify/run: one backend through the reference's training run, recording what the reference
 * recorded (logits, loss and gradients at the initial weights, then the loss before each update). */
#include "instbench/verify.h"

#include <stdlib.h>
#include <string.h>

void verify_outputs_free(verify_outputs *o)
{
    free(o->logits);
    free(o->grads);
    free(o->losses);
    memset(o, 0, sizeof *o);
}

int verify_run_backend(const char *backend, const verify_reference *ref, ib_precision precision, int threads,
                       verify_outputs *out, double *seconds, ib_error *err)
{
    memset(out, 0, sizeof *out);
    const ib_backend_ops *ops = backend_find(backend);
    const char *why = ops ? ops->unavailable_reason() : "unknown backend (cpu, cuda)";
    if (why) return ib_error_set(err, IB_EXIT_RUNTIME, "backend '%s' is not available: %s", backend, why);
    ib_train_config cfg = ref->cfg;
    cfg.precision = precision;
    cfg.threads = threads;
    cfg.device = 0;

    const size_t B = (size_t)cfg.batch_size, C = (size_t)cfg.model.num_classes;
    out->steps = ref->steps;
    out->logits = malloc(B * C * sizeof(float));
    out->grads = malloc(ref->layout.total * sizeof(float));
    out->losses = malloc((size_t)ref->steps * sizeof(float));
    if (!out->logits || !out->grads || !out->losses) {
        verify_outputs_free(out);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    }

    ib_backend *b = NULL;
    if (ops->create(&cfg, &b, err)) {
        verify_outputs_free(out);
        return -1;
    }
    if (b->layout.total != ref->layout.total) {
        ib_error_set(err, IB_EXIT_RUNTIME, "backend '%s' has %zu parameters, the reference %zu", backend,
                     b->layout.total, ref->layout.total);
        b->ops->destroy(b); /* after the message: it reads b->layout */
        verify_outputs_free(out);
        return -1;
    }
    double t0 = util_now_seconds();
    int rc = -1;
    float loss = 0;
    if (b->ops->set_params(b, ref->params, err) || b->ops->set_inputs(b, ref->images, ref->labels, err)) goto done;
    for (int s = 0; s < ref->steps; s++) {
        /* The reference's last update is never observed, so it is skipped here. */
        if (s > 0 && b->ops->optimizer_step(b, err)) goto done;
        if (b->ops->forward_backward(b, &loss, NULL, NULL, err)) goto done;
        if (s == 0) {
            if (b->ops->synchronize(b, err)) goto done;
            if (b->ops->get_logits(b, out->logits, err) || b->ops->get_grads(b, out->grads, err)) goto done;
            out->loss = loss;
        }
        out->losses[s] = loss;
    }
    if (b->ops->synchronize(b, err)) goto done;
    rc = 0;
done:
    if (seconds) *seconds = util_now_seconds() - t0;
    b->ops->destroy(b);
    if (rc) verify_outputs_free(out);
    return rc;
}
