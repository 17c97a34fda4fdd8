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
    int layout, custom, wide;
    model_cli model;
    args_list columns;
} O;

static const char *const formats[] = {"table", "json", NULL};
/* --columns: the presets table's keys, then the --layout table's (from MODELS_LAYOUT_KEYS on) */
static const char *const models_keys[] = {"model", "img", "patch", "dim", "depth", "heads", "mlp", "classes", "params",
                                          "fwd_gflop", "train_gflop", "tensor", "shape", "offset", "numel", NULL};
enum { MODELS_LAYOUT_KEYS = 11 };

static const arg_spec models_args[] = {
    {"--format", 0, ARG_CHOICE, &O.format, NULL, "table (default) or json", .choices = formats},
    {"--layout", 0, ARG_FLAG, &O.layout, NULL, "list the parameter tensors of one config (default vit_base_patch16_224):\n"
                                                "timm state_dict name, shape, offset into the parameter block"},
    ARGS_MODEL_SPECS(&O.model, &O.custom, "model (any of these describes that one configuration)"),
    ARGS_TABLE_SPECS(&O.wide, &O.columns, "model, img, patch, dim, depth,\nheads, mlp, classes, params, fwd_gflop, train_gflop; with --layout: tensor,\nshape, offset, numel"),
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
    static const char *const hdr[] = {"TENSOR", "SHAPE", "OFFSET", "NUMEL"};
    static const output_align al[] = {OUTPUT_LEFT, OUTPUT_LEFT, OUTPUT_RIGHT, OUTPUT_RIGHT};
    static const int prio[] = {OUTPUT_KEEP, OUTPUT_KEEP, 1, 2};
    output_table tab;
    if (output_table_init(&tab, 4, hdr, al)) return IB_EXIT_RUNTIME;
    output_table_fit_columns(&tab, models_keys + MODELS_LAYOUT_KEYS, prio);
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
            const char *cells[] = {t->name, shape, off, num};
            if (output_table_add_row(&tab, cells)) break;
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
        output_table_write_text(&tab, stdout);
        printf("%zu tensors, %s parameters\n", l.count, total);
    }
    output_table_free(&tab);
    model_layout_free(&l);
    return IB_EXIT_OK;
}

int cmd_models(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    model_cli_init(&O.model, "vit_base_patch16_224");
    int rc = args_parse(&cmd_models_args, argc, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    if ((rc = args_table_fit(&cmd_models_args, O.wide, &O.columns, models_keys))) return rc;
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
    static const char *const hdr[] = {"MODEL", "IMG", "PATCH", "DIM", "DEPTH", "HEADS", "MLP", "CLASSES", "PARAMS",
                                      "FWD GFLOP", "TRAIN GFLOP"};
    static const int prio[] = {OUTPUT_KEEP, 2, 3, 5, 5, 4, 1, 1, OUTPUT_KEEP, 6, OUTPUT_KEEP};
    enum { NC = sizeof hdr / sizeof hdr[0] };
    static const output_align al[NC] = {OUTPUT_LEFT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT,
                                        OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT,
                                        OUTPUT_RIGHT};
    output_table t;
    if (output_table_init(&t, NC, hdr, al)) return IB_EXIT_RUNTIME;
    output_table_fit_columns(&t, models_keys, prio);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const vit_config *c = custom ? &one : model_preset_at(i);
        model_flops f;
        model_flops_per_sample(c, &f);
        char v[NC][32];
        snprintf(v[1], 32, "%d", c->img_size);
        snprintf(v[2], 32, "%d", c->patch_size);
        snprintf(v[3], 32, "%d", c->embed_dim);
        snprintf(v[4], 32, "%d", c->depth);
        snprintf(v[5], 32, "%d", c->num_heads);
        snprintf(v[6], 32, "%g", c->mlp_ratio);
        snprintf(v[7], 32, "%d", c->num_classes);
        output_fmt_grouped(v[8], 32, (double)model_param_count(c), 0);
        snprintf(v[9], 32, "%.2f", f.forward / 1e9);
        snprintf(v[10], 32, "%.2f", f.train / 1e9);
        const char *cells[NC];
        for (int k = 0; k < NC; k++) cells[k] = k ? v[k] : c->name;
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_text(&t, stdout);
    output_table_free(&t);
    if (rc) return IB_EXIT_RUNTIME;
    printf("(GFLOP per sample; training = 3 x forward)\n");
    return IB_EXIT_OK;
}
