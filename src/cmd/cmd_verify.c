/* instbench verify: this build's backend against a timm reference file (scripts/data/make_reference.py).
 * Loads the reference, runs the backend from the same weights and batch, compares logits, loss,
 * every gradient and the loss after each optimizer step, prints per-tensor errors and PASS/FAIL.
 * With --compare-backend the reference also runs through a second backend, and the two backends
 * are compared per tensor with each other (CUDA against the CPU reference backend) as well as each
 * against timm. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/args.h"
#include "cmd/cmd.h"
#include "instbench/output.h"
#include "instbench/safetensors.h"
#include "instbench/util.h"
#include "instbench/verify.h"

static struct {
    const char *reference;
    int backend, compare, format; /* indexes into backend_names / formats */
    int precision;                /* index into backend_precision_names; -1: the reference's */
    int threads, wide;
    args_list columns;
} A;

static const char *const formats[] = {"table", "json", NULL};
static const char *const verify_keys[] = {"tensor", "shape", "max_abs", "max_rel", "rel_l2",
                                          "cosine", "check", "result",  NULL};

static const arg_spec verify_args[] = {
    {"--reference", 0, ARG_STRING, &A.reference, "FILE", "safetensors reference (required)"},
    {"--backend", 0, ARG_CHOICE, &A.backend, NULL, "the backend to check (default cpu)", .choices = backend_names},
    {"--compare-backend", 0, ARG_CHOICE, &A.compare, NULL,
     "also run this backend and compare the two backends tensor by\n"
     "tensor, each also against the reference; PASS needs all three\n"
     "comparisons within tolerance (the same backend twice checks that it\n"
     "is deterministic)",
     .choices = backend_names},
    {"--precision", 0, ARG_CHOICE, &A.precision, NULL, "default: the precision the reference was made in",
     .choices = backend_precision_names},
    {"--format", 0, ARG_CHOICE, &A.format, NULL,
     "table (default on a terminal or with --columns) or json (default\n"
     "otherwise), on stdout, as every command of instbench",
     .choices = formats},
    {"--threads", 0, ARG_INT, &A.threads, "N", "CPU worker threads (default 0: all cores)", 0, 4096},
    ARGS_TABLE_SPECS(&A.wide, &A.columns, "tensor, shape, max_abs, max_rel,\nrel_l2, cosine, check, result"),
    {0},
};

const arg_command cmd_verify_args = {
    "verify",
    "--reference FILE [options]",
    "Runs this build's training step from the weights and batch in a reference file written by\n"
    "scripts/data/make_reference.py (timm), compares logits, loss, every gradient and the loss at each\n"
    "optimizer step, prints per-tensor errors and PASS/FAIL.",
    "tolerances: fp32: logits max|diff|/max|ref| <= 1e-4, each gradient relative L2 <= 1e-3,\n"
    "            each loss relative error <= 1e-4\n"
    "            bf16: logits relative L2 <= 3e-2, each gradient cosine >= 0.99, losses <= 2e-2\n"
    "--compare-backend, one backend against the other: fp32 the same; bf16 (both round to bf16 at\n"
    "            autocast's points, fused attention before normalising): logits relative L2 <=\n"
    "            1e-2, each gradient relative L2 <= 2e-2, losses <= 1e-3\n"
    "PASS exits 0, FAIL 1.\n",
    verify_args,
    NULL,
    .examples =
        (const arg_example[]){
            {"the CPU backend against a reference shipped in tests/data/ (scripts/data/make_reference.py makes more)",
             "instbench verify --reference tests/data/ref_a_adam_fp32.safetensors"},
            {"the CUDA backend against the reference and against the CPU backend",
             "instbench verify --reference tests/data/ref_a_adam_bf16.safetensors --backend cuda --compare-backend "
             "cpu"},
            {0}},
};

static void print_table(const verify_report *r)
{
    static const char *const hdr[] = {"TENSOR", "SHAPE", "MAX ABS", "MAX REL", "REL L2", "COSINE", "CHECK", "RESULT"};
    static const output_align al[] = {OUTPUT_LEFT,  OUTPUT_LEFT,  OUTPUT_RIGHT, OUTPUT_RIGHT,
                                      OUTPUT_RIGHT, OUTPUT_RIGHT, OUTPUT_LEFT,  OUTPUT_LEFT};
    /* a narrow terminal keeps the tensor, the check and its result (output_fit_set) */
    static const int prio[] = {OUTPUT_KEEP, 1, 3, 2, 4, 4, OUTPUT_KEEP, OUTPUT_KEEP};
    output_table t;
    if (output_table_init(&t, 8, hdr, al)) return;
    output_table_fit_columns(&t, verify_keys, prio);
    for (size_t i = 0; i < r->count; i++) {
        const verify_check *c = &r->checks[i];
        char shape[64], crit[48], v[4][24];
        safetensors_format_shape(c->ndim, c->shape, shape, sizeof shape);
        snprintf(crit, sizeof crit, "%s %s %g", verify_metric_name(c->metric),
                 c->metric == VERIFY_COSINE ? ">=" : "<=", c->limit);
        snprintf(v[0], sizeof v[0], "%.3e", c->err.max_abs);
        snprintf(v[1], sizeof v[1], "%.3e", c->err.max_rel);
        snprintf(v[2], sizeof v[2], "%.3e", c->err.rel_l2);
        snprintf(v[3], sizeof v[3], "%.7f", c->err.cosine);
        const char *cells[] = {c->name, shape, v[0], v[1], v[2], v[3], crit, c->pass ? "ok" : "FAIL"};
        if (output_table_add_row(&t, cells)) break;
    }
    output_table_write_text(&t, stdout);
    output_table_free(&t);
    if (r->pass) {
        printf("PASS: %zu of %zu checks within tolerance\n", r->count, r->count);
    } else {
        printf("FAIL: %zu of %zu checks out of tolerance:", r->failed, r->count);
        size_t shown = 0;
        for (size_t i = 0; i < r->count && shown < 5; i++)
            if (!r->checks[i].pass) {
                printf("%s %s (%s %.3g)", shown++ ? "," : "", r->checks[i].name,
                       verify_metric_name(r->checks[i].metric), r->checks[i].value);
            }
        if (r->failed > shown) printf(", ...");
        printf("\n");
    }
}

/* JSON numbers cannot be NaN/inf: those become null. */
static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static void add_checks(cJSON *parent, const verify_report *r)
{
    cJSON *arr = cJSON_AddArrayToObject(parent, "checks");
    for (size_t i = 0; i < r->count; i++) {
        const verify_check *k = &r->checks[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", k->name);
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < k->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)k->shape[d]));
        add_num(o, "max_abs", k->err.max_abs);
        add_num(o, "max_rel", k->err.max_rel);
        add_num(o, "rel_l2", k->err.rel_l2);
        add_num(o, "cosine", k->err.cosine);
        cJSON_AddStringToObject(o, "metric", verify_metric_name(k->metric));
        add_num(o, "value", k->value);
        add_num(o, "limit", k->limit);
        cJSON_AddBoolToObject(o, "pass", k->pass);
        cJSON_AddItemToArray(arr, o);
    }
}

/* The second backend of --compare-backend: its outputs and both of its comparisons. */
typedef struct verify_second {
    const char *backend;
    const char *attention; /* backend_attention of it */
    verify_outputs got;
    double seconds;
    verify_report vs_reference, vs_backend; /* vs_backend: expected = the second backend */
} verify_second;

static int print_json(const char *path, const char *backend, const char *attention, ib_precision prec,
                      const verify_reference *ref, const verify_outputs *got, double seconds, const verify_report *r,
                      const verify_second *second)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "instbench.verify/v1");
    cJSON_AddStringToObject(root, "reference", path);
    cJSON_AddStringToObject(root, "reference_timm", ref->timm_version);
    cJSON_AddStringToObject(root, "reference_torch", ref->torch_version);
    cJSON_AddStringToObject(root, "reference_precision", backend_precision_name(ref->cfg.precision));
    cJSON_AddStringToObject(root, "backend", backend);
    cJSON_AddStringToObject(root, "attention", attention);
    cJSON_AddStringToObject(root, "precision", backend_precision_name(prec));
    cJSON *m = cJSON_AddObjectToObject(root, "model");
    const vit_config *c = &ref->cfg.model;
    static const char *const model_keys[] = {"img_size",  "patch_size", "embed_dim",  "depth",
                                             "num_heads", "mlp_ratio",  "num_classes"};
    const double dims[] = {c->img_size,  c->patch_size, c->embed_dim,  c->depth,
                           c->num_heads, c->mlp_ratio,  c->num_classes};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) cJSON_AddNumberToObject(m, model_keys[i], dims[i]);
    cJSON_AddNumberToObject(root, "batch_size", ref->cfg.batch_size);
    cJSON_AddStringToObject(root, "optimizer", backend_optimizer_name(ref->cfg.optim.kind));
    cJSON_AddNumberToObject(root, "steps", ref->steps);
    add_num(root, "seconds", seconds);
    add_checks(root, r);
    cJSON *ls = cJSON_AddArrayToObject(root, "losses");
    for (int s = 0; s < got->steps; s++) {
        cJSON *o = cJSON_CreateObject();
        add_num(o, "reference", ref->expected.losses[s]);
        add_num(o, "backend", got->losses[s]);
        if (second) add_num(o, "compare_backend", second->got.losses[s]);
        cJSON_AddItemToArray(ls, o);
    }
    cJSON_AddNumberToObject(root, "failed", (double)r->failed);
    int pass = r->pass;
    if (second) {
        /* "checks"/"failed" above stay the --backend's against the reference (as without it) */
        cJSON *cmp = cJSON_AddObjectToObject(root, "compare");
        cJSON_AddStringToObject(cmp, "backend", second->backend);
        cJSON_AddStringToObject(cmp, "attention", second->attention);
        add_num(cmp, "seconds", second->seconds);
        cJSON *vr = cJSON_AddObjectToObject(cmp, "vs_reference");
        cJSON_AddNumberToObject(vr, "failed", (double)second->vs_reference.failed);
        cJSON_AddBoolToObject(vr, "pass", second->vs_reference.pass);
        add_checks(vr, &second->vs_reference);
        cJSON *vb = cJSON_AddObjectToObject(cmp, "vs_backend");
        cJSON_AddNumberToObject(vb, "failed", (double)second->vs_backend.failed);
        cJSON_AddBoolToObject(vb, "pass", second->vs_backend.pass);
        add_checks(vb, &second->vs_backend);
        pass = pass && second->vs_reference.pass && second->vs_backend.pass;
    }
    cJSON_AddBoolToObject(root, "pass", pass);
    char *s = util_json_print(root);
    cJSON_Delete(root);
    if (!s) return -1;
    fputs(s, stdout);
    free(s);
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    memset(&A, 0, sizeof A);
    A.precision = A.compare = A.format = -1;
    int pr = args_parse(&cmd_verify_args, argc, argv, NULL, NULL);
    if (pr) return pr == ARGS_HELP ? IB_EXIT_OK : pr;
    if ((pr = args_table_fit(&cmd_verify_args, A.wide, &A.columns, verify_keys))) return pr;
    /* --columns chooses the table's columns (its keys are not the JSON's: instbench.verify/v1 keeps
     * every field), so it asks for the table, as prices' does, and cannot shape JSON */
    if (A.columns.n && A.format == 1)
        return args_usage_error(&cmd_verify_args, "--columns chooses the table's columns; verify's JSON "
                                                  "(instbench.verify/v1) always carries every field: give one "
                                                  "of --columns and --format json");
    if (A.columns.n && A.format < 0) A.format = 0;
    if (!A.reference) return args_usage_error(&cmd_verify_args, "--reference FILE is required");
    const char *backend = backend_names[A.backend], *compare = A.compare >= 0 ? backend_names[A.compare] : NULL;
    /* A backend this machine cannot run is a usage error, as in measure: exit 2 before any work. */
    for (int i = 0; i < 2; i++) {
        const char *name = i ? compare : backend, *why = name ? backend_find(name)->unavailable_reason() : NULL;
        if (why)
            return args_usage_error(&cmd_verify_args, "%sbackend '%s' is not available: %s",
                                    i ? "--compare-backend: " : "", name, why);
    }

    ib_error err;
    ib_error_clear(&err);
    verify_reference ref;
    if (verify_reference_load(A.reference, &ref, &err)) {
        fprintf(stderr, "instbench verify: %s\n", err.msg);
        return IB_EXIT_RUNTIME;
    }
    ib_precision prec = A.precision < 0 ? ref.cfg.precision : (ib_precision)A.precision;
    const vit_config *c = &ref.cfg.model;
    ib_info("verify: reference %s (timm %s, torch %s, %s): img %d patch %d dim %d depth %d heads %d mlp %g "
            "classes %d, batch %d, %d %s steps (lr %g, betas %g/%g, eps %g, wd %g)\n",
            A.reference, ref.timm_version, ref.torch_version, backend_precision_name(ref.cfg.precision), c->img_size,
            c->patch_size, c->embed_dim, c->depth, c->num_heads, c->mlp_ratio, c->num_classes, ref.cfg.batch_size,
            ref.steps, backend_optimizer_name(ref.cfg.optim.kind), ref.cfg.optim.lr, ref.cfg.optim.beta1,
            ref.cfg.optim.beta2, ref.cfg.optim.eps, ref.cfg.optim.weight_decay);
    if (prec != ref.cfg.precision)
        ib_warn("verify: running %s against a %s reference; the %s tolerances apply\n", backend_precision_name(prec),
                backend_precision_name(ref.cfg.precision), backend_precision_name(prec));

    verify_outputs got;
    double seconds = 0;
    if (verify_run_backend(backend, &ref, prec, A.threads, &got, &seconds, &err)) {
        fprintf(stderr, "instbench verify: %s\n", err.msg);
        verify_reference_free(&ref);
        return IB_EXIT_RUNTIME;
    }
    ib_train_config run_cfg = ref.cfg; /* as verify_run_backend runs it: the reference's config at prec */
    run_cfg.precision = prec;
    const char *attention = backend_attention(backend_find(backend), &run_cfg);
    ib_info("verify: backend %s %s ran %d steps in %.3f s (attention %s)\n", backend, backend_precision_name(prec),
            ref.steps, seconds, attention);
    verify_second second, *sec = NULL;
    memset(&second, 0, sizeof second);
    if (compare) {
        second.backend = compare;
        if (verify_run_backend(compare, &ref, prec, A.threads, &second.got, &second.seconds, &err)) {
            fprintf(stderr, "instbench verify: --compare-backend: %s\n", err.msg);
            verify_outputs_free(&got);
            verify_reference_free(&ref);
            return IB_EXIT_RUNTIME;
        }
        second.attention = backend_attention(backend_find(compare), &run_cfg);
        ib_info("verify: backend %s %s ran %d steps in %.3f s (attention %s)\n", compare, backend_precision_name(prec),
                ref.steps, second.seconds, second.attention);
        sec = &second;
    }

    verify_tolerance tol, pair;
    verify_default_tolerance(prec, &tol);
    verify_pair_tolerance(prec, &pair);
    verify_report rep;
    int rc = IB_EXIT_RUNTIME;
    if (verify_compare(&ref, &ref.expected, &got, &tol, &rep, &err)) {
        fprintf(stderr, "instbench verify: %s\n", err.msg);
    } else if (sec && (verify_compare(&ref, &ref.expected, &sec->got, &tol, &sec->vs_reference, &err) ||
                       verify_compare(&ref, &sec->got, &got, &pair, &sec->vs_backend, &err))) {
        fprintf(stderr, "instbench verify: %s\n", err.msg);
        verify_report_free(&rep);
    } else {
        int pass = rep.pass && (!sec || (sec->vs_reference.pass && sec->vs_backend.pass));
        if (A.format >= 0 ? A.format == 1 : !util_isatty_stdout()) {
            if (print_json(A.reference, backend, attention, prec, &ref, &got, seconds, &rep, sec))
                fprintf(stderr, "instbench verify: out of memory printing JSON\n");
        } else if (!sec) {
            print_table(&rep);
        } else {
            printf("== %s vs reference (timm %s) ==\n", backend, ref.timm_version);
            print_table(&rep);
            printf("\n== %s vs reference (timm %s) ==\n", sec->backend, ref.timm_version);
            print_table(&sec->vs_reference);
            printf("\n== %s vs %s (the %s backend's outputs as the expected values) ==\n", backend, sec->backend,
                   sec->backend);
            print_table(&sec->vs_backend);
            printf("\n%s: %s vs reference %s, %s vs reference %s, %s vs %s %s\n", pass ? "PASS" : "FAIL", backend,
                   rep.pass ? "ok" : "FAIL", sec->backend, sec->vs_reference.pass ? "ok" : "FAIL", backend,
                   sec->backend, sec->vs_backend.pass ? "ok" : "FAIL");
        }
        rc = pass ? IB_EXIT_OK : IB_EXIT_RUNTIME;
        verify_report_free(&rep);
        if (sec) {
            verify_report_free(&sec->vs_reference);
            verify_report_free(&sec->vs_backend);
        }
    }
    if (sec) verify_outputs_free(&sec->got);
    verify_outputs_free(&got);
    verify_reference_free(&ref);
    return rc;
}
