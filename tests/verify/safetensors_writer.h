/* safetensors_writer: a safetensors writer for tests (tests/verify/safetensors_writer.c). */
#ifndef INSTBENCH_TESTS_SAFETENSORS_WRITER_H
#define INSTBENCH_TESTS_SAFETENSORS_WRITER_H

#include "instbench/safetensors.h"

/* Collect tensors (data pointers must stay valid until serialised), then serialise.
 * Tensors are stored in the order added; the header is padded with spaces to a multiple of 8 so
 * the data of 8-byte dtypes stays aligned. */
typedef struct st_writer_entry {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data; /* host little-endian bytes, numel * dtype size */
    size_t nbytes;
} st_writer_entry;

typedef struct st_writer {
    st_writer_entry *entries;
    size_t count, cap;
    char **meta_keys, **meta_values;
    size_t meta_count, meta_cap;
} st_writer;

void safetensors_writer_init(st_writer *w);
int safetensors_writer_add_tensor(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape,
                                  const void *data, ib_error *err);
int safetensors_writer_add_meta(st_writer *w, const char *key, const char *value, ib_error *err);
/* Serialise to a malloc'd buffer (free it). */
int safetensors_writer_serialize(const st_writer *w, unsigned char **out, size_t *out_len, ib_error *err);
void safetensors_writer_free(st_writer *w);

#endif
