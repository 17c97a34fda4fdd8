/* model/plan: the buffers of one training step and their places in one arena (model_plan.h). */
#include "instbench/model_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t model_dtype_size(int dtype)
{
    switch (dtype) {
    case IB_PREC_BF16: return 2;
    case MODEL_DT_F64: return 8;
    case MODEL_DT_BYTE: return 1;
    default: return 4; /* IB_PREC_FP32, MODEL_DT_I32 */
    }
}

int model_plan_check(const vit_config *c, int batch, ib_precision prec, ib_error *err)
{
    if (model_validate(c, err)) return -1;
    if (batch < 1 || batch > 1 << 20)
        return ib_error_set(err, IB_EXIT_USAGE, "batch size %d out of range [1, %d]", batch, 1 << 20);
    if (prec != IB_PREC_FP32 && prec != IB_PREC_BF16)
        return ib_error_set(err, IB_EXIT_USAGE, "unknown precision %d", (int)prec);
    return 0;
}

int model_plan_check_labels(const model_plan *p, const int32_t *labels, ib_error *err)
{
    for (int i = 0; i < p->B; i++)
        if (labels[i] < 0 || labels[i] >= p->C)
            return ib_error_set(err, IB_EXIT_RUNTIME, "label %d of sample %d outside [0, %d)", (int)labels[i], i, p->C);
    return 0;
}

/* Appends one entry.  Its bytes are counted even when it cannot be stored, so the estimate of a
 * plan never depends on whether its list could grow. */
static void add(model_plan *p, int block, const char *name, int dtype, size_t field, int ndim, const size_t *shape)
{
    size_t n = model_dtype_size(dtype);
    for (int i = 0; i < ndim; i++) n *= shape[i];
    const size_t offset = (p->bytes + p->align - 1) & ~(p->align - 1);
    p->bytes = offset + n;
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        model_plan_entry *e = realloc(p->entries, cap * sizeof *e);
        if (!e) {
            p->failed = 1;
            return;
        }
        p->entries = e, p->cap = cap;
    }
    model_plan_entry *e = &p->entries[p->count++];
    memset(e, 0, sizeof *e);
    if (block >= 0) snprintf(e->name, sizeof e->name, "blocks.%d.%s", block, name);
    else snprintf(e->name, sizeof e->name, "%s", name);
    e->dtype = dtype, e->ndim = ndim, e->offset = offset, e->bytes = n, e->block = block, e->field = field;
    memcpy(e->shape, shape, (size_t)ndim * sizeof *shape);
}

void model_plan_add(model_plan *p, const char *name, int dtype, size_t field, int ndim, const size_t *shape)
{
    add(p, MODEL_AT_EXT, name, dtype, field, ndim, shape);
}

int model_plan_build(const vit_config *c, int batch, ib_precision prec, int tt_align, size_t align, model_plan *p,
                     ib_error *err)
{
    memset(p, 0, sizeof *p);
    if (model_plan_check(c, batch, prec, err)) return -1;
    p->B = batch, p->T = model_seq_len(c), p->N = model_num_patches(c), p->D = c->embed_dim, p->H = c->num_heads;
    p->hd = p->D / p->H, p->F = model_mlp_hidden(c), p->C = c->num_classes, p->L = c->depth;
    p->K = c->in_chans * c->patch_size * c->patch_size;
    p->Ts = tt_align > 0 ? (p->T + tt_align - 1) / tt_align * tt_align : p->T;
    p->act = prec, p->P = model_param_count(c), p->align = align;
    const size_t B = p->B, T = p->T, D = p->D, F = p->F, H = p->H, BT = B * T, S = c->img_size;
    const int act = prec, f32 = IB_PREC_FP32;
#define BUF(name, dt, ...) add(p, MODEL_AT_BUFFERS, #name, dt, offsetof(model_buffers, name), MODEL_DIMS(__VA_ARGS__))
    BUF(params, f32, p->P), BUF(grads, f32, p->P), BUF(m, f32, p->P), BUF(v, f32, p->P);
    if (prec == IB_PREC_BF16) BUF(wbf, IB_PREC_BF16, p->P);
    BUF(images, f32, B, c->in_chans, S, S), BUF(labels, MODEL_DT_I32, B);
    for (int l = 0; l < p->L; l++) {
#define ACT(name, dt, ...) add(p, l, #name, dt, offsetof(model_block_acts, name), MODEL_DIMS(__VA_ARGS__))
        ACT(x_in, f32, B, T, D), ACT(ln1, act, B, T, D), ACT(mean1, f32, BT), ACT(rstd1, f32, BT);
        ACT(qkv, act, B, T, 3 * D), ACT(att, act, B, T, D), ACT(x_mid, f32, B, T, D);
        if (tt_align > 0) ACT(P, act, B, H, T, p->Ts);
        ACT(ln2, act, B, T, D), ACT(mean2, f32, BT), ACT(rstd2, f32, BT), ACT(h, act, B, T, F), ACT(a, act, B, T, F);
#undef ACT
    }
    BUF(x_final, f32, B, T, D), BUF(patches, act, B * p->N, p->K), BUF(meanf, f32, B), BUF(rstdf, f32, B);
    BUF(lnf, act, B, D), BUF(logits, f32, B, p->C), BUF(dlogits, f32, B, p->C), BUF(dlogits_act, act, B, p->C);
    BUF(dlnf, f32, B, D);
    const size_t wide = 3 * D > F ? 3 * D : F;
    BUF(big_act, act, BT, wide), BUF(f, f32, BT, D), BUF(dx, f32, BT, D), BUF(datt, act, BT, D);
    if (prec == IB_PREC_BF16) BUF(dx_act, act, BT, D), BUF(dln, act, BT, D);
#undef BUF
    return 0;
}

int model_plan_carve(const model_plan *p, void *base, model_buffers *buf, void *ext, ib_error *err)
{
    memset(buf, 0, sizeof *buf);
    if (p->failed || !(buf->blk = calloc((size_t)p->L, sizeof *buf->blk)))
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory (buffer plan)");
    for (size_t i = 0; i < p->count; i++) {
        const model_plan_entry *e = &p->entries[i];
        char *at = e->block == MODEL_AT_EXT       ? (char *)ext
                   : e->block == MODEL_AT_BUFFERS ? (char *)buf
                                                  : (char *)&buf->blk[e->block];
        void *addr = (char *)base + e->offset;
        memcpy(at + e->field, &addr, sizeof addr); /* the field is a typed pointer: same representation */
    }
    return 0;
}

void model_plan_free(model_plan *p, model_buffers *buf)
{
    free(p->entries);
    memset(p, 0, sizeof *p);
    if (buf) {
        free(buf->blk);
        buf->blk = NULL;
    }
}

size_t model_plan_footprint(model_plan *p)
{
    const size_t bytes = p->bytes + p->outside;
    model_plan_free(p, NULL);
    return bytes;
}
