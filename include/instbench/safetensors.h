/* safetensors: reader and writer for the reference files `instbench verify` consumes.
 *
 * Format: 8-byte little-endian u64 N, then N bytes of JSON header, then the raw little-endian byte
 * buffer.  The header is an object mapping tensor name -> {"dtype", "shape", "data_offsets":
 * [begin, end]} (offsets relative to the byte buffer), plus an optional "__metadata__" object of
 * string -> string.  The reader validates everything before trusting it (header length, JSON,
 * dtype, shape, offsets in range, size == numel * dtype size, no overlap, no holes, unique names),
 * because a reference file is input: a hostile file must give an error, never a crash. */
#ifndef INSTBENCH_SAFETENSORS_H
#define INSTBENCH_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/util.h"

#define ST_MAX_DIMS 8
/* The format's own reference implementation caps the header at 100 MB; so do we. */
#define ST_MAX_HEADER_BYTES (100u * 1000u * 1000u)

typedef enum st_dtype {
    ST_BOOL,
    ST_U8,
    ST_I8,
    ST_I16,
    ST_U16,
    ST_F16,
    ST_BF16,
    ST_I32,
    ST_U32,
    ST_F32,
    ST_I64,
    ST_U64,
    ST_F64,
    ST_DTYPE_COUNT
} st_dtype;

const char *safetensors_dtype_name(st_dtype d); /* "F32", "BF16", ... */
size_t safetensors_dtype_size(st_dtype d);      /* bytes per element */
int safetensors_dtype_parse(const char *s, st_dtype *out);

typedef struct st_tensor {
    char *name;
    st_dtype dtype;
    int ndim; /* 0 for a scalar */
    int64_t shape[ST_MAX_DIMS];
    size_t numel; /* 1 for a scalar */
    size_t nbytes;
    const unsigned char *data; /* into the file's buffer; not aligned, little-endian */
} st_tensor;

typedef struct st_file {
    unsigned char *buf; /* whole file, owned */
    size_t len;
    st_tensor *tensors; /* in data-offset order */
    size_t count;
    size_t *by_name; /* indices into tensors, sorted by name (binary search) */
    char **meta_keys, **meta_values;
    size_t meta_count;
} st_file;

/* Parse a whole file held in memory.  The bytes are copied, so DATA may be freed afterwards. */
int safetensors_parse_buffer(const void *data, size_t len, st_file *out, ib_error *err);
/* Reads and parses the file at PATH: a regular file of at most MAX_BYTES (util_read_file). */
int safetensors_read_file(const char *path, size_t max_bytes, st_file *out, ib_error *err);
void safetensors_free(st_file *f);

const st_tensor *safetensors_find_tensor(const st_file *f, const char *name);
const char *safetensors_get_meta(const st_file *f, const char *key); /* NULL if absent */
/* "[2, 3, 4]" into OUT (always NUL-terminated). */
void safetensors_format_shape(int ndim, const int64_t *shape, char *out, size_t out_size);

/* Element conversion.  to_f32 accepts F32, F16, BF16, F64; to_i64 accepts any integer dtype.
 * OUT must hold t->numel elements. */
int safetensors_tensor_to_f32(const st_tensor *t, float *out, ib_error *err);
int safetensors_tensor_to_i64(const st_tensor *t, int64_t *out, ib_error *err);

#endif
