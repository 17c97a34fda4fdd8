/* safetensors_writer: builds safetensors files for the reader's tests (the product only reads
 * them; reference files come from scripts/data/make_reference.py).  See safetensors_writer.h. */
#include "safetensors_writer.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

void safetensors_writer_init(st_writer *w) { memset(w, 0, sizeof *w); }

int safetensors_writer_add_tensor(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape,
                                  const void *data, ib_error *err)
{
    if (!name || !*name || !strcmp(name, "__metadata__"))
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: invalid tensor name");
    if ((unsigned)dtype >= ST_DTYPE_COUNT || ndim < 0 || ndim > ST_MAX_DIMS)
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: invalid dtype or rank for '%s'", name);
    for (size_t i = 0; i < w->count; i++)
        if (!strcmp(w->entries[i].name, name))
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: tensor '%s' added twice", name);
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && numel > SIZE_MAX / 16 / (size_t)shape[i]))
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: bad shape for '%s'", name);
        numel *= (size_t)shape[i];
    }
    if (w->count == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        st_writer_entry *e = realloc(w->entries, cap * sizeof *e);
        if (!e) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        w->entries = e;
        w->cap = cap;
    }
    st_writer_entry *e = &w->entries[w->count];
    memset(e, 0, sizeof *e);
    e->name = util_strdup(name);
    if (!e->name) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    e->dtype = dtype;
    e->ndim = ndim;
    for (int i = 0; i < ndim; i++) e->shape[i] = shape[i];
    e->data = data;
    e->nbytes = numel * safetensors_dtype_size(dtype);
    w->count++;
    return 0;
}

int safetensors_writer_add_meta(st_writer *w, const char *key, const char *value, ib_error *err)
{
    if (!key || !value) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: NULL metadata");
    for (size_t i = 0; i < w->meta_count; i++)
        if (!strcmp(w->meta_keys[i], key)) {
            char *v = util_strdup(value);
            if (!v) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
            free(w->meta_values[i]);
            w->meta_values[i] = v;
            return 0;
        }
    if (w->meta_count == w->meta_cap) {
        size_t cap = w->meta_cap ? 2 * w->meta_cap : 16;
        char **k = realloc(w->meta_keys, cap * sizeof *k);
        if (!k) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        w->meta_keys = k;
        char **v = realloc(w->meta_values, cap * sizeof *v);
        if (!v) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        w->meta_values = v;
        w->meta_cap = cap;
    }
    w->meta_keys[w->meta_count] = util_strdup(key);
    w->meta_values[w->meta_count] = util_strdup(value);
    if (!w->meta_keys[w->meta_count] || !w->meta_values[w->meta_count]) {
        free(w->meta_keys[w->meta_count]);
        free(w->meta_values[w->meta_count]);
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    }
    w->meta_count++;
    return 0;
}

static char *writer_header_json(const st_writer *w)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    if (w->meta_count) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        for (size_t i = 0; meta && i < w->meta_count; i++)
            if (!cJSON_AddStringToObject(meta, w->meta_keys[i], w->meta_values[i])) meta = NULL;
        if (!meta) goto fail;
    }
    double off = 0;
    for (size_t i = 0; i < w->count; i++) {
        const st_writer_entry *e = &w->entries[i];
        cJSON *t = cJSON_AddObjectToObject(root, e->name);
        if (!t || !cJSON_AddStringToObject(t, "dtype", safetensors_dtype_name(e->dtype))) goto fail;
        cJSON *sh = cJSON_AddArrayToObject(t, "shape");
        cJSON *of = cJSON_AddArrayToObject(t, "data_offsets");
        if (!sh || !of) goto fail;
        for (int d = 0; d < e->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)e->shape[d]));
        cJSON_AddItemToArray(of, cJSON_CreateNumber(off));
        off += (double)e->nbytes;
        cJSON_AddItemToArray(of, cJSON_CreateNumber(off));
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
fail:
    cJSON_Delete(root);
    return NULL;
}

int safetensors_writer_serialize(const st_writer *w, unsigned char **out, size_t *out_len, ib_error *err)
{
    char *json = writer_header_json(w);
    if (!json) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory building header");
    size_t jlen = strlen(json), hlen = (jlen + 7) / 8 * 8, total = 8 + hlen;
    for (size_t i = 0; i < w->count; i++) total += w->entries[i].nbytes;
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(json);
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory (%zu bytes)", total);
    }
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(buf + 8, json, jlen);
    memset(buf + 8 + jlen, ' ', hlen - jlen);
    free(json);
    size_t pos = 8 + hlen;
    for (size_t i = 0; i < w->count; i++) {
        if (w->entries[i].nbytes) memcpy(buf + pos, w->entries[i].data, w->entries[i].nbytes);
        pos += w->entries[i].nbytes;
    }
    *out = buf;
    *out_len = total;
    return 0;
}

void safetensors_writer_free(st_writer *w)
{
    for (size_t i = 0; i < w->count; i++) free(w->entries[i].name);
    free(w->entries);
    for (size_t i = 0; i < w->meta_count; i++) {
        free(w->meta_keys[i]);
        free(w->meta_values[i]);
    }
    free(w->meta_keys);
    free(w->meta_values);
    memset(w, 0, sizeof *w);
}
