/* model: ViT configuration, presets, parameter layout (one contiguous block, timm names), FLOPs.
 * Knows nothing of devices.  Owned by the engine (issue 2); other modules use only what is here. */
#ifndef INSTBENCH_MODEL_H
#define INSTBENCH_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/util.h"

typedef struct vit_config {
    char name[64];     /* preset name (timm's), or "custom" once a dimension is overridden */
    int img_size;      /* 224 */
    int patch_size;    /* 16 */
    int in_chans;      /* 3 */
    int embed_dim;     /* D */
    int depth;         /* L blocks */
    int num_heads;     /* H, head_dim = D / H */
    double mlp_ratio;  /* hidden = (int)(D * mlp_ratio), as timm */
    int num_classes;   /* 1000 */
} vit_config;

/* Presets: vit_tiny_patch16_224, vit_small_patch16_224, vit_base_patch16_224, vit_large_patch16_224. */
size_t model_preset_count(void);
const vit_config *model_preset_at(size_t i);
int model_preset(const char *name, vit_config *out, ib_error *err);
int model_validate(const vit_config *c, ib_error *err);

int model_num_patches(const vit_config *c);   /* (img/patch)^2 */
int model_seq_len(const vit_config *c);       /* patches + 1 (class token) */
int model_mlp_hidden(const vit_config *c);
size_t model_param_count(const vit_config *c);
/* Exact training FLOPs per sample: forward matmuls + attention (QK^T, AV) times 3 for fwd+bwd. */
double model_train_flops_per_sample(const vit_config *c);
double model_forward_flops_per_sample(const vit_config *c);

/* Parameter layout: every tensor by its timm state_dict name, offsets into one fp32 block. */
typedef struct model_tensor {
    char name[64];
    size_t offset;      /* in elements */
    size_t numel;
    int ndim;
    int64_t shape[4];
} model_tensor;

typedef struct model_layout {
    model_tensor *tensors;
    size_t count;
    size_t total;       /* elements in the block */
} model_layout;

int model_layout_build(const vit_config *c, model_layout *out, ib_error *err);
const model_tensor *model_layout_find(const model_layout *l, const char *name);
void model_layout_free(model_layout *l);

#endif
