/* cuda/gemm: row-major GEMMs on cuBLASLt (column-major), through the operand swap of
 * cuda/gemm_plan.c: cuBLASLt's A is our B, its B is our A, m = N, n = M, k = K.
 * Should cuBLASLt's heuristic offer no algorithm for a shape (odd strides such as T = 197 rows of
 * bf16 attention scores leave only 2-byte alignment), that shape falls back to cuBLAS's
 * cublasGemmStridedBatchedEx, same compute type.  Where the bias epilogue cannot run (that
 * fallback, or a bias not 16-byte aligned), a kernel writes the bias into every row of C and the
 * GEMM accumulates onto it (beta 1): the same fp32 sum, rounded once into C's dtype, as the
 * epilogue's (a bf16 bias is exact in fp32). */
#include "cuda/gemm.h"

#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "cuda/check.h"
#include "cuda/kernels.h"

typedef struct gemm_key {
    cuda_gemm_desc d;
    unsigned alignA, alignB, alignC; /* bytes, power of two <= 256, of our (row-major) operands */
    unsigned alignBias;              /* the same of the epilogue's bias vector (0: no bias epilogue):
                                        * the heuristic chose for it (see entry_build) */
} gemm_key;

/* How many of the heuristic's algorithms a shape keeps: its first runs unless timing them is asked
 * (INSTBENCH_GEMM_TUNE=1, gemm_tune below). */
#define GEMM_CANDIDATES 8

typedef struct gemm_entry {
    gemm_key key;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc; /* cuBLASLt's A (our B), B (our A), C = D */
    cublasLtMatmulAlgo_t algo;         /* the one that runs: the heuristic's first, or the fastest timed */
    cublasLtMatmulAlgo_t candidates[GEMM_CANDIDATES];
    int n_candidates;
    int timed;       /* 1: the candidates were timed (or could not be): never again */
    int tuned;       /* 1: timing chose another than the heuristic's first */
    int fallback;    /* 1: no cuBLASLt algorithm, run through cuBLAS */
    int bias_kernel; /* 1: a bias of this shape was written into C by a kernel (no epilogue) */
} gemm_entry;

struct cuda_gemm {
    cublasLtHandle_t handle;
    cublasHandle_t blas; /* the fallback, created on first need */
    void *workspace;
    size_t workspace_bytes;
    gemm_entry *entries;
    size_t n, cap;
};

static cudaDataType_t dtype_of(int t) { return t == IB_PREC_BF16 ? CUDA_R_16BF : CUDA_R_32F; }
static size_t esize(int t) { return t == IB_PREC_BF16 ? 2 : 4; }

/* Largest power of two (<= 256) dividing the address and, for batches, the batch stride in bytes. */
static unsigned alignment(const void *p, long long stride_elems, size_t es, int batch)
{
    uintptr_t v = (uintptr_t)p | 256u;
    if (batch > 1) v |= (uintptr_t)(stride_elems * (long long)es);
    return (unsigned)(v & (~v + 1));
}

int cuda_gemm_create(cuda_gemm **out, size_t workspace_bytes, ib_error *err)
{
    *out = NULL;
    cuda_gemm *g = calloc(1, sizeof *g);
    if (!g) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
    if (cublaslt_check(cublasLtCreate(&g->handle), "cublasLtCreate", err)) {
        free(g);
        return -1;
    }
    g->workspace_bytes = workspace_bytes;
    if (workspace_bytes &&
        cuda_check(cudaMalloc(&g->workspace, workspace_bytes), "cudaMalloc(cuBLASLt workspace)", err)) {
        cublasLtDestroy(g->handle);
        free(g);
        return -1;
    }
    *out = g;
    return 0;
}

static void entry_free(gemm_entry *e)
{
    if (e->la) cublasLtMatrixLayoutDestroy(e->la);
    if (e->lb) cublasLtMatrixLayoutDestroy(e->lb);
    if (e->lc) cublasLtMatrixLayoutDestroy(e->lc);
    if (e->op) cublasLtMatmulDescDestroy(e->op);
}

void cuda_gemm_destroy(cuda_gemm *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) entry_free(&g->entries[i]);
    free(g->entries);
    if (g->workspace) cudaFree(g->workspace);
    if (g->blas) cublasDestroy(g->blas);
    cublasLtDestroy(g->handle);
    free(g);
}

static int make_layout(cublasLtMatrixLayout_t *l, int dt, const cuda_blas_operand *o, int batch, ib_error *err)
{
    CUBLASLT_TRY(cublasLtMatrixLayoutCreate(l, dtype_of(dt), (uint64_t)o->rows, (uint64_t)o->cols, (int64_t)o->ld));
    if (batch > 1) {
        int32_t bc = batch;
        int64_t st = o->stride;
        CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st, sizeof st));
    }
    return 0;
}

/* INSTBENCH_GEMM_TUNE=1: each shape runs the fastest of the heuristic's algorithms, timed here. */
static int tune_asked(void)
{
    const char *v = getenv("INSTBENCH_GEMM_TUNE");
    return v && !strcmp(v, "1");
}

/* Builds the descriptor, layouts and algorithm for one key (d already has defaults filled in);
 * bias: the epilogue's vector when k->d.bias (the heuristic reads it, see below). */
static int entry_build(cuda_gemm *g, const gemm_key *k, const void *bias, gemm_entry *e, ib_error *err)
{
    const cuda_gemm_desc *d = &k->d;
    cuda_gemm_plan p;
    cuda_gemm_plan_make(d, &p);
    memset(e, 0, sizeof *e);
    e->key = *k;
    CUBLASLT_TRY(cublasLtMatmulDescCreate(&e->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t opA = p.first.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = p.second.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA));
    CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB));
    if (d->bias) {
        /* bias[m] = our bias[N], in D's dtype (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE left at its default) */
        const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        /* before the heuristic: cublasLt.h says it uses the pointer's value to know its alignment
         * (a NULL there, as the matmul's own pointer set only at launch left it, can pick an
         * algorithm for a vector it never sees); the key carries that alignment, and every exec
         * sets its own pointer again */
        CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    if (make_layout(&e->la, d->ab, &p.first, p.batch, err) || make_layout(&e->lb, d->ab, &p.second, p.batch, err) ||
        make_layout(&e->lc, d->c, &p.out, p.batch, err))
        return -1;
    cublasLtMatmulPreference_t pref;
    CUBLASLT_TRY(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = g->workspace_bytes;
    uint32_t al_a = k->alignB, al_b = k->alignA, al_c = k->alignC;
    cublasLtMatmulHeuristicResult_t res[GEMM_CANDIDATES];
    int found = 0;
    cublasStatus_t st =
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(g->handle, e->op, e->la, e->lb, e->lc, e->lc, pref,
                                            tune_asked() ? GEMM_CANDIDATES : 1, res, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    /* "no algorithm" comes back either as zero results or as NOT_SUPPORTED (what cuBLASLt returns
     * for, e.g., a layout or epilogue no kernel of this arch takes): both mean fall back */
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) found = 0;
    else if (cublaslt_check(st, "cublasLtMatmulAlgoGetHeuristic", err)) return -1;
    if (found < 1) {
        ib_debug("cuBLASLt: no algorithm for the %s GEMM batch %d M %d N %d K %d (transA %d transB %d, alignment "
                 "%u/%u/%u bytes): using cuBLAS\n",
                 d->ab == IB_PREC_BF16 ? "bf16" : "fp32", d->batch, d->M, d->N, d->K, d->transA, d->transB, k->alignA,
                 k->alignB, k->alignC);
        if (!g->blas && cublaslt_check(cublasCreate(&g->blas), "cublasCreate", err)) return -1;
        e->fallback = 1;
        return 0;
    }
    for (int i = 0; i < found && i < GEMM_CANDIDATES; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) e->candidates[e->n_candidates++] = res[i].algo;
    if (!e->n_candidates) e->candidates[e->n_candidates++] = res[0].algo;
    e->algo = e->candidates[0];
    return 0;
}

/* Times E's candidates on this call's own operands and keeps the fastest in e->algo.
 *
 * Why: cuBLASLt's heuristic ranks algorithms by a model of the GPU, not by running them, and
 * its first is not always the fastest for a shape (a tile or split-K that suits one GPU and not
 * another): PyTorch's max-autotune and cuBLASLt's own samples time its top few.  Asked for, not by
 * default: the pick follows timings, so two runs may pick different algorithms, whose fp32 sums
 * differ in order; without it a run repeats bit for bit.
 *
 * Only where running a candidate several times changes nothing but C, and C is written whole by
 * the GEMM that follows: beta 0 (no accumulation onto C, no bias written into C first) and no
 * stream capture (a graph would record the timing runs).  A failure to time (no events) leaves
 * the heuristic's first: tuning is an optimisation, never a reason to fail.
 *
 * Fair to every candidate: each runs once first, timed alone, so the clocks have ramped and the
 * caches are warm before any is measured, and a candidate refused at launch is dropped; then two
 * rounds, the second in reverse order, each candidate `reps` runs between two events, its best
 * round kept; reps makes a round last about GEMM_TUNE_ROUND_MS on the fastest single run, so a
 * GEMM of microseconds is timed over enough launches to outweigh their cost.  Another than the
 * heuristic's first is kept only when at least GEMM_TUNE_GAIN faster: a closer race is noise. */
#define GEMM_TUNE_ROUND_MS 0.5f
#define GEMM_TUNE_MIN_REPS 3
#define GEMM_TUNE_MAX_REPS 200
#define GEMM_TUNE_GAIN 0.03f

/* REPS runs of algorithm A between events T0 and T1: *MS their time.  1: refused at launch. */
static int tune_time(cuda_gemm *g, gemm_entry *e, const cublasLtMatmulAlgo_t *a, const void *A, const void *B, void *C,
                     cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int reps, float *ms, ib_error *err)
{
    const float alpha = 1.0f, beta = 0.0f;
    if (cuda_check(cudaEventRecord(t0, s), "cudaEventRecord", err)) return -1;
    for (int r = 0; r < reps; r++) {
        cublasStatus_t st = cublasLtMatmul(g->handle, e->op, &alpha, B, e->la, A, e->lb, &beta, C, e->lc, C, e->lc, a,
                                           g->workspace, g->workspace_bytes, s);
        if (st == CUBLAS_STATUS_NOT_SUPPORTED && r == 0) return 1;
        if (cublaslt_check(st, "cublasLtMatmul (timing the heuristic's algorithms)", err)) return -1;
    }
    if (cuda_check(cudaEventRecord(t1, s), "cudaEventRecord", err) ||
        cuda_check(cudaEventSynchronize(t1), "cudaEventSynchronize", err) ||
        cuda_check(cudaEventElapsedTime(ms, t0, t1), "cudaEventElapsedTime", err))
        return -1;
    return 0;
}

static int gemm_tune(cuda_gemm *g, gemm_entry *e, const void *A, const void *B, void *C, cudaStream_t s, ib_error *err)
{
    e->timed = 1;
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        e->timed = 0; /* a later eager call may time it */
        return 0;
    }
    cudaEvent_t t0 = NULL, t1 = NULL;
    if (cudaEventCreateWithFlags(&t0, cudaEventDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&t1, cudaEventDefault) != cudaSuccess) {
        cudaGetLastError();
        if (t0) cudaEventDestroy(t0);
        ib_debug("cuBLASLt: no events to time the GEMM batch %d M %d N %d K %d: its heuristic's first algorithm runs\n",
                 e->key.d.batch, e->key.d.M, e->key.d.N, e->key.d.K);
        return 0;
    }
    float best[GEMM_CANDIDATES], one = 0, fastest = 0;
    int usable[GEMM_CANDIDATES], rc = 0;
    for (int i = 0; i < e->n_candidates && !rc; i++) { /* warm-up, and which run at all */
        rc = tune_time(g, e, &e->candidates[i], A, B, C, s, t0, t1, 1, &one, err);
        usable[i] = rc == 0;
        if (rc == 1) rc = 0;
        else if (!rc && (fastest <= 0 || one < fastest)) fastest = one;
        best[i] = -1;
    }
    int reps = fastest > 0 ? (int)(GEMM_TUNE_ROUND_MS / fastest) + 1 : GEMM_TUNE_MIN_REPS;
    reps = reps < GEMM_TUNE_MIN_REPS ? GEMM_TUNE_MIN_REPS : reps > GEMM_TUNE_MAX_REPS ? GEMM_TUNE_MAX_REPS : reps;
    for (int round = 0; round < 2 && !rc; round++)
        for (int j = 0; j < e->n_candidates && !rc; j++) {
            const int i = round ? e->n_candidates - 1 - j : j;
            float ms = 0;
            if (!usable[i]) continue;
            rc = tune_time(g, e, &e->candidates[i], A, B, C, s, t0, t1, reps, &ms, err);
            if (rc == 1) usable[i] = 0, rc = 0; /* refused only now: out of the race */
            else if (!rc && (best[i] < 0 || ms < best[i])) best[i] = ms;
        }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    if (rc) return -1;
    int pick = -1;
    for (int i = 0; i < e->n_candidates; i++)
        if (usable[i] && best[i] >= 0 && (pick < 0 || best[i] < best[pick])) pick = i;
    /* the heuristic's first stays unless another beats it by GEMM_TUNE_GAIN (or it cannot run) */
    if (pick > 0 && usable[0] && best[0] >= 0 && best[pick] > (1.0f - GEMM_TUNE_GAIN) * best[0]) pick = 0;
    if (pick > 0) {
        e->algo = e->candidates[pick];
        e->tuned = 1;
        if (usable[0] && best[0] >= 0)
            ib_debug("cuBLASLt: the GEMM batch %d M %d N %d K %d runs the heuristic's algorithm %d of %d: %.4f ms "
                     "against its first's %.4f (best of 2 rounds of %d runs)\n",
                     e->key.d.batch, e->key.d.M, e->key.d.N, e->key.d.K, pick + 1, e->n_candidates, best[pick] / reps,
                     best[0] / reps, reps);
        else
            ib_debug("cuBLASLt: the GEMM batch %d M %d N %d K %d runs the heuristic's algorithm %d of %d: its first "
                     "was refused at launch\n",
                     e->key.d.batch, e->key.d.M, e->key.d.N, e->key.d.K, pick + 1, e->n_candidates);
    }
    return 0;
}

/* The bias the epilogue would have added (the same bias[N] to every row of every batch, as the
 * epilogue's bias batch stride 0 does), written into C[b] (M x N, row stride ldc) for the GEMM to
 * accumulate onto. */
static int fill_bias_per_batch(const cuda_gemm_desc *d, void *C, const void *bias, cudaStream_t s, ib_error *err)
{
    for (int b = 0; b < d->batch; b++)
        CUDA_TRY(cuk_fill_bias((char *)C + (size_t)b * (size_t)d->strideC * esize(d->c), (ib_precision)d->c, bias, d->M,
                               d->N, d->ldc, s));
    return 0;
}

int cuda_gemm_exec(cuda_gemm *g, const cuda_gemm_desc *in, const void *A, const void *B, void *C, const void *bias,
                   cudaStream_t s, ib_error *err)
{
    gemm_key k;
    memset(&k, 0, sizeof k); /* the key is compared with memcmp: copy fields, never padding */
    cuda_gemm_desc *d = &k.d;
    d->batch = in->batch, d->M = in->M, d->N = in->N, d->K = in->K, d->ab = in->ab, d->c = in->c;
    d->transA = in->transA, d->transB = in->transB, d->lda = in->lda, d->ldb = in->ldb, d->ldc = in->ldc;
    d->strideA = in->strideA, d->strideB = in->strideB, d->strideC = in->strideC, d->accumulate = in->accumulate;
    cuda_gemm_desc_defaults(d);
    if (bias && d->accumulate) return ib_error_set(err, IB_EXIT_RUNTIME, "cuda_gemm: a bias with an accumulating GEMM");
    /* cuBLASLt's bias epilogue wants a 16-byte aligned vector (parameters of odd widths may not
     * be): then the GEMM accumulates onto the bias written into C (fill_bias_per_batch) */
    const void *late_bias = bias && ((uintptr_t)bias & 15u) ? bias : NULL;
    if (late_bias) bias = NULL, d->accumulate = 1;
    d->bias = bias != NULL;
    k.alignA = alignment(A, d->strideA, esize(d->ab), d->batch);
    k.alignB = alignment(B, d->strideB, esize(d->ab), d->batch);
    k.alignC = alignment(C, d->strideC, esize(d->c), d->batch);
    k.alignBias = bias ? alignment(bias, 0, esize(d->c), 1) : 0;
    gemm_entry *e = NULL;
    for (size_t i = 0; i < g->n && !e; i++)
        if (!memcmp(&g->entries[i].key, &k, sizeof k)) e = &g->entries[i];
    if (!e) {
        if (g->n == g->cap) {
            size_t cap = g->cap ? 2 * g->cap : 32;
            gemm_entry *ne = realloc(g->entries, cap * sizeof *ne);
            if (!ne) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory");
            g->entries = ne, g->cap = cap;
        }
        e = &g->entries[g->n];
        if (entry_build(g, &k, bias, e, err)) {
            entry_free(e);
            return -1;
        }
        g->n++;
    }
    const float alpha = 1.0f;
    if ((late_bias || (bias && e->fallback)) && !e->bias_kernel) {
        e->bias_kernel = 1;
        ib_debug("cuBLASLt: the bias of the GEMM batch %d M %d N %d K %d written by a kernel (%s), then accumulated "
                 "onto\n",
                 d->batch, d->M, d->N, d->K, late_bias ? "not 16-byte aligned" : "no epilogue on cuBLAS");
    }
    if (e->fallback) { /* the same plan: cuBLAS's A = our B, its B = our A; the bias, if any, in C first */
        const void *fb = bias ? bias : late_bias;
        if (fb && fill_bias_per_batch(d, C, fb, s, err)) return -1;
        const float beta = d->accumulate || fb ? 1.0f : 0.0f;
        cuda_gemm_plan p;
        cuda_gemm_plan_make(d, &p);
        CUBLASLT_TRY(cublasSetStream(g->blas, s));
        CUBLASLT_TRY(cublasGemmStridedBatchedEx(g->blas, p.first.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                p.second.trans ? CUBLAS_OP_T : CUBLAS_OP_N, p.m, p.n, p.k, &alpha, B,
                                                dtype_of(d->ab), p.first.ld, p.first.stride, A, dtype_of(d->ab),
                                                p.second.ld, p.second.stride, &beta, C, dtype_of(d->c), p.out.ld,
                                                p.out.stride, p.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return 0;
    }
    if (late_bias && fill_bias_per_batch(d, C, late_bias, s, err)) return -1;
    const float beta = d->accumulate ? 1.0f : 0.0f;
    if (bias)
        CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    /* more than one candidate only when tuning was asked (entry_build) */
    if (!e->timed && e->n_candidates > 1 && !d->accumulate && gemm_tune(g, e, A, B, C, s, err)) return -1;
    /* cuBLASLt's A = our B, its B = our A; C and D are the same buffer */
    cublasStatus_t st = cublasLtMatmul(g->handle, e->op, &alpha, B, e->la, A, e->lb, &beta, C, e->lc, C, e->lc,
                                       &e->algo, g->workspace, g->workspace_bytes, s);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) { /* the heuristic's pick refused at launch: use cuBLAS */
        ib_debug("cuBLASLt: its algorithm for the GEMM batch %d M %d N %d K %d refused at launch: using cuBLAS\n",
                 d->batch, d->M, d->N, d->K);
        if (!g->blas && cublaslt_check(cublasCreate(&g->blas), "cublasCreate", err)) return -1;
        e->fallback = 1;
        return cuda_gemm_exec(g, in, A, B, C, bias ? bias : late_bias, s, err);
    }
    return cublaslt_check(st, "cublasLtMatmul", err) ? -1 : 0;
}

void cuda_gemm_paths(const cuda_gemm *g, int *shapes, int *cublas_fallback, int *bias_kernel, int *tuned)
{
    *shapes = *cublas_fallback = *bias_kernel = *tuned = 0;
    for (size_t i = 0; g && i < g->n; i++) {
        ++*shapes;
        *cublas_fallback += g->entries[i].fallback;
        *bias_kernel += g->entries[i].bias_kernel;
        *tuned += g->entries[i].tuned && !g->entries[i].fallback;
    }
}
