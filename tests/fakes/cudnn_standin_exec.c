/* cudnn_standin_exec: the cuDNN stand-in's execution of a plan (cudnn_standin.c says what the
 * three files hold): the graph interpreted on the CPU in float64, operations in dependency order,
 * virtual tensors in host buffers rounded to their declared type, queued on the handle's stream of
 * the host CUDA runtime; every tensor of the variant pack checked to lie inside one device
 * allocation, every element access against its extent. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "cuda_host_runtime.h"
#include "cudnn_standin.h"
#include "cudnn_standin_internal.h"

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
    default: standin_die("load of data type %d", (int)t);
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
    default: standin_die("store of data type %d", (int)t);
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
    standin_die("access at element offset %lld of %s, whose extent is %lld elements", (long long)off, d,
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
            standin_die("coordinate %lld of dim %d (of %lld) of tensor uid %lld", (long long)ci, i,
                        (long long)t->dims[i], (long long)t->uid);
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
    default: standin_die("pointwise mode %d", mode);
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
        if (((unsigned char *)j->workspace)[g->workspace - 1] != 0x5a) standin_die("workspace not kept");
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
    pthread_mutex_lock(&standin_mu), standin_counts.executions_run++, pthread_mutex_unlock(&standin_mu);
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
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "Execute: not a finalized execution plan");
    if (vp->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !vp->finalized)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "Execute: not a finalized variant pack");
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != hc->device)
        standin_die("Execute on device %d with a handle made on device %d", cur, hc->device);
    const attr *uids = attr_get(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64),
               *ptrs = attr_get(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR);
    const attr *wsa = attr_get(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR);
    if (!uids || !ptrs || uids->count != ptrs->count)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "Execute: uids and pointers differ in number");
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
        standin_die("Execute: the workspace %p is not %lld bytes of device memory (the plan's workspace size)",
                    j->workspace, (long long)g->workspace);
    for (int i = 0; i < g->nt; i++) {
        const tensor *t = &g->t[i];
        if (t->is_virtual) continue;
        void *ptr = NULL;
        int found = 0;
        for (int64_t k = 0; k < uids->count; k++)
            if (((int64_t *)uids->data)[k] == t->uid) ptr = ((void **)ptrs->data)[k], found = 1;
        char d[256];
        describe(t, d, sizeof d);
        if (!found || !ptr) standin_die("Execute: the variant pack has no pointer for %s", d);
        if (t->by_value) { /* host memory, read now (a captured graph keeps the value of its capture) */
            j->value[i] = load_mem(ptr, t->dtype);
            continue;
        }
        const size_t bytes = (size_t)t->extent * dtype_size(t->dtype);
        if (!shim_device_allocation(ptr, &base, &size))
            standin_die("Execute: %s at %p is not in device memory", d, ptr);
        if ((size_t)((const char *)ptr - base) + bytes > size)
            standin_die("Execute: %s at byte %zu of a %zu-byte allocation reaches %zu bytes past its end", d,
                        (size_t)((const char *)ptr - base), size, (size_t)((const char *)ptr - base) + bytes - size);
        if ((uintptr_t)ptr % dtype_size(t->dtype)) standin_die("Execute: %s at %p is misaligned", d, ptr);
        /* the engines were picked for the alignment the descriptor declares (the frontend's default:
         * 16 bytes): a pointer less aligned is refused, where a real engine that assumed it may fault
         * on a misaligned address (cudnn-frontend's own torch op copies such a tensor first) */
        if (t->align > 1 && (uintptr_t)ptr % (uintptr_t)t->align) {
            free(j->ptr), free(j->value), free(j->alloc), free(j->alloc_size), free(j);
            return standin_refuse(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER,
                                  "Execute: %s at %p is not %lld-byte aligned, as its descriptor declares", d, ptr,
                                  (long long)t->align);
        }
        j->ptr[i] = ptr, j->alloc[i] = base, j->alloc_size[i] = size;
    }
    pthread_mutex_lock(&standin_mu), g->refs++, standin_counts.executions++, pthread_mutex_unlock(&standin_mu);
    const shim_work w = {.run = job_run, .release = job_release, .arg = j};
    shim_enqueue(hc->stream, &w);
    return CUDNN_STATUS_SUCCESS;
}
