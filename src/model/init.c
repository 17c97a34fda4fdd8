/* model/init: timm-like deterministic initialisation (verify loads weights, so only the
 * statistics matter here: training from this init must behave like training timm's model). */
#include "instbench/model.h"

#include <math.h>
#include <string.h>

typedef struct rng {
    uint64_t s;
    double spare; /* Box-Muller's second normal, returned by the next rng_normal */
    int have_spare;
} rng;

static uint64_t rng_next(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(rng *r) { return ((rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

/* Box-Muller, both of its normals used: one log, one square root and one sin/cos pair (GCC
 * computes both with sincos) for two values.  ViT-H/14 has 632M parameters: initialising them
 * one transcendental pair each took seconds of every measure's start-up and every dry run. */
static double rng_normal(rng *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    const double u = rng_uniform(r), v = rng_uniform(r);
    const double radius = sqrt(-2.0 * log(u)), angle = 6.283185307179586 * v;
    r->spare = radius * sin(angle);
    r->have_spare = 1;
    return radius * cos(angle);
}

/* timm's trunc_normal_(std=s) truncates at absolute +-2 (a=-2, b=2), i.e. by rejection. */
static void fill_trunc_normal(rng *r, float *p, size_t n, double std)
{
    for (size_t i = 0; i < n; i++) {
        double x;
        do x = rng_normal(r) * std;
        while (x < -2.0 || x > 2.0);
        p[i] = (float)x;
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

void model_init_params(const vit_config *c, const model_layout *l, float *params, uint64_t seed)
{
    rng r = {seed * 0x2545F4914F6CDD1Dull + 1, 0, 0};
    const double conv_bound = 1.0 / sqrt((double)c->in_chans * c->patch_size * c->patch_size);
    for (size_t i = 0; i < l->count; i++) {
        const model_tensor *t = &l->tensors[i];
        float *p = params + t->offset;
        if (!strcmp(t->name, "cls_token")) {
            for (size_t j = 0; j < t->numel; j++) p[j] = (float)(rng_normal(&r) * 1e-6);
        } else if (!strcmp(t->name, "pos_embed")) {
            fill_trunc_normal(&r, p, t->numel, 0.02);
        } else if (!strncmp(t->name, "patch_embed.", 12)) {
            for (size_t j = 0; j < t->numel; j++) p[j] = (float)((2.0 * rng_uniform(&r) - 1.0) * conv_bound);
        } else if (strstr(t->name, "norm") && ends_with(t->name, ".weight")) {
            for (size_t j = 0; j < t->numel; j++) p[j] = 1.0f;
        } else if (ends_with(t->name, ".weight")) { /* every Linear */
            fill_trunc_normal(&r, p, t->numel, 0.02);
        } else { /* Linear and LayerNorm biases */
            memset(p, 0, t->numel * sizeof *p);
        }
    }
}
