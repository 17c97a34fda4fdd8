/* verify/compare: per-tensor error metrics and the tolerances -> checks and PASS/FAIL. */
#include "instbench/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *verify_metric_name(verify_metric m)
{
    switch (m) {
    case VERIFY_MAX_REL: return "max_rel";
    case VERIFY_REL_L2: return "rel_l2";
    case VERIFY_COSINE: return "cosine";
    }
    return "?";
}

void verify_default_tolerance(ib_precision p, verify_tolerance *t)
{
    if (p == IB_PREC_BF16) {
        *t = (verify_tolerance){.logits_metric = VERIFY_REL_L2,
                                .logits_limit = 3e-2,
                                .grads_metric = VERIFY_COSINE,
                                .grads_limit = 0.99,
                                .losses_limit = 2e-2};
    } else {
        *t = (verify_tolerance){.logits_metric = VERIFY_MAX_REL,
                                .logits_limit = 1e-4,
                                .grads_metric = VERIFY_REL_L2,
                                .grads_limit = 1e-3,
                                .losses_limit = 1e-4};
    }
}

/* bf16: both backends round to bf16 at autocast's points except that fused attention (the CUDA
 * step's cuDNN SDPA) rounds the probabilities before normalising them, as every flash attention
 * does: the fixtures then differ by about one bf16 rounding in the logits (rel L2 1e-3 to 2.4e-3
 * with the built-in fused kernels that preceded cuDNN's; 4e-5 with the unfused path), so the limit
 * is 1e-2 (about 4 such roundings), a third of the limit against timm (3e-2). */
void verify_pair_tolerance(ib_precision p, verify_tolerance *t)
{
    verify_default_tolerance(p, t);
    if (p == IB_PREC_BF16)
        *t = (verify_tolerance){.logits_metric = VERIFY_REL_L2,
                                .logits_limit = 1e-2,
                                .grads_metric = VERIFY_REL_L2,
                                .grads_limit = 2e-2,
                                .losses_limit = 1e-3};
}

/* num / den where a zero denominator means "exact match required". */
static double ratio(double num, double den)
{
    if (isnan(num) || isnan(den)) return NAN;
    if (den > 0) return num / den;
    return num == 0 ? 0.0 : INFINITY;
}

void verify_measure(const float *got, const float *exp, size_t n, verify_errors *o)
{
    double max_abs = 0, max_ref = 0, d2 = 0, g2 = 0, e2 = 0, ge = 0;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], e = exp[i], d = g - e;
        if (!isfinite(g) || !isfinite(e)) bad = 1;
        if (fabs(d) > max_abs) max_abs = fabs(d);
        if (fabs(e) > max_ref) max_ref = fabs(e);
        d2 += d * d;
        g2 += g * g;
        e2 += e * e;
        ge += g * e;
    }
    if (bad) {
        o->max_abs = o->max_rel = o->rel_l2 = o->cosine = NAN;
        return;
    }
    o->max_abs = max_abs;
    o->max_rel = ratio(max_abs, max_ref);
    o->rel_l2 = ratio(sqrt(d2), sqrt(e2));
    if (g2 == 0 && e2 == 0) o->cosine = 1.0;
    else if (g2 == 0 || e2 == 0) o->cosine = 0.0;
    else o->cosine = ge / (sqrt(g2) * sqrt(e2));
}

static double metric_value(const verify_errors *e, verify_metric m)
{
    return m == VERIFY_MAX_REL ? e->max_rel : m == VERIFY_REL_L2 ? e->rel_l2 : e->cosine;
}

static void add_check(verify_report *r, const char *name, int ndim, const int64_t *shape, const float *got,
                      const float *exp, size_t n, verify_metric metric, double limit)
{
    verify_check *c = &r->checks[r->count++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->ndim = ndim;
    for (int i = 0; i < ndim && i < 4; i++) c->shape[i] = shape[i];
    verify_measure(got, exp, n, &c->err);
    c->metric = metric;
    c->limit = limit;
    c->value = metric_value(&c->err, metric);
    /* written so that NaN fails */
    c->pass = metric == VERIFY_COSINE ? c->value >= limit : c->value <= limit;
    if (!c->pass) r->failed++;
}

int verify_compare(const verify_reference *ref, const verify_outputs *exp, const verify_outputs *got,
                   const verify_tolerance *tol, verify_report *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    const model_layout *l = &ref->layout;
    int steps = exp->steps < got->steps ? exp->steps : got->steps;
    out->checks = calloc(l->count + 2 + (size_t)steps, sizeof *out->checks);
    if (!out->checks) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");

    const int64_t lshape[2] = {ref->cfg.batch_size, ref->cfg.model.num_classes};
    add_check(out, "logits", 2, lshape, got->logits, exp->logits, (size_t)(lshape[0] * lshape[1]), tol->logits_metric,
              tol->logits_limit);
    add_check(out, "loss", 0, NULL, &got->loss, &exp->loss, 1, VERIFY_MAX_REL, tol->losses_limit);
    char name[80];
    for (size_t i = 0; i < l->count; i++) {
        const model_tensor *t = &l->tensors[i];
        snprintf(name, sizeof name, "grad.%s", t->name);
        add_check(out, name, t->ndim, t->shape, got->grads + t->offset, exp->grads + t->offset, t->numel,
                  tol->grads_metric, tol->grads_limit);
    }
    for (int s = 0; s < steps; s++) {
        snprintf(name, sizeof name, "losses[%d]", s);
        add_check(out, name, 0, NULL, &got->losses[s], &exp->losses[s], 1, VERIFY_MAX_REL, tol->losses_limit);
    }
    out->pass = out->failed == 0 && exp->steps == got->steps;
    return 0;
}

void verify_report_free(verify_report *r)
{
    free(r->checks);
    memset(r, 0, sizeof *r);
}
