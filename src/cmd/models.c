/* cmd/models: `instbench models` lists the presets (or one overridden config) with parameter
 * count and FLOPs per sample. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "instbench/model.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: instbench models [--format table|json] [--layout] [model flags]\n\n"
            "Lists the model presets with parameter count and FLOPs per sample (training = 3 x forward;\n"
            "every matmul counted as 2*M*N*K, attention QK^T and AV included, head on the class token).\n"
            "With any model flag, describes that one configuration instead.\n\n"
            "options:\n"
            "  --format F          table (default) or json\n"
            "  --layout            list the parameter tensors of one config (default vit_base_patch16_224):\n"
            "                      timm state_dict name, shape, offset into the parameter block\n"
            "%s"
            "  -h, --help          this help\n",
            model_cli_help);
}

static cJSON *config_json(const vit_config *c)
{
    model_flops f;
    model_flops_per_sample(c, &f);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "preset", c->preset);
    cJSON_AddNumberToObject(o, "img_size", c->img_size);
    cJSON_AddNumberToObject(o, "patch_size", c->patch_size);
    cJSON_AddNumberToObject(o, "in_chans", c->in_chans);
    cJSON_AddNumberToObject(o, "embed_dim", c->embed_dim);
    cJSON_AddNumberToObject(o, "depth", c->depth);
    cJSON_AddNumberToObject(o, "num_heads", c->num_heads);
    cJSON_AddNumberToObject(o, "mlp_ratio", c->mlp_ratio);
    cJSON_AddNumberToObject(o, "mlp_hidden", model_mlp_hidden(c));
    cJSON_AddNumberToObject(o, "num_classes", c->num_classes);
    cJSON_AddNumberToObject(o, "seq_len", model_seq_len(c));
    cJSON_AddNumberToObject(o, "params", (double)model_param_count(c));
    cJSON_AddNumberToObject(o, "forward_flops_per_sample", f.forward);
    cJSON_AddNumberToObject(o, "train_flops_per_sample", f.train);
    return o;
}

static int print_layout(const vit_config *c, int json)
{
    model_layout l;
    ib_error err;
    if (model_layout_build(c, &l, &err)) {
        fprintf(stderr, "instbench models: %s\n", err.msg);
        return IB_EXIT_USAGE;
    }
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    for (size_t i = 0; i < l.count; i++) {
        const model_tensor *t = &l.tensors[i];
        char shape[96];
        int len = snprintf(shape, sizeof shape, "[");
        for (int d = 0; d < t->ndim; d++)
            len += snprintf(shape + len, sizeof shape - len, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        snprintf(shape + len, sizeof shape - len, "]");
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", t->name);
            cJSON *sh = cJSON_AddArrayToObject(o, "shape");
            for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
            cJSON_AddNumberToObject(o, "offset", (double)t->offset);
            cJSON_AddNumberToObject(o, "numel", (double)t->numel);
            cJSON_AddItemToArray(arr, o);
        } else {
            printf("%-32s %-22s %12zu %12zu\n", t->name, shape, t->offset, t->numel);
        }
    }
    if (json) {
        char *s = cJSON_Print(arr);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(arr);
    } else {
        printf("%zu tensors, %zu parameters\n", l.count, l.total);
    }
    model_layout_free(&l);
    return IB_EXIT_OK;
}

int cmd_models(int argc, char **argv)
{
    int json = 0, custom = 0, layout = 0;
    model_cli m;
    model_cli_init(&m, "vit_base_patch16_224");
    ib_error err;
    ib_error_clear(&err);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return IB_EXIT_OK;
        }
        if (!strcmp(a, "--format")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "instbench models: --format needs a value (table or json)\n");
                return IB_EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(v, "json")) json = 1;
            else if (!strcmp(v, "table")) json = 0;
            else {
                fprintf(stderr, "instbench models: --format must be table or json, not '%s'\n", v);
                return IB_EXIT_USAGE;
            }
            continue;
        }
        if (!strcmp(a, "--layout")) {
            layout = 1;
            continue;
        }
        if (model_cli_is_flag(a)) {
            if (model_cli_parse(&m, a, i + 1 < argc ? argv[i + 1] : NULL, &err) < 0) {
                fprintf(stderr, "instbench models: %s\n", err.msg);
                return IB_EXIT_USAGE;
            }
            i++;
            custom = 1;
            continue;
        }
        fprintf(stderr, "instbench models: unknown option '%s'\n", a);
        usage(stderr);
        return IB_EXIT_USAGE;
    }
    vit_config one;
    if ((custom || layout) && model_cli_resolve(&m, &one, &err)) {
        fprintf(stderr, "instbench models: %s\n", err.msg);
        return IB_EXIT_USAGE;
    }
    if (layout) return print_layout(&one, json);
    const size_t n = custom ? 1 : model_preset_count();
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, config_json(custom ? &one : model_preset_at(i)));
        char *s = cJSON_Print(arr);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(arr);
        return IB_EXIT_OK;
    }
    printf("%-24s %5s %5s %5s %5s %6s %6s %8s %14s %13s %13s\n", "MODEL", "IMG", "PATCH", "DIM", "DEPTH", "HEADS",
           "MLP", "CLASSES", "PARAMS", "FWD GFLOP", "TRAIN GFLOP");
    for (size_t i = 0; i < n; i++) {
        const vit_config *c = custom ? &one : model_preset_at(i);
        model_flops f;
        model_flops_per_sample(c, &f);
        printf("%-24s %5d %5d %5d %5d %6d %6g %8d %14zu %13.2f %13.2f\n", c->name, c->img_size, c->patch_size,
               c->embed_dim, c->depth, c->num_heads, c->mlp_ratio, c->num_classes, model_param_count(c),
               f.forward / 1e9, f.train / 1e9);
    }
    printf("(GFLOP per sample; training = 3 x forward)\n");
    return IB_EXIT_OK;
}
