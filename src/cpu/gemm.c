/* cpu/gemm: every matmul of the step through oneDNN's matmul primitive.  Creating a primitive
 * costs far more than running it, so each distinct (shape, transposes, dtype, bias, accumulate)
 * is created once and cached for the backend's lifetime; memory objects are re-pointed per call. */
#include "cpu/ops.h"

#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>

typedef struct gemm_key {
    int dt, batch, M, N, K, transA, transB, ldc, bias, accumulate;
} gemm_key;

typedef struct gemm_entry {
    gemm_key key;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c, bias;
} gemm_entry;

struct cpu_gemm {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    gemm_entry *e;
    int n, cap;
    char impl[128];
};

#define CHECK(call, what)                                                                                  \
    do {                                                                                                   \
        dnnl_status_t st_ = (call);                                                                        \
        if (st_ != dnnl_success) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: %s failed (status %d)", \
                                                     what, (int)st_);                                       \
    } while (0)

int cpu_gemm_create(cpu_gemm **out, ib_error *err)
{
    cpu_gemm *g = calloc(1, sizeof *g);
    if (!g) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    *out = g;
    CHECK(dnnl_engine_create(&g->engine, dnnl_cpu, 0), "engine create");
    CHECK(dnnl_stream_create(&g->stream, g->engine, dnnl_stream_default_flags), "stream create");
    return 0;
}

void cpu_gemm_destroy(cpu_gemm *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) {
        gemm_entry *e = &g->e[i];
        dnnl_primitive_destroy(e->prim);
        dnnl_memory_destroy(e->a);
        dnnl_memory_destroy(e->b);
        dnnl_memory_destroy(e->c);
        if (e->bias) dnnl_memory_destroy(e->bias);
    }
    free(g->e);
    if (g->stream) dnnl_stream_destroy(g->stream);
    if (g->engine) dnnl_engine_destroy(g->engine);
    free(g);
}

const char *cpu_gemm_last_impl(const cpu_gemm *g) { return g->impl; }

static int entry_create(cpu_gemm *g, const gemm_key *k, gemm_entry *e, ib_error *err)
{
    dnnl_data_type_t dt = k->dt == CPU_BF16 ? dnnl_bf16 : dnnl_f32;
    dnnl_memory_desc_t a_md, b_md, c_md, bias_md;
    const int nd = k->batch > 1 ? 3 : 2, o = nd - 2;
    dnnl_dims_t ad = {0}, as = {0}, bd = {0}, bs = {0}, cd = {0}, cs = {0};
    if (nd == 3) {
        ad[0] = bd[0] = cd[0] = k->batch;
        as[0] = (dnnl_dim_t)k->M * k->K;
        bs[0] = (dnnl_dim_t)k->K * k->N;
        cs[0] = (dnnl_dim_t)k->M * k->ldc;
    }
    ad[o] = k->M, ad[o + 1] = k->K;
    as[o] = k->transA ? 1 : k->K, as[o + 1] = k->transA ? k->M : 1;
    bd[o] = k->K, bd[o + 1] = k->N;
    bs[o] = k->transB ? 1 : k->N, bs[o + 1] = k->transB ? k->K : 1;
    cd[o] = k->M, cd[o + 1] = k->N;
    cs[o] = k->ldc, cs[o + 1] = 1;
    CHECK(dnnl_memory_desc_init_by_strides(&a_md, nd, ad, dt, as), "src desc");
    CHECK(dnnl_memory_desc_init_by_strides(&b_md, nd, bd, dt, bs), "weights desc");
    CHECK(dnnl_memory_desc_init_by_strides(&c_md, nd, cd, dnnl_f32, cs), "dst desc");
    if (k->bias) {
        dnnl_dims_t bb = {1, 1, 1};
        bb[nd - 1] = k->N;
        CHECK(dnnl_memory_desc_init_by_tag(&bias_md, nd, bb, dnnl_f32, nd == 3 ? dnnl_abc : dnnl_ab), "bias desc");
    }
    dnnl_matmul_desc_t md;
    CHECK(dnnl_matmul_desc_init(&md, &a_md, &b_md, k->bias ? &bias_md : NULL, &c_md), "matmul desc");
    dnnl_primitive_attr_t attr;
    CHECK(dnnl_primitive_attr_create(&attr), "attr");
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
                            k->dt == CPU_BF16 ? "bf16" : "f32", k->M, k->N, k->K, k->batch, (int)st);
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
        snprintf(g->impl, sizeof g->impl, "%s", impl);
    st = dnnl_primitive_create(&e->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) return ib_error_set(err, IB_EXIT_RUNTIME, "oneDNN: primitive create failed (%d)", st);
    CHECK(dnnl_memory_create(&e->a, &a_md, g->engine, DNNL_MEMORY_NONE), "memory");
    CHECK(dnnl_memory_create(&e->b, &b_md, g->engine, DNNL_MEMORY_NONE), "memory");
    CHECK(dnnl_memory_create(&e->c, &c_md, g->engine, DNNL_MEMORY_NONE), "memory");
    if (k->bias) CHECK(dnnl_memory_create(&e->bias, &bias_md, g->engine, DNNL_MEMORY_NONE), "memory");
    e->key = *k;
    ib_debug("gemm %s %dx%dx%d batch %d tA %d tB %d: %s", k->dt == CPU_BF16 ? "bf16" : "f32", k->M, k->N, k->K,
             k->batch, k->transA, k->transB, g->impl);
    return 0;
}

int cpu_gemm_run(cpu_gemm *g, cpu_dtype dt, int batch, int M, int N, int K, const void *A, int transA,
                 const void *B, int transB, float *C, int ldc, const float *bias, int accumulate, ib_error *err)
{
    gemm_key k;
    memset(&k, 0, sizeof k);
    k.dt = dt, k.batch = batch, k.M = M, k.N = N, k.K = K, k.transA = !!transA, k.transB = !!transB;
    k.ldc = ldc, k.bias = bias != NULL, k.accumulate = !!accumulate;
    gemm_entry *e = NULL;
    for (int i = 0; i < g->n; i++)
        if (!memcmp(&g->e[i].key, &k, sizeof k)) {
            e = &g->e[i];
            break;
        }
    if (!e) {
        if (g->n == g->cap) {
            int cap = g->cap ? 2 * g->cap : 32;
            gemm_entry *ne = realloc(g->e, cap * sizeof *ne);
            if (!ne) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            g->e = ne, g->cap = cap;
        }
        e = &g->e[g->n];
        memset(e, 0, sizeof *e);
        if (entry_create(g, &k, e, err)) return -1;
        g->n++;
    }
    dnnl_memory_set_data_handle(e->a, (void *)A);
    dnnl_memory_set_data_handle(e->b, (void *)B);
    dnnl_memory_set_data_handle(e->c, C);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, e->a}, {DNNL_ARG_WEIGHTS, e->b}, {DNNL_ARG_DST, e->c}};
    int nargs = 3;
    if (bias) {
        dnnl_memory_set_data_handle(e->bias, (void *)bias);
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias};
    }
    CHECK(dnnl_primitive_execute(e->prim, g->stream, nargs, args), "matmul execute");
    CHECK(dnnl_stream_wait(g->stream), "stream wait");
    return 0;
}
