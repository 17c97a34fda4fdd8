/* model/cli: the model flags shared by measure and models (see model.h; their table rows are
 * ARGS_MODEL_SPECS in cmd/args.h). */
#include "instbench/model.h"

#include <stdio.h>
#include <string.h>

void model_cli_init(model_cli *m, const char *default_preset)
{
    memset(m, 0, sizeof *m);
    snprintf(m->preset, sizeof m->preset, "%s", default_preset ? default_preset : "vit_base_patch16_224");
}

static const char *const int_flags[] = {"--image-size", "--patch-size", "--embed-dim",
                                        "--depth",      "--heads",      "--classes"};

static int is_flag(const char *flag)
{
    if (!flag) return 0;
    if (!strcmp(flag, "--model") || !strcmp(flag, "--mlp-ratio")) return 1;
    for (size_t i = 0; i < sizeof int_flags / sizeof int_flags[0]; i++)
        if (!strcmp(flag, int_flags[i])) return 1;
    return 0;
}

int model_cli_parse(model_cli *m, const char *flag, const char *value, ib_error *err)
{
    if (!is_flag(flag)) return 0;
    if (!value) return ib_error_set(err, IB_EXIT_USAGE, "%s needs a value", flag);
    if (!strcmp(flag, "--model")) {
        vit_config tmp;
        /* the flag named, as every other model flag's error does: after `sweep run --` the
         * message is one among many of measure's flags */
        if (model_preset(value, &tmp, err)) return ib_error_set(err, IB_EXIT_USAGE, "--model: %s", err->msg);
        snprintf(m->preset, sizeof m->preset, "%s", value);
        return 1;
    }
    if (!strcmp(flag, "--mlp-ratio")) {
        double v;
        char why[200];
        int rc = util_parse_double(value, 1e-6, 64, &v);
        if (rc)
            return ib_error_set(err, IB_EXIT_USAGE, "--mlp-ratio: %s (want a number in (0, 64])",
                                util_number_error(value, rc, 1e-6, 64, why, sizeof why));
        m->mlp_ratio = v;
        return 1;
    }
    long v;
    char why[200];
    int rc = util_parse_int(value, 1, 1000000, &v);
    if (rc)
        return ib_error_set(err, IB_EXIT_USAGE, "%s: %s (want a whole number in [1, 1000000])", flag,
                            util_number_error(value, rc, 1, 1000000, why, sizeof why));
    if (!strcmp(flag, "--image-size")) m->img_size = (int)v;
    else if (!strcmp(flag, "--patch-size")) m->patch_size = (int)v;
    else if (!strcmp(flag, "--embed-dim")) m->embed_dim = (int)v;
    else if (!strcmp(flag, "--depth")) m->depth = (int)v;
    else if (!strcmp(flag, "--heads")) m->num_heads = (int)v;
    else m->num_classes = (int)v;
    return 1;
}

int model_cli_resolve(const model_cli *m, vit_config *out, ib_error *err)
{
    vit_config c;
    if (model_preset(m->preset, &c, err)) return -1;
    vit_config base = c;
    if (m->img_size) c.img_size = m->img_size;
    if (m->patch_size) c.patch_size = m->patch_size;
    if (m->embed_dim) c.embed_dim = m->embed_dim;
    if (m->depth) c.depth = m->depth;
    if (m->num_heads) c.num_heads = m->num_heads;
    if (m->num_classes) c.num_classes = m->num_classes;
    if (m->mlp_ratio > 0) c.mlp_ratio = m->mlp_ratio;
    if (c.img_size != base.img_size || c.patch_size != base.patch_size || c.embed_dim != base.embed_dim ||
        c.depth != base.depth || c.num_heads != base.num_heads || c.num_classes != base.num_classes ||
        c.mlp_ratio != base.mlp_ratio)
        snprintf(c.name, sizeof c.name, "custom");
    if (model_validate(&c, err)) return -1;
    *out = c;
    return 0;
}
