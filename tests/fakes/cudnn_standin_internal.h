/* cudnn_standin_internal: what the three files of the cuDNN stand-in (cudnn_standin.c,
 * cudnn_standin_graph.c, cudnn_standin_exec.c) share, and nothing else sees: hidden, so the
 * library exports only cuDNN's API and cudnn_standin.h. */
#ifndef INSTBENCH_TESTS_CUDNN_STANDIN_INTERNAL_H
#define INSTBENCH_TESTS_CUDNN_STANDIN_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cudnn.h>

#include "cudnn_standin.h"

#pragma GCC visibility push(hidden)

#define PLAN_WORKSPACE 4096 /* bytes the "engine" uses of the workspace (written and read back) */
#define MAXD 8

extern pthread_mutex_t standin_mu; /* over the counts and the graphs' references */
extern cudnn_standin_counts standin_counts;

void standin_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A refusal: the status, with the reason kept for cudnnGetLastErrorString (and printed when
 * CUDNN_STANDIN_VERBOSE is set). */
cudnnStatus_t standin_refuse(cudnnStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define HANDLE_MAGIC 0x636e6e68u
struct cudnnContext {
    unsigned magic;
    int device;
    cudaStream_t stream;
};
struct cudnnContext *handle_of(cudnnHandle_t h);

/* ---- the descriptor store (cudnn_standin.c) */

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
desc *desc_of(cudnnBackendDescriptor_t d); /* dies on one never created (or destroyed) */
attr *attr_find(const desc *d, cudnnBackendAttributeName_t name);
/* typed reads of a descriptor's attributes (-1 / NULL when not set) */
const attr *attr_get(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type);
desc *get_desc(const desc *d, cudnnBackendAttributeName_t name);
int64_t get_i64(const desc *d, cudnnBackendAttributeName_t name, int64_t dflt);
int get_enum(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int dflt);
int get_bool(const desc *d, cudnnBackendAttributeName_t name);
double get_scalar(const desc *d, cudnnBackendAttributeName_t name, double dflt);

/* ---- the graph (cudnn_standin_graph.c) */

typedef struct tensor {
    int64_t uid;
    int nd;
    int64_t dims[MAXD], strides[MAXD];
    int64_t sstrides[MAXD]; /* where the elements are: the strides in memory; a virtual tensor's
                                 strides are a layout hint only (the frontend gives some that overlap),
                                 so the interpreter keeps it packed, row-major */
    cudnnDataType_t dtype;
    int is_virtual, by_value;
    int64_t align;  /* CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT: what the engines were chosen for (0: unset) */
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
    int64_t workspace; /* bytes its plans ask for (see the top of cudnn_standin.c) */
    int dp_backward;   /* 1: the SDPA backward in its dP-workspace (deterministic) form */
    tensor *t;
    int nt;
    op *ops;
    int nops;
    int *order; /* ops in dependency order */
} graph;
void graph_unref(graph *g);
size_t dtype_size(cudnnDataType_t t);
void describe(const tensor *t, char *buf, size_t n); /* for a message: uid, type, dims, strides */
int64_t elements(const tensor *t);
int dense(const tensor *t); /* its elements exactly fill its extent (no gaps, no overlap) */
/* the finalize of a tensor, an operation graph, an operation descriptor */
cudnnStatus_t check_tensor(desc *d);
cudnnStatus_t build_graph(desc *d);
cudnnStatus_t read_op(desc *d);
graph *graph_of_cfg(desc *cfg); /* the operation graph behind an engine config or an engine (NULL if none) */

#pragma GCC visibility pop

#endif
