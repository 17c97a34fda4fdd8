/* cudnn_standin_graph: the operation graph the cuDNN stand-in reads back from the attributes the
 * frontend set, at each finalize (cudnn_standin.c says what the three files hold): its tensors and
 * operations, checked as a backend would check them, put in dependency order, and the workspace its
 * plans ask for. */
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

/* ---------------------------------------------------------------- the graph */

void graph_unref(graph *g)
{
    pthread_mutex_lock(&standin_mu);
    const int last = --g->refs == 0;
    pthread_mutex_unlock(&standin_mu);
    if (!last) return;
    free(g->t), free(g->ops), free(g->order), free(g);
}

size_t dtype_size(cudnnDataType_t t)
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

void describe(const tensor *t, char *buf, size_t n)
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
        standin_refuse(CUDNN_STATUS_BAD_PARAM, "an operation names a descriptor that is not a finalized tensor");
        return -1;
    }
    tensor t;
    memset(&t, 0, sizeof t);
    t.uid = get_i64(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, -1);
    const attr *dims = attr_get(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64),
               *str = attr_get(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
    t.nd = (int)dims->count;
    memcpy(t.dims, dims->data, (size_t)t.nd * 8), memcpy(t.strides, str->data, (size_t)t.nd * 8);
    t.dtype = (cudnnDataType_t)get_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1);
    t.is_virtual = get_bool(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL);
    t.by_value = get_bool(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE);
    t.align = get_i64(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 0);
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
                standin_refuse(CUDNN_STATUS_BAD_PARAM, "two tensors with uid %lld differ", (long long)t.uid);
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
cudnnStatus_t check_tensor(desc *d)
{
    const attr *dims = attr_get(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64),
               *str = attr_get(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
    if (!dims || !str || dims->count != str->count || dims->count < 1 || dims->count > MAXD)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "tensor: dims and strides missing or of different ranks");
    if (get_i64(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, -1) < 0)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "tensor: no unique id");
    const int dt = get_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1);
    if (dt < 0 || !dtype_size((cudnnDataType_t)dt))
        return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: data type %d not modelled by the stand-in", dt);
    for (int64_t i = 0; i < dims->count; i++)
        if (((int64_t *)dims->data)[i] < 1 || ((int64_t *)str->data)[i] < 0)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "tensor: a dim below 1 or a negative stride");
    if (get_i64(d, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1) != 1 || attr_find(d, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC))
        return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: vectorized or ragged tensors are not modelled");
    if (get_enum(d, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE,
                 CUDNN_TENSOR_REORDERING_NONE) != CUDNN_TENSOR_REORDERING_NONE)
        return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "tensor: reordered layouts are not modelled");
    return CUDNN_STATUS_SUCCESS;
}

static int broadcasts(const tensor *in, const tensor *out)
{
    if (elements(in) == 1) return 1; /* a scalar, of any rank */
    if (in->nd != out->nd) return 0;
    for (int i = 0; i < in->nd; i++)
        if (in->dims[i] != out->dims[i] && in->dims[i] != 1) return 0;
    return 1;
}

int64_t elements(const tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->nd; i++) n *= t->dims[i];
    return n;
}

/* a tensor whose elements exactly fill its extent (no gaps, no overlap) */
int dense(const tensor *t) { return elements(t) == t->dext; }

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
        if (!pw) return standin_refuse(CUDNN_STATUS_BAD_PARAM, "pointwise: no pointwise descriptor"), -1;
        o.kind = OP_POINTWISE;
        o.mode = get_enum(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1);
        o.axis = (int)get_i64(pw, CUDNN_ATTR_POINTWISE_AXIS, -1);
        int known = 0;
        for (size_t i = 0; i < sizeof known_pointwise / sizeof known_pointwise[0]; i++)
            known |= known_pointwise[i] == o.mode;
        if (!known)
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "pointwise mode %d is not modelled by the stand-in",
                                  o.mode),
                   -1;
        const int arity = pointwise_arity(o.mode);
        o.nin = arity;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC));
        if (arity >= 2) o.in[1] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
        if (arity >= 3) o.in[2] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_TDESC));
        o.nout = 1, o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC));
        o.alpha1 = get_scalar(d, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1);
        o.alpha2 = get_scalar(d, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1);
        if (attr_find(d, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC) || attr_find(d, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC))
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "pointwise backward modes are not modelled"), -1;
        break;
    }
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
        o.kind = OP_MATMUL, o.nin = 2, o.nout = 1;
        o.in[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_ADESC));
        o.in[1] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_BDESC));
        o.out[0] = add_tensor(g, get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_CDESC));
        if (attr_find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC) ||
            attr_find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC) ||
            attr_find(d, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC))
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "matmul: M/N/K overrides are not modelled"), -1;
        if (!get_desc(d, CUDNN_ATTR_OPERATION_MATMUL_DESC))
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "matmul: no matmul descriptor"), -1;
        break;
    }
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: {
        desc *rd = get_desc(d, CUDNN_ATTR_OPERATION_REDUCTION_DESC);
        if (!rd) return standin_refuse(CUDNN_STATUS_BAD_PARAM, "reduction: no reduction descriptor"), -1;
        o.kind = OP_REDUCTION, o.nin = 1, o.nout = 1;
        o.mode = get_enum(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, -1);
        if (o.mode != CUDNN_REDUCE_TENSOR_ADD && o.mode != CUDNN_REDUCE_TENSOR_MAX &&
            o.mode != CUDNN_REDUCE_TENSOR_MIN && o.mode != CUDNN_REDUCE_TENSOR_MUL &&
            o.mode != CUDNN_REDUCE_TENSOR_AMAX && o.mode != CUDNN_REDUCE_TENSOR_AVG)
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "reduction operator %d is not modelled", o.mode), -1;
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
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                                  "SDPA forward: masks, paging and sequence lengths are not modelled"),
                   -1;
        break;
    }
    default:
        return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "operation descriptor type %d is not modelled", (int)d->type),
               -1;
    }
    for (int i = 0; i < o.nin; i++)
        if (o.in[i] == -1)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "operation (type %d): input %d missing", (int)d->type, i), -1;
    for (int i = 0; i < o.nout; i++)
        if (o.out[i] == -1)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "operation (type %d): output %d missing", (int)d->type, i),
                   -1;
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
                return standin_refuse(CUDNN_STATUS_BAD_PARAM,
                                      "pointwise mode %d: input %s does not broadcast to output %s", o->mode, a, b),
                       -1;
            }
        }
        if (o->mode == CUDNN_POINTWISE_GEN_INDEX && (o->axis < 0 || o->axis >= y->nd))
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "pointwise GEN_INDEX: axis %d", o->axis), -1;
        return 0;
    }
    case OP_RESHAPE: {
        const tensor *x = &t[o->in[0]], *y = &t[o->out[0]];
        if ((o->in_map[0] = same_elements(x, y, o->perm[0])) < 0) {
            describe(x, a, sizeof a), describe(y, b, sizeof b);
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
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
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "matmul: A %s and B %s do not give C of uid %lld", a, b,
                              (long long)C->uid),
               -1;
    }
    case OP_REDUCTION: {
        const tensor *x = &t[o->in[0]], *y = &t[o->out[0]];
        if (!broadcasts(y, x)) {
            describe(x, a, sizeof a), describe(y, b, sizeof b);
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "reduction: %s does not reduce to %s", a, b), -1;
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
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "SDPA forward: Q %s, K %s, V, O do not fit", a, b), -1;
        }
        const cudnnDataType_t io = q->dtype;
        if ((io != CUDNN_DATA_BFLOAT16 && io != CUDNN_DATA_HALF) || k->dtype != io || v->dtype != io ||
            out->dtype != io)
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                                  "SDPA forward: Q, K, V and O must all be bf16 or all fp16"),
                   -1;
        if (o->out[1] >= 0) {
            const tensor *st = &t[o->out[1]];
            if (st->dtype != CUDNN_DATA_FLOAT)
                return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                                      "SDPA forward: the statistics tensor must be fp32 (it is %s)",
                                      dtype_name(st->dtype)),
                       -1;
            if (st->nd != 4 || st->dims[0] != q->dims[0] || st->dims[1] != q->dims[1] || st->dims[2] != q->dims[2] ||
                st->dims[3] != 1)
                return standin_refuse(CUDNN_STATUS_BAD_PARAM, "SDPA forward: the statistics tensor is not [b,h,s_q,1]"),
                       -1;
        }
        if (o->in[3] >= 0 && (!t[o->in[3]].by_value || elements(&t[o->in[3]]) != 1))
            return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                                  "SDPA forward: the scale must be one value passed by value"),
                   -1;
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
        return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                              "CUDNN_STANDIN_REFUSE=sdpa: no engine for this attention graph");
    if (refusal && !strcmp(refusal, "deterministic") && backward && !fp32_accumulator)
        return standin_refuse(
            CUDNN_STATUS_NOT_SUPPORTED,
            "CUDNN_STANDIN_REFUSE=deterministic: no engine for the SDPA backward's dP-workspace form");
    g->workspace = PLAN_WORKSPACE;
    g->dp_backward = backward && !fp32_accumulator;
    if (g->dp_backward) {
        const int64_t b = ds->dims[0], h = ds->dims[1], tq = (ds->dims[2] + 63) / 64 * 64,
                      tkv = (ds->dims[3] + 127) / 128 * 128;
        g->workspace = b * h * tq * tkv * 2;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t build_graph(desc *d)
{
    const attr *ops = attr_get(d, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    if (!ops || ops->count < 1) return standin_refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: no operations");
    graph *g = calloc(1, sizeof *g);
    if (!g) return CUDNN_STATUS_ALLOC_FAILED;
    g->refs = 1;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int64_t i = 0; i < ops->count; i++) { /* each operation as its finalize read it */
        desc *od = desc_of(((void **)ops->data)[i]);
        if (!od->finalized) {
            st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: operation %lld not finalized", (long long)i);
            goto fail;
        }
        if (!od->graph || od->graph->nops != 1) {
            st = standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "operation descriptor type %d is not modelled",
                                (int)od->type);
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
                st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "tensor uid %lld is written twice (or is a by-value input)",
                                    (long long)g->t[o].uid);
                goto fail;
            }
            g->t[o].producer = i;
        }
    }
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].is_virtual && g->t[i].producer < 0) {
            st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "virtual tensor uid %lld is read but never written",
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
            st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "operation graph: a cycle");
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
cudnnStatus_t read_op(desc *d)
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
graph *graph_of_cfg(desc *cfg)
{
    desc *e = cfg->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR ? get_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE) : cfg;
    desc *og = e ? get_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH) : NULL;
    return og ? og->graph : NULL;
}
