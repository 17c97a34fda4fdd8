/* verify/reference: a make_reference.py file -> config, initial weights, batch, expected outputs.
 *
 * Everything is checked against the model layout built from __metadata__: each layout tensor and
 * its grad.<name> must be present with exactly timm's shape, and a tensor the layout does not know
 * is an error too (it would mean a timm option instbench does not implement, e.g. qk_norm). */
#include "instbench/verify.h"

#include <stdlib.h>
#include <string.h>

#include "instbench/safetensors.h"

static const char *const io_names[] = {"input", "labels", "logits", "loss", "losses"};

/* The largest reference file read: make_reference.py's vit_large_patch16_224 holds its weights and
 * their gradients in fp32, 2 x 1.2 GB, and a batch of 128 images 77 MB more; 8 GiB leaves room for
 * bigger batches and shapes, and refuses a device or a wrong file before it fills the memory. */
#define REFERENCE_MAX_BYTES ((size_t)8 << 30)

static int meta_int(const st_file *f, const char *key, long min, long max, int *out, ib_error *err)
{
    const char *v = safetensors_get_meta(f, key);
    long x;
    if (!v) return ib_error_set(err, IB_EXIT_RUNTIME, "reference __metadata__ lacks '%s'", key);
    if (util_parse_int(v, min, max, &x))
        return ib_error_set(err, IB_EXIT_RUNTIME, "reference __metadata__ %s='%.40s' is not an integer in [%ld, %ld]",
                            key, v, min, max);
    *out = (int)x;
    return 0;
}

static int meta_float(const st_file *f, const char *key, double min, double max, double *out, ib_error *err)
{
    const char *v = safetensors_get_meta(f, key);
    if (!v) return ib_error_set(err, IB_EXIT_RUNTIME, "reference __metadata__ lacks '%s'", key);
    if (util_parse_double(v, min, max, out))
        return ib_error_set(err, IB_EXIT_RUNTIME, "reference __metadata__ %s='%.40s' is not a number in [%g, %g]", key,
                            v, min, max);
    return 0;
}

static int config_from_meta(const st_file *f, verify_reference *r, ib_error *err)
{
    vit_config *m = &r->cfg.model;
    double mlp, lr, b1, b2, eps, wd;
    snprintf(m->name, sizeof m->name, "reference");
    m->in_chans = 3;
    if (meta_int(f, "img_size", 1, 1 << 16, &m->img_size, err) ||
        meta_int(f, "patch_size", 1, 1 << 16, &m->patch_size, err) ||
        meta_int(f, "embed_dim", 1, 1 << 20, &m->embed_dim, err) || meta_int(f, "depth", 1, 1 << 12, &m->depth, err) ||
        meta_int(f, "num_heads", 1, 1 << 20, &m->num_heads, err) || meta_float(f, "mlp_ratio", 1e-6, 1e6, &mlp, err) ||
        meta_int(f, "num_classes", 1, 1 << 24, &m->num_classes, err) ||
        meta_int(f, "batch_size", 1, 1 << 20, &r->cfg.batch_size, err) ||
        meta_int(f, "steps", 1, 1 << 20, &r->steps, err) || meta_float(f, "lr", 0, 1e6, &lr, err) ||
        meta_float(f, "beta1", 0, 1, &b1, err) || meta_float(f, "beta2", 0, 1, &b2, err) ||
        meta_float(f, "eps", 0, 1, &eps, err) || meta_float(f, "weight_decay", 0, 1e6, &wd, err))
        return -1;
    m->mlp_ratio = mlp;
    ib_error verr;
    if (model_validate(m, &verr))
        return ib_error_set(err, IB_EXIT_RUNTIME, "reference describes a model instbench cannot build: %s", verr.msg);

    const char *opt = safetensors_get_meta(f, "optimizer");
    if (!opt) return ib_error_set(err, IB_EXIT_RUNTIME, "reference __metadata__ lacks 'optimizer'");
    if (!strcmp(opt, "adam")) r->cfg.optim.kind = IB_OPT_ADAM;
    else if (!strcmp(opt, "adamw")) r->cfg.optim.kind = IB_OPT_ADAMW;
    else return ib_error_set(err, IB_EXIT_RUNTIME, "reference optimizer '%.40s' is neither adam nor adamw", opt);
    r->cfg.optim.lr = (float)lr;
    r->cfg.optim.beta1 = (float)b1;
    r->cfg.optim.beta2 = (float)b2;
    r->cfg.optim.eps = (float)eps;
    r->cfg.optim.weight_decay = (float)wd;

    /* Files from before the precision key existed were fp32. */
    const char *prec = safetensors_get_meta(f, "precision");
    if (!prec || !strcmp(prec, "fp32")) r->cfg.precision = IB_PREC_FP32;
    else if (!strcmp(prec, "bf16")) r->cfg.precision = IB_PREC_BF16;
    else return ib_error_set(err, IB_EXIT_RUNTIME, "reference precision '%.40s' is neither fp32 nor bf16", prec);
    const char *tv = safetensors_get_meta(f, "timm_version"), *pv = safetensors_get_meta(f, "torch_version");
    snprintf(r->timm_version, sizeof r->timm_version, "%s", tv ? tv : "?");
    snprintf(r->torch_version, sizeof r->torch_version, "%s", pv ? pv : "?");
    return 0;
}

/* The tensor NAME with exactly SHAPE, converted to fp32 into OUT (NULL: its shape checked only). */
static int load_f32(const st_file *f, const char *name, int ndim, const int64_t *shape, float *out, ib_error *err)
{
    const st_tensor *t = safetensors_find_tensor(f, name);
    char want[96], have[96];
    if (!t) return ib_error_set(err, IB_EXIT_RUNTIME, "reference lacks tensor '%s'", name);
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        safetensors_format_shape(ndim, shape, want, sizeof want);
        safetensors_format_shape(t->ndim, t->shape, have, sizeof have);
        return ib_error_set(err, IB_EXIT_RUNTIME, "reference tensor '%s' has shape %s, the model needs %s", name, have,
                            want);
    }
    return out ? safetensors_tensor_to_f32(t, out, err) : 0;
}

static int check_known_names(const st_file *f, const model_layout *l, ib_error *err)
{
    for (size_t i = 0; i < f->count; i++) {
        const char *n = f->tensors[i].name;
        int known = model_layout_find(l, n) || (!strncmp(n, "grad.", 5) && model_layout_find(l, n + 5));
        for (size_t k = 0; !known && k < sizeof io_names / sizeof io_names[0]; k++) known = !strcmp(n, io_names[k]);
        if (!known)
            return ib_error_set(err, IB_EXIT_RUNTIME,
                                "reference tensor '%.100s' is not part of instbench's ViT (a timm option it does not "
                                "implement?)",
                                n);
    }
    return 0;
}

/* Every float tensor of the reference against the shape the metadata's model and batch give it,
 * converted into R's buffers unless CHECK_ONLY. */
static int float_tensors(const st_file *f, verify_reference *r, int check_only, ib_error *err)
{
    const vit_config *m = &r->cfg.model;
    const int64_t B = r->cfg.batch_size, C = m->num_classes;
    const model_layout *l = &r->layout;
    char gname[80];
    for (size_t i = 0; i < l->count; i++) {
        const model_tensor *t = &l->tensors[i];
        snprintf(gname, sizeof gname, "grad.%s", t->name);
        if (load_f32(f, t->name, t->ndim, t->shape, check_only ? NULL : r->params + t->offset, err) ||
            load_f32(f, gname, t->ndim, t->shape, check_only ? NULL : r->expected.grads + t->offset, err))
            return -1;
    }
    const int64_t in_shape[4] = {B, 3, m->img_size, m->img_size}, lg_shape[2] = {B, C};
    const int64_t steps_shape[1] = {r->steps};
    return load_f32(f, "input", 4, in_shape, check_only ? NULL : r->images, err) ||
                   load_f32(f, "logits", 2, lg_shape, check_only ? NULL : r->expected.logits, err) ||
                   load_f32(f, "losses", 1, steps_shape, check_only ? NULL : r->expected.losses, err) ||
                   load_f32(f, "loss", 0, NULL, check_only ? NULL : &r->expected.loss, err)
               ? -1
               : 0;
}

static int load_tensors(const st_file *f, verify_reference *r, ib_error *err)
{
    const vit_config *m = &r->cfg.model;
    const int64_t B = r->cfg.batch_size, C = m->num_classes;
    const model_layout *l = &r->layout;
    /* Shapes before buffers: the buffers are sized by the metadata, so a small file whose metadata
     * claims a huge batch or image is named for the shapes that disagree, not "out of memory". */
    if (float_tensors(f, r, 1, err)) return -1;
    const st_tensor *lt = safetensors_find_tensor(f, "labels");
    if (!lt) return ib_error_set(err, IB_EXIT_RUNTIME, "reference lacks tensor 'labels'");
    if (lt->ndim != 1 || lt->shape[0] != B)
        return ib_error_set(err, IB_EXIT_RUNTIME, "reference 'labels' must have shape [%lld]", (long long)B);
    r->params = malloc(l->total * sizeof(float));
    r->expected.grads = malloc(l->total * sizeof(float));
    r->images = malloc((size_t)B * 3 * m->img_size * m->img_size * sizeof(float));
    r->labels = malloc((size_t)B * sizeof(int32_t));
    r->expected.logits = malloc((size_t)(B * C) * sizeof(float));
    r->expected.losses = malloc((size_t)r->steps * sizeof(float));
    r->expected.steps = r->steps;
    if (!r->params || !r->expected.grads || !r->images || !r->labels || !r->expected.logits || !r->expected.losses)
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory loading the reference");
    if (float_tensors(f, r, 0, err)) return -1;
    int64_t *lab = malloc((size_t)B * sizeof *lab);
    if (!lab) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory loading the reference");
    if (safetensors_tensor_to_i64(lt, lab, err)) {
        free(lab);
        return -1;
    }
    for (int64_t i = 0; i < B; i++) {
        if (lab[i] < 0 || lab[i] >= C) {
            ib_error_set(err, IB_EXIT_RUNTIME, "reference label %lld of sample %lld is outside [0, %lld)",
                         (long long)lab[i], (long long)i, (long long)C);
            free(lab);
            return -1;
        }
        r->labels[i] = (int32_t)lab[i];
    }
    free(lab);
    return 0;
}

int verify_reference_load(const char *path, verify_reference *r, ib_error *err)
{
    memset(r, 0, sizeof *r);
    st_file f;
    if (safetensors_read_file(path, REFERENCE_MAX_BYTES, &f, err)) return -1;
    int rc = -1;
    if (config_from_meta(&f, r, err)) goto done;
    if (model_layout_build(&r->cfg.model, &r->layout, err)) goto done;
    if (check_known_names(&f, &r->layout, err) || load_tensors(&f, r, err)) goto done;
    rc = 0;
done:
    safetensors_free(&f);
    if (rc) {
        verify_reference_free(r);
        if (err) err->code = IB_EXIT_RUNTIME; /* a bad file is a runtime error, not a usage one */
    }
    return rc;
}

void verify_reference_free(verify_reference *r)
{
    model_layout_free(&r->layout);
    free(r->params);
    free(r->images);
    free(r->labels);
    verify_outputs_free(&r->expected);
    memset(r, 0, sizeof *r);
}
