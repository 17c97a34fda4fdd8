/* cmd/models: `instbench models` lists the presets (or one overridden config) with parameter
 * count and FLOPs per sample. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/model.h"
#include "instbench/output.h"

static struct {
    int format;   /* 0 table, 1 json */
    int layout, custom;
    model_cli model;
} O;

static const char *const formats[] = {"table", "json", NULL};

static const arg_spec models_args[] = {
    {"--format", 0, ARG_CHOICE, &O.format, NULL, "table (default) or json", .choices = formats},
    {"--layout", 0, ARG_FLAG, &O.layout, NULL, "list the parameter tensors of one config (default vit_base_patch16_224):\n"
                                                "timm state_dict name, shape, offset into the parameter block"},
    ARGS_MODEL_SPECS(&O.model, &O.custom, "model (any of these describes that one configuration)"),
    {0},
};

const arg_command cmd_models_args = {
    "models", "[--format table|json] [--layout] [model flags]",
    "Lists the model presets with parameter count and FLOPs per sample (training = 3 x forward;\n"
    "every matmul counted as 2*M*N*K, attention QK^T and AV included, head on the class token).\n"
    "With any model flag, describes that one configuration instead.",
    NULL, models_args, NULL,
};

static cJSON *config_json(const vit_config *c)
{
    model_flops f;
    model_flops_per_sample(c, &f);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "preset", c->preset);
    static const char *const keys[] = {"img_size", "patch_size", "in_chans", "embed_dim", "depth", "num_heads",
                                       "mlp_ratio", "mlp_hidden", "num_classes", "seq_len", "params",
                                       "forward_flops_per_sample", "train_flops_per_sample"};
    const double v[] = {c->img_size, c->patch_size, c->in_chans, c->embed_dim, c->depth, c->num_heads,
                        c->mlp_ratio, model_mlp_hidden(c), c->num_classes, model_seq_len(c),
                        (double)model_param_count(c), f.forward, f.train};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) cJSON_AddNumberToObject(o, keys[i], v[i]);
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
            char off[32], num[32];
            output_fmt_grouped(off, sizeof off, (double)t->offset, 0);
            output_fmt_grouped(num, sizeof num, (double)t->numel, 0);
            if (i == 0) printf("%-32s %-22s %12s %12s\n", "TENSOR", "SHAPE", "OFFSET", "NUMEL");
            printf("%-32s %-22s %12s %12s\n", t->name, shape, off, num);
        }
    }
    if (json) {
        char *s = util_json_print(arr);
        if (s) fputs(s, stdout);
        free(s);
        cJSON_Delete(arr);
    } else {
        char total[32];
        output_fmt_grouped(total, sizeof total, (double)l.total, 0);
        printf("%zu tensors, %s parameters\n", l.count, total);
    }
    model_layout_free(&l);
    return IB_EXIT_OK;
}

int cmd_models(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    model_cli_init(&O.model, "vit_base_patch16_224");
    int rc = args_parse(&cmd_models_args, argc, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    int json = O.format == 1, custom = O.custom, layout = O.layout;
    model_cli m = O.model;
    ib_error err = {0};
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
        char *s = util_json_print(arr);
        if (s) fputs(s, stdout);
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
        char params[32];
        output_fmt_grouped(params, sizeof params, (double)model_param_count(c), 0);
        printf("%-24s %5d %5d %5d %5d %6d %6g %8d %14s %13.2f %13.2f\n", c->name, c->img_size, c->patch_size,
               c->embed_dim, c->depth, c->num_heads, c->mlp_ratio, c->num_classes, params,
               f.forward / 1e9, f.train / 1e9);
    }
    printf("(GFLOP per sample; training = 3 x forward)\n");
    return IB_EXIT_OK;
}
