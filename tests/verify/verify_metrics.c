/* verify's error metrics and tolerances against values computed by hand (see each comment). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "instbench/verify.h"

#include "check.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (fabs(b) + 1e-300); }

int main(void)
{
    verify_errors e;
    /* got (1, 2, 2) vs expected (1, 2, 3): diff (0, 0, -1); |exp| = sqrt 14, |got| = 3;
     * max_abs 1, max_rel 1/3, rel_l2 1/sqrt 14, cosine (1 + 4 + 6) / (3 sqrt 14) */
    const float g1[3] = {1, 2, 2}, e1[3] = {1, 2, 3};
    verify_measure(g1, e1, 3, &e);
    CHECK(near(e.max_abs, 1.0), "max_abs %g", e.max_abs);
    CHECK(near(e.max_rel, 1.0 / 3), "max_rel %g", e.max_rel);
    CHECK(near(e.rel_l2, 1 / sqrt(14.0)), "rel_l2 %g", e.rel_l2);
    CHECK(near(e.cosine, 11 / (3 * sqrt(14.0))), "cosine %g", e.cosine);

    /* a scaled copy: cosine exactly 1 though rel_l2 is 0.5 (why bf16 gradients use cosine) */
    const float g2[2] = {1.5f, -3}, e2[2] = {1, -2};
    verify_measure(g2, e2, 2, &e);
    CHECK(near(e.cosine, 1.0) && near(e.rel_l2, 0.5), "scaled: cosine %g rel_l2 %g", e.cosine, e.rel_l2);

    /* zero reference: exact zeros pass, anything else is infinitely wrong */
    const float z[2] = {0, 0}, small[2] = {0, 1e-30f};
    verify_measure(z, z, 2, &e);
    CHECK(e.rel_l2 == 0 && e.max_rel == 0 && e.cosine == 1, "zero vs zero");
    verify_measure(small, z, 2, &e);
    CHECK(isinf(e.rel_l2) && isinf(e.max_rel) && e.cosine == 0, "nonzero vs zero");

    /* NaN anywhere fails every check */
    const float n[2] = {1, NAN};
    verify_measure(n, e2, 2, &e);
    CHECK(isnan(e.rel_l2) && isnan(e.cosine) && isnan(e.max_rel), "NaN not propagated");

    /* tolerances of the issue */
    verify_tolerance t;
    verify_default_tolerance(IB_PREC_FP32, &t);
    CHECK(t.logits_metric == VERIFY_MAX_REL && t.logits_limit == 1e-4 && t.grads_metric == VERIFY_REL_L2 &&
              t.grads_limit == 1e-3 && t.losses_limit == 1e-4,
          "fp32 tolerances");
    verify_default_tolerance(IB_PREC_BF16, &t);
    CHECK(t.logits_metric == VERIFY_REL_L2 && t.logits_limit == 3e-2 && t.grads_metric == VERIFY_COSINE &&
              t.grads_limit == 0.99 && t.losses_limit == 2e-2,
          "bf16 tolerances");

    /* verify_compare on a 1-block model: a perturbed gradient tensor fails, the rest pass */
    verify_reference ref = {0};
    ref.cfg.model = (vit_config){.img_size = 8,
                                 .patch_size = 4,
                                 .in_chans = 3,
                                 .embed_dim = 4,
                                 .depth = 1,
                                 .num_heads = 2,
                                 .mlp_ratio = 4,
                                 .num_classes = 3};
    ref.cfg.batch_size = 2;
    ib_error err;
    if (model_layout_build(&ref.cfg.model, &ref.layout, &err)) {
        fprintf(stderr, "layout: %s\n", err.msg);
        return 1;
    }
    size_t total = ref.layout.total;
    float logits[6] = {1, 2, 3, -1, -2, -3}, logits2[6] = {1, 2, 3, -1, -2, -3.0001f};
    float losses[2] = {1.0f, 0.9f}, losses2[2] = {1.0f, 0.9f * (1 + 2e-4f)};
    float grads[4096], grads2[4096];
    CHECK(total <= 4096, "layout too big for the test: %zu", total);
    for (size_t i = 0; i < total && i < 4096; i++) grads[i] = grads2[i] = (float)((i % 7) + 1) * 0.01f;
    const model_tensor *hb = model_layout_find(&ref.layout, "head.bias");
    grads2[hb->offset] *= 1.5f;
    verify_outputs a = {logits, 1.0f, grads, losses, 2}, b = {logits2, 1.0f, grads2, losses2, 2};
    verify_report r;
    verify_default_tolerance(IB_PREC_FP32, &t);
    CHECK(!verify_compare(&ref, &a, &b, &t, &r, &err), "compare");
    CHECK(!r.pass, "perturbed run passed");
    /* logits: 1e-4 / 3 max_rel passes; head.bias fails; losses[1] off by 2e-4 relative fails */
    size_t failed_head = 0, failed_other = 0, failed_loss1 = 0;
    for (size_t i = 0; i < r.count; i++) {
        if (r.checks[i].pass) continue;
        if (!strcmp(r.checks[i].name, "grad.head.bias")) failed_head++;
        else if (!strcmp(r.checks[i].name, "losses[1]")) failed_loss1++;
        else failed_other++, fprintf(stderr, "unexpected failure %s\n", r.checks[i].name);
    }
    CHECK(failed_head == 1 && failed_loss1 == 1 && failed_other == 0 && r.failed == 2, "failures %zu", r.failed);
    CHECK(r.count == 2 + ref.layout.count + 2, "check count %zu", r.count);
    verify_report_free(&r);
    model_layout_free(&ref.layout);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("verify_metrics: all checks passed\n");
    return failures ? 1 : 0;
}
