/* cudnn_standin: a CPU stand-in of libcudnn.so.9 for the tests that run src/cuda/cudnn_sdpa.cpp
 * (NVIDIA's cudnn-frontend, unmodified, in its dynamic-loading mode) on a machine without a GPU
 * (issue 30).  Built as a shared library; the glue loads it through INSTBENCH_CUDNN_LIBRARY as it
 * loads the real one, and the frontend reaches every cuDNN function through dlsym on that handle.
 *
 * What it is:
 * - the backend descriptor API (cudnnBackendCreateDescriptor, SetAttribute, GetAttribute,
 *   Finalize, Execute, Destroy) as a store of every attribute the frontend sets, per descriptor;
 * - at the operation graph's finalize, the graph read back from those attributes: tensors (uid,
 *   dims, strides, data type, virtual, by value) and operations (matmul, pointwise, reduction, and
 *   cuDNN 9.13's unified SDPA forward), checked as a backend would check them (shapes that do not
 *   fit, a statistics tensor that is not fp32, an operation or a mode it does not know: refused,
 *   with the reason in cudnnGetLastErrorString, so the frontend's check_support fails as it would);
 * - heuristics that answer one engine, plans with a workspace the engine really touches;
 * - execution on the CPU: the graph is interpreted generically (operations in dependency order,
 *   virtual tensors in host buffers rounded to their declared type, inputs broadcast over dims
 *   of 1), in float64, queued on the handle's stream of the host CUDA runtime
 *   (tests/fakes/cuda_host_runtime.c, shared with the program), so it runs in stream order and inside
 *   captured CUDA graphs like any kernel.  Every tensor a variant pack names must lie, over the
 *   whole extent its dims and strides imply, inside one device allocation (or the workspace), and
 *   every element access is checked against that extent: anything outside stops the program with
 *   the tensor, the offset and the allocation named.
 * - the plans' workspace as cuDNN's engines size it: the SDPA backward in the frontend's
 *   dP-workspace form (its deterministic one: dQ written by the dS K matmul itself, no fp32
 *   accumulator) B*H*pad64(Tq)*pad128(Tkv) bf16 for dP, every other graph PLAN_WORKSPACE bytes
 *   (the frontend adds its own fp32 dQ accumulator to the non-deterministic form);
 * - refusals on demand, for the tests of what the glue does when cuDNN says no:
 *   CUDNN_STANDIN_REFUSE=sdpa refuses every attention graph, =deterministic the SDPA backward in
 *   its deterministic form (as releases whose engines for it are Hopper-only do elsewhere).
 * It is not cuDNN: no engine knobs, no fp8, no dropout, masks or ragged tensors; anything it does
 * not model it refuses or stops on, loudly, never silently. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "cuda_host_runtime.h"
#include "cudnn_standin.h"

#ifndef STANDIN_VERSION /* a second build of this file (libcudnn-standin-old) says an older release */
#define STANDIN_VERSION 91900
#endif
#define PLAN_WORKSPACE 4096 /* bytes the "engine" uses of the workspace (written and read back) */
#define MAXD 8

static __thread char last_error[1024];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cudnn_standin_counts counts;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cudnn stand-in: FATAL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

/* A refusal: the status, with the reason kept for cudnnGetLastErrorString (and printed when
 * CUDNN_STANDIN_VERBOSE is set). */
static cudnnStatus_t refuse(cudnnStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cudnnStatus_t refuse(cudnnStatus_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (getenv("CUDNN_STANDIN_VERBOSE")) fprintf(stderr, "cudnn stand-in: %s\n", last_error);
    return st;
}

/* ---------------------------------------------------------------- library, handles */

size_t cudnnGetVersion(void) { return STANDIN_VERSION; }
size_t cudnnGetMaxDeviceVersion(void) { return 1210; }
size_t cudnnGetCudartVersion(void) { return 13000; }

const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS (stand-in: another status)";
    }
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (!message || !max_size) return;
    snprintf(message, max_size, "%s", last_error);
    last_error[0] = 0;
}

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (!value) return CUDNN_STATUS_BAD_PARAM;
    *value = type == MAJOR_VERSION   ? STANDIN_VERSION / 10000
             : type == MINOR_VERSION ? STANDIN_VERSION / 100 % 100
                                     : STANDIN_VERSION % 100;
    return CUDNN_STATUS_SUCCESS;
}

#define HANDLE_MAGIC 0x636e6e68u
struct cudnnContext {
    unsigned magic;
    int device;
    cudaStream_t stream;
};

static struct cudnnContext *handle_of(cudnnHandle_t h)
{
    if (!h || h->magic != HANDLE_MAGIC) die("a cuDNN handle that cudnnCreate never made (or destroyed): %p", (void *)h);
    return h;
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *out)
{
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    struct cudnnContext *h = calloc(1, sizeof *h);
    if (!h) return CUDNN_STATUS_ALLOC_FAILED;
    h->magic = HANDLE_MAGIC;
    if (cudaGetDevice(&h->device) != cudaSuccess) {
        free(h);
        return refuse(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: no current device");
    }
    *out = h;
    pthread_mutex_lock(&mu), counts.handles++, pthread_mutex_unlock(&mu);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    handle_of(h)->magic = 0;
    free(h);
    pthread_mutex_lock(&mu), counts.handles--, pthread_mutex_unlock(&mu);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    handle_of(h)->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    *s = handle_of(h)->stream;
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- descriptors */

typedef struct attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    size_t esize;
    unsigned char *data;
} attr;

struct graph;

#define DESC_MAGIC 0x64657363u
typedef struct desc {
    unsigned magic;
    cudnnBackendDescriptorType_t type;
    int finalized;
    attr *attrs;
    int nattrs;
    struct desc *owned;  /* a descriptor made here for it (the engine of a heuristic's config) */
    struct graph *graph; /* operation graph and plan: the graph read from the attributes */
} desc;

static size_t type_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void *);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_FLOAT:
    case CUDNN_TYPE_INT32: return 4;
    case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
    default: return sizeof(int); /* the enumerations */
    }
}

static desc *desc_of(cudnnBackendDescriptor_t d)
{
    desc *x = (desc *)d;
    if (!x || x->magic != DESC_MAGIC) die("a backend descriptor that was never created (or destroyed): %p", (void *)d);
    return x;
}

static attr *find(const desc *d, cudnnBackendAttributeName_t name)
{
    for (int i = 0; i < d->nattrs; i++)
        if (d->attrs[i].name == name) return &d->attrs[i];
    return NULL;
}

static void graph_unref(struct graph *g);

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    desc *d = calloc(1, sizeof *d);
    if (!d) return CUDNN_STATUS_ALLOC_FAILED;
    d->magic = DESC_MAGIC, d->type = type;
    *out = d;
    pthread_mutex_lock(&mu), counts.descriptors++, pthread_mutex_unlock(&mu);
    return CUDNN_STATUS_SUCCESS;
}

static void clear_attrs(desc *d)
{
    for (int i = 0; i < d->nattrs; i++) free(d->attrs[i].data);
    free(d->attrs);
    d->attrs = NULL, d->nattrs = 0;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t dd)
{
    desc *d = desc_of(dd);
    clear_attrs(d);
    if (d->owned) cudnnBackendDestroyDescriptor(d->owned);
    if (d->graph) graph_unref(d->graph);
    d->magic = 0;
    free(d);
    pthread_mutex_lock(&mu), counts.descriptors--, pthread_mutex_unlock(&mu);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t d)
{
    (void)desc_of(d);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t put(desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n,
                         const void *values)
{
    const size_t es = type_size(type);
    unsigned char *copy = malloc(n > 0 ? (size_t)n * es : 1);
    if (!copy) return CUDNN_STATUS_ALLOC_FAILED;
    if (n > 0) memcpy(copy, values, (size_t)n * es);
    attr *a = find(d, name);
    if (!a) {
        attr *grown = realloc(d->attrs, (size_t)(d->nattrs + 1) * sizeof *grown);
        if (!grown) return free(copy), CUDNN_STATUS_ALLOC_FAILED;
        d->attrs = grown, a = &d->attrs[d->nattrs++];
    } else {
        free(a->data);
    }
    a->name = name, a->type = type, a->count = n, a->esize = es, a->data = copy;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t dd, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t n, const void *values)
{
    desc *d = desc_of(dd);
    if (d->finalized)
        return refuse(CUDNN_STATUS_NOT_INITIALIZED, "attribute %d set on a finalized descriptor", (int)name);
    if (n < 0 || (n > 0 && !values)) return CUDNN_STATUS_BAD_PARAM;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < n; i++) (void)desc_of(((void *const *)values)[i]);
    return put(d, name, type, n, values);
}

/* ---- typed reads of a descriptor's attributes (-1 / NULL when not set) */

static const attr *get(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type)
{
    const attr *a = find(d, name);
    return a && a->type == type ? a : NULL;
}

static desc *get_desc(const desc *d, cudnnBackendAttributeName_t name)
{
    const attr *a = get(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    return a && a->count == 1 ? desc_of(*(void **)a->data) : NULL;
}

static int64_t get_i64(const desc *d, cudnnBackendAttributeName_t name, int64_t dflt)
{
    const attr *a = get(d, name, CUDNN_TYPE_INT64);
    return a && a->count >= 1 ? *(int64_t *)a->data : dflt;
}

static int get_enum(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int dflt)
{
    const attr *a = get(d, name, type);
    return a && a->count >= 1 ? *(int *)a->data : dflt;
}

static int get_bool(const desc *d, cudnnBackendAttributeName_t name)
{
    const attr *a = get(d, name, CUDNN_TYPE_BOOLEAN);
    return a && a->count >= 1 ? *(bool *)a->data : 0;
}

static double get_scalar(const desc *d, cudnnBackendAttributeName_t name, double dflt)
{
    const attr *a = find(d, name);
    if (!a || a->count < 1) return dflt;
    if (a->type == CUDNN_TYPE_FLOAT) return *(float *)a->data;
    if (a->type == CUDNN_TYPE_DOUBLE) return *(double *)a->data;
    die("a scalar attribute %d of type %d", (int)name, (int)a->type);
}

/* ---------------------------------------------------------------- the graph */

typedef struct tensor {
    int64_t uid;
    int nd;
    int64_t dims[MAXD], strides[MAXD];
    int64_t sstrides[MAXD]; /* where the elements are: the strides in memory; a virtual tensor's
                                 strides are a layout hint only (the frontend gives some that overlap),
                                 so the interpreter keeps it packed, row-major */
    cudnnDataType_t dtype;
    int is_virtual, by_value;
    int64_t extent; /* elements from offset 0 to the farthest one the dims and sstrides reach, plus one */
    int64_t dext;   /* ... and by the declared strides */
    double value;   /* by value: the scalar (read at finalize from the descriptor, if given there) */
    int producer;   /* index of the op that writes it, or -1 */
    char name[32];
} tensor;

enum op_kind { OP_POINTWISE, OP_MATMUL, OP_REDUCTION, OP_SDPA_FWD, OP_RESHAPE };

typedef struct op {
    enum op_kind kind;
    int in[4], nin;   /* tensor indexes: pointwise X, B, T; matmul A, B; reduction X; sdpa Q, K, V, scale */
    int out[2], nout; /* pointwise Y; matmul C; reduction Y; sdpa O, stats (-1: none) */
    int mode;         /* pointwise mode, reduction operator */
    int axis;         /* pointwise GEN_INDEX */
    double alpha1, alpha2;
    int in_map[4]; /* pointwise, reshape: how an input element is found from the output's coordinates:
                             0 broadcast over the input's dims of 1, 1 a permutation of the dims (the
                             input's dim k is the output's perm[k]: a transposed view of the same memory
                             order), 2 the same position in memory (both dense) */
    int perm[4][MAXD];
} op;

typedef struct graph {
    int refs;
    int64_t workspace; /* bytes its plans ask for (see the top of the file) */
    tensor *t;
    int nt;
    op *ops;
    int nops;
    int *order; /* ops in dependency order */
} graph;

static void graph_unref(graph *g)
{
    pthread_mutex_lock(&mu);
    const int last = --g->refs == 0;
    pthread_mutex_unlock(&mu);
    if (!last) return;
    free(g->t), free(g->ops), free(g->order), free(g);
}

static size_t dtype_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN: return 1;
    default: return 0;
    }
}

static const char *dtype_name(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return "float";
    case CUDNN_DATA_DOUBLE: return "double";
    case CUDNN_DATA_HALF: return "half";
    case CUDNN_DATA_BFLOAT16: return "bf16";
    case CUDNN_DATA_INT32: return "int32";
    case CUDNN_DATA_INT64: return "int64";
    case CUDNN_DATA_BOOLEAN: return "bool";
    default: return "other";
    }
}

static void describe(const tensor *t, char *buf, size_t n)
{
    int k = snprintf(buf, n, "tensor uid %lld (%s%s%s) dims [", (long long)t->uid, dtype_name(t->dtype),
                     t->is_virtual ? ", virtual" : "", t->by_value ? ", by value" : "");
    for (int i = 0; i < t->nd && k < (int)n; i++)
        k += snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    k += k < (int)n ? snprintf(buf + k, n - k, "] strides [") : 0;
    for (int i = 0; i < t->nd && k < (int)n; i++)
        k += snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)t->strides[i]);
    if (k < (int)n) snprintf(buf + k, n - k, "]");
}

static int merge_tensor(graph *g, const tensor *tp);
/* the tensor of descriptor D in G (added on first sight): its index, or -1 with last_error set */
static int add_tensor(graph *g, desc *d)
{
    if (!d) return -1;
    if (d->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR || !d->finalized) {
        refuse(CUDNN_STATUS_BAD_PARAM, "an operation names a descriptor that is not a finalized tensor");
        return -1;
    }
    tensor t;
    memset(&t, 0, sizeof t);
    t.uid = get_i64(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, -1);
    const attr *dims = get(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64),
               *str = get(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
    t.nd = (int)dims->count;
    memcpy(t.dims, dims->data, (size_t)t.nd * 8), memcpy(t.strides, str->data, (size_t)t.nd * 8);
    t.dtype = (cudnnDataType_t)get_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1);
    t.is_virtual = get_bool(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL);
    t.by_value = get_bool(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE);
    t.producer = -1;
    int64_t far = 0, packed = 1;
    for (int i = t.nd - 1; i >= 0; i--) {
        t.sstrides[i] = t.is_virtual ? packed : t.strides[i];
        packed *= t.dims[i];
        far += (t.dims[i] - 1) * t.sstrides[i];
    }
    t.extent = far + 1;
    far = 0;
    for (int i = 0; i < t.nd; i++) far += (t.dims[i] - 1) * t.strides[i];
    t.dext = far + 1;
    return merge_tensor(g, &t);
}

/* tensor T into G (once per uid): its index, or -1 with last_error set */
static int merge_tensor(graph *g, const tensor *tp)
{
    tensor t = *tp;
    t.producer = -1;
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].uid == t.uid) {
            const tensor *o = &g->t[i];
            if (o->nd != t.nd || memcmp(o->dims, t.dims, 8 * (size_t)t.nd) ||
                memcmp(o->strides, t.strides, 8 * (size_t)t.nd) || o->dtype != t.dtype ||
                o->is_virtual != t.is_virtual) {
                refuse(CUDNN_STATUS_BAD_PARAM, "two tensors with uid %lld differ", (long long)t.uid);
                return -1;
            }
            return i;
        }
    tensor *grown = realloc(g->t, (size_t)(g->nt + 1) * sizeof *grown);
    if (!grown) return -1;
    g->t = grown;
    g->t[g->nt] = t;
    return g->nt++;
}

/* Finalize's checks of a tensor descriptor: what a backend needs to know of it. */
static cudnnStatus_t check_tensor(desc *d)
{
    const attr *dims = get(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64),
               *str = get(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
    if (!dims || !str || dims->count != str->count || dims->count < 1 || dims->count > MAXD)
        return refuse(CUDNN_STATUS_BAD_PARAM, "tensor: dims and strides missing or of different ranks");
    if (get_i64(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, -1) < 0) return refuse(CUDNN_STATUS_BAD_PARAM, "tensor: no unique id");
    const int dt = get_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1);
    if (dt < 0 || !dtype_size((cudnnDataType_t)dt))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: data type %d not modelled by the stand-in", dt);
    for (int64_t i = 0; i < dims->count; i++)
        if (((int64_t *)dims->data)[i] < 1 || ((int64_t *)str->data)[i] < 0)
            return refuse(CUDNN_STATUS_BAD_PARAM, "tensor: a dim below 1 or a negative stride");
    if (get_i64(d, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1) != 1 || find(d, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: vectorized or ragged tensors are not modelled");
    if (get_enum(d, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE,
                 CUDNN_TENSOR_REORDERING_NONE) != CUDNN_TENSOR_REORDERING_NONE)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: reordered layouts are not modelled");
    return CUDNN_STATUS_SUCCESS;
}

static int64_t elements(const tensor *t);
static int broadcasts(const tensor *in, const tensor *out)
{
    if (elements(in) == 1) return 1; /* a scalar, of any rank */
    if (in->nd != out->nd) return 0;
    for (int i = 0; i < in->nd; i++)
        if (in->dims[i] != out->dims[i] && in->dims[i] != 1) return 0;
    return 1;
}

static int64_t elements(const tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->nd; i++) n *= t->dims[i];
    return n;
}

/* a tensor whose elements exactly fill its extent (no gaps, no overlap) */
static int dense(const tensor *t) { return elements(t) == t->dext; }

/* How X's elements are the same as Y's, element for element, where X does not broadcast to Y:
 * 1 when Y's dims and strides are a permutation of X's (a transposed view of the same memory;
 * perm[k] = the dim of Y that X's dim k is, -1 for X's dims of 1), 2 when both are dense with the
 * same element count (the same positions in memory), -1 otherwise. */
static int same_elements(const tensor *x, const tensor *y, int *perm)
{
    if (elements(x) != elements(y)) return -1;
    int used[MAXD] = {0}, ok = 1;
    for (int k = 0; k < x->nd && ok; k++) {
        perm[k] = -1;
        if (x->dims[k] == 1) continue;
        for (int i = 0; i < y->nd && perm[k] < 0; i++)
            if (!used[i] && y->dims[i] == x->dims[k] && y->strides[i] == x->strides[k]) perm[k] = i, used[i] = 1;
        ok = perm[k] >= 0;
    }
    if (ok) return 1;
    return dense(x) && dense(y) ? 2 : -1;
}

static const int known_pointwise[] = {
    CUDNN_POINTWISE_ADD,           CUDNN_POINTWISE_SUB,        CUDNN_POINTWISE_MUL,         CUDNN_POINTWISE_DIV,
    CUDNN_POINTWISE_MAX,           CUDNN_POINTWISE_MIN,        CUDNN_POINTWISE_EXP,         CUDNN_POINTWISE_LOG,
    CUDNN_POINTWISE_NEG,           CUDNN_POINTWISE_ABS,        CUDNN_POINTWISE_SQRT,        CUDNN_POINTWISE_RSQRT,
    CUDNN_POINTWISE_IDENTITY,      CUDNN_POINTWISE_RECIPROCAL, CUDNN_POINTWISE_CMP_EQ,      CUDNN_POINTWISE_CMP_NEQ,
    CUDNN_POINTWISE_CMP_GT,        CUDNN_POINTWISE_CMP_GE,     CUDNN_POINTWISE_CMP_LT,      CUDNN_POINTWISE_CMP_LE,
    CUDNN_POINTWISE_LOGICAL_AND,   CUDNN_POINTWISE_LOGICAL_OR, CUDNN_POINTWISE_LOGICAL_NOT, CUDNN_POINTWISE_GEN_INDEX,
    CUDNN_POINTWISE_BINARY_SELECT,
};

static int pointwise_arity(int mode)
{
    switch (mode) {
    case CUDNN_POINTWISE_EXP:
    case CUDNN_POINTWISE_LOG:
    case CUDNN_POINTWISE_NEG:
    case CUDNN_POINTWISE_ABS:
    case CUDNN_POINTWISE_SQRT:
    case CUDNN_POINTWISE_RSQRT:
    case CUDNN_POINTWISE_IDENTITY:
    case CUDNN_POINTWISE_RECIPROCAL:
    case CUDNN_POINTWISE_LOGICAL_NOT:
    case CUDNN_POINTWISE_GEN_INDEX: return 1;
    case CUDNN_POINTWISE_BINARY_SELECT: return 3;
    default: return 2;
    }
}

/* One operation descriptor into G: 0, or -1 with last_error set. */
static int add_op(graph *g, desc *d)
{
    op o;
    memset(&o, 0, sizeof o);
    o.out[0] = o.out[1] = -1, o.alpha1 = o.alpha2 = 1;
    int known_attrs_only = 1;
    switch ((int)d->type) {
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
        desc *pw = get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
        if (!pw) return refuse(CUDNN_STATUS_BAD_PARAM, "pointwise: no pointwise descriptor"), -1;
        o.kind = OP_POINTWISE;
        o.mode = get_enum(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1);
        o.axis = (int)get_i64(pw, CUDNN_ATTR_POINTWISE_AXIS, -1);
        int known = 0;
        for (size_t i = 0; i < sizeof known_pointwise / sizeof known_pointwise[0]; i++)
            known |= known_pointwise[i] == o.mode;
        if (!known)
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "pointwise mode %d is not modelled by the stand-in", o.mode), -1;
        const int arity = pointwise_arity(o.mode);
        o.nin = arity;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC));
        if (arity >= 2) o.in[1] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
        if (arity >= 3) o.in[2] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_TDESC));
        o.nout = 1, o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC));
        o.alpha1 = get_scalar(d, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1);
        o.alpha2 = get_scalar(d, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1);
        if (find(d, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC) || find(d, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC))
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "pointwise backward modes are not modelled"), -1;
        break;
    }
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
        o.kind = OP_MATMUL, o.nin = 2, o.nout = 1;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_ADESC));
        o.in[1] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_BDESC));
        o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_CDESC));
        if (find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC) ||
            find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC) ||
            find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC))
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "matmul: M/N/K overrides are not modelled"), -1;
        if (!get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_DESC))
            return refuse(CUDNN_STATUS_BAD_PARAM, "matmul: no matmul descriptor"), -1;
        break;
    }
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: {
        desc *rd = get_desc(d, CUDNN_ATTR_OPERATION_REDUCTION_DESC);
        if (!rd) return refuse(CUDNN_STATUS_BAD_PARAM, "reduction: no reduction descriptor"), -1;
        o.kind = OP_REDUCTION, o.nin = 1, o.nout = 1;
        o.mode = get_enum(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, -1);
        if (o.mode != CUDNN_REDUCE_TENSOR_ADD && o.mode != CUDNN_REDUCE_TENSOR_MAX &&
            o.mode != CUDNN_REDUCE_TENSOR_MIN && o.mode != CUDNN_REDUCE_TENSOR_MUL &&
            o.mode != CUDNN_REDUCE_TENSOR_AMAX && o.mode != CUDNN_REDUCE_TENSOR_AVG)
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "reduction operator %d is not modelled", o.mode), -1;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_REDUCTION_XDESC));
        o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_REDUCTION_YDESC));
        break;
    }
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
        o.kind = OP_RESHAPE, o.nin = 1, o.nout = 1;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_RESHAPE_XDESC));
        o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_RESHAPE_YDESC));
        break;
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: {
        o.kind = OP_SDPA_FWD, o.nin = 4, o.nout = 2;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC));
        o.in[1] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC));
        o.in[2] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC));
        desc *sc = get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC);
        o.in[3] = sc ? add_tensor(g, sc) : -2; /* none: a scale of 1, as cuDNN */
        o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC));
        desc *st = get_desc(d, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC);
        o.out[1] = st ? add_tensor(g, st) : -2;
        for (int i = 0; i < d->nattrs; i++) {
            const int n = (int)d->attrs[i].name;
            if (n < CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC || n > CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC)
                known_attrs_only = 0;
        }
        if (!known_attrs_only)
            return refuse(CUDNN_STATUS_NOT_SUPPORTED,
                          "SDPA forward: masks, paging and sequence lengths are not modelled"),
                   -1;
        break;
    }
    default:
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "operation descriptor type %d is not modelled", (int)d->type), -1;
    }
    for (int i = 0; i < o.nin; i++)
        if (o.in[i] == -1)
            return refuse(CUDNN_STATUS_BAD_PARAM, "operation (type %d): input %d missing", (int)d->type, i), -1;
    for (int i = 0; i < o.nout; i++)
        if (o.out[i] == -1)
            return refuse(CUDNN_STATUS_BAD_PARAM, "operation (type %d): output %d missing", (int)d->type, i), -1;
    op *grown = realloc(g->ops, (size_t)(g->nops + 1) * sizeof *grown);
    if (!grown) return -1;
    g->ops = grown;
    g->ops[g->nops++] = o;
    return 0;
}

/* The shape rules of each operation: what a backend would refuse at finalize. */
static int check_op(graph *g, op *o)
{
    char a[256], b[256];
    const tensor *t = g->t;
    switch (o->kind) {
    case OP_POINTWISE: {
        const tensor *y = &t[o->out[0]];
        for (int i = 0; i < o->nin; i++) {
            const tensor *x = &t[o->in[i]];
            if (broadcasts(x, y)) o->in_map[i] = 0;
            else if ((o->in_map[i] = same_elements(x, y, o->perm[i])) < 0) {
                describe(x, a, sizeof a), describe(y, b, sizeof b);
                return refuse(CUDNN_STATUS_BAD_PARAM, "pointwise mode %d: input %s does not broadcast to output %s",
                              o->mode, a, b),
                       -1;
            }
        }
        if (o->mode == CUDNN_POINTWISE_GEN_INDEX && (o->axis < 0 || o->axis >= y->nd))
            return refuse(CUDNN_STATUS_BAD_PARAM, "pointwise GEN_INDEX: axis %d", o->axis), -1;
        return 0;
    }
    case OP_RESHAPE: {
        const tensor *x = &t[o->in[0]], *y = &t[o->out[0]];
        if ((o->in_map[0] = same_elements(x, y, o->perm[0])) < 0) {
            describe(x, a, sizeof a), describe(y, b, sizeof b);
            return refuse(CUDNN_STATUS_NOT_SUPPORTED,
                          "reshape of %s into %s: only transposed views and dense reshapes are modelled", a, b),
                   -1;
        }
        return 0;
    }
    case OP_MATMUL: {
        const tensor *A = &t[o->in[0]], *B = &t[o->in[1]], *C = &t[o->out[0]];
        const int n = C->nd;
        if (A->nd != n || B->nd != n || n < 2 || A->dims[n - 2] != C->dims[n - 2] || B->dims[n - 1] != C->dims[n - 1] ||
            A->dims[n - 1] != B->dims[n - 2])
            goto bad_matmul;
        for (int i = 0; i < n - 2; i++)
            if ((A->dims[i] != C->dims[i] && A->dims[i] != 1) || (B->dims[i] != C->dims[i] && B->dims[i] != 1))
                goto bad_matmul;
        return 0;
    bad_matmul:
        describe(A, a, sizeof a), describe(B, b, sizeof b);
        return refuse(CUDNN_STATUS_BAD_PARAM, "matmul: A %s and B %s do not give C of uid %lld", a, b,
                      (long long)C->uid),
               -1;
    }
    case OP_REDUCTION: {
        const tensor *x = &t[o->in[0]], *y = &t[o->out[0]];
        if (!broadcasts(y, x)) {
            describe(x, a, sizeof a), describe(y, b, sizeof b);
            return refuse(CUDNN_STATUS_BAD_PARAM, "reduction: %s does not reduce to %s", a, b), -1;
        }
        return 0;
    }
    case OP_SDPA_FWD: {
        const tensor *q = &t[o->in[0]], *k = &t[o->in[1]], *v = &t[o->in[2]], *out = &t[o->out[0]];
        if (q->nd != 4 || k->nd != 4 || v->nd != 4 || out->nd != 4 || k->dims[0] != q->dims[0] ||
            v->dims[0] != q->dims[0] || k->dims[1] != q->dims[1] || v->dims[1] != q->dims[1] ||
            k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2] || out->dims[0] != q->dims[0] ||
            out->dims[1] != q->dims[1] || out->dims[2] != q->dims[2] || out->dims[3] != v->dims[3]) {
            describe(q, a, sizeof a), describe(k, b, sizeof b);
            return refuse(CUDNN_STATUS_BAD_PARAM, "SDPA forward: Q %s, K %s, V, O do not fit", a, b), -1;
        }
        const cudnnDataType_t io = q->dtype;
        if ((io != CUDNN_DATA_BFLOAT16 && io != CUDNN_DATA_HALF) || k->dtype != io || v->dtype != io ||
            out->dtype != io)
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "SDPA forward: Q, K, V and O must all be bf16 or all fp16"), -1;
        if (o->out[1] >= 0) {
            const tensor *st = &t[o->out[1]];
            if (st->dtype != CUDNN_DATA_FLOAT)
                return refuse(CUDNN_STATUS_NOT_SUPPORTED, "SDPA forward: the statistics tensor must be fp32 (it is %s)",
                              dtype_name(st->dtype)),
                       -1;
            if (st->nd != 4 || st->dims[0] != q->dims[0] || st->dims[1] != q->dims[1] || st->dims[2] != q->dims[2] ||
                st->dims[3] != 1)
                return refuse(CUDNN_STATUS_BAD_PARAM, "SDPA forward: the statistics tensor is not [b,h,s_q,1]"), -1;
        }
        if (o->in[3] >= 0 && (!t[o->in[3]].by_value || elements(&t[o->in[3]]) != 1))
            return refuse(CUDNN_STATUS_NOT_SUPPORTED, "SDPA forward: the scale must be one value passed by value"), -1;
        return 0;
    }
    }
    return -1;
}

/* Reads the operation graph of descriptor D (CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR). */
/* The workspace G's plans need, and the refusals asked for (see the top of the file).  The SDPA
 * backward is the graph with a reduction (rowsum dO * O) whose matmuls write non-virtual tensors
 * (dQ, dK, dV); it is in the non-deterministic form when one of those is fp32 (the frontend's dQ
 * accumulator), else in the dP-workspace form, whose dP scratch is sized from the dS K matmul's
 * A operand [B,H,Tq,Tkv]. */
static cudnnStatus_t size_workspace(graph *g)
{
    int sdpa = 0, reduction = 0, fp32_accumulator = 0;
    const tensor *ds = NULL;
    for (int i = 0; i < g->nops; i++) {
        const op *o = &g->ops[i];
        sdpa |= o->kind == OP_SDPA_FWD, reduction |= o->kind == OP_REDUCTION;
        if (o->kind != OP_MATMUL || o->out[0] < 0 || g->t[o->out[0]].is_virtual) continue;
        if (g->t[o->out[0]].dtype == CUDNN_DATA_FLOAT) fp32_accumulator = 1;
        if (!ds && g->t[o->in[0]].nd == 4) ds = &g->t[o->in[0]];
    }
    const int backward = reduction && ds;
    const char *refusal = getenv("CUDNN_STANDIN_REFUSE");
    if (refusal && !strcmp(refusal, "sdpa") && (sdpa || backward))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "CUDNN_STANDIN_REFUSE=sdpa: no engine for this attention graph");
    if (refusal && !strcmp(refusal, "deterministic") && backward && !fp32_accumulator)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED,
                      "CUDNN_STANDIN_REFUSE=deterministic: no engine for the SDPA backward's dP-workspace form");
    g->workspace = PLAN_WORKSPACE;
    if (backward && !fp32_accumulator) {
        const int64_t b = ds->dims[0], h = ds->dims[1], tq = (ds->dims[2] + 63) / 64 * 64,
                      tkv = (ds->dims[3] + 127) / 128 * 128;
        g->workspace = b * h * tq * tkv * 2;
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t build_graph(desc *d)
{
    const attr *ops = get(d, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    if (!ops || ops->count < 1) return refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: no operations");
    graph *g = calloc(1, sizeof *g);
    if (!g) return CUDNN_STATUS_ALLOC_FAILED;
    g->refs = 1;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int64_t i = 0; i < ops->count; i++) { /* each operation as its finalize read it */
        desc *od = desc_of(((void **)ops->data)[i]);
        if (!od->finalized) {
            st = refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: operation %lld not finalized", (long long)i);
            goto fail;
        }
        if (!od->graph || od->graph->nops != 1) {
            st = refuse(CUDNN_STATUS_NOT_SUPPORTED, "operation descriptor type %d is not modelled", (int)od->type);
            goto fail;
        }
        const graph *one = od->graph;
        op o = one->ops[0];
        for (int k = 0; k < o.nin; k++)
            if (o.in[k] >= 0 && (o.in[k] = merge_tensor(g, &one->t[o.in[k]])) < 0) goto unsupported;
        for (int k = 0; k < o.nout; k++)
            if (o.out[k] >= 0 && (o.out[k] = merge_tensor(g, &one->t[o.out[k]])) < 0) goto unsupported;
        op *grown = realloc(g->ops, (size_t)(g->nops + 1) * sizeof *grown);
        if (!grown) goto unsupported;
        g->ops = grown;
        g->ops[g->nops++] = o;
    }
    for (int i = 0; i < g->nops; i++) {
        if (check_op(g, &g->ops[i])) {
            st = CUDNN_STATUS_NOT_SUPPORTED;
            goto fail;
        }
        for (int k = 0; k < g->ops[i].nout; k++) {
            const int o = g->ops[i].out[k];
            if (o < 0) continue;
            if (g->t[o].producer >= 0 || g->t[o].by_value) {
                st = refuse(CUDNN_STATUS_BAD_PARAM, "tensor uid %lld is written twice (or is a by-value input)",
                            (long long)g->t[o].uid);
                goto fail;
            }
            g->t[o].producer = i;
        }
    }
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].is_virtual && g->t[i].producer < 0) {
            st = refuse(CUDNN_STATUS_BAD_PARAM, "virtual tensor uid %lld is read but never written",
                        (long long)g->t[i].uid);
            goto fail;
        }
    /* dependency order (Kahn): an op runs once every tensor it reads that an op writes is written */
    const size_t nops = g->nops > 0 ? (size_t)g->nops : 1;
    g->order = malloc(sizeof(int) * nops);
    int *done = calloc(nops, sizeof(int)), n = 0;
    while (n < g->nops) {
        int progressed = 0;
        for (int i = 0; i < g->nops; i++) {
            if (done[i]) continue;
            int ready = 1;
            for (int k = 0; k < g->ops[i].nin; k++) {
                const int in = g->ops[i].in[k];
                if (in >= 0 && g->t[in].producer >= 0 && !done[g->t[in].producer]) ready = 0;
            }
            if (ready) done[i] = 1, g->order[n++] = i, progressed = 1;
        }
        if (!progressed) {
            free(done);
            st = refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: a cycle");
            goto fail;
        }
    }
    free(done);
    if ((st = size_workspace(g)) != CUDNN_STATUS_SUCCESS) goto fail;
    d->graph = g;
    if (getenv("CUDNN_STANDIN_DUMP")) { /* the graph as read, for a person debugging a frontend change */
        static const char *kinds[] = {"pointwise", "matmul", "reduction", "sdpa_fwd", "reshape"};
        fprintf(stderr, "cudnn stand-in: operation graph of %d operations\n", g->nops);
        for (int k = 0; k < g->nops; k++) {
            const op *o = &g->ops[g->order[k]];
            fprintf(stderr, "  %s mode %d\n", kinds[o->kind], o->mode);
            for (int i = 0; i < o->nin + o->nout; i++) {
                const int ti = i < o->nin ? o->in[i] : o->out[i - o->nin];
                if (ti < 0) continue;
                char buf[256];
                describe(&g->t[ti], buf, sizeof buf);
                fprintf(stderr, "    %s %s\n", i < o->nin ? "in " : "out", buf);
            }
        }
    }
    return CUDNN_STATUS_SUCCESS;
unsupported:
    st = CUDNN_STATUS_NOT_SUPPORTED;
fail:
    graph_unref(g);
    return st;
}

/* An operation's finalize: its tensors and parameters read now (the frontend may destroy the
 * descriptors it names once the operation is finalized, as cuDNN allows), kept as a graph of one. */
static cudnnStatus_t read_op(desc *d)
{
    graph *g = calloc(1, sizeof *g);
    if (!g) return CUDNN_STATUS_ALLOC_FAILED;
    g->refs = 1;
    if (add_op(g, d)) {
        graph_unref(g);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    d->graph = g;
    return CUDNN_STATUS_SUCCESS;
}

/* the operation graph behind an engine config or an engine (NULL if none) */
static graph *graph_of_cfg(desc *cfg)
{
    desc *e = cfg->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR ? get_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE) : cfg;
    desc *og = e ? get_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH) : NULL;
    return og ? og->graph : NULL;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t dd)
{
    desc *d = desc_of(dd);
    if (d->finalized) return refuse(CUDNN_STATUS_BAD_PARAM, "descriptor finalized twice");
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    switch ((int)d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: st = check_tensor(d); break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        st = build_graph(d);
        if (st == CUDNN_STATUS_SUCCESS) pthread_mutex_lock(&mu), counts.graphs++, pthread_mutex_unlock(&mu);
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: {
        desc *og = get_desc(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
        if (!og || !og->graph) st = refuse(CUDNN_STATUS_BAD_PARAM, "heuristics: no finalized operation graph");
        break;
    }
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
        desc *og = get_desc(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
        if (!og || !og->graph) st = refuse(CUDNN_STATUS_BAD_PARAM, "engine: no finalized operation graph");
        else if (get_i64(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0) != 0)
            st = refuse(CUDNN_STATUS_NOT_SUPPORTED, "engine %lld: the stand-in has engine 0 only",
                        (long long)get_i64(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0));
        break;
    }
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        if (!graph_of_cfg(d)) st = refuse(CUDNN_STATUS_BAD_PARAM, "engine config: no finalized engine");
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        desc *cfg = get_desc(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
        graph *g = cfg ? graph_of_cfg(cfg) : NULL;
        if (!g) st = refuse(CUDNN_STATUS_BAD_PARAM, "execution plan: no engine config");
        else {
            pthread_mutex_lock(&mu), g->refs++, counts.plans++, pthread_mutex_unlock(&mu);
            d->graph = g;
        }
        break;
    }
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: st = read_op(d); break;
    default:
        break; /* pointwise, matmul, reduction descriptors, variant packs: read where used; other
                         operations: refused by the operation graph that names them */
    }
    if (st == CUDNN_STATUS_SUCCESS) d->finalized = 1;
    return st;
}

/* deep copy of SRC's attributes into DST (GetAttribute of a descriptor-valued attribute) */
static cudnnStatus_t copy_into(desc *dst, const desc *src)
{
    if (dst->type != src->type) return refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute into a descriptor of another type");
    clear_attrs(dst);
    for (int i = 0; i < src->nattrs; i++) {
        const attr *a = &src->attrs[i];
        cudnnStatus_t st = put(dst, a->name, a->type, a->count, a->data);
        if (st) return st;
    }
    dst->finalized = src->finalized;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t answer(cudnnBackendAttributeType_t type, cudnnBackendAttributeType_t want, int64_t requested,
                            int64_t *count, void *out, const void *value, int64_t n)
{
    if (type == CUDNN_TYPE_INT32 && want == CUDNN_TYPE_INT64) { /* an integer asked as 32 bits */
        int32_t v32 = n > 0 ? (int32_t) * (const int64_t *)value : 0;
        if (count) *count = n;
        if (out && n > 0 && requested > 0) memcpy(out, &v32, 4);
        return CUDNN_STATUS_SUCCESS;
    }
    if (type != want)
        return refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute with type %d, %d expected", (int)type, (int)want);
    if (count) *count = n;
    if (out && n > 0 && requested > 0) memcpy(out, value, (size_t)(requested < n ? requested : n) * type_size(type));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const dd, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *out)
{
    desc *d = desc_of(dd);
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        if (!d->finalized) return refuse(CUDNN_STATUS_NOT_INITIALIZED, "heuristics not finalized");
        if (count) *count = 1;
        if (requested < 1 || !out) return CUDNN_STATUS_SUCCESS;
        desc *cfg = desc_of(((void **)out)[0]);
        if (cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
            return refuse(CUDNN_STATUS_BAD_PARAM, "heuristic results into a non-config");
        cudnnBackendDescriptor_t e;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e)) return CUDNN_STATUS_ALLOC_FAILED;
        void *og = get_desc(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
        const int64_t zero = 0;
        cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &og);
        cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &zero);
        cudnnStatus_t st = cudnnBackendFinalize(e);
        if (st) return st;
        clear_attrs(cfg);
        if (cfg->owned) cudnnBackendDestroyDescriptor(cfg->owned);
        cfg->owned = e, cfg->finalized = 0;
        cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
        return cudnnBackendFinalize(cfg);
    }
    const attr *a = find(d, name);
    if (a) {
        if (a->type != type)
            return refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute %d: type %d, set as %d", (int)name, (int)type,
                          (int)a->type);
        if (count) *count = a->count;
        if (!out || requested < 1) return CUDNN_STATUS_SUCCESS;
        const int64_t n = requested < a->count ? requested : a->count;
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
            for (int64_t i = 0; i < n; i++) {
                cudnnStatus_t st = copy_into(desc_of(((void **)out)[i]), desc_of(((void **)a->data)[i]));
                if (st) return st;
            }
            return CUDNN_STATUS_SUCCESS;
        }
        memcpy(out, a->data, (size_t)n * a->esize);
        return CUDNN_STATUS_SUCCESS;
    }
    const graph *wg = d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ? d->graph
                      : d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR    ? graph_of_cfg(d)
                                                                         : NULL;
    const int64_t zero = 0, one = 1, ws = wg ? wg->workspace : PLAN_WORKSPACE;
    switch ((int)name) {
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX: return answer(type, CUDNN_TYPE_INT64, requested, count, out, &zero, 1);
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &one, 1);
    case CUDNN_ATTR_ENGINE_KNOB_INFO:
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
    case CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO: return answer(type, type, requested, count, out, NULL, 0);
    case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        if (!d->finalized) return refuse(CUDNN_STATUS_NOT_INITIALIZED, "workspace of a descriptor not finalized");
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &ws, 1);
    case CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED:
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &zero, 1);
    default: break;
    }
    fprintf(stderr, "cudnn stand-in: GetAttribute of attribute %d (type %d) on descriptor type %d is not modelled\n",
            (int)name, (int)type, (int)d->type);
    return refuse(CUDNN_STATUS_NOT_SUPPORTED, "GetAttribute %d of descriptor type %d is not modelled", (int)name,
                  (int)d->type);
}

/* ---------------------------------------------------------------- execution */

typedef struct job {
    graph *g;
    char **ptr;         /* per tensor: its memory (non-virtual) */
    double *value;      /* per tensor: the by-value scalars, read at Execute */
    const char **alloc; /* per tensor: the allocation it lies in, and its size (for the report) */
    size_t *alloc_size;
    void *workspace;
} job;

static float bf16_to_f(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0xffffu) ? 0x40u : 0)); /* inf, NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static double load_mem(const char *p, cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return *(const float *)p;
    case CUDNN_DATA_DOUBLE: return *(const double *)p;
    case CUDNN_DATA_BFLOAT16: return bf16_to_f(*(const uint16_t *)p);
    case CUDNN_DATA_HALF: return (double)*(const _Float16 *)p;
    case CUDNN_DATA_INT32: return *(const int32_t *)p;
    case CUDNN_DATA_INT64: return (double)*(const int64_t *)p;
    case CUDNN_DATA_INT8: return *(const int8_t *)p;
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN: return *(const uint8_t *)p;
    default: die("load of data type %d", (int)t);
    }
}

/* the value as the type T holds it */
static double round_to(double v, cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return (float)v;
    case CUDNN_DATA_BFLOAT16: return bf16_to_f(f_to_bf16((float)v));
    case CUDNN_DATA_HALF: return (double)(_Float16)v;
    case CUDNN_DATA_INT32:
    case CUDNN_DATA_INT64:
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8: return nearbyint(v);
    case CUDNN_DATA_BOOLEAN: return v != 0;
    default: return v;
    }
}

static void store_mem(char *p, cudnnDataType_t t, double v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: *(float *)p = (float)v; break;
    case CUDNN_DATA_DOUBLE: *(double *)p = v; break;
    case CUDNN_DATA_BFLOAT16: *(uint16_t *)p = f_to_bf16((float)v); break;
    case CUDNN_DATA_HALF: *(_Float16 *)p = (_Float16)v; break;
    case CUDNN_DATA_INT32: *(int32_t *)p = (int32_t)v; break;
    case CUDNN_DATA_INT64: *(int64_t *)p = (int64_t)v; break;
    case CUDNN_DATA_INT8: *(int8_t *)p = (int8_t)v; break;
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN: *(uint8_t *)p = (uint8_t)(v != 0 && t == CUDNN_DATA_BOOLEAN ? 1 : v); break;
    default: die("store of data type %d", (int)t);
    }
}

/* One tensor as the interpreter sees it during a run. */
typedef struct view {
    const tensor *t;
    char *mem;    /* non-virtual: device memory */
    double *buf;  /* virtual: this run's host buffer of t->extent elements */
    double value; /* by value */
    size_t esize;
} view;

static void out_of_bounds(const view *v, int64_t off)
{
    char d[256];
    describe(v->t, d, sizeof d);
    die("access at element offset %lld of %s, whose extent is %lld elements", (long long)off, d,
        (long long)v->t->extent);
}

static inline double vload(const view *v, int64_t off)
{
    if ((uint64_t)off >= (uint64_t)v->t->extent) out_of_bounds(v, off);
    if (v->t->by_value) return v->value;
    if (v->buf) return v->buf[off];
    return load_mem(v->mem + off * (int64_t)v->esize, v->t->dtype);
}

static inline void vstore(view *v, int64_t off, double x)
{
    if ((uint64_t)off >= (uint64_t)v->t->extent) out_of_bounds(v, off);
    if (v->buf) v->buf[off] = round_to(x, v->t->dtype);
    else store_mem(v->mem + off * (int64_t)v->esize, v->t->dtype, x);
}

/* offset of coordinates C (of the output's rank) in tensor V: broadcast over its dims of 1 */
static inline int64_t offset_bcast(const tensor *t, const int64_t *c)
{
    int64_t off = 0;
    for (int i = 0; i < t->nd; i++) {
        const int64_t ci = t->dims[i] == 1 ? 0 : c[i];
        if (ci < 0 || ci >= t->dims[i])
            die("coordinate %lld of dim %d (of %lld) of tensor uid %lld", (long long)ci, i, (long long)t->dims[i],
                (long long)t->uid);
        off += ci * t->sstrides[i];
    }
    return off;
}

/* the element of dense tensor X at the position (by the declared strides) of output Y's element
 * at coordinates C: X's coordinates from that position, then where X keeps that element */
static inline int64_t offset_same_position(const tensor *x, const tensor *y, const int64_t *c)
{
    int64_t pos = 0, off = 0;
    for (int i = 0; i < y->nd; i++) pos += c[i] * y->strides[i];
    for (int k = 0; k < x->nd; k++) off += (x->strides[k] ? pos / x->strides[k] % x->dims[k] : 0) * x->sstrides[k];
    return off;
}

static int next_coord(int64_t *c, const tensor *t)
{
    for (int i = t->nd - 1; i >= 0; i--) {
        if (++c[i] < t->dims[i]) return 1;
        c[i] = 0;
    }
    return 0;
}

/* the offset in input I (X) of op O of the element at output Y's coordinates C */
static inline int64_t input_offset(const op *o, int i, const tensor *x, const tensor *y, const int64_t *c)
{
    switch (o->in_map[i]) {
    case 0: return offset_bcast(x, c);
    case 1: {
        int64_t off = 0;
        for (int k = 0; k < x->nd; k++)
            if (o->perm[i][k] >= 0) off += c[o->perm[i][k]] * x->sstrides[k];
        return off;
    }
    default: return offset_same_position(x, y, c);
    }
}

static void run_reshape(const op *o, view *v)
{
    const view *x = &v[o->in[0]];
    view *y = &v[o->out[0]];
    int64_t c[MAXD] = {0};
    do {
        const int64_t yo = offset_bcast(y->t, c);
        vstore(y, yo, vload(x, input_offset(o, 0, x->t, y->t, c)));
    } while (next_coord(c, y->t));
}

static double pointwise(int mode, double x, double b, double t)
{
    switch (mode) {
    case CUDNN_POINTWISE_ADD: return x + b;
    case CUDNN_POINTWISE_SUB: return x - b;
    case CUDNN_POINTWISE_MUL: return x * b;
    case CUDNN_POINTWISE_DIV: return x / b;
    case CUDNN_POINTWISE_MAX: return x > b ? x : b;
    case CUDNN_POINTWISE_MIN: return x < b ? x : b;
    case CUDNN_POINTWISE_EXP: return exp(x);
    case CUDNN_POINTWISE_LOG: return log(x);
    case CUDNN_POINTWISE_NEG: return -x;
    case CUDNN_POINTWISE_ABS: return fabs(x);
    case CUDNN_POINTWISE_SQRT: return sqrt(x);
    case CUDNN_POINTWISE_RSQRT: return 1 / sqrt(x);
    case CUDNN_POINTWISE_IDENTITY: return x;
    case CUDNN_POINTWISE_RECIPROCAL: return 1 / x;
    case CUDNN_POINTWISE_CMP_EQ: return x == b;
    case CUDNN_POINTWISE_CMP_NEQ: return x != b;
    case CUDNN_POINTWISE_CMP_GT: return x > b;
    case CUDNN_POINTWISE_CMP_GE: return x >= b;
    case CUDNN_POINTWISE_CMP_LT: return x < b;
    case CUDNN_POINTWISE_CMP_LE: return x <= b;
    case CUDNN_POINTWISE_LOGICAL_AND: return x != 0 && b != 0;
    case CUDNN_POINTWISE_LOGICAL_OR: return x != 0 || b != 0;
    case CUDNN_POINTWISE_LOGICAL_NOT: return x == 0;
    case CUDNN_POINTWISE_BINARY_SELECT: return t != 0 ? x : b;
    default: die("pointwise mode %d", mode);
    }
}

static void run_pointwise(const op *o, view *v)
{
    view *y = &v[o->out[0]];
    int64_t c[MAXD] = {0};
    do {
        const int64_t yo = offset_bcast(y->t, c);
        double in[3] = {0, 0, 0};
        for (int i = 0; i < o->nin; i++) {
            const view *x = &v[o->in[i]];
            in[i] = vload(x, input_offset(o, i, x->t, y->t, c));
        }
        double r;
        if (o->mode == CUDNN_POINTWISE_GEN_INDEX) r = (double)c[o->axis];
        else r = pointwise(o->mode, o->alpha1 * in[0], o->alpha2 * in[1], in[2]);
        vstore(y, yo, r);
    } while (next_coord(c, y->t));
}

static void run_matmul(const op *o, view *v)
{
    const view *A = &v[o->in[0]], *B = &v[o->in[1]];
    view *C = &v[o->out[0]];
    const tensor *ct = C->t;
    const int n = ct->nd;
    const int64_t M = ct->dims[n - 2], N = ct->dims[n - 1], K = A->t->dims[n - 1];
    int64_t c[MAXD] = {0};
    do { /* over C's elements; the batch dims of A and B broadcast */
        int64_t ca[MAXD], cb[MAXD];
        memcpy(ca, c, sizeof ca), memcpy(cb, c, sizeof cb);
        ca[n - 1] = 0, cb[n - 2] = 0;
        const int64_t a0 = offset_bcast(A->t, ca), b0 = offset_bcast(B->t, cb);
        const int64_t sa = A->t->sstrides[n - 1], sb = B->t->sstrides[n - 2];
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += vload(A, a0 + k * sa) * vload(B, b0 + k * sb);
        vstore(C, offset_bcast(ct, c), acc);
    } while (next_coord(c, ct));
    (void)M, (void)N;
}

static void run_reduction(const op *o, view *v)
{
    const view *x = &v[o->in[0]];
    view *y = &v[o->out[0]];
    const int64_t ny = y->t->extent;
    double *acc = malloc(sizeof(double) * (size_t)ny);
    int64_t *cnt = calloc((size_t)ny, sizeof(int64_t));
    const int add = o->mode == CUDNN_REDUCE_TENSOR_ADD || o->mode == CUDNN_REDUCE_TENSOR_AVG;
    for (int64_t i = 0; i < ny; i++)
        acc[i] = add                                  ? 0
                 : o->mode == CUDNN_REDUCE_TENSOR_MUL ? 1
                 : o->mode == CUDNN_REDUCE_TENSOR_MIN ? INFINITY
                                                      : -INFINITY;
    int64_t c[MAXD] = {0};
    do {
        const double e = vload(x, offset_bcast(x->t, c));
        const int64_t yo = offset_bcast(y->t, c);
        if ((uint64_t)yo >= (uint64_t)ny) out_of_bounds(y, yo);
        cnt[yo]++;
        switch (o->mode) {
        case CUDNN_REDUCE_TENSOR_ADD:
        case CUDNN_REDUCE_TENSOR_AVG: acc[yo] += e; break;
        case CUDNN_REDUCE_TENSOR_MUL: acc[yo] *= e; break;
        case CUDNN_REDUCE_TENSOR_MIN: acc[yo] = e < acc[yo] ? e : acc[yo]; break;
        case CUDNN_REDUCE_TENSOR_MAX: acc[yo] = e > acc[yo] ? e : acc[yo]; break;
        case CUDNN_REDUCE_TENSOR_AMAX: acc[yo] = fabs(e) > acc[yo] ? fabs(e) : acc[yo]; break;
        }
    } while (next_coord(c, x->t));
    memset(c, 0, sizeof c);
    do {
        const int64_t yo = offset_bcast(y->t, c);
        vstore(y, yo, o->mode == CUDNN_REDUCE_TENSOR_AVG ? acc[yo] / (double)cnt[yo] : acc[yo]);
    } while (next_coord(c, y->t));
    free(acc), free(cnt);
}

/* cuDNN's fused forward: O = softmax(scale Q K^T) V per (b, h), Stats = max + log(sum exp) per row */
static void run_sdpa_fwd(const op *o, view *v)
{
    const view *q = &v[o->in[0]], *k = &v[o->in[1]], *val = &v[o->in[2]];
    view *out = &v[o->out[0]], *st = o->out[1] >= 0 ? &v[o->out[1]] : NULL;
    const double scale = o->in[3] >= 0 ? v[o->in[3]].value : 1.0;
    const int64_t B = q->t->dims[0], H = q->t->dims[1], Sq = q->t->dims[2], D = q->t->dims[3], Skv = k->t->dims[2],
                  Dv = val->t->dims[3];
    const int64_t *qs = q->t->sstrides, *ks = k->t->sstrides, *vs = val->t->sstrides, *os = out->t->sstrides;
    double *s = malloc(sizeof(double) * (size_t)Skv);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < Sq; i++) {
                double mx = -INFINITY;
                for (int64_t j = 0; j < Skv; j++) {
                    double acc = 0;
                    for (int64_t d = 0; d < D; d++)
                        acc += vload(q, b * qs[0] + h * qs[1] + i * qs[2] + d * qs[3]) *
                               vload(k, b * ks[0] + h * ks[1] + j * ks[2] + d * ks[3]);
                    s[j] = acc * scale;
                    mx = s[j] > mx ? s[j] : mx;
                }
                double z = 0;
                for (int64_t j = 0; j < Skv; j++) z += s[j] = exp(s[j] - mx);
                for (int64_t d = 0; d < Dv; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < Skv; j++)
                        acc += s[j] * vload(val, b * vs[0] + h * vs[1] + j * vs[2] + d * vs[3]);
                    vstore(out, b * os[0] + h * os[1] + i * os[2] + d * os[3], acc / z);
                }
                if (st) {
                    const int64_t *ss = st->t->sstrides;
                    vstore(st, b * ss[0] + h * ss[1] + i * ss[2], mx + log(z));
                }
            }
    free(s);
}

static void job_run(void *p)
{
    job *j = p;
    const graph *g = j->g;
    /* the engine's own scratch: written and read back over the whole size it asked for */
    if (j->workspace) {
        memset(j->workspace, 0x5a, (size_t)g->workspace);
        if (((unsigned char *)j->workspace)[g->workspace - 1] != 0x5a) die("workspace not kept");
    }
    view *v = calloc((size_t)g->nt, sizeof *v);
    for (int i = 0; i < g->nt; i++) {
        v[i].t = &g->t[i], v[i].esize = dtype_size(g->t[i].dtype), v[i].value = j->value[i], v[i].mem = j->ptr[i];
        if (g->t[i].is_virtual) {
            v[i].buf = malloc(sizeof(double) * (size_t)g->t[i].extent);
            for (int64_t e = 0; e < g->t[i].extent; e++) v[i].buf[e] = NAN; /* what no op wrote reads as NaN */
        }
    }
    for (int k = 0; k < g->nops; k++) {
        const op *o = &g->ops[g->order[k]];
        switch (o->kind) {
        case OP_POINTWISE: run_pointwise(o, v); break;
        case OP_MATMUL: run_matmul(o, v); break;
        case OP_REDUCTION: run_reduction(o, v); break;
        case OP_SDPA_FWD: run_sdpa_fwd(o, v); break;
        case OP_RESHAPE: run_reshape(o, v); break;
        }
    }
    for (int i = 0; i < g->nt; i++) free(v[i].buf);
    free(v);
    pthread_mutex_lock(&mu), counts.executions_run++, pthread_mutex_unlock(&mu);
}

static void job_release(void *p)
{
    job *j = p;
    graph_unref(j->g);
    free(j->ptr), free(j->value), free(j->alloc), free(j->alloc_size), free(j);
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack)
{
    struct cudnnContext *hc = handle_of(h);
    desc *p = desc_of(plan), *vp = desc_of(pack);
    if (p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !p->finalized || !p->graph)
        return refuse(CUDNN_STATUS_BAD_PARAM, "Execute: not a finalized execution plan");
    if (vp->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !vp->finalized)
        return refuse(CUDNN_STATUS_BAD_PARAM, "Execute: not a finalized variant pack");
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != hc->device)
        die("Execute on device %d with a handle made on device %d", cur, hc->device);
    const attr *uids = get(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64),
               *ptrs = get(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR);
    const attr *wsa = get(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR);
    if (!uids || !ptrs || uids->count != ptrs->count)
        return refuse(CUDNN_STATUS_BAD_PARAM, "Execute: uids and pointers differ in number");
    graph *g = p->graph;
    job *j = calloc(1, sizeof *j);
    j->g = g, j->ptr = calloc((size_t)g->nt, sizeof *j->ptr), j->value = calloc((size_t)g->nt, sizeof *j->value);
    j->alloc = calloc((size_t)g->nt, sizeof *j->alloc), j->alloc_size = calloc((size_t)g->nt, sizeof *j->alloc_size);
    j->workspace = wsa && wsa->count == 1 ? *(void **)wsa->data : NULL;
    /* the workspace: as large as the plan said, inside one allocation */
    const char *base;
    size_t size;
    if (!j->workspace || !shim_device_allocation(j->workspace, &base, &size) ||
        (size_t)((const char *)j->workspace - base) + (size_t)g->workspace > size)
        die("Execute: the workspace %p is not %lld bytes of device memory (the plan's workspace size)", j->workspace,
            (long long)g->workspace);
    for (int i = 0; i < g->nt; i++) {
        const tensor *t = &g->t[i];
        if (t->is_virtual) continue;
        void *ptr = NULL;
        int found = 0;
        for (int64_t k = 0; k < uids->count; k++)
            if (((int64_t *)uids->data)[k] == t->uid) ptr = ((void **)ptrs->data)[k], found = 1;
        char d[256];
        describe(t, d, sizeof d);
        if (!found || !ptr) die("Execute: the variant pack has no pointer for %s", d);
        if (t->by_value) { /* host memory, read now (a captured graph keeps the value of its capture) */
            j->value[i] = load_mem(ptr, t->dtype);
            continue;
        }
        const size_t bytes = (size_t)t->extent * dtype_size(t->dtype);
        if (!shim_device_allocation(ptr, &base, &size)) die("Execute: %s at %p is not in device memory", d, ptr);
        if ((size_t)((const char *)ptr - base) + bytes > size)
            die("Execute: %s at byte %zu of a %zu-byte allocation reaches %zu bytes past its end", d,
                (size_t)((const char *)ptr - base), size, (size_t)((const char *)ptr - base) + bytes - size);
        if ((uintptr_t)ptr % dtype_size(t->dtype)) die("Execute: %s at %p is misaligned", d, ptr);
        j->ptr[i] = ptr, j->alloc[i] = base, j->alloc_size[i] = size;
    }
    pthread_mutex_lock(&mu), g->refs++, counts.executions++, pthread_mutex_unlock(&mu);
    const shim_work w = {.run = job_run, .release = job_release, .arg = j};
    shim_enqueue(hc->stream, &w);
    return CUDNN_STATUS_SUCCESS;
}

void cudnn_standin_get_counts(cudnn_standin_counts *out)
{
    pthread_mutex_lock(&mu);
    *out = counts;
    pthread_mutex_unlock(&mu);
}

__attribute__((destructor)) static void say_counts(void)
{
    if (getenv("CUDNN_STANDIN_VERBOSE"))
        fprintf(stderr, "cudnn stand-in: %ld graphs, %ld plans, %ld executions queued, %ld run\n", counts.graphs,
                counts.plans, counts.executions, counts.executions_run);
}
