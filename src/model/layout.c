/* model/layout: every parameter by its timm state_dict name and shape, at an offset into one
 * contiguous fp32 block, in state_dict order (so a flat dump matches timm's parameter order); the
 * same offsets by role for the training steps; the gradient ranges the backward pass completes. */
#include "instbench/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a tensor; returns its offset. */
static size_t add(model_layout *l, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    model_tensor *t = &l->tensors[l->count++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    int64_t d[4] = {d0, d1, d2, d3};
    t->numel = 1;
    for (int i = 0; i < 4; i++) {
        t->shape[i] = i < ndim ? d[i] : 0;
        if (i < ndim) t->numel *= (size_t)d[i];
    }
    t->offset = l->total;
    l->total += t->numel;
    return t->offset;
}

int model_layout_build(const vit_config *c, model_layout *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (model_validate(c, err)) return -1;
    const int64_t D = c->embed_dim, T = model_seq_len(c), P = c->patch_size, Hd = model_mlp_hidden(c);
    out->tensors = calloc((size_t)c->depth * 12 + 8, sizeof *out->tensors);
    out->blk = calloc((size_t)c->depth, sizeof *out->blk);
    if (!out->tensors || !out->blk) {
        model_layout_free(out);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory (layout)");
    }
    out->cls = add(out, "cls_token", 3, 1, 1, D, 0);
    out->pos = add(out, "pos_embed", 3, 1, T, D, 0);
    out->patch_w = add(out, "patch_embed.proj.weight", 4, D, c->in_chans, P, P); /* conv weight [D, C, P, P] */
    out->patch_b = add(out, "patch_embed.proj.bias", 1, D, 0, 0, 0);
    char n[64];
    for (int i = 0; i < c->depth; i++) {
        model_block_params *b = &out->blk[i];
#define B(suffix, ...) (snprintf(n, sizeof n, "blocks.%d." suffix, i), add(out, n, __VA_ARGS__))
        b->norm1_w = B("norm1.weight", 1, D, 0, 0, 0);
        b->norm1_b = B("norm1.bias", 1, D, 0, 0, 0);
        b->qkv_w = B("attn.qkv.weight", 2, 3 * D, D, 0, 0); /* Linear weights are [out, in] */
        b->qkv_b = B("attn.qkv.bias", 1, 3 * D, 0, 0, 0);
        b->proj_w = B("attn.proj.weight", 2, D, D, 0, 0);
        b->proj_b = B("attn.proj.bias", 1, D, 0, 0, 0);
        b->norm2_w = B("norm2.weight", 1, D, 0, 0, 0);
        b->norm2_b = B("norm2.bias", 1, D, 0, 0, 0);
        b->fc1_w = B("mlp.fc1.weight", 2, Hd, D, 0, 0);
        b->fc1_b = B("mlp.fc1.bias", 1, Hd, 0, 0, 0);
        b->fc2_w = B("mlp.fc2.weight", 2, D, Hd, 0, 0);
        b->fc2_b = B("mlp.fc2.bias", 1, D, 0, 0, 0);
#undef B
    }
    out->norm_w = add(out, "norm.weight", 1, D, 0, 0, 0);
    out->norm_b = add(out, "norm.bias", 1, D, 0, 0, 0);
    out->head_w = add(out, "head.weight", 2, c->num_classes, D, 0, 0);
    out->head_b = add(out, "head.bias", 1, c->num_classes, 0, 0, 0);
    return 0;
}

const model_tensor *model_layout_find(const model_layout *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->tensors[i].name, name)) return &l->tensors[i];
    return NULL;
}

void model_layout_free(model_layout *l)
{
    free(l->tensors);
    free(l->blk);
    memset(l, 0, sizeof *l);
}

size_t model_param_count(const vit_config *c)
{
    const size_t D = c->embed_dim, T = model_seq_len(c), P = c->patch_size, Hd = model_mlp_hidden(c);
    size_t block = 2 * D + 3 * D * D + 3 * D + D * D + D + 2 * D + Hd * D + Hd + D * Hd + D;
    return D + T * D + D * c->in_chans * P * P + D + c->depth * block + 2 * D + c->num_classes * D + c->num_classes;
}

int model_grad_range_count(const vit_config *c) { return c->depth + 2; }

void model_grad_range(const model_layout *l, const vit_config *c, int i, size_t *offset, size_t *count)
{
    /* 4 embedding tensors, then 12 per block, then norm.weight/bias and head.weight/bias. */
    size_t first, last; /* tensor indices, inclusive */
    if (i == 0) {
        first = 4 + 12 * (size_t)c->depth;
        last = first + 3;
    } else if (i <= c->depth) {
        int blk = c->depth - i;
        first = 4 + 12 * (size_t)blk;
        last = first + 11;
    } else {
        first = 0;
        last = 3;
    }
    *offset = l->tensors[first].offset;
    *count = l->tensors[last].offset + l->tensors[last].numel - *offset;
}

int model_grad_range_ready(const model_layout *l, const vit_config *c, int i, int (*cb)(void *, size_t, size_t),
                           void *user, ib_error *err)
{
    if (!cb) return 0;
    size_t off, cnt;
    model_grad_range(l, c, i, &off, &cnt);
    return cb(user, off, cnt) ? ib_error_set(err, IB_EXIT_RUNTIME, "gradient hook failed for range %d", i) : 0;
}
