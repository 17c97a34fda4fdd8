/* model/config: timm's ViT presets and validation of a (possibly overridden) configuration. */
#include "instbench/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* timm's vit_*_patch16_224: 224x224 images, 16x16 patches, 1000 classes, MLP ratio 4. */
static const vit_config presets[] = {
    {"vit_tiny_patch16_224", 224, 16, 3, 192, 12, 3, 4.0, 1000, "vit_tiny_patch16_224"},
    {"vit_small_patch16_224", 224, 16, 3, 384, 12, 6, 4.0, 1000, "vit_small_patch16_224"},
    {"vit_base_patch16_224", 224, 16, 3, 768, 12, 12, 4.0, 1000, "vit_base_patch16_224"},
    {"vit_large_patch16_224", 224, 16, 3, 1024, 24, 16, 4.0, 1000, "vit_large_patch16_224"},
};

size_t model_preset_count(void) { return sizeof presets / sizeof presets[0]; }

const vit_config *model_preset_at(size_t i) { return i < model_preset_count() ? &presets[i] : NULL; }

int model_preset(const char *name, vit_config *out, ib_error *err)
{
    for (size_t i = 0; i < model_preset_count(); i++)
        if (name && !strcmp(name, presets[i].name)) {
            *out = presets[i];
            return 0;
        }
    char list[512];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < model_preset_count() && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", presets[i].name);
    return ib_error_set(err, IB_EXIT_USAGE, "unknown model '%s' (presets: %s)", name ? name : "", list);
}

/* Upper bounds keep every size_t product (activations of a whole batch) far from overflow and
 * catch typos; they are well above any ViT anyone trains (ViT-G: D=1664, depth 48). */
#define MAX_IMG 4096
#define MAX_DIM 16384
#define MAX_DEPTH 256
#define MAX_CLASSES 1000000
#define MAX_SEQ 65536

int model_validate(const vit_config *c, ib_error *err)
{
    if (c->img_size < 1 || c->img_size > MAX_IMG)
        return ib_error_set(err, IB_EXIT_USAGE, "image size %d out of range [1, %d]", c->img_size, MAX_IMG);
    if (c->patch_size < 1 || c->patch_size > c->img_size)
        return ib_error_set(err, IB_EXIT_USAGE, "patch size %d out of range [1, image size %d]", c->patch_size,
                            c->img_size);
    if (c->img_size % c->patch_size)
        return ib_error_set(err, IB_EXIT_USAGE, "image size %d is not a multiple of patch size %d", c->img_size,
                            c->patch_size);
    if (c->in_chans < 1 || c->in_chans > 64)
        return ib_error_set(err, IB_EXIT_USAGE, "input channels %d out of range [1, 64]", c->in_chans);
    if (c->embed_dim < 1 || c->embed_dim > MAX_DIM)
        return ib_error_set(err, IB_EXIT_USAGE, "embed dim %d out of range [1, %d]", c->embed_dim, MAX_DIM);
    if (c->depth < 1 || c->depth > MAX_DEPTH)
        return ib_error_set(err, IB_EXIT_USAGE, "depth %d out of range [1, %d]", c->depth, MAX_DEPTH);
    if (c->num_heads < 1 || c->num_heads > c->embed_dim)
        return ib_error_set(err, IB_EXIT_USAGE, "heads %d out of range [1, embed dim %d]", c->num_heads, c->embed_dim);
    if (c->embed_dim % c->num_heads)
        return ib_error_set(err, IB_EXIT_USAGE, "embed dim %d is not divisible by heads %d", c->embed_dim,
                            c->num_heads);
    if (!(c->mlp_ratio > 0) || c->mlp_ratio > 64 || !isfinite(c->mlp_ratio))
        return ib_error_set(err, IB_EXIT_USAGE, "mlp ratio %g out of range (0, 64]", c->mlp_ratio);
    if (model_mlp_hidden(c) < 1)
        return ib_error_set(err, IB_EXIT_USAGE, "mlp ratio %g gives an empty MLP for embed dim %d", c->mlp_ratio,
                            c->embed_dim);
    if (c->num_classes < 1 || c->num_classes > MAX_CLASSES)
        return ib_error_set(err, IB_EXIT_USAGE, "classes %d out of range [1, %d]", c->num_classes, MAX_CLASSES);
    if (model_seq_len(c) > MAX_SEQ)
        return ib_error_set(err, IB_EXIT_USAGE, "%d tokens per image (image %d / patch %d) exceeds %d",
                            model_seq_len(c), c->img_size, c->patch_size, MAX_SEQ);
    return 0;
}

int model_num_patches(const vit_config *c)
{
    int g = c->img_size / c->patch_size;
    return g * g;
}

int model_seq_len(const vit_config *c) { return model_num_patches(c) + 1; }

/* timm: hidden_features = int(embed_dim * mlp_ratio) (truncation, not rounding). */
int model_mlp_hidden(const vit_config *c) { return (int)(c->embed_dim * c->mlp_ratio); }
