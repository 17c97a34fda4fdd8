/* safetensors reader (the writer only tests need is tests/verify/safetensors_writer.c).  See include/instbench/safetensors.h for the format.
 *
 * The reader treats the file as hostile: every number in the header is checked before use, sizes
 * are computed with overflow checks, and the tensors must tile the byte buffer exactly (sorted by
 * offset: each begins where the previous ended, the last ends at the end of the file), which rules
 * out overlap, holes and out-of-range data in one pass. */
#include "instbench/safetensors.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtype_info[ST_DTYPE_COUNT] = {
    [ST_BOOL] = {"BOOL", 1}, [ST_U8] = {"U8", 1},   [ST_I8] = {"I8", 1},     [ST_I16] = {"I16", 2},
    [ST_U16] = {"U16", 2},   [ST_F16] = {"F16", 2}, [ST_BF16] = {"BF16", 2}, [ST_I32] = {"I32", 4},
    [ST_U32] = {"U32", 4},   [ST_F32] = {"F32", 4}, [ST_I64] = {"I64", 8},   [ST_U64] = {"U64", 8},
    [ST_F64] = {"F64", 8},
};

const char *safetensors_dtype_name(st_dtype d) { return (unsigned)d < ST_DTYPE_COUNT ? dtype_info[d].name : "?"; }

size_t safetensors_dtype_size(st_dtype d) { return (unsigned)d < ST_DTYPE_COUNT ? dtype_info[d].size : 0; }

int safetensors_dtype_parse(const char *s, st_dtype *out)
{
    for (int d = 0; d < ST_DTYPE_COUNT; d++)
        if (!strcmp(s, dtype_info[d].name)) {
            *out = (st_dtype)d;
            return 0;
        }
    return -1;
}

void safetensors_format_shape(int ndim, const int64_t *shape, char *out, size_t out_size)
{
    size_t n = 0;
    if (!out_size) return;
    out[0] = '\0';
    n += (size_t)snprintf(out + n, out_size - n, "[");
    for (int i = 0; i < ndim && n < out_size; i++)
        n += (size_t)snprintf(out + n, out_size - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < out_size) snprintf(out + n, out_size - n, "]");
}

/* ---- reader ---- */

/* JSON numbers are doubles: accept only exact non-negative integers up to 2^53. */
static int json_to_u64(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != floor(d)) return -1;
    *out = (uint64_t)d;
    return 0;
}

static int cmp_tensor_offset(const void *a, const void *b)
{
    const st_tensor *x = a, *y = b;
    if (x->data != y->data) return x->data < y->data ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static const st_tensor *sort_base;
static int cmp_index_name(const void *a, const void *b)
{
    return strcmp(sort_base[*(const size_t *)a].name, sort_base[*(const size_t *)b].name);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int parse_metadata(const cJSON *meta, st_file *f, ib_error *err)
{
    if (!cJSON_IsObject(meta)) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: __metadata__ is not an object");
    size_t n = (size_t)cJSON_GetArraySize(meta);
    f->meta_keys = calloc(n ? n : 1, sizeof *f->meta_keys);
    f->meta_values = calloc(n ? n : 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, meta)
    {
        if (!cJSON_IsString(e) || !e->valuestring)
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: __metadata__ value of '%.100s' is not a string",
                                e->string ? e->string : "");
        f->meta_keys[f->meta_count] = util_strdup(e->string ? e->string : "");
        f->meta_values[f->meta_count] = util_strdup(e->valuestring);
        f->meta_count++;
        if (!f->meta_keys[f->meta_count - 1] || !f->meta_values[f->meta_count - 1])
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    }
    if (n > 1) {
        char **keys = malloc(n * sizeof *keys);
        if (!keys) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        memcpy(keys, f->meta_keys, n * sizeof *keys);
        qsort(keys, n, sizeof *keys, cmp_str);
        for (size_t i = 1; i < n; i++)
            if (!strcmp(keys[i - 1], keys[i])) {
                ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: duplicate __metadata__ key '%.100s'", keys[i]);
                free(keys);
                return -1;
            }
        free(keys);
    }
    return 0;
}

/* One header entry: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}. */
static int parse_entry(const cJSON *e, const unsigned char *data, uint64_t data_len, st_tensor *t, ib_error *err)
{
    const char *name = e->string ? e->string : "";
    if (!*name) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: empty tensor name");
    if (!cJSON_IsObject(e))
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: entry '%.100s' is not an object", name);
    const cJSON *dt = NULL, *sh = NULL, *off = NULL, *k;
    cJSON_ArrayForEach(k, e)
    {
        const char *key = k->string ? k->string : "";
        const cJSON **slot = !strcmp(key, "dtype")          ? &dt
                             : !strcmp(key, "shape")        ? &sh
                             : !strcmp(key, "data_offsets") ? &off
                                                            : NULL;
        if (!slot)
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' has unknown field '%.40s'", name, key);
        if (*slot) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' repeats field '%s'", name, key);
        *slot = k;
    }
    if (!dt || !sh || !off)
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' lacks dtype, shape or data_offsets", name);
    if (!cJSON_IsString(dt) || safetensors_dtype_parse(dt->valuestring, &t->dtype))
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' has an unknown dtype", name);
    if (!cJSON_IsArray(sh) || cJSON_GetArraySize(sh) > ST_MAX_DIMS)
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' shape is not an array of at most %d dims",
                            name, ST_MAX_DIMS);
    uint64_t numel = 1, esize = safetensors_dtype_size(t->dtype);
    int zero = 0;
    t->ndim = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, sh)
    {
        uint64_t v;
        if (json_to_u64(d, &v))
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' shape has a non-integer or negative dim",
                                name);
        t->shape[t->ndim++] = (int64_t)v;
        zero |= v == 0;
    }
    /* A non-empty tensor may not need more bytes than the file holds; checking each factor against
     * that bound before multiplying keeps the products far from overflow. */
    for (int i = 0; !zero && i < t->ndim; i++) {
        uint64_t v = (uint64_t)t->shape[i];
        if (numel > data_len / v)
            return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' shape is larger than the file", name);
        numel *= v;
    }
    if (zero) numel = 0;
    if (numel > data_len / esize)
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' shape is larger than the file", name);
    uint64_t begin, end;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || json_to_u64(cJSON_GetArrayItem(off, 0), &begin) ||
        json_to_u64(cJSON_GetArrayItem(off, 1), &end))
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' data_offsets is not two non-negative integers",
                            name);
    if (begin > end || end > data_len)
        return ib_error_set(err, IB_EXIT_RUNTIME,
                            "safetensors: '%.100s' data_offsets [%llu, %llu] outside the %llu data bytes", name,
                            (unsigned long long)begin, (unsigned long long)end, (unsigned long long)data_len);
    if (end - begin != numel * esize)
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: '%.100s' has %llu bytes but shape x %s needs %llu",
                            name, (unsigned long long)(end - begin), safetensors_dtype_name(t->dtype),
                            (unsigned long long)(numel * esize));
    t->numel = (size_t)numel;
    t->nbytes = (size_t)(end - begin);
    t->data = data + begin;
    t->name = util_strdup(name);
    if (!t->name) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    return 0;
}

/* Takes ownership of BUF (malloc'd) whether it succeeds or not. */
static int parse_owned(unsigned char *buf, size_t len, st_file *f, ib_error *err)
{
    memset(f, 0, sizeof *f);
    f->buf = buf;
    f->len = len;
    if (len < 8) {
        safetensors_free(f);
        return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: %zu bytes is too short for a header", len);
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    if (hlen < 2 || hlen > ST_MAX_HEADER_BYTES || hlen > len - 8) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: header length %llu is not sane for a %zu-byte file",
                     (unsigned long long)hlen, len);
        safetensors_free(f);
        return -1;
    }
    const char *hdr = (const char *)buf + 8;
    const unsigned char *data = buf + 8 + hlen;
    uint64_t data_len = len - 8 - hlen;
    cJSON *root = NULL;
    int rc = -1;
    if (hdr[0] != '{' || memchr(hdr, '\0', (size_t)hlen)) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: header is not a JSON object");
        goto done;
    }
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(hdr, (size_t)hlen, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: header is not valid JSON (near byte %lld)",
                     end ? (long long)(end - hdr) : -1LL);
        goto done;
    }
    for (const char *p = end; p && p < hdr + hlen; p++) /* only padding may follow the object */
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: junk after the JSON header");
            goto done;
        }
    size_t n = (size_t)cJSON_GetArraySize(root);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        goto done;
    }
    int have_meta = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        if (e->string && !strcmp(e->string, "__metadata__")) {
            if (have_meta++) {
                ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: two __metadata__ entries");
                goto done;
            }
            if (parse_metadata(e, f, err)) goto done;
            continue;
        }
        if (parse_entry(e, data, data_len, &f->tensors[f->count], err)) goto done;
        f->count++;
    }
    /* A key given twice is said as such before the tiling check, which would see the second copy's
     * bytes as overlapping the first's (or a hole) and name neither as a duplicate. */
    char **names = malloc((f->count ? f->count : 1) * sizeof *names);
    if (!names) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        goto done;
    }
    for (size_t i = 0; i < f->count; i++) names[i] = f->tensors[i].name;
    qsort(names, f->count, sizeof *names, cmp_str);
    for (size_t i = 1; i < f->count; i++)
        if (!strcmp(names[i - 1], names[i])) {
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "safetensors: duplicate key '%.100s' in the header (two tensors of "
                         "that name)",
                         names[i]);
            free(names);
            goto done;
        }
    free(names);
    qsort(f->tensors, f->count, sizeof *f->tensors, cmp_tensor_offset);
    /* sorted by offset, each tensor must begin where the one before it ends: one that begins
     * earlier lies (in part) inside that one's bytes, one that begins later leaves bytes unowned */
    const unsigned char *expect = data;
    for (size_t i = 0; i < f->count; i++) {
        const st_tensor *t = &f->tensors[i];
        unsigned long long from = (unsigned long long)(t->data - data), to = from + t->nbytes;
        if (t->data != expect && i == 0) {
            ib_error_set(err, IB_EXIT_RUNTIME,
                         "safetensors: the first %llu data bytes belong to no tensor ('%.100s', the first, starts "
                         "at byte %llu)",
                         from, t->name, from);
            goto done;
        }
        if (t->data != expect) {
            const st_tensor *p = &f->tensors[i - 1];
            unsigned long long pfrom = (unsigned long long)(p->data - data), pto = pfrom + p->nbytes;
            if (t->data < expect)
                ib_error_set(err, IB_EXIT_RUNTIME,
                             "safetensors: tensors '%.100s' (data bytes %llu to %llu) and '%.100s' (bytes %llu to "
                             "%llu) overlap",
                             t->name, from, to, p->name, pfrom, pto);
            else
                ib_error_set(
                    err, IB_EXIT_RUNTIME,
                    "safetensors: data bytes %llu to %llu belong to no tensor ('%.100s' ends at %llu, '%.100s' "
                    "starts at %llu)",
                    pto, from, p->name, pto, t->name, from);
            goto done;
        }
        expect += t->nbytes;
    }
    if (expect != data + data_len) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: %llu trailing data bytes belong to no tensor",
                     (unsigned long long)(data + data_len - expect));
        goto done;
    }
    f->by_name = malloc((f->count ? f->count : 1) * sizeof *f->by_name);
    if (!f->by_name) {
        ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
        goto done;
    }
    for (size_t i = 0; i < f->count; i++) f->by_name[i] = i;
    sort_base = f->tensors;
    qsort(f->by_name, f->count, sizeof *f->by_name, cmp_index_name); /* names are distinct: checked above */
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc) safetensors_free(f);
    return rc;
}

int safetensors_parse_buffer(const void *data, size_t len, st_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return ib_error_set(err, IB_EXIT_RUNTIME, "safetensors: out of memory");
    if (len) memcpy(buf, data, len);
    return parse_owned(buf, len, out, err);
}

int safetensors_read_file(const char *path, size_t max_bytes, st_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    if (util_read_file(path, max_bytes, &buf, &len, err)) return -1;
    if (parse_owned((unsigned char *)buf, len, out, err)) {
        /* keep the reason, name the file */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return ib_error_set(err, IB_EXIT_RUNTIME, "%s: %s", path, msg);
    }
    return 0;
}

void safetensors_free(st_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->count; i++) free(f->tensors[i].name);
    free(f->tensors);
    free(f->by_name);
    for (size_t i = 0; i < f->meta_count; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->meta_keys);
    free(f->meta_values);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

const st_tensor *safetensors_find_tensor(const st_file *f, const char *name)
{
    size_t lo = 0, hi = f->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->tensors[f->by_name[mid]].name, name);
        if (!c) return &f->tensors[f->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const char *safetensors_get_meta(const st_file *f, const char *key)
{
    for (size_t i = 0; i < f->meta_count; i++)
        if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
    return NULL;
}

/* ---- element conversion (explicit little-endian, so unaligned data and any host work) ---- */

static uint64_t load_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

static float f16_to_f32(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0) v = ldexpf((float)man, -24); /* zero / subnormal */
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

int safetensors_tensor_to_f32(const st_tensor *t, float *out, ib_error *err)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case ST_F32:
        for (size_t i = 0; i < t->numel; i++) {
            uint32_t u = (uint32_t)load_le(p + 4 * i, 4);
            memcpy(&out[i], &u, 4);
        }
        return 0;
    case ST_BF16: /* bf16 is the top half of an fp32 */
        for (size_t i = 0; i < t->numel; i++) {
            uint32_t u = (uint32_t)load_le(p + 2 * i, 2) << 16;
            memcpy(&out[i], &u, 4);
        }
        return 0;
    case ST_F16:
        for (size_t i = 0; i < t->numel; i++) out[i] = f16_to_f32((uint16_t)load_le(p + 2 * i, 2));
        return 0;
    case ST_F64:
        for (size_t i = 0; i < t->numel; i++) {
            uint64_t u = load_le(p + 8 * i, 8);
            double d;
            memcpy(&d, &u, 8);
            out[i] = (float)d;
        }
        return 0;
    default:
        return ib_error_set(err, IB_EXIT_RUNTIME, "tensor '%s' is %s, not a floating-point dtype", t->name,
                            safetensors_dtype_name(t->dtype));
    }
}

int safetensors_tensor_to_i64(const st_tensor *t, int64_t *out, ib_error *err)
{
    size_t es = safetensors_dtype_size(t->dtype);
    int is_signed;
    switch (t->dtype) {
    case ST_I8:
    case ST_I16:
    case ST_I32:
    case ST_I64: is_signed = 1; break;
    case ST_BOOL:
    case ST_U8:
    case ST_U16:
    case ST_U32:
    case ST_U64: is_signed = 0; break;
    default:
        return ib_error_set(err, IB_EXIT_RUNTIME, "tensor '%s' is %s, not an integer dtype", t->name,
                            safetensors_dtype_name(t->dtype));
    }
    for (size_t i = 0; i < t->numel; i++) {
        uint64_t u = load_le(t->data + es * i, es);
        if (is_signed && es < 8 && (u >> (8 * es - 1)) & 1) u |= ~0ull << (8 * es); /* sign-extend */
        if (!is_signed && u > (uint64_t)INT64_MAX)
            return ib_error_set(err, IB_EXIT_RUNTIME, "tensor '%s' has a value beyond int64", t->name);
        out[i] = (int64_t)u;
    }
    return 0;
}
