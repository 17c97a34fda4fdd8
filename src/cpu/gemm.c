/* cpu/gemm: every matmul of the step through oneDNN's matmul primitive.  Creating a primitive
 * costs far more than running it, so each distinct descriptor (shape, strides, transposes, dtypes,
 * bias, accumulate) is created once and cached for the backend's lifetime; memory objects are
 * re-pointed per call.  Two ways to run: cpu_gemm_run uses every thread (oneDNN parallelises
 * inside); cpu_gemm_run_local runs one GEMM on the calling thread from inside an OpenMP parallel
 * region, with that thread's own memory objects, stream and scratchpad, so many small GEMMs
 * (attention, one per batch x head) run side by side without a fork/join each.
 *
 * bf16 without bf16 hardware: oneDNN has bf16 matmuls only where the CPU has AVX512-BF16, AMX
 * or (emulated inside oneDNN) AVX-512; on AVX2-only parts it has none.  There every bf16 GEMM
 * runs as an fp32 GEMM on operands widened from bf16 (exact: a bf16 value is an fp32 value with
 * the low 16 mantissa bits zero, and the product of two of them is exact in fp32), accumulates
 * in fp32 as a native bf16 GEMM does, and rounds a bf16 output to nearest even.  That is
 * autocast's arithmetic, only the summation order differs; the engine keeps its bf16 buffers. */
#include "cpu/ops.h"
#include "instbench/cpu.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct gemm_entry {
    cpu_gemm_desc key;
    int local;
    int widen;         /* bf16 operands widened to fp32 (no native bf16 matmul here) */
    size_t na, nb, nc; /* widened extents of A, B and (bf16 output only) C, in elements */
    size_t nbias;      /* the bias's (bf16 output with a bias only; it has C's dtype) */
    dnnl_primitive_t prim;
    /* [nthreads] for local entries, [1] otherwise */
    dnnl_memory_t *a, *b, *c, *bias, *scratch;
} gemm_entry;

struct cpu_gemm {
    dnnl_engine_t engine;
    dnnl_stream_t *streams; /* [nthreads]; streams[0] for the all-threads path */
    int nthreads;
    gemm_entry *e;
    int n, cap;
    void **scratch; /* [nthreads] per-thread scratchpads of local entries */
    size_t scratch_bytes;
    float **wide;     /* [nthreads] widened operands of bf16 GEMMs (slot 0: all-threads path) */
    size_t *wide_cap; /* [nthreads] their capacity in elements */
    char impl[160];
};

/* ---- does oneDNN have a bf16 matmul on this CPU (under DNNL_MAX_CPU_ISA)? asked once ---- */
static int bf16_native_flag;
static void bf16_probe(void)
{
    dnnl_engine_t eng;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success) return;
    dnnl_memory_desc_t a, b, c;
    dnnl_dims_t d = {16, 16};
    dnnl_matmul_desc_t md;
    dnnl_primitive_desc_t pd;
    if (dnnl_memory_desc_init_by_tag(&a, 2, d, dnnl_bf16, dnnl_ab) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&b, 2, d, dnnl_bf16, dnnl_ab) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&c, 2, d, dnnl_f32, dnnl_ab) == dnnl_success &&
        dnnl_matmul_desc_init(&md, &a, &b, NULL, &c) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL) == dnnl_success) {
        bf16_native_flag = 1;
        dnnl_primitive_desc_destroy(pd);
    }
    dnnl_engine_destroy(eng);
}

const char *cpu_gemm_unavailable(void) { return NULL; }

int cpu_bf16_native(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, bf16_probe);
    return bf16_native_flag;
}

/* Elements an operand spans as stored: batches of rows x ld, the last row only cols long. */
static size_t extent(int batch, int rows, int cols, int ld) { return ((size_t)batch * rows - 1) * ld + cols; }
static size_t pad16(size_t n) { return (n + 15) / 16 * 16; }

/* bf16 -> fp32 over n elements; all threads on the all-threads path, the caller's alone inside a
 * parallel region (local GEMMs). */
static void widen(float *dst, const void *src, size_t n, int parallel)
{
    if (parallel) cpu_widen_bf16(dst, (const bf16 *)src, n);
    else cpu_load_bf16(dst, (const bf16 *)src, n);
}

/* fp32 rows [M,N] (row stride ldc, batches back to back) -> bf16 C, rounded to nearest even;
 * only the N columns of each row, so a strided C keeps what lies between its rows. */
static void narrow(void *C, const float *src, int rows, int N, int ldc, int parallel)
{
    if (ldc == N) {
        if (parallel) cpu_convert_bf16((bf16 *)C, src, (size_t)rows * N);
        else cpu_store(C, IB_PREC_BF16, 0, src, (size_t)rows * N);
        return;
    }
#pragma omp parallel for schedule(static) if (parallel)
    for (long i = 0; i < rows; i++) cpu_store(C, IB_PREC_BF16, (size_t)i * ldc, src + (size_t)i * ldc, N);
}

/* Grows the widening buffers of threads [0, n) to hold need elements (outside any hot path:
 * entries are created before the loops that run them). */
static int wide_reserve(cpu_gemm *g, int n, size_t need)
{
    for (int t = 0; t < n; t++) {
        if (g->wide_cap[t] >= need) continue;
        free(g->wide[t]);
        g->wide[t] = aligned_alloc(64, need * sizeof(float));
        g->wide_cap[t] = g->wide[t] ? need : 0;
        if (!g->wide[t]) return -1;
    }
    return 0;
}

#define CHECK(call, what)                                                                               \
    do {                                                                                                \
        dnnl_status_t st_ = (call);                                                                     \
        if (st_ != dnnl_success)                                                                        \
            return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: %s failed (status %d)", what, (int)st_); \
    } while (0)

int cpu_gemm_create(cpu_gemm **out, int nthreads, ib_error *err)
{
    cpu_gemm *g = calloc(1, sizeof *g);
    if (!g) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    *out = g;
    g->nthreads = nthreads > 0 ? nthreads : omp_get_max_threads();
    g->streams = calloc(g->nthreads, sizeof *g->streams);
    g->scratch = calloc(g->nthreads, sizeof *g->scratch);
    g->wide = calloc(g->nthreads, sizeof *g->wide);
    g->wide_cap = calloc(g->nthreads, sizeof *g->wide_cap);
    if (!g->streams || !g->scratch || !g->wide || !g->wide_cap)
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    CHECK(dnnl_engine_create(&g->engine, dnnl_cpu, 0), "engine create");
    for (int t = 0; t < g->nthreads; t++)
        CHECK(dnnl_stream_create(&g->streams[t], g->engine, dnnl_stream_default_flags), "stream create");
    return 0;
}

static void destroy_mems(dnnl_memory_t *m, int n)
{
    if (!m) return;
    for (int i = 0; i < n; i++)
        if (m[i]) dnnl_memory_destroy(m[i]);
    free(m);
}

void cpu_gemm_destroy(cpu_gemm *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) {
        gemm_entry *e = &g->e[i];
        const int nm = e->local ? g->nthreads : 1;
        dnnl_primitive_destroy(e->prim);
        destroy_mems(e->a, nm), destroy_mems(e->b, nm), destroy_mems(e->c, nm);
        destroy_mems(e->bias, nm), destroy_mems(e->scratch, nm);
    }
    free(g->e);
    for (int t = 0; t < g->nthreads; t++) {
        if (g->streams && g->streams[t]) dnnl_stream_destroy(g->streams[t]);
        if (g->scratch) free(g->scratch[t]);
        if (g->wide) free(g->wide[t]);
    }
    free(g->streams);
    free(g->scratch);
    free(g->wide);
    free(g->wide_cap);
    if (g->engine) dnnl_engine_destroy(g->engine);
    free(g);
}

static dnnl_data_type_t dnnl_dt(int t) { return t == IB_PREC_BF16 ? dnnl_bf16 : dnnl_f32; }

static int entry_create(cpu_gemm *g, const cpu_gemm_desc *k, int local, gemm_entry *e, ib_error *err)
{
    /* widened entries are fp32 primitives over the same strides (see the file comment) */
    const int widen = k->ab == IB_PREC_BF16 && !cpu_bf16_native();
    const dnnl_data_type_t ab_dt = widen ? dnnl_f32 : dnnl_dt(k->ab), c_dt = widen ? dnnl_f32 : dnnl_dt(k->c);
    dnnl_memory_desc_t a_md, b_md, c_md, bias_md;
    const int nd = k->batch > 1 ? 3 : 2, o = nd - 2;
    dnnl_dims_t ad = {0}, as = {0}, bd = {0}, bs = {0}, cd = {0}, cs = {0};
    const dnnl_dim_t lda = k->lda, ldb = k->ldb, ldc = k->ldc;
    if (nd == 3) { /* batches packed back to back */
        ad[0] = bd[0] = cd[0] = k->batch;
        as[0] = (k->transA ? k->K : k->M) * lda;
        bs[0] = (k->transB ? k->N : k->K) * ldb;
        cs[0] = (dnnl_dim_t)k->M * ldc;
    }
    ad[o] = k->M, ad[o + 1] = k->K;
    as[o] = k->transA ? 1 : lda, as[o + 1] = k->transA ? lda : 1;
    bd[o] = k->K, bd[o + 1] = k->N;
    bs[o] = k->transB ? 1 : ldb, bs[o + 1] = k->transB ? ldb : 1;
    cd[o] = k->M, cd[o + 1] = k->N;
    cs[o] = ldc, cs[o + 1] = 1;
    CHECK(dnnl_memory_desc_init_by_strides(&a_md, nd, ad, ab_dt, as), "src desc");
    CHECK(dnnl_memory_desc_init_by_strides(&b_md, nd, bd, ab_dt, bs), "weights desc");
    CHECK(dnnl_memory_desc_init_by_strides(&c_md, nd, cd, c_dt, cs), "dst desc");
    if (k->bias) {
        dnnl_dims_t bb = {1, 1, 1};
        bb[nd - 1] = k->N;
        /* the bias has C's dtype (widened with it where C is) */
        CHECK(dnnl_memory_desc_init_by_tag(&bias_md, nd, bb, c_dt, nd == 3 ? dnnl_abc : dnnl_ab), "bias desc");
    }
    dnnl_matmul_desc_t md;
    CHECK(dnnl_matmul_desc_init(&md, &a_md, &b_md, k->bias ? &bias_md : NULL, &c_md), "matmul desc");
    dnnl_primitive_attr_t attr;
    CHECK(dnnl_primitive_attr_create(&attr), "attr");
    if (local) CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user), "scratchpad mode");
    if (k->accumulate) {
        dnnl_post_ops_t po;
        CHECK(dnnl_post_ops_create(&po), "post ops");
        CHECK(dnnl_post_ops_append_sum(po, 1.0f), "sum post op");
        CHECK(dnnl_primitive_attr_set_post_ops(attr, po), "set post ops");
        dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &md, attr, g->engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: no matmul for %s %dx%dx%d batch %d (status %d)",
                            k->ab == IB_PREC_BF16 ? "bf16" : "f32", k->M, k->N, k->K, k->batch, (int)st);
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
        snprintf(g->impl, sizeof g->impl, "%s%s", widen ? "bf16 widened to f32: " : "", impl);
    const dnnl_memory_desc_t *sp_md = local ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
    dnnl_memory_desc_t sp = sp_md ? *sp_md : (dnnl_memory_desc_t){0};
    const size_t sp_bytes = sp_md ? dnnl_memory_desc_get_size(sp_md) : 0;
    st = dnnl_primitive_create(&e->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: primitive create failed (%d)", st);
    e->key = *k;
    e->local = local;
    e->widen = widen;
    const int nm = local ? g->nthreads : 1;
    if (widen) {
        e->na = extent(k->batch, k->transA ? k->K : k->M, k->transA ? k->M : k->K, k->lda);
        e->nb = extent(k->batch, k->transB ? k->N : k->K, k->transB ? k->K : k->N, k->ldb);
        e->nc = k->c == IB_PREC_BF16 ? extent(k->batch, k->M, k->N, k->ldc) : 0;
        e->nbias = k->c == IB_PREC_BF16 && k->bias ? (size_t)k->N : 0;
        if (wide_reserve(g, nm, pad16(e->na) + pad16(e->nb) + pad16(e->nc) + pad16(e->nbias)))
            return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory (bf16 GEMM operands widened to fp32)");
    }
    e->a = calloc(nm, sizeof *e->a), e->b = calloc(nm, sizeof *e->b), e->c = calloc(nm, sizeof *e->c);
    e->bias = calloc(nm, sizeof *e->bias), e->scratch = calloc(nm, sizeof *e->scratch);
    if (!e->a || !e->b || !e->c || !e->bias || !e->scratch) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (sp_bytes > g->scratch_bytes) {
        for (int t = 0; t < g->nthreads; t++) {
            free(g->scratch[t]);
            g->scratch[t] = aligned_alloc(64, (sp_bytes + 63) / 64 * 64);
            if (!g->scratch[t]) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        }
        g->scratch_bytes = sp_bytes;
    }
    for (int t = 0; t < nm; t++) {
        CHECK(dnnl_memory_create(&e->a[t], &a_md, g->engine, DNNL_MEMORY_NONE), "memory");
        CHECK(dnnl_memory_create(&e->b[t], &b_md, g->engine, DNNL_MEMORY_NONE), "memory");
        CHECK(dnnl_memory_create(&e->c[t], &c_md, g->engine, DNNL_MEMORY_NONE), "memory");
        if (k->bias) CHECK(dnnl_memory_create(&e->bias[t], &bias_md, g->engine, DNNL_MEMORY_NONE), "memory");
        if (sp_bytes) CHECK(dnnl_memory_create(&e->scratch[t], &sp, g->engine, DNNL_MEMORY_NONE), "memory");
    }
    ib_debug("gemm %s->%s %dx%dx%d batch %d tA %d tB %d ld %d/%d/%d%s: %s", k->ab == IB_PREC_BF16 ? "bf16" : "f32",
             k->c == IB_PREC_BF16 ? "bf16" : "f32", k->M, k->N, k->K, k->batch, k->transA, k->transB, k->lda, k->ldb,
             k->ldc, local ? " local" : "", g->impl);
    return 0;
}

/* Fills defaults (leading dims of dense operands) so equal shapes share one cache entry. */
static void normalise(cpu_gemm_desc *k)
{
    if (k->batch < 1) k->batch = 1;
    if (!k->lda) k->lda = k->transA ? k->M : k->K;
    if (!k->ldb) k->ldb = k->transB ? k->K : k->N;
    if (!k->ldc) k->ldc = k->N;
    k->transA = !!k->transA, k->transB = !!k->transB, k->bias = !!k->bias, k->accumulate = !!k->accumulate;
}

static int find_or_create(cpu_gemm *g, const cpu_gemm_desc *d, int local, int *index, ib_error *err)
{
    cpu_gemm_desc k;
    memset(&k, 0, sizeof k);
    k.batch = d->batch, k.M = d->M, k.N = d->N, k.K = d->K, k.ab = d->ab, k.c = d->c;
    k.transA = d->transA, k.transB = d->transB, k.lda = d->lda, k.ldb = d->ldb, k.ldc = d->ldc;
    k.bias = d->bias, k.accumulate = d->accumulate;
    normalise(&k);
    for (int i = 0; i < g->n; i++)
        if (g->e[i].local == local && !memcmp(&g->e[i].key, &k, sizeof k)) {
            *index = i;
            return 0;
        }
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 32;
        gemm_entry *ne = realloc(g->e, cap * sizeof *ne);
        if (!ne) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
        g->e = ne, g->cap = cap;
    }
    gemm_entry *e = &g->e[g->n];
    memset(e, 0, sizeof *e);
    if (entry_create(g, &k, local, e, err)) {
        gemm_entry tmp = *e; /* keep partial objects reachable for destroy */
        g->e[g->n++] = tmp;
        return -1;
    }
    *index = g->n++;
    return 0;
}

static int execute(cpu_gemm *g, gemm_entry *e, int t, const void *A, const void *B, void *C, const void *bias)
{
    void *C_out = C;
    if (e->widen) {
        const int par = !e->local;
        float *wa = g->wide[t], *wb = wa + pad16(e->na), *wc = wb + pad16(e->nb), *wbias = wc + pad16(e->nc);
        widen(wa, A, e->na, par), widen(wb, B, e->nb, par);
        A = wa, B = wb;
        if (e->nbias && bias) { /* a bf16 bias, exact in fp32 as the operands are */
            cpu_load_bf16(wbias, (const bf16 *)bias, e->nbias);
            bias = wbias;
        }
        if (e->nc) { /* bf16 output: the fp32 result lands in wc and is rounded into C below */
            if (e->key.accumulate) widen(wc, C, e->nc, par);
            C = wc;
        }
    }
    dnnl_memory_set_data_handle(e->a[t], (void *)A);
    dnnl_memory_set_data_handle(e->b[t], (void *)B);
    dnnl_memory_set_data_handle(e->c[t], C);
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, e->a[t]}, {DNNL_ARG_WEIGHTS, e->b[t]}, {DNNL_ARG_DST, e->c[t]}};
    int nargs = 3;
    if (bias) {
        dnnl_memory_set_data_handle(e->bias[t], (void *)bias);
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias[t]};
    }
    if (e->scratch[t]) {
        dnnl_memory_set_data_handle(e->scratch[t], g->scratch[t]);
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, e->scratch[t]};
    }
    dnnl_stream_t s = g->streams[e->local ? t : 0];
    if (dnnl_primitive_execute(e->prim, s, nargs, args) != dnnl_success) return -1;
    if (dnnl_stream_wait(s) != dnnl_success) return -1;
    if (e->widen && e->nc) narrow(C_out, C, e->key.batch * e->key.M, e->key.N, e->key.ldc, !e->local);
    return 0;
}

int cpu_gemm_exec(cpu_gemm *g, const cpu_gemm_desc *d, const void *A, const void *B, void *C, const void *bias,
                  ib_error *err)
{
    int i;
    if (find_or_create(g, d, 0, &i, err)) return -1;
    if (execute(g, &g->e[i], 0, A, B, C, bias))
        return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: matmul %dx%dx%d failed", d->M, d->N, d->K);
    return 0;
}

int cpu_gemm_prepare_local(cpu_gemm *g, const cpu_gemm_desc *d, int *handle, ib_error *err)
{
    return find_or_create(g, d, 1, handle, err);
}

int cpu_gemm_run_local(cpu_gemm *g, int handle, const void *A, const void *B, void *C, const void *bias)
{
    const int t = omp_get_thread_num();
    if (handle < 0 || handle >= g->n || t >= g->nthreads) return -1;
    return execute(g, &g->e[handle], t, A, B, C, bias);
}

int cpu_gemm_run(cpu_gemm *g, ib_precision dt, int batch, int M, int N, int K, const void *A, int transA, const void *B,
                 int transB, float *C, int ldc, const float *bias, int accumulate, ib_error *err)
{
    cpu_gemm_desc d = {batch, M, N, K, dt, IB_PREC_FP32, transA, transB, 0, 0, ldc, bias != NULL, accumulate};
    return cpu_gemm_exec(g, &d, A, B, C, bias, err);
}
