/* model: ViT configuration, presets, parameter layout (one contiguous block, timm names), FLOPs.
 * Knows nothing of devices.  Owned by the engine; other modules use only what is here. */
#ifndef INSTBENCH_MODEL_H
#define INSTBENCH_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/util.h"

typedef struct vit_config {
    char name[64];    /* preset name (timm's), or "custom" once a flag changed a preset's dimension */
    int img_size;     /* 224 */
    int patch_size;   /* 16 */
    int in_chans;     /* 3 */
    int embed_dim;    /* D */
    int depth;        /* L blocks */
    int num_heads;    /* H, head_dim = D / H */
    double mlp_ratio; /* hidden = (int)(D * mlp_ratio), as timm */
    int num_classes;  /* 1000 */
    char preset[64];  /* the preset it was built from (== name unless overridden; "" by hand) */
} vit_config;

/* Presets: vit_tiny_patch16_224, vit_small_patch16_224, vit_base_patch16_224, vit_large_patch16_224. */
size_t model_preset_count(void);
const vit_config *model_preset_at(size_t i);
int model_preset(const char *name, vit_config *out, ib_error *err);
int model_validate(const vit_config *c, ib_error *err);

int model_num_patches(const vit_config *c); /* (img/patch)^2 */
int model_seq_len(const vit_config *c);     /* patches + 1 (class token) */
int model_mlp_hidden(const vit_config *c);
size_t model_param_count(const vit_config *c);
/* Exact training FLOPs per sample: forward matmuls + attention (QK^T, AV) times 3 for fwd+bwd. */
double model_train_flops_per_sample(const vit_config *c);

/* Parameter layout: every tensor by its timm state_dict name, offsets into one fp32 block. */
typedef struct model_tensor {
    char name[64];
    size_t offset; /* in elements */
    size_t numel;
    int ndim;
    int64_t shape[4];
} model_tensor;

/* Element offsets of one block's parameters (blocks.<i>.norm1.weight, ...), by role. */
typedef struct model_block_params {
    size_t norm1_w, norm1_b, qkv_w, qkv_b, proj_w, proj_b, norm2_w, norm2_b, fc1_w, fc1_b, fc2_w, fc2_b;
} model_block_params;

typedef struct model_layout {
    model_tensor *tensors;
    size_t count;
    size_t total; /* elements in the block */
    /* The same offsets by role, resolved with the layout, for the training steps (which never
     * look a name up): cls_token, pos_embed, patch_embed.proj.*, norm.*, head.*, and per block. */
    size_t cls, pos, patch_w, patch_b, norm_w, norm_b, head_w, head_b;
    model_block_params *blk; /* [depth] */
} model_layout;

int model_layout_build(const vit_config *c, model_layout *out, ib_error *err);
const model_tensor *model_layout_find(const model_layout *l, const char *name);
void model_layout_free(model_layout *l);

/* Element ranges of the layout that the backward pass completes one after another (DDP buckets):
 * index 0 = [norm.*, head.*], 1..depth = blocks.{depth-1} .. blocks.0, depth+1 = [cls_token,
 * pos_embed, patch_embed.*].  Returns the number of ranges (depth + 2). */
int model_grad_range_count(const vit_config *c);
void model_grad_range(const model_layout *l, const vit_config *c, int i, size_t *offset, size_t *count);
/* A backward pass's "range i is final": cb(user, offset, count) for range i (nothing when cb is
 * NULL); a non-zero answer from cb fails with err set.  cb has ib_grad_ready_fn's type (backend.h). */
int model_grad_range_ready(const model_layout *l, const vit_config *c, int i, int (*cb)(void *, size_t, size_t),
                           void *user, ib_error *err);

/* Split of the forward FLOPs per sample (2*M*N*K per matmul): patch embedding, the four Linear
 * layers of all blocks, attention QK^T + AV, and the head on the class token. */
typedef struct model_flops {
    double patch_embed, linear, attention, head, forward, train;
} model_flops;
void model_flops_per_sample(const vit_config *c, model_flops *out);

/* timm-like initialisation (deterministic in seed): Linear weights and pos_embed truncated normal
 * std 0.02 (bounds +-2), biases 0, cls_token normal std 1e-6, LayerNorm weight 1 bias 0, patch
 * conv weight and bias uniform +-1/sqrt(3*P*P) (PyTorch's Conv2d default). */
void model_init_params(const vit_config *c, const model_layout *l, float *params, uint64_t seed);

/* Shared CLI for the model flags (measure, verify, models).  Flags, each taking a value:
 *   --model NAME --image-size N --patch-size N --embed-dim N --depth N --heads N --mlp-ratio X
 *   --classes N
 * Order does not matter: --model picks the preset, the others override its dimensions.  When an
 * override changes a dimension the config's name becomes "custom" and vit_config.preset keeps
 * the base preset's name.
 * Usage:  model_cli m; model_cli_init(&m, "vit_base_patch16_224");
 *         for each flag: r = model_cli_parse(&m, flag, value, err);  1 = consumed (value used),
 *         0 = not a model flag, -1 = bad value (err->code = IB_EXIT_USAGE);
 *         then model_cli_resolve(&m, &cfg, err) (unknown preset / invalid combination -> -1). */
typedef struct model_cli {
    char preset[64];
    int img_size, patch_size, embed_dim, depth, num_heads, num_classes; /* 0 = not given */
    double mlp_ratio;                                                   /* 0 = not given */
} model_cli;
void model_cli_init(model_cli *m, const char *default_preset);
int model_cli_parse(model_cli *m, const char *flag, const char *value, ib_error *err);
int model_cli_resolve(const model_cli *m, vit_config *out, ib_error *err);

#endif
