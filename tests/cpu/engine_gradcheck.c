/* engine_gradcheck: the CPU backend's loss, logits and analytic gradients against an independent
 * double-precision forward (engine_ref.h) and its central finite differences, on a tiny ViT with
 * every tensor family present.  fp32 must match tightly; bf16 autocast must stay close (cosine). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_ref.h"
#include "instbench/backend.h"

#include "check.h"

static unsigned long long lcg = 12345;
static double urand(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return ((lcg >> 11) + 0.5) / 9007199254740992.0;
}

int main(void)
{
    ib_train_config cfg;
    memset(&cfg, 0, sizeof cfg);
    vit_config *c = &cfg.model;
    snprintf(c->name, sizeof c->name, "custom");
    /* T = 10 tokens, hd = 4 (scale 1/2), F = 24 (ratio 2), 2 blocks, C = 7 */
    c->img_size = 9, c->patch_size = 3, c->in_chans = 3, c->embed_dim = 12, c->depth = 2, c->num_heads = 3;
    c->mlp_ratio = 2.0, c->num_classes = 7;
    cfg.batch_size = 3;
    cfg.seed = 7;
    backend_default_optim(IB_OPT_ADAM, &cfg.optim);

    model_layout l;
    ib_error err;
    if (model_layout_build(c, &l, &err)) {
        fprintf(stderr, "layout: %s\n", err.msg);
        return 1;
    }
    const int B = cfg.batch_size, S = c->img_size, C = c->num_classes;
    const size_t nimg = (size_t)B * 3 * S * S, P = l.total;
    float *images = malloc(nimg * sizeof *images);
    double *dimages = malloc(nimg * sizeof *dimages);
    int32_t labels[3] = {1, 6, 3};
    int dlabels[3] = {1, 6, 3};
    for (size_t i = 0; i < nimg; i++) dimages[i] = images[i] = (float)(2 * urand() - 1);

    /* Parameters: the timm-like init, but with LayerNorm and biases perturbed so that every
     * tensor's gradient is generic (no exactly-zero biases, no unit LN weights). */
    float *params = malloc(P * sizeof *params);
    model_init_params(c, &l, params, 3);
    for (size_t i = 0; i < P; i++) params[i] += (float)(0.3 * (urand() - 0.5));
    double *dp = malloc(P * sizeof *dp);
    for (size_t i = 0; i < P; i++) dp[i] = params[i];
    ref_ctx r = {c, &l, dp};
    double *ref_logits = malloc(sizeof(double) * B * C);
    const double ref_loss = ref_forward(&r, dimages, dlabels, B, ref_logits);

    for (int prec = 0; prec < 2; prec++) {
        cfg.precision = prec ? IB_PREC_BF16 : IB_PREC_FP32;
        ib_backend *be;
        if (backend_create("cpu", &cfg, &be, &err)) {
            fprintf(stderr, "backend: %s\n", err.msg);
            return 1;
        }
        float loss, *grads = malloc(P * sizeof *grads), logits[3 * 7];
        if (be->ops->set_params(be, params, &err) || be->ops->set_inputs(be, images, labels, &err) ||
            be->ops->forward_backward(be, &loss, NULL, NULL, &err) || be->ops->get_grads(be, grads, &err) ||
            be->ops->get_logits(be, logits, &err)) {
            fprintf(stderr, "step: %s\n", err.msg);
            return 1;
        }
        const char *pn = prec ? "bf16" : "fp32";
        double lmax = 0, lerr = 0;
        for (int i = 0; i < B * C; i++) {
            lmax = fmax(lmax, fabs(ref_logits[i]));
            lerr = fmax(lerr, fabs(logits[i] - ref_logits[i]));
        }
        printf("%s: loss %.7f (reference %.7f), logits max error %.2e of max |logit| %.3f\n", pn, loss, ref_loss, lerr,
               lmax);
        CHECK(fabs(loss - ref_loss) <= (prec ? 2e-2 : 1e-5) * fabs(ref_loss), "%s loss %g vs %g", pn, loss, ref_loss);
        CHECK(lerr <= (prec ? 3e-2 : 1e-5) * lmax, "%s logits max error %g", pn, lerr);

        /* Sample entries of every tensor; central differences of the double forward. */
        for (size_t t = 0; t < l.count; t++) {
            const model_tensor *mt = &l.tensors[t];
            const int ns = mt->numel < 6 ? (int)mt->numel : 6;
            double num = 0, den = 0, dot = 0, na = 0;
            for (int s = 0; s < ns; s++) {
                size_t idx = mt->offset + (mt->numel <= 6 ? (size_t)s : (size_t)(urand() * mt->numel));
                const double h = 1e-5, keep = dp[idx];
                dp[idx] = keep + h;
                double lp = ref_forward(&r, dimages, dlabels, B, NULL);
                dp[idx] = keep - h;
                double lm = ref_forward(&r, dimages, dlabels, B, NULL);
                dp[idx] = keep;
                const double fd = (lp - lm) / (2 * h), an = grads[idx];
                num += (an - fd) * (an - fd), den += fd * fd, dot += an * fd, na += an * an;
            }
            const double rel = sqrt(num / (den + 1e-30)), cosv = dot / sqrt(na * den + 1e-60);
            if (prec == 0)
                CHECK(rel <= 1e-3 || sqrt(num) < 1e-7, "fp32 grad %s: relative L2 error %.3e", mt->name, rel);
            else CHECK(cosv >= 0.99 || sqrt(den) < 1e-7, "bf16 grad %s: cosine %.5f", mt->name, cosv);
            if (ib_log_level > 1 || rel > 1e-3) printf("  %s %-28s rel %.2e cos %.6f\n", pn, mt->name, rel, cosv);
        }
        free(grads);
        be->ops->destroy(be);
    }
    free(images), free(dimages), free(params), free(dp), free(ref_logits);
    model_layout_free(&l);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("gradient check passed\n");
    return 0;
}
