/* engine_dp: data-parallel equivalence.  2 ranks (threads, comm local) x batch B, gradients
 * averaged through the backward pass's gradient-ready hook, must reach the same parameters after
 * K Adam steps as 1 rank x batch 2B on the concatenated data (fp32). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/backend.h"
#include "instbench/comm.h"

enum { WORLD = 2, B = 4, STEPS = 3 };

static ib_train_config cfg;
static float *images;    /* [WORLD*B, 3, S, S] */
static int32_t *labels;  /* [WORLD*B] */
static size_t img_elems; /* per sample */
static float *result[WORLD];
static size_t hook_floats[WORLD];

typedef struct rank_arg {
    ib_comm *comm;
    int failed;
} rank_arg;
typedef struct hook_ctx {
    ib_comm *comm;
    float *grads;
    int rank;
} hook_ctx;

static int on_grad_ready(void *user, size_t offset, size_t count)
{
    hook_ctx *h = user;
    ib_error err;
    hook_floats[h->rank] += count;
    return h->comm->allreduce_mean(h->comm, h->grads + offset, count, &err);
}

static void *rank_main(void *p)
{
    rank_arg *a = p;
    ib_comm *c = a->comm;
    ib_error err;
    ib_backend *be;
    ib_train_config rc = cfg;
    rc.seed = 100 + c->rank; /* different init per rank: the broadcast below must fix it */
    if (backend_create("cpu", &rc, &be, &err)) goto fail;
    float *params = malloc(be->layout.total * sizeof *params);
    if (be->ops->get_params(be, params, &err) || c->broadcast(c, params, be->layout.total, 0, &err) ||
        be->ops->set_params(be, params, &err))
        goto fail;
    if (be->ops->set_inputs(be, images + (size_t)c->rank * B * img_elems, labels + c->rank * B, &err)) goto fail;
    hook_ctx h = {c, be->ops->grad_block(be), c->rank};
    for (int s = 0; s < STEPS; s++) {
        float loss;
        if (be->ops->forward_backward(be, &loss, on_grad_ready, &h, &err) || be->ops->optimizer_step(be, &err))
            goto fail;
    }
    result[c->rank] = malloc(be->layout.total * sizeof(float));
    be->ops->get_params(be, result[c->rank], &err);
    free(params);
    be->ops->destroy(be);
    return NULL;
fail:
    fprintf(stderr, "rank %d: %s\n", c->rank, err.msg);
    a->failed = 1;
    return NULL;
}

int main(void)
{
    vit_config *m = &cfg.model;
    snprintf(m->name, sizeof m->name, "custom");
    m->img_size = 32, m->patch_size = 8, m->in_chans = 3, m->embed_dim = 32, m->depth = 2, m->num_heads = 2;
    m->mlp_ratio = 4, m->num_classes = 10;
    cfg.precision = IB_PREC_FP32;
    cfg.threads = 1;
    cfg.batch_size = B;
    backend_default_optim(IB_OPT_ADAM, &cfg.optim);
    img_elems = 3 * 32 * 32;
    images = malloc(WORLD * B * img_elems * sizeof *images);
    labels = malloc(WORLD * B * sizeof *labels);
    unsigned long long s = 99;
    for (size_t i = 0; i < WORLD * B * img_elems; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        images[i] = (float)((s >> 40) / 16777216.0 * 2 - 1);
    }
    for (int i = 0; i < WORLD * B; i++) labels[i] = (i * 7) % 10;

    ib_error err;
    ib_comm *comms[WORLD];
    if (comm_local_create(WORLD, comms, &err)) {
        fprintf(stderr, "comm: %s\n", err.msg);
        return 1;
    }
    pthread_t th[WORLD];
    rank_arg args[WORLD];
    for (int r = 0; r < WORLD; r++) {
        args[r] = (rank_arg){comms[r], 0};
        pthread_create(&th[r], NULL, rank_main, &args[r]);
    }
    for (int r = 0; r < WORLD; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < WORLD; r++) {
        if (args[r].failed) return 1;
        comms[r]->destroy(comms[r]);
    }

    /* single rank, batch WORLD*B, same initial parameters (rank 0's seed) */
    ib_train_config one = cfg;
    one.batch_size = WORLD * B;
    one.seed = 100;
    ib_backend *be;
    if (backend_create("cpu", &one, &be, &err) || be->ops->set_inputs(be, images, labels, &err)) {
        fprintf(stderr, "single: %s\n", err.msg);
        return 1;
    }
    const size_t P = be->layout.total;
    float *p0 = malloc(P * sizeof *p0), *p1 = malloc(P * sizeof *p1);
    be->ops->get_params(be, p0, &err);
    for (int st = 0; st < STEPS; st++) {
        float loss;
        if (be->ops->forward_backward(be, &loss, NULL, NULL, &err) || be->ops->optimizer_step(be, &err)) {
            fprintf(stderr, "single: %s\n", err.msg);
            return 1;
        }
    }
    be->ops->get_params(be, p1, &err);
    int fail = 0;
    for (int r = 0; r < WORLD; r++) {
        double dn = 0, pn = 0, un = 0;
        for (size_t i = 0; i < P; i++) {
            const double d = (double)result[r][i] - p1[i], u = (double)p1[i] - p0[i];
            dn += d * d, pn += (double)p1[i] * p1[i], un += u * u;
        }
        const double rel = sqrt(dn / pn), rel_upd = sqrt(dn / un);
        printf("rank %d: parameter relative error %.3e (of the update itself: %.3e); hook saw %zu of %zu floats\n", r,
               rel, rel_upd, hook_floats[r] / STEPS, P);
        if (!(rel <= 1e-5)) fail = 1, fprintf(stderr, "FAIL: rank %d parameters differ (%.3e > 1e-5)\n", r, rel);
        if (!(rel_upd <= 1e-3)) fail = 1, fprintf(stderr, "FAIL: rank %d updates differ (%.3e > 1e-3)\n", r, rel_upd);
        if (hook_floats[r] != STEPS * P)
            fail = 1, fprintf(stderr, "FAIL: the gradient hook covered %zu floats per step, not %zu\n",
                              hook_floats[r] / STEPS, P);
    }
    /* and the two ranks agree bitwise (the same averaged gradients, the same updates) */
    if (memcmp(result[0], result[1], P * sizeof(float))) fail = 1, fprintf(stderr, "FAIL: ranks diverged\n");
    be->ops->destroy(be);
    free(p0), free(p1), free(result[0]), free(result[1]), free(images), free(labels);
    if (!fail) printf("data-parallel equivalence passed\n");
    return fail;
}
