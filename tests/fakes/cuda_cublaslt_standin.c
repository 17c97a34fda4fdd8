/* cuda_cublaslt_standin: see cuda_cublaslt_standin.h.  Every handle is a struct of ours behind
 * cuBLASLt's opaque pointer types, tagged so a handle of the wrong kind or one already destroyed
 * is caught.  Misuse is recorded in standin.violation (the first one) and answered with the status
 * the library documents (INVALID_VALUE, NOT_SUPPORTED). */
#include "cuda_cublaslt_standin.h"
#include "cuda_host_runtime.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>


standin_state standin;

static void violation(const char *fmt, ...)
{
    if (standin.violation[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(standin.violation, sizeof standin.violation, fmt, ap);
    va_end(ap);
}

void standin_reset(void)
{
    int objects = standin.live_objects;
    memset(&standin, 0, sizeof standin);
    standin.live_objects = objects; /* tracks the process */
}

/* Is [p + lo, p + hi) inside one cudaMalloc allocation (cuda_host_runtime.c registers them)? */
static int in_bounds(const void *p, long long lo, long long hi, const char *what)
{
    const char *c = p, *b;
    size_t size;
    if (!shim_device_allocation(p, &b, &size)) {
        violation("%s is not device memory", what);
        return 0;
    }
    if (c + lo >= b && c + hi <= b + size) return 1;
    violation("%s reaches bytes [%lld, %lld) of its pointer, outside its %zu-byte allocation (at offset %td)", what, lo,
              hi, size, c - b);
    return 0;
}

/* ---- element access ---- */
static size_t type_size(cudaDataType_t t) { return t == CUDA_R_16BF ? 2 : 4; }
static int type_ok(cudaDataType_t t) { return t == CUDA_R_16BF || t == CUDA_R_32F; }

static float load(const void *p, cudaDataType_t t, long long i)
{
    if (t == CUDA_R_32F) return ((const float *)p)[i];
    uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void store(void *p, cudaDataType_t t, long long i, float v)
{
    if (t == CUDA_R_32F) {
        ((float *)p)[i] = v;
        return;
    }
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u; /* NaN stays NaN */
    else u += 0x7fffu + ((u >> 16) & 1u);                 /* round to nearest even */
    ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
}

/* One column-major operand: element (i, j) of batch b at i + j*ld + b*stride. */
typedef struct {
    const void *p;
    cudaDataType_t t;
    long long rows, cols, ld, stride;
} operand;

static int operand_ok(const operand *o, int batch, const char *what)
{
    if (o->rows < 1 || o->cols < 1 || o->ld < o->rows) {
        violation("%s: %lld x %lld with leading dimension %lld (must be >= rows)", what, o->rows, o->cols, o->ld);
        return 0;
    }
    if (batch > 1 && o->stride < 0) {
        violation("%s: negative batch stride", what);
        return 0;
    }
    long long last = (o->rows - 1) + (o->cols - 1) * o->ld + (long long)(batch - 1) * o->stride;
    return in_bounds(o->p, 0, (last + 1) * (long long)type_size(o->t), what);
}

/* Element (i, j) of D: alpha acc + beta C (+ bias[i] of batch b, in D's dtype), rounded once. */
static void finish(double acc, float alpha, float beta, const operand *C, const operand *D, int b, long long i,
                   long long j, const void *bias, long long bias_stride)
{
    double v = alpha * acc;
    if (beta != 0) v += beta * (double)load(C->p, C->t, i + j * C->ld + b * C->stride);
    if (bias) v += load(bias, D->t, i + b * bias_stride);
    store((void *)D->p, D->t, i + j * D->ld + b * D->stride, (float)v);
}

/* D = alpha op(A) op(B) + beta C (+ bias[i] of batch b, in D's dtype), the fp32 sum in double then
 * rounded once; C is not read when beta is 0 (cuBLAS's rule), so a NaN there only shows if beta is
 * wrongly 1.  Each batch's op(A) rows and op(B) columns are first copied out as doubles, contiguous
 * in l, and four columns are summed side by side, each still in order of l: the same sums as one
 * element at a time, at the speed the real shapes of a ViT step need (cuda_vit_sim's shapes).  Not
 * profiled: under gcov (cuda_vit_sim's --coverage) a counter bumped atomically in the inner loop
 * made every GEMM ten times slower, and only the kernels' coverage is reported. */
__attribute__((noinline, no_profile_instrument_function)) static void
gemm_colmajor(int ta, int tb, long long m, long long n, long long k, float alpha, const operand *A, const operand *B,
              float beta, const operand *C, const operand *D, int batch, const void *bias, long long bias_stride)
{
    double *pa = malloc((size_t)(m * k) * sizeof *pa), *pb = malloc((size_t)(n * k) * sizeof *pb);
    if (!pa || !pb) {
        violation("out of host memory for a %lld x %lld x %lld GEMM", m, n, k);
        free(pa), free(pb);
        return;
    }
    for (int b = 0; b < batch; b++) {
        for (long long i = 0; i < m; i++) /* op(A) row i */
            for (long long l = 0; l < k; l++)
                pa[i * k + l] = load(A->p, A->t, (ta ? l + i * A->ld : i + l * A->ld) + b * A->stride);
        for (long long j = 0; j < n; j++) /* op(B) column j */
            for (long long l = 0; l < k; l++)
                pb[j * k + l] = load(B->p, B->t, (tb ? j + l * B->ld : l + j * B->ld) + b * B->stride);
        long long j = 0;
        for (; j + 4 <= n; j += 4) {
            const double *b0 = pb + j * k, *b1 = b0 + k, *b2 = b1 + k, *b3 = b2 + k;
            for (long long i = 0; i < m; i++) {
                const double *a = pa + i * k;
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (long long l = 0; l < k; l++)
                    s0 += a[l] * b0[l], s1 += a[l] * b1[l], s2 += a[l] * b2[l], s3 += a[l] * b3[l];
                finish(s0, alpha, beta, C, D, b, i, j, bias, bias_stride);
                finish(s1, alpha, beta, C, D, b, i, j + 1, bias, bias_stride);
                finish(s2, alpha, beta, C, D, b, i, j + 2, bias, bias_stride);
                finish(s3, alpha, beta, C, D, b, i, j + 3, bias, bias_stride);
            }
        }
        for (; j < n; j++)
            for (long long i = 0; i < m; i++) {
                double acc = 0;
                for (long long l = 0; l < k; l++) acc += pa[i * k + l] * pb[j * k + l];
                finish(acc, alpha, beta, C, D, b, i, j, bias, bias_stride);
            }
    }
    free(pa), free(pb);
}

/* One GEMM as work on its stream (cuda_host_runtime.c): the operands are read when it runs, in
 * stream order, not at the call. */
typedef struct gemm_op {
    int ta, tb, batch;
    long long m, n, k, bias_stride;
    float alpha, beta;
    operand A, B, C, D;
    const void *bias;      /* in D's dtype */
    unsigned long long ps; /* what it takes of the device's virtual clock, ps (its algorithm's speed) */
    int algo;              /* the heuristic's k-th; -1: cuBLAS's */
} gemm_op;

/* CUBLASLT_STANDIN_RUNS=PATH: one line appended to PATH per GEMM as it runs, not as it is queued,
 * so the runs a captured graph replays count, and say so: "algo=K replay=0|1 batch=.. M=.. N=..
 * K=.. beta=0|1" (K -1: cuBLAS; M, N, K in gemm.h's row-major terms, as CUDASIM_TRACE's).  What
 * tests/cuda/cuda_sim_cli.py reads to see which algorithm each replayed step runs. */
static void log_run(const gemm_op *g)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static FILE *f;
    static int looked;
    pthread_mutex_lock(&mu);
    if (!looked) {
        const char *path = getenv("CUBLASLT_STANDIN_RUNS");
        f = path && *path ? fopen(path, "a") : NULL;
        looked = 1;
    }
    if (f) {
        fprintf(f, "algo=%d replay=%d batch=%d M=%lld N=%lld K=%lld beta=%d\n", g->algo, shim_op_replayed(), g->batch,
                g->n, g->m, g->k, g->beta != 0);
        fflush(f);
    }
    pthread_mutex_unlock(&mu);
}

/* CUBLASLT_STANDIN_GFLOPS=R (> 0): a GEMM computes nothing and takes 2 m n k batch / R ns of the
 * device's virtual clock instead, a device whose speed the test sets (tests/cuda/gemm_rate_test.c:
 * the rate cuda/gemm_rate.c reports must be the timed loop's, not an estimate, on any machine). */
static double timed_gflops(void)
{
    const char *e = getenv("CUBLASLT_STANDIN_GFLOPS");
    const double r = e && *e ? strtod(e, NULL) : 0;
    return r > 0 ? r : 0;
}

static void gemm_run(void *p)
{
    const gemm_op *g = p;
    log_run(g);
    const double r = timed_gflops();
    if (r > 0) {
        shim_clock_advance((unsigned long long)llround(2.0 * g->m * g->n * g->k * g->batch / r * 1e3));
        return;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gemm_colmajor(g->ta, g->tb, g->m, g->n, g->k, g->alpha, &g->A, &g->B, g->beta, &g->C, &g->D, g->batch, g->bias,
                  g->bias_stride);
    /* an algorithm of a set speed takes exactly its time; any other the host's time computing it,
     * as a device takes time for every GEMM (gemm_rate's events read it) */
    if (g->ps) shim_clock_advance(g->ps);
    else {
        clock_gettime(CLOCK_MONOTONIC, &b);
        const long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        shim_clock_advance(ns > 0 ? (unsigned long long)ns * 1000ull : 1000ull);
    }
}

/* standin.n_algos and algo_gflops from CUBLASLT_STANDIN_ALGOS=G0,G1,... when no test set them. */
static void algos_from_env(void)
{
    const char *e = getenv("CUBLASLT_STANDIN_ALGOS");
    if (standin.n_algos || !e || !*e) return;
    char *end = (char *)e;
    for (int k = 0; k < STANDIN_MAX_ALGOS && *end; k++) {
        const double g = strtod(end, &end);
        if (!(g > 0)) break;
        standin.algo_gflops[standin.n_algos++] = g;
        if (*end == ',') end++;
    }
}

static cublasStatus_t queue_gemm(cudaStream_t s, const gemm_op *g)
{
    gemm_op *q = malloc(sizeof *q);
    if (!q) return CUBLAS_STATUS_ALLOC_FAILED;
    *q = *g;
    shim_enqueue(s, &(shim_work){gemm_run, NULL, free, q, NULL});
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- cuBLASLt objects ---- */
enum { TAG_HANDLE = 0x4c54, TAG_DESC, TAG_LAYOUT, TAG_PREF, TAG_ALGO, TAG_DEAD = 0xdead };

struct cublasLtContext {
    int tag;
};
typedef struct {
    int tag;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    int32_t transa, transb;
    uint32_t epilogue;
    const void *bias;
    int64_t bias_stride;
    int32_t bias_type;
} lt_desc;
typedef struct {
    int tag;
    cudaDataType_t t;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;
    int64_t stride;
} lt_layout;
typedef struct {
    int tag;
    uint64_t workspace;
    uint32_t align[4];
} lt_pref;

static void *object(size_t size, int tag)
{
    int *o = calloc(1, size);
    if (o) *o = tag, standin.live_objects++;
    return o;
}

static cublasStatus_t destroy(void *o, int tag)
{
    if (!o || *(int *)o != tag) {
        violation("destroy of a %s", o ? "handle of another kind or one destroyed twice" : "NULL handle");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    *(int *)o = TAG_DEAD;
    free(o);
    standin.live_objects--;
    return CUBLAS_STATUS_SUCCESS;
}

#define LIVE(o, tag, what)                                        \
    do {                                                          \
        if (!(o) || *(const int *)(o) != (tag)) {                 \
            violation("%s: not a live object of its kind", what); \
            return CUBLAS_STATUS_INVALID_VALUE;                   \
        }                                                         \
    } while (0)

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    if (standin.lt_create_fails) return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = object(sizeof **h, TAG_HANDLE);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { return destroy(h, TAG_HANDLE); }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *out, cublasComputeType_t compute, cudaDataType_t scale)
{
    lt_desc *d = object(sizeof *d, TAG_DESC);
    if (!d) return CUBLAS_STATUS_ALLOC_FAILED;
    d->compute = compute, d->scale = scale, d->transa = d->transb = CUBLAS_OP_N;
    d->epilogue = CUBLASLT_EPILOGUE_DEFAULT, d->bias_type = -1;
    *out = (cublasLtMatmulDesc_t)d;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return destroy(d, TAG_DESC); }

/* Attribute setters check the size as the library does: a wrong type is INVALID_VALUE. */
#define SET(dst, buf, size)                                                                                  \
    do {                                                                                                     \
        if ((size) != sizeof(dst)) {                                                                         \
            violation("attribute %d set with %zu bytes, wants %zu", (int)attr, (size_t)(size), sizeof(dst)); \
            return CUBLAS_STATUS_INVALID_VALUE;                                                              \
        }                                                                                                    \
        memcpy(&(dst), (buf), sizeof(dst));                                                                  \
        return CUBLAS_STATUS_SUCCESS;                                                                        \
    } while (0)

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    lt_desc *d = (lt_desc *)desc;
    LIVE(d, TAG_DESC, "cublasLtMatmulDescSetAttribute");
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: SET(d->transa, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB: SET(d->transb, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: SET(d->epilogue, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: SET(d->bias, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: SET(d->bias_stride, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: SET(d->bias_type, buf, size);
    default: violation("matmul attribute %d is not emulated", (int)attr); return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *out, cudaDataType t, uint64_t rows, uint64_t cols,
                                          int64_t ld)
{
    lt_layout *l = object(sizeof *l, TAG_LAYOUT);
    if (!l) return CUBLAS_STATUS_ALLOC_FAILED;
    l->t = t, l->rows = rows, l->cols = cols, l->ld = ld, l->batch = 1;
    *out = (cublasLtMatrixLayout_t)l;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { return destroy(l, TAG_LAYOUT); }

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    lt_layout *l = (lt_layout *)layout;
    LIVE(l, TAG_LAYOUT, "cublasLtMatrixLayoutSetAttribute");
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: SET(l->batch, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: SET(l->stride, buf, size);
    default: violation("layout attribute %d is not emulated", (int)attr); return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *out)
{
    lt_pref *p = object(sizeof *p, TAG_PREF);
    if (!p) return CUBLAS_STATUS_ALLOC_FAILED;
    for (int i = 0; i < 4; i++) p->align[i] = 256; /* the documented default: pointers 256-byte aligned */
    *out = (cublasLtMatmulPreference_t)p;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { return destroy(p, TAG_PREF); }

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                    size_t size)
{
    lt_pref *p = (lt_pref *)pref;
    LIVE(p, TAG_PREF, "cublasLtMatmulPreferenceSetAttribute");
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: SET(p->workspace, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: SET(p->align[0], buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: SET(p->align[1], buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: SET(p->align[2], buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: SET(p->align[3], buf, size);
    default: violation("preference attribute %d is not emulated", (int)attr); return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

/* The problem the four layouts and the descriptor describe: D m x n, op(A) m x k, op(B) k x n, one
 * batch count and type rules (A, B one type; C, D one type; fp32 compute and scale). */
static int problem_ok(const lt_desc *d, const lt_layout *a, const lt_layout *b, const lt_layout *c, const lt_layout *dd,
                      long long *m, long long *n, long long *k)
{
    if (d->compute != CUBLAS_COMPUTE_32F || d->scale != CUDA_R_32F) {
        violation("compute type %d / scale type %d: only CUBLAS_COMPUTE_32F with fp32 scale is emulated",
                  (int)d->compute, (int)d->scale);
        return 0;
    }
    if ((d->transa != CUBLAS_OP_N && d->transa != CUBLAS_OP_T) ||
        (d->transb != CUBLAS_OP_N && d->transb != CUBLAS_OP_T)) {
        violation("transpose mode %d/%d", d->transa, d->transb);
        return 0;
    }
    *m = (long long)dd->rows, *n = (long long)dd->cols;
    *k = (long long)(d->transa == CUBLAS_OP_T ? a->rows : a->cols);
    long long am = (long long)(d->transa == CUBLAS_OP_T ? a->cols : a->rows);
    long long bk = (long long)(d->transb == CUBLAS_OP_T ? b->cols : b->rows);
    long long bn = (long long)(d->transb == CUBLAS_OP_T ? b->rows : b->cols);
    if (am != *m || bk != *k || bn != *n || c->rows != dd->rows || c->cols != dd->cols) {
        violation("layouts disagree: op(A) %lld x %lld, op(B) %lld x %lld, C %llu x %llu, D %lld x %lld", am, *k, bk,
                  bn, (unsigned long long)c->rows, (unsigned long long)c->cols, *m, *n);
        return 0;
    }
    if (a->batch != b->batch || a->batch != c->batch || a->batch != dd->batch || a->batch < 1) {
        violation("batch counts differ: %d %d %d %d", a->batch, b->batch, c->batch, dd->batch);
        return 0;
    }
    if (a->t != b->t || c->t != dd->t || !type_ok(a->t) || !type_ok(c->t)) {
        violation("types A %d B %d C %d D %d", (int)a->t, (int)b->t, (int)c->t, (int)dd->t);
        return 0;
    }
    if (d->epilogue != CUBLASLT_EPILOGUE_DEFAULT && d->epilogue != CUBLASLT_EPILOGUE_BIAS) {
        violation("epilogue %u is not emulated", d->epilogue);
        return 0;
    }
    /* cublasLt.h: the bias vector has D's type (outside the IMMA and fp8 kernels, which gemm.c never
     * asks for); a bias type set to another is refused, as no kernel here would take it */
    if (d->epilogue == CUBLASLT_EPILOGUE_BIAS && d->bias_type != -1 && (cudaDataType_t)d->bias_type != dd->t) {
        violation("bias epilogue with a bias of type %d for a D of type %d", d->bias_type, (int)dd->t);
        return 0;
    }
    return 1;
}

static unsigned ptr_alignment(const void *p, long long stride_bytes, int batch)
{
    uintptr_t v = (uintptr_t)p | 256u;
    if (batch > 1) v |= (uintptr_t)stride_bytes;
    return (unsigned)(v & (~v + 1));
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t la,
                                              cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                                              cublasLtMatrixLayout_t ld, cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *found)
{
    standin.heuristic_calls++;
    LIVE(h, TAG_HANDLE, "heuristic handle");
    LIVE(desc, TAG_DESC, "heuristic desc");
    LIVE(la, TAG_LAYOUT, "heuristic A");
    LIVE(lb, TAG_LAYOUT, "heuristic B");
    LIVE(lc, TAG_LAYOUT, "heuristic C");
    LIVE(ld, TAG_LAYOUT, "heuristic D");
    LIVE(pref, TAG_PREF, "heuristic preference");
    long long m, n, k;
    if (requested < 1 || !found ||
        !problem_ok((lt_desc *)desc, (lt_layout *)la, (lt_layout *)lb, (lt_layout *)lc, (lt_layout *)ld, &m, &n, &k))
        return CUBLAS_STATUS_INVALID_VALUE;
    *found = 0;
    /* CUBLASLT_STANDIN_HEURISTIC=zero: no algorithm for any shape, for a whole program run (the
     * cudasim module under measure: tests/cuda/cuda_sim_cli.py) where no test sets standin.heuristic */
    const char *mode = getenv("CUBLASLT_STANDIN_HEURISTIC");
    switch (mode && !strcmp(mode, "zero") ? STANDIN_HEURISTIC_ZERO : standin.heuristic) {
    case STANDIN_HEURISTIC_ZERO: return CUBLAS_STATUS_SUCCESS;
    case STANDIN_HEURISTIC_NOT_SUPPORTED: return CUBLAS_STATUS_NOT_SUPPORTED;
    case STANDIN_HEURISTIC_FAIL: return CUBLAS_STATUS_INTERNAL_ERROR;
    case STANDIN_HEURISTIC_ALGO: break;
    }
    const lt_desc *d = (const lt_desc *)desc;
    /* cublasLt.h: the heuristic uses the bias pointer's value to know its alignment */
    if (d->epilogue == CUBLASLT_EPILOGUE_BIAS && !d->bias) {
        violation("a BIAS epilogue queried with a NULL bias pointer (the heuristic picks by its alignment)");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const lt_pref *p = (const lt_pref *)pref;
    algos_from_env();
    const int offered = standin.n_algos > 1 ? (standin.n_algos < requested ? standin.n_algos : requested) : 1;
    for (int a = 0; a < offered; a++) {
        memset(&results[a], 0, sizeof results[a]);
        /* the algorithm remembers the alignments it was chosen for and wants some workspace if allowed */
        results[a].algo.data[0] = TAG_ALGO;
        for (int i = 0; i < 4; i++) results[a].algo.data[1 + i] = p->align[i];
        results[a].workspaceSize = p->workspace >= 4096 ? 4096 : 0;
        results[a].algo.data[5] = results[a].workspaceSize;
        results[a].algo.data[6] = d->epilogue == CUBLASLT_EPILOGUE_BIAS ? ptr_alignment(d->bias, 0, 1) : 0;
        results[a].algo.data[7] = (uint64_t)a; /* which of the offered: its speed */
        results[a].state = standin.algo_unfit >> a & 1u ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
        results[a].wavesCount = 1.0f;
    }
    *found = offered;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t la, const void *B, cublasLtMatrixLayout_t lb, const void *beta,
                              const void *C, cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ldd,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_bytes, cudaStream_t s)
{
    standin.lt_matmuls++;
    LIVE(h, TAG_HANDLE, "cublasLtMatmul handle");
    LIVE(desc, TAG_DESC, "cublasLtMatmul desc");
    LIVE(la, TAG_LAYOUT, "cublasLtMatmul A");
    LIVE(lb, TAG_LAYOUT, "cublasLtMatmul B");
    LIVE(lc, TAG_LAYOUT, "cublasLtMatmul C");
    LIVE(ldd, TAG_LAYOUT, "cublasLtMatmul D");
    if (standin.matmul_not_supported) return CUBLAS_STATUS_NOT_SUPPORTED;
    const lt_desc *d = (const lt_desc *)desc;
    const lt_layout *a = (const lt_layout *)la, *b = (const lt_layout *)lb, *c = (const lt_layout *)lc,
                    *dd = (const lt_layout *)ldd;
    long long m, n, k;
    if (!problem_ok(d, a, b, c, dd, &m, &n, &k)) return CUBLAS_STATUS_INVALID_VALUE;
    if (!algo || algo->data[0] != TAG_ALGO || algo->data[7] >= STANDIN_MAX_ALGOS) {
        violation("cublasLtMatmul without an algorithm from the heuristic");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const int which = (int)algo->data[7];
    if (ws_bytes < algo->data[5] || (ws_bytes && !in_bounds(workspace, 0, (long long)ws_bytes, "workspace"))) {
        violation("workspace of %zu bytes, the algorithm wants %llu", ws_bytes, (unsigned long long)algo->data[5]);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    /* pointers (and batch strides) at least as aligned as the heuristic was promised */
    const void *ptrs[4] = {A, B, C, D};
    const lt_layout *lay[4] = {a, b, c, dd};
    for (int i = 0; i < 4; i++) {
        unsigned have = ptr_alignment(ptrs[i], lay[i]->stride * (long long)type_size(lay[i]->t), lay[i]->batch);
        if (have < algo->data[1 + i]) {
            violation("operand %c is %u-byte aligned, the algorithm was chosen for %llu", "ABCD"[i], have,
                      (unsigned long long)algo -> data[1 + i]);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
    }
    operand oa = {A, a->t, (long long)a->rows, (long long)a->cols, a->ld, a->stride};
    operand ob = {B, b->t, (long long)b->rows, (long long)b->cols, b->ld, b->stride};
    operand oc = {C, c->t, (long long)c->rows, (long long)c->cols, c->ld, c->stride};
    operand od = {D, dd->t, (long long)dd->rows, (long long)dd->cols, dd->ld, dd->stride};
    const float fa = *(const float *)alpha, fb = *(const float *)beta;
    if (!operand_ok(&oa, a->batch, "A") || !operand_ok(&ob, a->batch, "B") ||
        (fb != 0 && !operand_ok(&oc, a->batch, "C")) || !operand_ok(&od, a->batch, "D"))
        return CUBLAS_STATUS_INVALID_VALUE;
    const void *bias = NULL;
    if (d->epilogue == CUBLASLT_EPILOGUE_BIAS) {
        bias = d->bias;
        /* gemm.c's stated rule: the bias epilogue gets a 16-byte aligned vector */
        if (!bias || ((uintptr_t)bias & 15u)) {
            violation("bias epilogue with a %s bias pointer", bias ? "misaligned" : "NULL");
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        if (ptr_alignment(bias, 0, 1) < algo->data[6]) {
            violation("bias is %u-byte aligned, the algorithm was chosen for a %llu-byte aligned one",
                      ptr_alignment(bias, 0, 1), (unsigned long long)algo->data[6]);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        long long last = m - 1 + (long long)(a->batch - 1) * d->bias_stride;
        if (!in_bounds(bias, 0, (last + 1) * (long long)type_size(dd->t), "bias")) return CUBLAS_STATUS_INVALID_VALUE;
    }
    /* gemm.c's row-major C [M,N] is cuBLASLt's column-major D [m = N, n = M] */
    shim_trace("gemm batch=%d M=%lld N=%lld K=%lld ab=%s c=%s bias=%d", (int)a->batch, n, m, k,
               a->t == CUDA_R_16BF ? "bf16" : "fp32", dd->t == CUDA_R_16BF ? "bf16" : "fp32", bias != NULL);
    standin.lt_flops += 2.0 * m * n * k * a->batch;
    standin.algo_runs[which]++;
    const double g = standin.n_algos > 1 && which < standin.n_algos ? standin.algo_gflops[which] : 0;
    const unsigned long long ps = g > 0 ? (unsigned long long)llround(2.0 * m * n * k * a->batch / g * 1e3) : 0;
    const cublasStatus_t queued =
        queue_gemm(s, &(gemm_op){d->transa == CUBLAS_OP_T, d->transb == CUBLAS_OP_T, a->batch, m, n, k, d->bias_stride,
                                 fa, fb, oa, ob, oc, od, bias, ps, which});
    if (queued == CUBLAS_STATUS_SUCCESS && standin.after_matmul) standin.after_matmul(which);
    return queued;
}

/* ---- cuBLAS: the fallback's one call ---- */
struct cublasContext {
    int tag;
    cudaStream_t stream; /* cublasSetStream's: where its GEMMs run */
    void *workspace;     /* device memory, as cuBLAS allocates its default workspace in cublasCreate */
};
enum { TAG_BLAS = 0x424c };

/* cublasCreate allocates device memory (cudaMalloc), so, as on a GPU, it fails inside a stream
 * capture and invalidates it (tests/fakes/cuda_host_runtime.c): a handle must exist before capture. */
cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    void *ws = NULL;
    *h = NULL;
    if (cudaMalloc(&ws, 4096) != cudaSuccess) return CUBLAS_STATUS_ALLOC_FAILED;
    *h = object(sizeof **h, TAG_BLAS);
    if (!*h) {
        cudaFree(ws);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    (*h)->workspace = ws;
    standin.blas_handles++;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    void *ws = h && h->tag == TAG_BLAS ? h->workspace : NULL;
    cublasStatus_t st = destroy(h, TAG_BLAS);
    if (ws) cudaFree(ws);
    return st;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    LIVE(h, TAG_BLAS, "cublasSetStream");
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    standin.blas_gemms++;
    LIVE(h, TAG_BLAS, "cublasGemmStridedBatchedEx");
    if (compute != CUBLAS_COMPUTE_32F || at != bt || !type_ok(at) || !type_ok(ct) || batch < 1 ||
        (ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) || (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T)) {
        violation("cublasGemmStridedBatchedEx: compute %d, types %d/%d/%d, batch %d", (int)compute, (int)at, (int)bt,
                  (int)ct, batch);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    /* A stored m x k (k x m if transposed), B k x n (n x k), C m x n: the documented lda/ldb/ldc rules */
    operand oa = {A, at, ta == CUBLAS_OP_T ? k : m, ta == CUBLAS_OP_T ? m : k, lda, sa};
    operand ob = {B, bt, tb == CUBLAS_OP_T ? n : k, tb == CUBLAS_OP_T ? k : n, ldb, sb};
    operand oc = {C, ct, m, n, ldc, sc};
    const float fa = *(const float *)alpha, fb = *(const float *)beta;
    if (!operand_ok(&oa, batch, "A") || !operand_ok(&ob, batch, "B") || !operand_ok(&oc, batch, "C"))
        return CUBLAS_STATUS_INVALID_VALUE;
    return queue_gemm(h->stream, &(gemm_op){ta == CUBLAS_OP_T, tb == CUBLAS_OP_T, batch, m, n, k, 0, fa, fb, oa, ob, oc,
                                            oc, NULL, 0, -1});
}
