/* verify: numerics of a backend against a reference (a timm/PyTorch safetensors file written by
 * scripts/data/make_reference.py), or of one backend against another.
 *
 * Three steps, each reusable on its own:
 *   verify_reference_load   file -> config, initial weights, batch, expected outputs
 *   verify_run_backend      any backend on that weights+batch -> the same kind of outputs
 *   verify_compare          expected outputs x observed outputs -> per-tensor errors, PASS/FAIL
 * Comparing CUDA with the CPU backend is two verify_run_backend calls and one verify_compare. */
#ifndef INSTBENCH_VERIFY_H
#define INSTBENCH_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/backend.h"
#include "instbench/model.h"
#include "instbench/util.h"

/* What one training run produces, in the model layout's order. */
typedef struct verify_outputs {
    float *logits; /* [B, classes] at the initial weights */
    float loss;    /* mean cross-entropy at the initial weights */
    float *grads;  /* fp32 gradient block [layout.total], gradients of that loss */
    float *losses; /* [steps]: loss before each of `steps` optimizer updates on the same batch */
    int steps;
} verify_outputs;

typedef struct verify_reference {
    ib_train_config cfg; /* model, batch, optimizer and precision from __metadata__ */
    int steps;
    model_layout layout;
    float *params;   /* initial fp32 parameter block [layout.total] */
    float *images;   /* [B, 3, H, W] */
    int32_t *labels; /* [B] in [0, classes) */
    verify_outputs expected;
    char timm_version[32], torch_version[32];
} verify_reference;

int verify_reference_load(const char *path, verify_reference *out, ib_error *err);
void verify_reference_free(verify_reference *r);

/* Runs BACKEND ("cpu", "cuda") at PRECISION from the reference's weights and batch: forward +
 * backward (logits, loss, grads), then ref->steps optimizer steps recording each loss. */
int verify_run_backend(const char *backend, const verify_reference *ref, ib_precision precision, int threads,
                       verify_outputs *out, double *seconds, ib_error *err);
void verify_outputs_free(verify_outputs *o);

/* Error metrics between an observed tensor and its expected value (double accumulation).
 *   max_abs  max |got - exp|
 *   max_rel  max |got - exp| / max |exp|          (fp32 logits; scalars)
 *   rel_l2   ||got - exp||_2 / ||exp||_2          (fp32 gradients, bf16 logits)
 *   cosine   <got, exp> / (||got|| ||exp||)        (bf16 gradients)
 * Zero references: rel metrics are 0 if got is zero too, else +inf; cosine of two zero tensors is 1.
 * Any NaN/inf in either makes the metrics NaN, which fails every check. */
typedef struct verify_errors {
    double max_abs, max_rel, rel_l2, cosine;
} verify_errors;
void verify_measure(const float *got, const float *expected, size_t n, verify_errors *out);

typedef enum verify_metric { VERIFY_MAX_REL, VERIFY_REL_L2, VERIFY_COSINE } verify_metric;
const char *verify_metric_name(verify_metric m);

/* The tolerances.  fp32: logits max_rel <= 1e-4, grads rel_l2 <= 1e-3, losses max_rel
 * <= 1e-4.  bf16: logits rel_l2 <= 3e-2, grads cosine >= 0.99, losses max_rel <= 2e-2. */
typedef struct verify_tolerance {
    verify_metric logits_metric, grads_metric;
    double logits_limit, grads_limit, losses_limit; /* cosine limits are lower bounds */
} verify_tolerance;
void verify_default_tolerance(ib_precision p, verify_tolerance *out);
/* Two backends of this build against each other (verify --compare-backend): in bf16 they round
 * to bf16 at the same points, so they differ only by fp32 summation order flipping a rounding
 * here and there, far less than either differs from timm (which rounds elsewhere): logits
 * relative L2 <= 2e-3, each gradient relative L2 <= 2e-2, losses <= 1e-3 (about ten times what
 * the CPU-run CUDA step shows against the CPU backend).  fp32: the default tolerance. */
void verify_pair_tolerance(ib_precision p, verify_tolerance *out);

typedef struct verify_check {
    char name[80]; /* "logits", "loss", "grad.<param>", "losses[i]" */
    int ndim;
    int64_t shape[4];
    verify_errors err;
    verify_metric metric;
    double value, limit;
    int pass;
} verify_check;

typedef struct verify_report {
    verify_check *checks;
    size_t count;
    size_t failed;
    int pass;
} verify_report;

/* Compares GOT against EXPECTED for REF's config (shapes, layout).  Fails only on allocation. */
int verify_compare(const verify_reference *ref, const verify_outputs *expected, const verify_outputs *got,
                   const verify_tolerance *tol, verify_report *out, ib_error *err);
void verify_report_free(verify_report *r);

#endif
