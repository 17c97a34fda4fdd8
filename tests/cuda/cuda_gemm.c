/* cuda_gemm: src/cuda/gemm.c, unmodified, on the cuBLASLt/cuBLAS stand-in of
 * cuda_cublaslt_standin.c, against a row-major product written here from gemm.h's contract:
 *   C[b] (M x N, row stride ldc) = op(A[b]) (M x K) op(B[b]) (K x N) (+ bias[N]) (+ C if accumulate)
 * Random shapes, both transposes, padded leading dimensions, strided batches, bf16 and fp32, bias
 * (in C's dtype) aligned and not, accumulate, pointers of every alignment; each through the cuBLASLt path, the
 * heuristic answering zero results, the heuristic answering NOT_SUPPORTED, and the algorithm refused
 * at launch (the three roads to the cuBLAS fallback), with the road taken checked by the stand-in's
 * counters.  Also: the algorithm cache (one heuristic query per shape and alignment), the padding
 * columns of C untouched, errors named, nothing leaked. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "check.h"
#include "cuda/gemm.h"
#include "cuda/kernels.h"
#include "cuda_cublaslt_standin.h"
#include "cuda_host_runtime.h"
#include "instbench/precision.h"


static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}
static int pick(int lo, int hi) { return lo + (int)(next() % (uint32_t)(hi - lo + 1)); }
static float uniform(void) { return (float)next() / 4294967296.0f * 2.0f - 1.0f; }

static float bf16_to_f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint16_t f_to_bf16_trunc(float f) /* inputs only: any bf16 value will do */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

/* One operand in device memory sized exactly for what the contract lets the GEMM touch, at a byte
 * offset (to vary alignment) inside its allocation. */
typedef struct {
    char *alloc;
    void *p;
    size_t bytes;
} buf;

static buf make(size_t elems, size_t es, size_t offset_elems)
{
    buf b = {0};
    b.bytes = (elems + offset_elems) * es;
    if (cudaMalloc((void **)&b.alloc, b.bytes) != cudaSuccess) {
        fprintf(stderr, "stand-in cudaMalloc failed\n");
        exit(2);
    }
    b.p = b.alloc + offset_elems * es;
    return b;
}

static float get(const void *p, int dt, long long i)
{
    return dt == IB_PREC_BF16 ? bf16_to_f(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

typedef struct {
    cuda_gemm_desc d; /* as given to cuda_gemm_exec (zeros = defaults) */
    int M, N, K, batch, lda, ldb, ldc;
    long long sA, sB, sC; /* the effective values the reference uses */
    int bias_misaligned, offA, offB, offC;
} gemm_case;

static gemm_case random_case(void)
{
    gemm_case c;
    memset(&c, 0, sizeof c);
    cuda_gemm_desc *d = &c.d;
    c.M = pick(1, 24), c.N = pick(1, 24), c.K = pick(1, 24), c.batch = pick(1, 3);
    d->M = c.M, d->N = c.N, d->K = c.K, d->batch = c.batch == 1 && next() % 2 ? 0 : c.batch;
    d->ab = next() % 2 ? IB_PREC_BF16 : IB_PREC_FP32;
    d->bias = next() % 3 == 0;
    d->c = next() % 2 ? IB_PREC_FP32 : IB_PREC_BF16;
    d->transA = next() % 2, d->transB = next() % 2, d->accumulate = !d->bias && next() % 3 == 0;
    int padded = next() % 2;
    /* leading dimensions: dense (0 = default), or padded by a few elements */
    c.lda = (d->transA ? c.M : c.K) + (padded ? pick(1, 5) : 0);
    c.ldb = (d->transB ? c.K : c.N) + (padded ? pick(1, 5) : 0);
    c.ldc = c.N + (padded ? pick(1, 5) : 0);
    if (padded) d->lda = c.lda, d->ldb = c.ldb, d->ldc = c.ldc;
    long long rowsA = d->transA ? c.K : c.M, rowsB = d->transB ? c.N : c.K;
    /* batch strides: gemm_plan's defaults when dense, else the padded extent plus a gap */
    c.sA = padded ? rowsA * c.lda + pick(0, 7) : (long long)c.M * c.K;
    c.sB = padded ? rowsB * c.ldb + pick(0, 7) : (long long)c.K * c.N;
    c.sC = padded ? (long long)c.M * c.ldc + pick(0, 7) : (long long)c.M * c.ldc;
    if (padded) d->strideA = c.sA, d->strideB = c.sB, d->strideC = c.sC;
    c.offA = next() % 4 ? 0 : pick(1, 3), c.offB = next() % 4 ? 0 : pick(1, 3), c.offC = next() % 4 ? 0 : pick(1, 3);
    c.bias_misaligned = d->bias && next() % 2;
    return c;
}

static size_t extent(long long rows, long long ld, long long cols, long long stride, int batch)
{
    return (size_t)((batch - 1) * stride + (rows - 1) * ld + cols);
}

/* Runs one case through g; returns 0 when the result matches the reference. */
static int run_case(cuda_gemm *g, const gemm_case *c, const char *road)
{
    const cuda_gemm_desc *d = &c->d;
    size_t esab = d->ab == IB_PREC_BF16 ? 2 : 4, esc = d->c == IB_PREC_BF16 ? 2 : 4;
    long long rowsA = d->transA ? c->K : c->M, colsA = d->transA ? c->M : c->K;
    long long rowsB = d->transB ? c->N : c->K, colsB = d->transB ? c->K : c->N;
    size_t nA = extent(rowsA, c->lda, colsA, c->sA, c->batch), nB = extent(rowsB, c->ldb, colsB, c->sB, c->batch);
    size_t nC = extent(c->M, c->ldc, c->N, c->sC, c->batch);
    buf A = make(nA, esab, c->offA), B = make(nB, esab, c->offB), C = make(nC, esc, c->offC);
    buf bias = make((size_t)c->N, esc, c->bias_misaligned ? 1 : 0); /* the bias has C's dtype */
    for (size_t i = 0; i < nA; i++)
        if (esab == 2) ((uint16_t *)A.p)[i] = f_to_bf16_trunc(uniform());
        else ((float *)A.p)[i] = uniform();
    for (size_t i = 0; i < nB; i++)
        if (esab == 2) ((uint16_t *)B.p)[i] = f_to_bf16_trunc(uniform());
        else ((float *)B.p)[i] = uniform();
    /* C: values when accumulating; else NaN, which a wrongly read C (beta 1) would carry through;
     * every element is a sentinel the GEMM must leave alone unless it is inside the M x N window */
    float *before = malloc(nC * sizeof *before);
    for (size_t i = 0; i < nC; i++) {
        float v = d->accumulate ? uniform() : NAN;
        if (esc == 2) ((uint16_t *)C.p)[i] = f_to_bf16_trunc(v);
        else ((float *)C.p)[i] = v;
        before[i] = get(C.p, d->c, (long long)i);
    }
    for (int j = 0; j < c->N; j++)
        if (esc == 2) ((uint16_t *)bias.p)[j] = f_to_bf16_trunc(uniform());
        else ((float *)bias.p)[j] = uniform();

    ib_error err = {0};
    int rc = cuda_gemm_exec(g, d, A.p, B.p, C.p, d->bias ? bias.p : NULL, NULL, &err);
    int bad = 0;
    CHECK(rc == 0, "%s: cuda_gemm_exec failed: %s", road, err.msg);
    bad |= rc != 0;
    CHECK(!standin.violation[0], "%s: %s", road, standin.violation);
    bad |= standin.violation[0] != 0;
    for (int b = 0; b < c->batch && !bad; b++)
        for (long long i = 0; i < c->M; i++)
            for (long long j = 0; j < c->ldc && !bad; j++) {
                long long at = b * c->sC + i * c->ldc + j;
                if (i == c->M - 1 && j >= c->N) break; /* past the last row: not part of the extent */
                float got = get(C.p, d->c, at);
                if (j >= c->N) { /* padding between rows: untouched */
                    CHECK(memcmp(&got, &before[at], sizeof got) == 0, "%s: padding C[%d][%lld][%lld] written", road, b,
                          i, j);
                    bad |= memcmp(&got, &before[at], sizeof got) != 0;
                    continue;
                }
                double ref = 0, mag = 0;
                for (long long l = 0; l < c->K; l++) {
                    double a = get(A.p, d->ab, b * c->sA + (d->transA ? l * c->lda + i : i * c->lda + l));
                    double bb = get(B.p, d->ab, b * c->sB + (d->transB ? j * c->ldb + l : l * c->ldb + j));
                    ref += a * bb, mag += fabs(a * bb);
                }
                if (d->bias) ref += get(bias.p, d->c, j), mag += fabs(get(bias.p, d->c, j));
                if (d->accumulate) ref += before[at], mag += fabs(before[at]);
                double tol = (d->c == IB_PREC_BF16 ? ldexp(fabs(ref), -8) : 0) + 1e-6 * mag + 1e-30;
                if (!(fabs(got - ref) <= tol)) {
                    CHECK(0,
                          "%s: C[%d][%lld][%lld] = %.8g, want %.8g (M %d N %d K %d batch %d trans %d%d ab %d c %d "
                          "ld %d/%d/%d bias %d%s acc %d)",
                          road, b, i, j, got, ref, c->M, c->N, c->K, c->batch, d->transA, d->transB, d->ab, d->c,
                          c->lda, c->ldb, c->ldc, d->bias, c->bias_misaligned ? " misaligned" : "", d->accumulate);
                    bad = 1;
                }
            }
    free(before);
    cudaFree(A.alloc), cudaFree(B.alloc), cudaFree(C.alloc), cudaFree(bias.alloc);
    return bad;
}

/* The one kernel gemm.c launches, with kernels.h's semantics: every row of C [M, N] (row stride
 * ldc) = bias [N], both in dtype dt.  (cuda_vit_sim runs the real one.)  Counted: the shapes whose
 * bias it wrote are what cuda_gemm_paths must report as bias_kernel. */
static int fill_bias_calls;
cudaError_t cuk_fill_bias(void *C, ib_precision dt, const void *bias, int M, int N, int ldc, cudaStream_t s)
{
    (void)s;
    fill_bias_calls++;
    const char *b;
    size_t size;
    const size_t es = dt == IB_PREC_BF16 ? 2 : 4;
    if (M < 1 || N < 1 || ldc < N || !shim_device_allocation(C, &b, &size) ||
        (const char *)C + ((size_t)(M - 1) * ldc + N) * es > b + size || !shim_device_allocation(bias, &b, &size) ||
        (const char *)bias + N * es > b + size)
        return cudaErrorInvalidValue;
    for (long long i = 0; i < M; i++)
        for (long long j = 0; j < N; j++)
            if (es == 2) ((uint16_t *)C)[i * ldc + j] = ((const uint16_t *)bias)[j];
            else ((float *)C)[i * ldc + j] = ((const float *)bias)[j];
    return cudaSuccess;
}

typedef struct {
    const char *name;
    standin_heuristic h;
    int refuse;
    int want_lt, want_blas;
} road;

/* The runs of each algorithm on one call, RUNS after minus BEFORE: every candidate timed the same
 * number of times (at least 1 warm-up + 2 rounds of 3), the one chosen, CHOSEN, once more for the
 * result; or, untimed, only algorithm 1, once.  0 when so. */
static int runs_as_timed(const int *before, int timed, int chosen)
{
    int d[3];
    for (int k = 0; k < 3; k++) d[k] = standin.algo_runs[k] - before[k];
    if (!timed) return !(d[0] == 1 && d[1] == 0 && d[2] == 0);
    const int each = d[chosen == 0 ? 1 : 0];
    for (int k = 0; k < 3; k++)
        if (d[k] != each + (k == chosen)) return 1;
    return each < 7;
}

/* INSTBENCH_GEMM_TUNE=1 (gemm.c, gemm_tune): the heuristic offers three algorithms of set speeds
 * (the stand-in's virtual clock, so the timings are the same on any machine).  A shape's first
 * call times every candidate alike, then runs the fastest for the result; later calls run only
 * it.  One less than 3% faster than the heuristic's first does not replace it.  A GEMM that
 * accumulates onto C (accumulate, or a misaligned bias written into C first) is never timed: it
 * runs the heuristic's first, once.  Every result is checked against the reference (run_case), so
 * a timing run that left C wrong, or accumulated twice, fails there.  Without the variable, or
 * when the heuristic's first is the fastest, nothing counts as tuned; inside a stream capture
 * nothing is timed (the capture stays valid) and the next eager call times it. */
static void check_tuning(void)
{
    /* GFLOP/s of algorithms 1..3: the 2nd fastest; the 1st; the 3rd, but by 2% only.  A device of a
     * few kFLOP/s, so that even a GEMM of 2 flops lasts the 0.5 ms a timing round wants in one run:
     * each candidate then runs 1 + 2 x 3 times (as long as a real GPU's rounds, not 200 runs) */
    static const double speeds[3][3] = {{1e-6, 4e-6, 2e-6}, {4e-6, 1e-6, 2e-6}, {1e-6, 0.99e-6, 1.02e-6}};
    for (int mode = 0; mode < 4; mode++) { /* as speeds, then speeds[0] not asked */
        standin_reset();
        standin.n_algos = 3;
        memcpy(standin.algo_gflops, speeds[mode % 3], sizeof speeds[0]);
        if (mode < 3) setenv("INSTBENCH_GEMM_TUNE", "1", 1);
        else unsetenv("INSTBENCH_GEMM_TUNE");
        cuda_gemm *g = NULL;
        ib_error err = {0};
        CHECK(cuda_gemm_create(&g, (size_t)1 << 20, &err) == 0, "tuning: create: %s", err.msg);
        const int fast = mode == 0 ? 1 : 0; /* the one kept */
        int timed = 0, seen = 0;
        for (int i = 0; i < 40 && g; i++) {
            gemm_case c = random_case();
            const int accumulates = c.d.accumulate || c.bias_misaligned;
            int before[3];
            memcpy(before, standin.algo_runs, sizeof before);
            if (run_case(g, &c, "tuning")) break;
            const int timing = mode < 3 && !accumulates;
            timed += timing;
            CHECK(!runs_as_timed(before, timing, fast),
                  "tuning mode %d, case %d (accumulates %d): the algorithms ran %d, %d, %d times (want %s %d)", mode, i,
                  accumulates, standin.algo_runs[0] - before[0], standin.algo_runs[1] - before[1],
                  standin.algo_runs[2] - before[2], timing ? "each alike, once more:" : "only", fast + 1);
            memcpy(before, standin.algo_runs, sizeof before);
            if (run_case(g, &c, "tuning, the same shape again")) break;
            const int again = timing ? fast : 0;
            CHECK(standin.algo_runs[again] - before[again] == 1 &&
                      standin.algo_runs[0] + standin.algo_runs[1] + standin.algo_runs[2] ==
                          before[0] + before[1] + before[2] + 1,
                  "tuning mode %d, case %d: the second call did not run algorithm %d once", mode, i, again + 1);
            seen++;
        }
        int n_shapes, n_blas, n_fill, n_tuned;
        cuda_gemm_paths(g, &n_shapes, &n_blas, &n_fill, &n_tuned);
        CHECK(n_shapes == seen && n_tuned == (mode == 0 ? timed : 0) && (mode != 0 || timed > 0),
              "tuning mode %d: cuda_gemm_paths %d shapes, %d tuned; want %d, %d", mode, n_shapes, n_tuned, seen,
              mode == 0 ? timed : 0);
        cuda_gemm_destroy(g);
    }
    /* in a capture: recorded, not timed; the first eager call after it times the shape */
    standin_reset();
    standin.n_algos = 3;
    memcpy(standin.algo_gflops, speeds[0], sizeof speeds[0]);
    setenv("INSTBENCH_GEMM_TUNE", "1", 1);
    cuda_gemm *g = NULL;
    ib_error err = {0};
    cudaStream_t cs = NULL;
    cudaGraph_t graph = NULL;
    buf A = make(64, 4, 0), B = make(64, 4, 0), C = make(64, 4, 0);
    cuda_gemm_desc d = {.M = 8, .N = 8, .K = 8, .ab = IB_PREC_FP32, .c = IB_PREC_FP32};
    CHECK(cuda_gemm_create(&g, (size_t)1 << 20, &err) == 0 &&
              cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) == cudaSuccess &&
              cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) == cudaSuccess,
          "tuning in a capture: setup: %s", err.msg);
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, cs, &err) == 0, "tuning in a capture: %s", err.msg);
    CHECK(cudaStreamEndCapture(cs, &graph) == cudaSuccess && graph, "tuning in a capture: the capture was invalidated");
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, cs, &err) == 0 && cudaStreamSynchronize(cs) == cudaSuccess,
          "tuning after a capture: %s", err.msg);
    int n_shapes, n_blas, n_fill, n_tuned;
    cuda_gemm_paths(g, &n_shapes, &n_blas, &n_fill, &n_tuned);
    /* algorithm 1 ran once more than the others: the captured call */
    CHECK(n_tuned == 1 && standin.algo_runs[1] == standin.algo_runs[0] &&
              standin.algo_runs[2] + 1 == standin.algo_runs[1],
          "tuning after a capture: %d tuned, the algorithms ran %d, %d, %d times", n_tuned, standin.algo_runs[0],
          standin.algo_runs[1], standin.algo_runs[2]);
    if (graph) cudaGraphDestroy(graph);
    cuda_gemm_destroy(g);
    /* a heuristic result whose state is not SUCCESS holds no usable algorithm (cublasLt.h): never
     * timed nor run, though here it would be the fastest */
    standin_reset();
    standin.n_algos = 3, standin.algo_unfit = 1u << 1;
    memcpy(standin.algo_gflops, speeds[0], sizeof speeds[0]);
    g = NULL;
    CHECK(cuda_gemm_create(&g, (size_t)1 << 20, &err) == 0 &&
              cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, cs, &err) == 0 && cudaStreamSynchronize(cs) == cudaSuccess,
          "tuning with an unfit result: %s", err.msg);
    cuda_gemm_paths(g, &n_shapes, &n_blas, &n_fill, &n_tuned);
    CHECK(n_tuned == 1 && standin.algo_runs[0] >= 7 && standin.algo_runs[1] == 0 &&
              standin.algo_runs[2] == standin.algo_runs[0] + 1,
          "tuning with an unfit result: %d tuned, the algorithms ran %d, %d, %d times; want 1 tuned, N, 0, N + 1",
          n_tuned, standin.algo_runs[0], standin.algo_runs[1], standin.algo_runs[2]);
    cuda_gemm_destroy(g);
    cudaStreamDestroy(cs);
    cudaFree(A.alloc), cudaFree(B.alloc), cudaFree(C.alloc);
    unsetenv("INSTBENCH_GEMM_TUNE");
    standin_reset();
}

/* Two devices, as ranks that are threads of one process: device 1 runs GEMMs of its own while
 * device 0 times its candidates, each time device 0 runs the fastest (put there by the stand-in's
 * hook, so the interleaving is the same on every run).  GPUs run side by side, each with its own
 * clock: device 0 must still keep the fastest, and device 1, whose shape is first timed inside
 * that hook, too; with one clock for both, device 1's work would count as device 0's fastest's. */
static struct {
    cuda_gemm *g;
    cudaStream_t s;
    buf A, B, C;
    int inside, runs;
} other;
static const cuda_gemm_desc other_desc = {.M = 32, .N = 32, .K = 32, .ab = IB_PREC_FP32, .c = IB_PREC_FP32};

static void other_device_works(int algo)
{
    if (algo != 1 || other.inside) return; /* not on device 1's own GEMMs */
    other.inside = 1;
    int dev = 0;
    ib_error err = {0};
    cudaGetDevice(&dev);
    cudaSetDevice(1);
    if (cuda_gemm_exec(other.g, &other_desc, other.A.p, other.B.p, other.C.p, NULL, other.s, &err) == 0) other.runs++;
    else CHECK(0, "two devices: device 1's GEMM: %s", err.msg);
    cudaSetDevice(dev);
    other.inside = 0;
}

static void check_tuning_two_devices(void)
{
    static const double speeds[3] = {1e-6, 4e-6, 2e-6}; /* the 2nd the fastest, by 2x */
    standin_reset();
    standin.n_algos = 3;
    memcpy(standin.algo_gflops, speeds, sizeof speeds);
    setenv("INSTBENCH_GEMM_TUNE", "1", 1);
    ib_error err = {0};
    cuda_gemm *g = NULL;
    cudaStream_t s = NULL;
    buf A = make(64, 4, 0), B = make(64, 4, 0), C = make(64, 4, 0);
    other.A = make(1024, 4, 0), other.B = make(1024, 4, 0), other.C = make(1024, 4, 0);
    CHECK(cudaSetDevice(1) == cudaSuccess && cuda_gemm_create(&other.g, (size_t)1 << 20, &err) == 0 &&
              cudaStreamCreateWithFlags(&other.s, cudaStreamNonBlocking) == cudaSuccess &&
              cudaSetDevice(0) == cudaSuccess && cuda_gemm_create(&g, (size_t)1 << 20, &err) == 0 &&
              cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
          "two devices: setup: %s", err.msg);
    const cuda_gemm_desc d = {.M = 8, .N = 8, .K = 8, .ab = IB_PREC_FP32, .c = IB_PREC_FP32};
    standin.after_matmul = other_device_works;
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, s, &err) == 0 && cudaStreamSynchronize(s) == cudaSuccess,
          "two devices: device 0's GEMM: %s", err.msg);
    standin.after_matmul = NULL;
    CHECK(other.runs >= 7, "two devices: device 1 ran %d GEMMs while device 0 timed (want one per run of its fastest)",
          other.runs);
    /* what each now runs: one GEMM apiece, hook off */
    int before[3];
    memcpy(before, standin.algo_runs, sizeof before);
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, s, &err) == 0 && cudaStreamSynchronize(s) == cudaSuccess,
          "two devices: device 0 again: %s", err.msg);
    CHECK(standin.algo_runs[1] == before[1] + 1 && standin.algo_runs[0] == before[0] &&
              standin.algo_runs[2] == before[2],
          "two devices: device 0 kept algorithm %d (runs %d %d %d), not the fastest, 2: the other's GEMMs timed as its",
          standin.algo_runs[2] > before[2] ? 3 : 1, standin.algo_runs[0] - before[0], standin.algo_runs[1] - before[1],
          standin.algo_runs[2] - before[2]);
    memcpy(before, standin.algo_runs, sizeof before);
    CHECK(cudaSetDevice(1) == cudaSuccess &&
              cuda_gemm_exec(other.g, &other_desc, other.A.p, other.B.p, other.C.p, NULL, other.s, &err) == 0 &&
              cudaStreamSynchronize(other.s) == cudaSuccess && cudaSetDevice(0) == cudaSuccess,
          "two devices: device 1 again: %s", err.msg);
    CHECK(standin.algo_runs[1] == before[1] + 1, "two devices: device 1 did not keep the fastest, algorithm 2");
    cuda_gemm_destroy(g), cuda_gemm_destroy(other.g);
    cudaStreamDestroy(s), cudaStreamDestroy(other.s);
    cudaFree(A.alloc), cudaFree(B.alloc), cudaFree(C.alloc);
    cudaFree(other.A.alloc), cudaFree(other.B.alloc), cudaFree(other.C.alloc);
    unsetenv("INSTBENCH_GEMM_TUNE");
    standin_reset();
}

int main(void)
{
    const road roads[] = {
        {"cuBLASLt", STANDIN_HEURISTIC_ALGO, 0, 1, 0},
        {"heuristic: zero results", STANDIN_HEURISTIC_ZERO, 0, 0, 1},
        {"heuristic: NOT_SUPPORTED", STANDIN_HEURISTIC_NOT_SUPPORTED, 0, 0, 1},
        {"algorithm refused at launch", STANDIN_HEURISTIC_ALGO, 1, 1, 1},
    };
    int cases = 0;
    for (size_t r = 0; r < sizeof roads / sizeof *roads; r++) {
        standin_reset();
        standin.heuristic = roads[r].h, standin.matmul_not_supported = roads[r].refuse;
        cuda_gemm *g = NULL;
        ib_error err = {0};
        if (cuda_gemm_create(&g, r % 2 ? 0 : (size_t)32 << 20, &err)) {
            CHECK(0, "%s: cuda_gemm_create: %s", roads[r].name, err.msg);
            continue;
        }
        int shapes = 0, filled = 0; /* the random shapes are all distinct: each is a new plan */
        for (int i = 0; i < 150; i++) {
            gemm_case c = random_case();
            int lt = standin.lt_matmuls, blas = standin.blas_gemms, fills = fill_bias_calls;
            if (run_case(g, &c, roads[r].name)) break;
            shapes++, filled += fill_bias_calls > fills;
            /* the road: the fallback only once a shape has fallen back, then cuBLAS alone */
            int used_lt = standin.lt_matmuls > lt, used_blas = standin.blas_gemms > blas;
            /* refused at launch: cuBLASLt tried once per new shape, a shape seen before goes straight to cuBLAS */
            CHECK(used_blas == roads[r].want_blas && (roads[r].refuse || used_lt == roads[r].want_lt),
                  "%s: case %d went through cuBLASLt %d, cuBLAS %d", roads[r].name, i, used_lt, used_blas);
            cases++;
        }
        /* what measure records (hardware.gemm): every shape counted once, on the road it took */
        int n_shapes, n_blas, n_fill, n_tuned;
        cuda_gemm_paths(g, &n_shapes, &n_blas, &n_fill, &n_tuned);
        CHECK(n_shapes == shapes && n_blas == (roads[r].want_blas ? shapes : 0) && n_fill == filled && n_tuned == 0,
              "%s: cuda_gemm_paths %d shapes, %d through cuBLAS, %d bias kernels, %d tuned; want %d, %d, %d, 0",
              roads[r].name, n_shapes, n_blas, n_fill, n_tuned, shapes, roads[r].want_blas ? shapes : 0, filled);
        CHECK(filled > 0, "%s: no case wrote its bias by a kernel: the count is untested", roads[r].name);
        /* the cache: the same shape and alignments again asks the heuristic nothing */
        gemm_case c = random_case();
        run_case(g, &c, roads[r].name);
        int queries = standin.heuristic_calls;
        run_case(g, &c, roads[r].name);
        CHECK(standin.heuristic_calls == queries, "%s: the same GEMM queried the heuristic again", roads[r].name);
        CHECK(roads[r].want_blas == (standin.blas_handles == 1), "%s: %d cuBLAS handles", roads[r].name,
              standin.blas_handles);
        cuda_gemm_destroy(g);
    }
    CHECK(standin.live_objects == 0, "%d cuBLASLt/cuBLAS objects leaked", standin.live_objects);
    CHECK(shim_live_allocations == 0, "%d device allocations leaked", shim_live_allocations);

    /* the bias epilogue: the heuristic is asked with the bias pointer set (cublasLt.h: it picks by
     * its alignment; the stand-in refuses a NULL one), and a bias of another alignment on the same
     * shape is a new plan, not the cached algorithm chosen for a 256-byte aligned vector */
    {
        ib_error e2 = {0};
        cuda_gemm *gb = NULL;
        standin_reset();
        CHECK(cuda_gemm_create(&gb, 1 << 20, &e2) == 0, "create: %s", e2.msg);
        buf A = make(64, 4, 0), B = make(64, 4, 0), C = make(64, 4, 0), bias = make(256, 4, 0);
        for (int i = 0; i < 64; i++) ((float *)A.p)[i] = uniform(), ((float *)B.p)[i] = uniform();
        float *b256 = (float *)(bias.alloc + ((256 - ((uintptr_t)bias.alloc & 255)) & 255));
        for (int i = 0; i < 16; i++) b256[i] = uniform();
        cuda_gemm_desc d = {.M = 4, .N = 8, .K = 4, .ab = IB_PREC_FP32, .c = IB_PREC_FP32};
        const float *biases[2] = {b256, b256 + 4}; /* 256-byte, then 16-byte aligned */
        for (int i = 0; i < 2; i++) {
            CHECK(cuda_gemm_exec(gb, &d, A.p, B.p, C.p, biases[i], NULL, &e2) == 0, "bias GEMM %d: %s", i, e2.msg);
            CHECK(!standin.violation[0], "bias GEMM %d: %s", i, standin.violation);
            cudaDeviceSynchronize();
            for (int r = 0; r < 4 && !standin.violation[0]; r++)
                for (int j = 0; j < 8; j++) {
                    double ref = biases[i][j];
                    for (int k = 0; k < 4; k++) ref += (double)((float *)A.p)[r * 4 + k] * ((float *)B.p)[k * 8 + j];
                    CHECK(fabs(((float *)C.p)[r * 8 + j] - ref) < 1e-5, "bias GEMM %d: C[%d][%d] %g, want %g", i, r, j,
                          ((float *)C.p)[r * 8 + j], ref);
                }
        }
        CHECK(standin.heuristic_calls == 2, "bias vectors of two alignments: %d heuristic queries, want 2",
              standin.heuristic_calls);
        cuda_gemm_destroy(gb);
        cudaFree(A.alloc), cudaFree(B.alloc), cudaFree(C.alloc), cudaFree(bias.alloc);
    }

    /* stream capture, CUDA's rules as the runtime stand-in enforces them: the capturing thread's
     * allocation, free, pinned allocation, queries and synchronisations fail and invalidate the
     * capture (its end answers cudaErrorStreamCaptureInvalidated); cublasCreate allocates device
     * memory, so it too; stream-ordered allocation and kernels are fine */
    {
        cudaStream_t cs;
        cudaEvent_t ev;
        void *held = NULL, *p = NULL;
        CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) == cudaSuccess &&
                  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess &&
                  cudaMalloc(&held, 64) == cudaSuccess,
              "capture test setup");
        const char *calls[] = {"cudaMalloc",
                               "cudaFree",
                               "cudaMallocHost",
                               "cudaStreamQuery",
                               "cudaEventQuery",
                               "cudaEventSynchronize",
                               "cudaStreamSynchronize (another stream)",
                               "cudaDeviceSynchronize",
                               "cublasCreate",
                               NULL};
        for (int i = 0; i <= 9; i++) {
            cudaGraph_t graph = NULL;
            CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture %d", i);
            int refused = 0;
            cublasHandle_t bh = NULL;
            switch (i) {
            case 0: refused = cudaMalloc(&p, 64) != cudaSuccess; break;
            case 1: refused = cudaFree(held) != cudaSuccess; break;
            case 2: refused = cudaMallocHost(&p, 64) != cudaSuccess; break;
            case 3: refused = cudaStreamQuery(NULL) != cudaSuccess; break;
            case 4: refused = cudaEventQuery(ev) != cudaSuccess; break;
            case 5: refused = cudaEventSynchronize(ev) != cudaSuccess; break;
            case 6: refused = cudaStreamSynchronize(NULL) != cudaSuccess; break;
            case 7: refused = cudaDeviceSynchronize() != cudaSuccess; break;
            case 8: refused = cublasCreate(&bh) != CUBLAS_STATUS_SUCCESS; break;
            default: /* nothing unsafe: stream-ordered allocation is captured, not refused */
                CHECK(cudaMallocAsync(&p, 64, cs) == cudaSuccess, "cudaMallocAsync in a capture");
            }
            const cudaError_t end = cudaStreamEndCapture(cs, &graph);
            if (calls[i]) {
                CHECK(refused && end == cudaErrorStreamCaptureInvalidated && !graph,
                      "%s inside a capture: %s, and the capture ended with %d", calls[i],
                      refused ? "refused" : "allowed", (int)end);
            } else {
                CHECK(end == cudaSuccess && graph, "a capture with nothing unsafe ended with %d", (int)end);
            }
            if (graph) cudaGraphDestroy(graph);
            if (bh) cublasDestroy(bh);
            if (!calls[i]) cudaFree(p); /* the graph, never launched, would have freed it */
        }
        CHECK(cudaMalloc(&p, 64) == cudaSuccess && cudaFree(p) == cudaSuccess, "cudaMalloc after the captures");
        cudaFree(held), cudaEventDestroy(ev), cudaStreamDestroy(cs);
        standin.violation[0] = 0;
    }

    check_tuning();
    check_tuning_two_devices();

    /* errors: named, not a fallback */
    ib_error err = {0};
    cuda_gemm *g = NULL;
    standin_reset();
    standin.heuristic = STANDIN_HEURISTIC_FAIL;
    CHECK(cuda_gemm_create(&g, 1 << 20, &err) == 0, "create: %s", err.msg);
    buf A = make(4096, 4, 0), B = make(4096, 4, 0), C = make(4096, 4, 0);
    cuda_gemm_desc d = {.M = 4, .N = 4, .K = 4, .ab = IB_PREC_FP32, .c = IB_PREC_FP32};
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, NULL, NULL, &err) == -1 &&
              strstr(err.msg, "cublasLtMatmulAlgoGetHeuristic"),
          "a failing heuristic: rc/message %s", err.msg);
    CHECK(standin.blas_gemms == 0, "a failing heuristic fell back to cuBLAS");
    d.accumulate = 1;
    standin.heuristic = STANDIN_HEURISTIC_ALGO;
    CHECK(cuda_gemm_exec(g, &d, A.p, B.p, C.p, B.p, NULL, &err) == -1 && strstr(err.msg, "accumulating"),
          "a bias with an accumulating GEMM: %s", err.msg);
    cuda_gemm_destroy(g);
    cudaFree(A.alloc), cudaFree(B.alloc), cudaFree(C.alloc);
    standin.lt_create_fails = 1;
    CHECK(cuda_gemm_create(&g, 1 << 20, &err) == -1 && strstr(err.msg, "cublasLtCreate") && !g, "cublasLtCreate: %s",
          err.msg);
    standin.lt_create_fails = 0, shim_malloc_fails = 1;
    CHECK(cuda_gemm_create(&g, 1 << 20, &err) == -1 && strstr(err.msg, "cudaMalloc") && !g, "workspace: %s", err.msg);
    shim_malloc_fails = 0;
    CHECK(standin.live_objects == 0 && shim_live_allocations == 0, "failed creates leaked %d objects, %d allocations",
          standin.live_objects, shim_live_allocations);

    printf("%d GEMMs over 4 roads checked; %d failure(s)\n", cases, failures);
    return failures ? 1 : 0;
}
