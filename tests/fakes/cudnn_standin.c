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
 * Three files, one library: this one, the library, handles and the descriptor store (attributes
 * set, finalized, read back); cudnn_standin_graph.c, the graph read from them and checked;
 * cudnn_standin_exec.c, its execution.
 * - the one engine the frontend names itself rather than asking the heuristics: on compute
 *   capability 10.x (B200, B300) cudnn-frontend 1.32 pins engine BLACKWELL_BPROP_ENGINE, with tile
 *   knobs, for the deterministic SDPA backward from cuDNN 9.18.0 (its sdpa node's
 *   override_heuristics_query); the stand-in serves that engine for that graph on such a GPU
 *   (CUDASIM_DEVICE, tests/fakes/cuda_host_runtime.c) and refuses it anywhere else.
 * It is not cuDNN: knobs are accepted and ignored, no fp8, no dropout, masks or ragged tensors;
 * anything it does not model it refuses or stops on, loudly, never silently. */
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
#include "cudnn_standin_internal.h"

#ifndef STANDIN_VERSION /* a second build of this library (libcudnn-standin-old) says an older release */
#define STANDIN_VERSION 91900
#endif

static __thread char last_error[1024];
pthread_mutex_t standin_mu = PTHREAD_MUTEX_INITIALIZER;
cudnn_standin_counts standin_counts;

void standin_die(const char *fmt, ...)
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

cudnnStatus_t standin_refuse(cudnnStatus_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (getenv("CUDNN_STANDIN_VERBOSE")) fprintf(stderr, "cudnn stand-in: %s\n", last_error);
    return st;
}

/* ---------------------------------------------------------------- library, handles */

/* the engine cudnn-frontend pins for Blackwell's deterministic SDPA backward (see the top) */
#define BLACKWELL_BPROP_ENGINE 5

/* whether engine INDEX serves graph G on the current device: the heuristics' engine 0 always;
 * Blackwell's pinned backward engine for the dP-workspace backward on 10.x from cuDNN 9.18.0 */
static cudnnStatus_t engine_check(int64_t index, const graph *g)
{
    if (index == 0) return CUDNN_STATUS_SUCCESS;
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev))
        major = 0;
    if (index == BLACKWELL_BPROP_ENGINE && g->dp_backward && major == 10 && STANDIN_VERSION >= 91800)
        return CUDNN_STATUS_SUCCESS;
    return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED,
                          "engine %lld: the stand-in has engine 0, and engine %d for the deterministic SDPA backward "
                          "on compute capability 10.x (this GPU: %d.x)",
                          (long long)index, BLACKWELL_BPROP_ENGINE, major);
}

size_t cudnnGetVersion(void) { return STANDIN_VERSION; }
size_t cudnnGetMaxDeviceVersion(void) { return 1210; }
size_t cudnnGetCudartVersion(void) { return 13000; }

const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER: return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
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

struct cudnnContext *handle_of(cudnnHandle_t h)
{
    if (!h || h->magic != HANDLE_MAGIC)
        standin_die("a cuDNN handle that cudnnCreate never made (or destroyed): %p", (void *)h);
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
        return standin_refuse(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: no current device");
    }
    *out = h;
    pthread_mutex_lock(&standin_mu), standin_counts.handles++, pthread_mutex_unlock(&standin_mu);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    handle_of(h)->magic = 0;
    free(h);
    pthread_mutex_lock(&standin_mu), standin_counts.handles--, pthread_mutex_unlock(&standin_mu);
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

desc *desc_of(cudnnBackendDescriptor_t d)
{
    desc *x = (desc *)d;
    if (!x || x->magic != DESC_MAGIC)
        standin_die("a backend descriptor that was never created (or destroyed): %p", (void *)d);
    return x;
}

attr *attr_find(const desc *d, cudnnBackendAttributeName_t name)
{
    for (int i = 0; i < d->nattrs; i++)
        if (d->attrs[i].name == name) return &d->attrs[i];
    return NULL;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    desc *d = calloc(1, sizeof *d);
    if (!d) return CUDNN_STATUS_ALLOC_FAILED;
    d->magic = DESC_MAGIC, d->type = type;
    *out = d;
    pthread_mutex_lock(&standin_mu), standin_counts.descriptors++, pthread_mutex_unlock(&standin_mu);
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
    pthread_mutex_lock(&standin_mu), standin_counts.descriptors--, pthread_mutex_unlock(&standin_mu);
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
    attr *a = attr_find(d, name);
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
        return standin_refuse(CUDNN_STATUS_NOT_INITIALIZED, "attribute %d set on a finalized descriptor", (int)name);
    if (n < 0 || (n > 0 && !values)) return CUDNN_STATUS_BAD_PARAM;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < n; i++) (void)desc_of(((void *const *)values)[i]);
    return put(d, name, type, n, values);
}

/* ---- typed reads of a descriptor's attributes (-1 / NULL when not set) */

const attr *attr_get(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type)
{
    const attr *a = attr_find(d, name);
    return a && a->type == type ? a : NULL;
}

desc *get_desc(const desc *d, cudnnBackendAttributeName_t name)
{
    const attr *a = attr_get(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    return a && a->count == 1 ? desc_of(*(void **)a->data) : NULL;
}

int64_t get_i64(const desc *d, cudnnBackendAttributeName_t name, int64_t dflt)
{
    const attr *a = attr_get(d, name, CUDNN_TYPE_INT64);
    return a && a->count >= 1 ? *(int64_t *)a->data : dflt;
}

int get_enum(const desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int dflt)
{
    const attr *a = attr_get(d, name, type);
    return a && a->count >= 1 ? *(int *)a->data : dflt;
}

int get_bool(const desc *d, cudnnBackendAttributeName_t name)
{
    const attr *a = attr_get(d, name, CUDNN_TYPE_BOOLEAN);
    return a && a->count >= 1 ? *(bool *)a->data : 0;
}

double get_scalar(const desc *d, cudnnBackendAttributeName_t name, double dflt)
{
    const attr *a = attr_find(d, name);
    if (!a || a->count < 1) return dflt;
    if (a->type == CUDNN_TYPE_FLOAT) return *(float *)a->data;
    if (a->type == CUDNN_TYPE_DOUBLE) return *(double *)a->data;
    standin_die("a scalar attribute %d of type %d", (int)name, (int)a->type);
}

static cudnnStatus_t copy_into(desc *dst, const desc *src);

/* cuDNN reads an engine config's engine and knob choices when it is finalized, and the frontend
 * destroys them afterwards (create_execution_plan's are its locals): the config keeps a copy of
 * the engine and the knobs' (type, value) pairs, which GetAttribute writes back into knob choices. */
static cudnnStatus_t cfg_take(desc *d)
{
    desc *e = get_desc(d, CUDNN_ATTR_ENGINECFG_ENGINE);
    if (e && e != d->owned) {
        cudnnBackendDescriptor_t copy;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &copy)) return CUDNN_STATUS_ALLOC_FAILED;
        cudnnStatus_t st = copy_into(desc_of(copy), e);
        if (st == CUDNN_STATUS_SUCCESS)
            st = put(d, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &copy);
        if (st) return cudnnBackendDestroyDescriptor(copy), st;
        if (d->owned) cudnnBackendDestroyDescriptor(d->owned);
        d->owned = desc_of(copy);
    }
    const attr *k = attr_get(d, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR);
    if (!k) return CUDNN_STATUS_SUCCESS;
    int64_t pairs[2 * CUDNN_KNOB_TYPE_COUNTS];
    if (k->count > CUDNN_KNOB_TYPE_COUNTS)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "more knob choices than knobs");
    const int64_t n = k->count;
    for (int64_t i = 0; i < n; i++) {
        const desc *kd = desc_of(((void **)k->data)[i]);
        pairs[2 * i] = get_enum(kd, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, -1);
        pairs[2 * i + 1] = get_i64(kd, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, 0);
    }
    return put(d, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_INT64, 2 * n, pairs);
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t dd)
{
    desc *d = desc_of(dd);
    if (d->finalized) return standin_refuse(CUDNN_STATUS_BAD_PARAM, "descriptor finalized twice");
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    switch ((int)d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: st = check_tensor(d); break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        st = build_graph(d);
        if (st == CUDNN_STATUS_SUCCESS)
            pthread_mutex_lock(&standin_mu), standin_counts.graphs++, pthread_mutex_unlock(&standin_mu);
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: {
        desc *og = get_desc(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
        if (!og || !og->graph) st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "heuristics: no finalized operation graph");
        break;
    }
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
        desc *og = get_desc(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
        if (!og || !og->graph) st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "engine: no finalized operation graph");
        else st = engine_check(get_i64(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0), og->graph);
        break;
    }
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        if ((st = cfg_take(d)) == CUDNN_STATUS_SUCCESS && !graph_of_cfg(d))
            st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "engine config: no finalized engine");
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        desc *cfg = get_desc(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
        graph *g = cfg ? graph_of_cfg(cfg) : NULL;
        if (!g) st = standin_refuse(CUDNN_STATUS_BAD_PARAM, "execution plan: no engine config");
        else {
            pthread_mutex_lock(&standin_mu), g->refs++, standin_counts.plans++, pthread_mutex_unlock(&standin_mu);
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
    if (dst->type != src->type)
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute into a descriptor of another type");
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
        return standin_refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute with type %d, %d expected", (int)type, (int)want);
    if (count) *count = n;
    if (out && n > 0 && requested > 0) memcpy(out, value, (size_t)(requested < n ? requested : n) * type_size(type));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const dd, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *out)
{
    desc *d = desc_of(dd);
    if (name == CUDNN_ATTR_ENGINECFG_KNOB_CHOICES) { /* the pairs cfg_take kept, into the caller's knob choices */
        const attr *k = attr_get(d, name, CUDNN_TYPE_INT64);
        const int64_t n = k ? k->count / 2 : 0;
        if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "knob choices read as type %d", (int)type);
        if (count) *count = n;
        for (int64_t i = 0; out && i < n && i < requested; i++) {
            desc *kd = desc_of(((void **)out)[i]);
            const int kt = (int)((const int64_t *)k->data)[2 * i];
            clear_attrs(kd);
            if (put(kd, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &kt) ||
                put(kd, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, (const int64_t *)k->data + 2 * i + 1))
                return CUDNN_STATUS_ALLOC_FAILED;
            kd->finalized = 1;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        if (!d->finalized) return standin_refuse(CUDNN_STATUS_NOT_INITIALIZED, "heuristics not finalized");
        if (count) *count = 1;
        if (requested < 1 || !out) return CUDNN_STATUS_SUCCESS;
        desc *cfg = desc_of(((void **)out)[0]);
        if (cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "heuristic results into a non-config");
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
    const attr *a = attr_find(d, name);
    if (a) {
        if (a->type != type)
            return standin_refuse(CUDNN_STATUS_BAD_PARAM, "GetAttribute %d: type %d, set as %d", (int)name, (int)type,
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
    const int64_t zero = 0, engines = BLACKWELL_BPROP_ENGINE + 1, ws = wg ? wg->workspace : PLAN_WORKSPACE;
    switch ((int)name) {
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX: return answer(type, CUDNN_TYPE_INT64, requested, count, out, &zero, 1);
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &engines, 1);
    case CUDNN_ATTR_ENGINE_KNOB_INFO:
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
    case CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO: return answer(type, type, requested, count, out, NULL, 0);
    case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        if (!d->finalized)
            return standin_refuse(CUDNN_STATUS_NOT_INITIALIZED, "workspace of a descriptor not finalized");
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &ws, 1);
    case CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED:
        return answer(type, CUDNN_TYPE_INT64, requested, count, out, &zero, 1);
    default: break;
    }
    fprintf(stderr, "cudnn stand-in: GetAttribute of attribute %d (type %d) on descriptor type %d is not modelled\n",
            (int)name, (int)type, (int)d->type);
    return standin_refuse(CUDNN_STATUS_NOT_SUPPORTED, "GetAttribute %d of descriptor type %d is not modelled",
                          (int)name, (int)d->type);
}

void cudnn_standin_get_counts(cudnn_standin_counts *out)
{
    pthread_mutex_lock(&standin_mu);
    *out = standin_counts;
    pthread_mutex_unlock(&standin_mu);
}

__attribute__((destructor)) static void say_counts(void)
{
    if (getenv("CUDNN_STANDIN_VERBOSE"))
        fprintf(stderr, "cudnn stand-in: %ld graphs, %ld plans, %ld executions queued, %ld run\n",
                standin_counts.graphs, standin_counts.plans, standin_counts.executions, standin_counts.executions_run);
}
