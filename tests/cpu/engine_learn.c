/* engine_learn: training must learn.  A synthetic task whose label is a function of the image
 * (which colour channel carries a bright 8x8 square, anywhere), fresh random images every step;
 * after a few dozen AdamW steps the loss must have fallen well below chance (ln 3) and a held-out
 * batch must be mostly classified right, in fp32 and in bf16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/backend.h"

enum { S = 16, B = 32, CLASSES = 3, STEPS = 60 };

static unsigned long long rng = 2024;
static double urand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

/* noise everywhere, plus a bright 8x8 square at a random place in channel `label` */
static void make_batch(float *img, int32_t *lab)
{
    for (int b = 0; b < B; b++) {
        const int q = (int)(urand() * CLASSES) % CLASSES;
        lab[b] = q;
        float *x = img + (size_t)b * 3 * S * S;
        for (int i = 0; i < 3 * S * S; i++) x[i] = (float)(urand() - 0.5);
        const int oy = (int)(urand() * (S - 8)), ox = (int)(urand() * (S - 8));
        for (int y = 0; y < 8; y++)
            for (int xx = 0; xx < 8; xx++) x[(q * S + oy + y) * S + ox + xx] += 1.0f;
    }
}

static int run(ib_precision prec)
{
    ib_train_config cfg;
    memset(&cfg, 0, sizeof cfg);
    vit_config *m = &cfg.model;
    snprintf(m->name, sizeof m->name, "custom");
    m->img_size = S, m->patch_size = 4, m->in_chans = 3, m->embed_dim = 32, m->depth = 2, m->num_heads = 2;
    m->mlp_ratio = 2, m->num_classes = CLASSES;
    cfg.batch_size = B, cfg.precision = prec, cfg.seed = 1;
    backend_default_optim(IB_OPT_ADAMW, &cfg.optim);
    cfg.optim.lr = 3e-3f; /* a tiny model on a simple task: a few dozen steps at 3e-3 suffice */
    ib_error err;
    ib_backend *be;
    if (backend_create("cpu", &cfg, &be, &err)) {
        fprintf(stderr, "backend: %s\n", err.msg);
        return 1;
    }
    float *img = malloc((size_t)B * 3 * S * S * sizeof *img), loss = 0, first = 0, last5 = 0;
    int32_t lab[B];
    for (int s = 0; s < STEPS; s++) {
        make_batch(img, lab);
        if (be->ops->set_inputs(be, img, lab, &err) || be->ops->forward_backward(be, &loss, NULL, NULL, &err) ||
            be->ops->optimizer_step(be, &err)) {
            fprintf(stderr, "step: %s\n", err.msg);
            return 1;
        }
        if (s == 0) first = loss;
        if (s >= STEPS - 5) last5 += loss / 5;
    }
    /* held-out batch */
    float logits[B * CLASSES];
    make_batch(img, lab);
    int right = 0;
    if (be->ops->set_inputs(be, img, lab, &err) || be->ops->forward(be, &loss, &err) ||
        be->ops->get_logits(be, logits, &err)) {
        fprintf(stderr, "eval: %s\n", err.msg);
        return 1;
    }
    for (int b = 0; b < B; b++) {
        int best = 0;
        for (int c = 1; c < CLASSES; c++)
            if (logits[b * CLASSES + c] > logits[b * CLASSES + best]) best = c;
        right += best == lab[b];
    }
    const char *pn = backend_precision_name(prec);
    printf("%s: loss %.3f at step 1, %.3f over the last 5 of %d steps (chance %.3f); held-out accuracy %d/%d\n", pn,
           first, last5, STEPS, log(CLASSES), right, B);
    int fail = 0;
    if (!(last5 < 0.5 * log(CLASSES)))
        fail = 1, fprintf(stderr, "FAIL: %s loss did not fall below half of chance\n", pn);
    if (right < B * 3 / 4) fail = 1, fprintf(stderr, "FAIL: %s held-out accuracy %d/%d < 75%%\n", pn, right, B);
    free(img);
    be->ops->destroy(be);
    return fail;
}

int main(void)
{
    int fail = run(IB_PREC_FP32);
    fail |= run(IB_PREC_BF16);
    if (!fail) printf("learning test passed\n");
    return fail;
}
