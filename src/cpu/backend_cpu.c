/* cpu/backend_cpu: the ib_backend interface over cpu_vit (the reference backend). */
#include "instbench/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/vit.h"
#include "instbench/backend_impl.h"

static cpu_vit *impl(ib_backend *b) { return (cpu_vit *)b->impl; }

static int set_inputs(ib_backend *b, const float *images, const int32_t *labels, ib_error *err)
{
    cpu_vit *v = impl(b);
    const vit_config *c = &v->cfg.model;
    const int B = v->plan.B;
    if (model_plan_check_labels(&v->plan, labels, err)) return -1;
    memcpy(v->buf.images, images, (size_t)B * c->in_chans * c->img_size * c->img_size * sizeof(float));
    memcpy(v->buf.labels, labels, (size_t)B * sizeof(int32_t));
    v->have_inputs = 1;
    return 0;
}

static int forward_backward(ib_backend *b, float *loss, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    if (cpu_vit_forward(impl(b), loss, err)) return -1;
    return cpu_vit_backward(impl(b), cb, user, err);
}

static int forward(ib_backend *b, float *loss, ib_error *err) { return cpu_vit_forward(impl(b), loss, err); }
static int optimizer_step(ib_backend *b, ib_error *err) { return cpu_vit_optimizer_step(impl(b), err); }
static int synchronize(ib_backend *b, ib_error *err) { return 0; }
static float *grad_block(ib_backend *b) { return impl(b)->buf.grads; }

static int get_params(ib_backend *b, float *host, ib_error *err)
{
    memcpy(host, impl(b)->buf.params, b->layout.total * sizeof(float));
    return 0;
}

static int set_params(ib_backend *b, const float *host, ib_error *err)
{
    memcpy(impl(b)->buf.params, host, b->layout.total * sizeof(float));
    cpu_vit_refresh_bf16(impl(b));
    return 0;
}

static int get_grads(ib_backend *b, float *host, ib_error *err)
{
    memcpy(host, impl(b)->buf.grads, b->layout.total * sizeof(float));
    return 0;
}

static int get_logits(ib_backend *b, float *host, ib_error *err)
{
    cpu_vit *v = impl(b);
    memcpy(host, v->buf.logits, (size_t)v->plan.B * v->plan.C * sizeof(float));
    return 0;
}

static int get_state(ib_backend *b, ib_state_block which, void *host, ib_error *err)
{
    size_t bytes;
    const void *src = backend_state_block(&impl(b)->buf, which, b->layout.total, &bytes, err);
    if (!src) return -1;
    memcpy(host, src, bytes);
    return 0;
}

static void destroy(ib_backend *b)
{
    if (b) cpu_vit_free(impl(b));
    backend_impl_free(b);
}

/* What the backend needs to run a config besides a valid plan (model, batch, precision; threads
 * in cpu_vit_plan): ops index rows and GEMM dims with int, so the widest activation must
 * stay below 2^31 elements (far beyond any memory this runs on). */
static int check_config(const ib_train_config *cfg, ib_error *err)
{
    if (model_plan_check(&cfg->model, cfg->batch_size, cfg->precision, err)) return -1;
    const double T = model_seq_len(&cfg->model), D = cfg->model.embed_dim, F = model_mlp_hidden(&cfg->model);
    const double widest = (double)cfg->batch_size * T * (3 * D > F ? 3 * D : F);
    if (widest > 2147483647.0 || (double)cfg->batch_size * cfg->model.num_heads * T * T > 2147483647.0)
        return ib_error_set(err, IB_EXIT_USAGE,
                            "batch size %d is too large for this model on the CPU backend "
                            "(an activation would exceed 2^31 elements)",
                            cfg->batch_size);
    return 0;
}

size_t cpu_backend_memory_estimate(const ib_train_config *cfg)
{
    ib_error err;
    model_plan p;
    /* the plan counts bytes in size_t even for batches check_config would refuse, so the estimate
     * stays linear in the batch for callers that search for the largest batch that fits */
    return cpu_vit_plan(cfg, &p, &err) ? IB_MEMORY_REFUSED : model_plan_footprint(&p);
}

/* cpu_vit_init as backend_impl_create calls it (a failed one leaves nothing behind) */
static int init_impl(void *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err)
{
    return cpu_vit_init(v, cfg, layout, err);
}

int cpu_backend_create(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    *out = NULL;
    if (check_config(cfg, err)) return -1;
    return backend_impl_create(&cpu_backend_ops, cfg, sizeof(cpu_vit), init_impl, out, err);
}

/* The MFU denominator on a CPU: the rate oneDNN reaches on every matmul shape of one training
 * step, on all cores (cpu_gemm_rate): a measured roofline, not a datasheet figure, and labelled
 * so in the result. */
static int peak_measure(const ib_train_config *cfg, const volatile sig_atomic_t *stop, double *tflops, char *source,
                        size_t source_len, ib_error *err)
{
    ib_train_config all = *cfg;
    all.threads = 0;
    double fps = 0, seconds = 1.0;
    /* Tests shorten the measurement; a figure from a shorter window is noisier, not biased. */
    const char *env = getenv("INSTBENCH_CPU_PEAK_SECONDS");
    if (env && env[0] && util_parse_double(env, 0.001, 60, &seconds) != 0) seconds = 1.0;
    /* -v: when start-up is in the probe (tests/measure/measure_cli_startup.py interrupts it then) */
    ib_debug("cpu peak: timing oneDNN's GEMM rate on this model's shapes for %.3g s", seconds);
    if (cpu_gemm_rate(&all, seconds, stop, &fps, err)) return -1;
    *tflops = fps / 1e12;
    long vcpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* the probe runs the backend's own GEMM path, emulated bf16 included */
    snprintf(source, source_len,
             "measured: oneDNN %s%s GEMM rate on this model's shapes, all %ld vCPUs (not a datasheet figure)",
             cfg->precision == IB_PREC_BF16 ? "bf16" : "fp32",
             cfg->precision == IB_PREC_BF16 && !cpu_bf16_native() ? " (emulated: widened to fp32)" : "",
             vcpus > 0 ? vcpus : 1);
    return 0;
}

/* the reference runs everywhere oneDNN 2.x was there to build it */
static const char *unavailable_reason(void) { return cpu_gemm_unavailable(); }
static int device_count(void) { return 1; }
static const char *bf16_mode(void) { return cpu_bf16_native() ? "native" : "emulated"; }

/* No dp_*: CPU ranks average through src/comm's in-process allreduce. */
const ib_backend_ops cpu_backend_ops = {
    .name = "cpu",
    .device = IB_DEVICE_HOST,
    .unavailable_reason = unavailable_reason,
    .device_count = device_count,
    .bf16_mode = bf16_mode,
    .memory_estimate = cpu_backend_memory_estimate,
    .peak_measure = peak_measure,
    .create = cpu_backend_create,
    .set_inputs = set_inputs,
    .forward_backward = forward_backward,
    .forward = forward,
    .optimizer_step = optimizer_step,
    .synchronize = synchronize,
    .grad_block = grad_block,
    .get_params = get_params,
    .set_params = set_params,
    .get_grads = get_grads,
    .get_logits = get_logits,
    .get_state = get_state,
    .destroy = destroy,
};
