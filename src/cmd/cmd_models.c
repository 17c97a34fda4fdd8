/* cmd/models: `instbench models` lists the presets (or one overridden config) with parameter
 * count and FLOPs per sample. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/model.h"
#include "instbench/output.h"
#include "instbench/suggest.h"

static struct {
    int format; /* index into formats; -1: table on a terminal, json otherwise (as prices and rank) */
    int layout, custom, wide;
    model_cli model;
    args_list columns;
} O;

enum { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };
static const char *const formats[] = {"table", "json", "csv", NULL};
/* --columns names the fields of the JSON and CSV in every format (one set of keys, as rank's): the
 * presets table's columns, the --layout table's, and the old short keys of the table, still read
 * (aliases). */
enum { TABLE_KEYS = 11 };
static const char *const table_keys[] = {"name",
                                         "img_size",
                                         "patch_size",
                                         "embed_dim",
                                         "depth",
                                         "num_heads",
                                         "mlp_ratio",
                                         "num_classes",
                                         "params",
                                         "forward_flops_per_sample",
                                         "train_flops_per_sample",
                                         NULL};
static const char *const layout_keys[] = {"name", "shape", "offset", "numel", NULL};
static const char *const aliases[][2] = {{"model", "name"},
                                         {"img", "img_size"},
                                         {"patch", "patch_size"},
                                         {"dim", "embed_dim"},
                                         {"heads", "num_heads"},
                                         {"mlp", "mlp_ratio"},
                                         {"classes", "num_classes"},
                                         {"fwd_gflop", "forward_flops_per_sample"},
                                         {"train_gflop", "train_flops_per_sample"},
                                         {"tensor", "name"}};

static const arg_spec models_args[] = {
    {"--format", 0, ARG_CHOICE, &O.format, NULL,
     "table (default on a terminal), json (default otherwise; schema\n"
     "instbench.models/v1, with --layout instbench.model-layout/v1),\n"
     "csv (the JSON's fields, a header row, plain numbers)",
     .choices = formats},
    {"--layout", 0, ARG_FLAG, &O.layout, NULL,
     "list the parameter tensors of one config (default vit_base_patch16_224):\n"
     "timm state_dict name, shape, offset into the parameter block"},
    ARGS_MODEL_SPECS(&O.model, &O.custom, "model (any of these describes that one configuration)"),
    ARGS_TABLE_SPECS(
        &O.wide, &O.columns,
        "the JSON and CSV field names, in every\nformat: name, preset, img_size, patch_size, in_chans, embed_dim, "
        "depth,\nnum_heads, mlp_ratio, mlp_hidden, num_classes, seq_len, params,\nforward_flops_per_sample, "
        "train_flops_per_sample (the table has all but\npreset, in_chans, mlp_hidden, seq_len); with --layout: name, "
        "shape, offset,\nnumel.  Without it: the table what fits, csv and json every field"),
    {0},
};

const arg_command cmd_models_args = {
    "models",
    "[--format table|json|csv] [--layout] [model flags]",
    "Lists the model presets with parameter count and FLOPs per sample (training = 3 x forward;\n"
    "every matmul counted as 2*M*N*K, attention QK^T and AV included, head on the class token).\n"
    "With any model flag, describes that one configuration instead.",
    NULL,
    models_args,
    NULL,
    .examples = (const arg_example[]){{"every preset with its parameters and GFLOPs per sample", "instbench models"},
                                      {"one smaller configuration, as JSON for jq",
                                       "instbench models --model vit_small_patch16_224 --depth 6 --format json"},
                                      {"the parameter tensors of ViT-Tiny, as CSV",
                                       "instbench models --layout --model vit_tiny_patch16_224 --format csv"},
                                      {0}},
};

/* The fields of one configuration, in JSON and CSV order (JSON: the object's keys; CSV: the header). */
static const char *const config_keys[] = {"name",
                                          "preset",
                                          "img_size",
                                          "patch_size",
                                          "in_chans",
                                          "embed_dim",
                                          "depth",
                                          "num_heads",
                                          "mlp_ratio",
                                          "mlp_hidden",
                                          "num_classes",
                                          "seq_len",
                                          "params",
                                          "forward_flops_per_sample",
                                          "train_flops_per_sample"};
enum { CONFIG_FIELDS = sizeof config_keys / sizeof *config_keys, CONFIG_NAMES = 2 };

/* v[k] for config_keys[CONFIG_NAMES + k]: the numbers of C (FLOPs per sample, not GFLOPs). */
static void config_numbers(const vit_config *c, double v[CONFIG_FIELDS - CONFIG_NAMES])
{
    model_flops f;
    model_flops_per_sample(c, &f);
    const double all[] = {c->img_size,
                          c->patch_size,
                          c->in_chans,
                          c->embed_dim,
                          c->depth,
                          c->num_heads,
                          c->mlp_ratio,
                          model_mlp_hidden(c),
                          c->num_classes,
                          model_seq_len(c),
                          (double)model_param_count(c),
                          f.forward,
                          f.train};
    _Static_assert(sizeof all / sizeof *all == CONFIG_FIELDS - CONFIG_NAMES, "a value per numeric key");
    memcpy(v, all, sizeof all);
}

/* Whether --columns keeps KEY in a CSV or JSON (every key without --columns). */
static int wanted(const char *key)
{
    if (!O.columns.n) return 1;
    for (size_t i = 0; i < O.columns.n; i++)
        if (!strcmp(O.columns.v[i], key)) return 1;
    return 0;
}

/* The fields written, in --columns order when given, else KEYS' (N of them): their indexes. */
static size_t picked(const char *const *keys, size_t n, size_t *idx)
{
    size_t m = 0;
    if (!O.columns.n) {
        for (size_t i = 0; i < n; i++) idx[m++] = i;
        return m;
    }
    for (size_t c = 0; c < O.columns.n; c++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(O.columns.v[c], keys[i])) idx[m++] = i;
    return m;
}

static cJSON *config_json(const vit_config *c, int all)
{
    double v[CONFIG_FIELDS - CONFIG_NAMES];
    config_numbers(c, v);
    cJSON *o = cJSON_CreateObject();
    size_t idx[CONFIG_FIELDS], m = all ? 0 : picked(config_keys, CONFIG_FIELDS, idx);
    if (all)
        for (size_t i = 0; i < CONFIG_FIELDS; i++) idx[m++] = i;
    for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        if (i < CONFIG_NAMES) cJSON_AddStringToObject(o, config_keys[i], i ? c->preset : c->name);
        else cJSON_AddNumberToObject(o, config_keys[i], v[i - CONFIG_NAMES]);
    }
    return o;
}

/* CSV rows of what the JSON document holds, one per configuration. */
static int write_configs_csv(const vit_config *const *cs, size_t n)
{
    size_t idx[CONFIG_FIELDS], m = picked(config_keys, CONFIG_FIELDS, idx);
    const char *hdr[CONFIG_FIELDS];
    for (size_t k = 0; k < m; k++) hdr[k] = config_keys[idx[k]];
    output_table t;
    if (output_table_init(&t, m, hdr, NULL)) return IB_EXIT_RUNTIME;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        double v[CONFIG_FIELDS - CONFIG_NAMES];
        char text[CONFIG_FIELDS][32];
        const char *all[CONFIG_FIELDS] = {cs[i]->name, cs[i]->preset}, *cells[CONFIG_FIELDS];
        config_numbers(cs[i], v);
        for (size_t k = CONFIG_NAMES; k < CONFIG_FIELDS; k++) {
            util_fmt_double(text[k], sizeof text[k], v[k - CONFIG_NAMES]); /* the JSON's very text */
            all[k] = text[k];
        }
        for (size_t k = 0; k < m; k++) cells[k] = all[idx[k]];
        rc = output_table_add_row(&t, cells);
    }
    if (rc == 0) rc = output_table_write_csv(&t, stdout);
    output_table_free(&t);
    return rc ? IB_EXIT_RUNTIME : IB_EXIT_OK;
}

static int write_json(cJSON *doc)
{
    ib_error err = {0};
    int rc = doc ? output_json_write(stdout, doc, &err) : ib_error_set(&err, IB_EXIT_RUNTIME, "out of memory");
    cJSON_Delete(doc);
    if (rc) fprintf(stderr, "instbench models: %s\n", err.msg);
    return rc ? err.code : IB_EXIT_OK;
}

/* "[768, 3, 16, 16]" */
static void shape_text(const model_tensor *t, char *out, size_t len)
{
    int n = snprintf(out, len, "[");
    for (int d = 0; d < t->ndim && n > 0 && (size_t)n < len; d++)
        n += snprintf(out + n, len - (size_t)n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (n > 0 && (size_t)n < len) snprintf(out + n, len - (size_t)n, "]");
}

/* instbench.model-layout/v1: {"schema", "model": the configuration as in instbench.models/v1,
 * "params": the block's length, "tensors": [{"name", "shape": [...], "offset", "numel"}]}. */
static int layout_json(const vit_config *c, const model_layout *l)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return write_json(NULL);
    cJSON_AddStringToObject(doc, "schema", "instbench.model-layout/v1");
    cJSON_AddItemToObject(doc, "model", config_json(c, 1));
    cJSON_AddNumberToObject(doc, "params", (double)l->total);
    cJSON *arr = cJSON_AddArrayToObject(doc, "tensors");
    for (size_t i = 0; i < l->count; i++) {
        const model_tensor *t = &l->tensors[i];
        cJSON *o = cJSON_CreateObject();
        if (wanted("name")) cJSON_AddStringToObject(o, "name", t->name);
        if (wanted("shape")) {
            cJSON *sh = cJSON_AddArrayToObject(o, "shape");
            for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
        }
        if (wanted("offset")) cJSON_AddNumberToObject(o, "offset", (double)t->offset);
        if (wanted("numel")) cJSON_AddNumberToObject(o, "numel", (double)t->numel);
        cJSON_AddItemToArray(arr, o);
    }
    return write_json(doc);
}

/* The table (people: grouped numbers) or CSV (the JSON's fields, plain numbers; shape as its text). */
static int layout_rows(const model_layout *l, int csv)
{
    static const char *const hdr[] = {"TENSOR", "SHAPE", "OFFSET", "NUMEL"};
    static const output_align al[] = {OUTPUT_LEFT, OUTPUT_LEFT, OUTPUT_RIGHT, OUTPUT_RIGHT};
    static const int prio[] = {OUTPUT_KEEP, OUTPUT_KEEP, 1, 2};
    /* CSV: the --columns picked, in their order (the table fits itself through output_fit_set) */
    size_t idx[4], m = csv ? picked(layout_keys, 4, idx) : 4;
    const char *head[4];
    for (size_t k = 0; k < m; k++) head[k] = csv ? layout_keys[idx[k]] : hdr[k];
    output_table tab;
    if (output_table_init(&tab, m, head, al)) return IB_EXIT_RUNTIME;
    if (!csv) output_table_fit_columns(&tab, layout_keys, prio);
    int rc = 0;
    for (size_t i = 0; i < l->count && rc == 0; i++) {
        const model_tensor *t = &l->tensors[i];
        char shape[96], off[32], num[32];
        shape_text(t, shape, sizeof shape);
        if (csv) {
            snprintf(off, sizeof off, "%lld", (long long)t->offset);
            snprintf(num, sizeof num, "%lld", (long long)t->numel);
        } else {
            output_fmt_grouped(off, sizeof off, (double)t->offset, 0);
            output_fmt_grouped(num, sizeof num, (double)t->numel, 0);
        }
        const char *all[] = {t->name, shape, off, num}, *cells[4];
        for (size_t k = 0; k < m; k++) cells[k] = all[csv ? idx[k] : k];
        rc = output_table_add_row(&tab, cells);
    }
    if (rc == 0) rc = csv ? output_table_write_csv(&tab, stdout) : output_table_write_text(&tab, stdout);
    if (rc == 0 && !csv) {
        char total[32];
        output_fmt_grouped(total, sizeof total, (double)l->total, 0);
        printf("%zu tensors, %s parameters\n", l->count, total);
    }
    output_table_free(&tab);
    return rc ? IB_EXIT_RUNTIME : IB_EXIT_OK;
}

static int print_layout(const vit_config *c, int format)
{
    model_layout l;
    ib_error err;
    if (model_layout_build(c, &l, &err)) {
        fprintf(stderr, "instbench models: %s\n", err.msg);
        return IB_EXIT_USAGE;
    }
    int rc = format == FORMAT_JSON ? layout_json(c, &l) : layout_rows(&l, format == FORMAT_CSV);
    model_layout_free(&l);
    return rc;
}

/* instbench.models/v1: {"schema", "models": [one object per configuration, config_keys]}. */
static int configs_json(const vit_config *const *cs, size_t n)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return write_json(NULL);
    cJSON_AddStringToObject(doc, "schema", "instbench.models/v1");
    cJSON *arr = cJSON_AddArrayToObject(doc, "models");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, config_json(cs[i], 0));
    return write_json(doc);
}

static int configs_table(const vit_config *const *cs, size_t n)
{
    static const char *const hdr[] = {"MODEL", "IMG",     "PATCH",  "DIM",       "DEPTH",      "HEADS",
                                      "MLP",   "CLASSES", "PARAMS", "FWD GFLOP", "TRAIN GFLOP"};
    static const int prio[] = {OUTPUT_KEEP, 2, 3, 5, 5, 4, 1, 1, OUTPUT_KEEP, 6, OUTPUT_KEEP};
    enum { NC = sizeof hdr / sizeof hdr[0] };
    static const output_align al[NC] = {OUTPUT_LEFT,  OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT,
                                        OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT,
                                        OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_RIGHT};
    output_table t;
    if (output_table_init(&t, NC, hdr, al)) return IB_EXIT_RUNTIME;
    output_table_fit_columns(&t, table_keys, prio);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const vit_config *c = cs[i];
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
    /* the note reads the GFLOP columns: not under a table without them (--columns name,params) */
    const int gflop =
        output_table_showed(&t, "forward_flops_per_sample") || output_table_showed(&t, "train_flops_per_sample");
    output_table_free(&t);
    if (rc) return IB_EXIT_RUNTIME;
    if (gflop) printf("(GFLOP per sample; training = 3 x forward)\n");
    return IB_EXIT_OK;
}

/* --columns: the old short keys read as the field names, then each key checked against what the
 * format asked carries (the table lacks a few of the JSON's fields, and says so). */
static int check_columns(int format)
{
    for (size_t i = 0; i < O.columns.n; i++)
        for (size_t a = 0; a < sizeof aliases / sizeof *aliases; a++)
            if (!strcmp(O.columns.v[i], aliases[a][0]) && (strcmp(aliases[a][0], "tensor") || O.layout)) {
                char *canon = util_strdup(aliases[a][1]);
                if (!canon) return IB_EXIT_RUNTIME;
                free(O.columns.v[i]);
                O.columns.v[i] = canon;
                break;
            }
    const char *const *keys = O.layout ? layout_keys : format == FORMAT_TABLE ? table_keys : config_keys;
    size_t nk = O.layout ? 4 : format == FORMAT_TABLE ? TABLE_KEYS : CONFIG_FIELDS;
    for (size_t i = 0; i < O.columns.n; i++) {
        int ok = 0;
        for (size_t k = 0; k < nk && !ok; k++) ok = !strcmp(O.columns.v[i], keys[k]);
        if (ok) continue;
        int in_json = 0;
        for (size_t k = 0; k < CONFIG_FIELDS && !in_json; k++) in_json = !strcmp(O.columns.v[i], config_keys[k]);
        if (in_json && !O.layout)
            return args_usage_error(&cmd_models_args,
                                    "--columns: '%s' is a field of --format json and csv, not a column "
                                    "of the table",
                                    O.columns.v[i]);
        char list[512] = "", dym[128];
        for (size_t k = 0, u = 0; k < nk && u < sizeof list; k++)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", k ? ", " : "", keys[k]);
        /* worded as prices' and rank's --columns say it, with the nearest key */
        return args_usage_error(&cmd_models_args, "--columns: '%s' is not a column%s (columns: %s)", O.columns.v[i],
                                args_did_you_mean(suggest_closest(O.columns.v[i], keys, nk), dym, sizeof dym), list);
    }
    /* checked here; this fits the text table to the terminal */
    return args_table_fit(&cmd_models_args, O.wide, &O.columns, NULL);
}

int cmd_models(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    O.format = -1;
    model_cli_init(&O.model, "vit_base_patch16_224");
    int rc = args_parse(&cmd_models_args, argc, argv, NULL, NULL);
    if (rc) return rc == ARGS_HELP ? IB_EXIT_OK : rc;
    int format = O.format >= 0 ? O.format : util_isatty_stdout() ? FORMAT_TABLE : FORMAT_JSON;
    if ((rc = check_columns(format))) return rc;
    int custom = O.custom, layout = O.layout;
    model_cli m = O.model;
    ib_error err = {0};
    vit_config one;
    if ((custom || layout) && model_cli_resolve(&m, &one, &err))
        return args_usage_error(&cmd_models_args, "%s", err.msg);
    if (layout) return print_layout(&one, format);
    const size_t n = custom ? 1 : model_preset_count();
    const vit_config *cs[n];
    for (size_t i = 0; i < n; i++) cs[i] = custom ? &one : model_preset_at(i);
    return format == FORMAT_JSON  ? configs_json(cs, n)
           : format == FORMAT_CSV ? write_configs_csv(cs, n)
                                  : configs_table(cs, n);
}
