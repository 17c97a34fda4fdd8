/* cuda_cudnn_sdpa: src/cuda/cudnn_sdpa.cpp (the cuDNN attention glue, with NVIDIA's real
 * cudnn-frontend code) forward and backward through the CPU stand-in of libcudnn
 * (tests/fakes/cudnn_standin.c) on the host CUDA runtime, at several shapes in one process, against
 * attention computed here in float64 from the same bf16 inputs (issue 30, item 7).
 *
 * What it catches that only running the glue can: a wrong stride in the views of q, k, v inside
 * the qkv activation or of dq, dk, dv inside its gradient (wrong numbers, or a read past an
 * allocation that the stand-in or the guard pages stop), outputs bound to the wrong tensors (dK and
 * dV swapped), the softmax scale not passed, statistics that are not fp32 (the backend refuses
 * them, as cuDNN does), and graphs reused for a shape they were not built for (the shapes below
 * differ from the first in one of B, T, H, hd each, and the first is asked for again at the end).
 * And the stand-in's own bounds check: an output allocation 64 bytes short stops the program
 * naming the tensor. */
#define _GNU_SOURCE /* dladdr */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cuda/cudnn_sdpa.h"
#include "cudnn_standin.h"

static int failures;

#define FAIL(...) (fprintf(stderr, "FAIL " __VA_ARGS__), failures++)

static uint16_t to_bf16(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static double uniform(void) /* [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* Textbook attention of one (b, h) in float64, from q, k, v, dO as given (each [T, hd]):
 * S = scale q k^T, P = softmax(S), o = P v; dP = dO v^T, dS = P * (dP - rowsum(P * dP)),
 * dq = scale dS k, dk = scale dS^T q, dv = P^T dO.  lse = log sum exp S per row. */
static void reference(int T, int hd, double scale, const double *q, const double *k, const double *v, const double *dO,
                      double *o, double *lse, double *dq, double *dk, double *dv, double *P, double *dP)
{
    for (int i = 0; i < T; i++) {
        double mx = -INFINITY;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int d = 0; d < hd; d++) s += q[i * hd + d] * k[j * hd + d];
            P[i * T + j] = scale * s;
            if (P[i * T + j] > mx) mx = P[i * T + j];
        }
        double z = 0;
        for (int j = 0; j < T; j++) z += exp(P[i * T + j] - mx);
        lse[i] = mx + log(z);
        for (int j = 0; j < T; j++) P[i * T + j] = exp(P[i * T + j] - lse[i]);
        for (int d = 0; d < hd; d++) {
            double a = 0;
            for (int j = 0; j < T; j++) a += P[i * T + j] * v[j * hd + d];
            o[i * hd + d] = a;
        }
    }
    for (int i = 0; i < T; i++) {
        double row = 0;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int d = 0; d < hd; d++) s += dO[i * hd + d] * v[j * hd + d];
            dP[i * T + j] = s;
            row += P[i * T + j] * s;
        }
        for (int j = 0; j < T; j++) dP[i * T + j] = P[i * T + j] * (dP[i * T + j] - row); /* dS */
    }
    memset(dq, 0, sizeof(double) * T * hd), memset(dk, 0, sizeof(double) * T * hd),
        memset(dv, 0, sizeof(double) * T * hd);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            for (int d = 0; d < hd; d++) {
                dq[i * hd + d] += scale * dP[i * T + j] * k[j * hd + d];
                dk[j * hd + d] += scale * dP[i * T + j] * q[i * hd + d];
                dv[j * hd + d] += P[i * T + j] * dO[i * hd + d];
            }
}

typedef struct errsum {
    double num, den;
} errsum;

static void acc(errsum *e, double got, double want) { e->num += (got - want) * (got - want), e->den += want * want; }

static double rel(const errsum *e) { return e->den > 0 ? sqrt(e->num / e->den) : sqrt(e->num); }

static cudnn_standin_get_counts_fn standin_counts;

/* forward and backward at one shape, the backward DET(erministic) or not; 0 when every output
 * matches the reference */
static void check_shape(int B, int T, int H, int hd, int det)
{
    char why[1024] = "";
    const float scale = 1.0f / sqrtf((float)hd);
    cudnn_sdpa *a = cudnn_sdpa_get(B, T, H, hd, scale, det, why, sizeof why);
    if (!a) {
        FAIL("B=%d T=%d H=%d hd=%d: cudnn_sdpa_get: %s\n", B, T, H, hd, why);
        return;
    }
    const size_t D = (size_t)H * hd, row = 3 * D, nqkv = (size_t)B * T * row, no = (size_t)B * T * D,
                 nst = (size_t)B * H * T, ws = cudnn_sdpa_workspace(a);
    uint16_t *hqkv = malloc(nqkv * 2), *hdo = malloc(no * 2), *ho = malloc(no * 2), *hdqkv = malloc(nqkv * 2);
    float *hst = malloc(nst * 4);
    for (size_t i = 0; i < nqkv; i++) hqkv[i] = to_bf16(2 * uniform());
    for (size_t i = 0; i < no; i++) hdo[i] = to_bf16(0.5 * uniform());
    void *dqkv_in, *d_o, *d_do, *d_dqkv, *d_ws = NULL;
    float *d_st;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) || cudaMalloc(&dqkv_in, nqkv * 2) ||
        cudaMalloc(&d_o, no * 2) || cudaMalloc(&d_do, no * 2) || cudaMalloc(&d_dqkv, nqkv * 2) ||
        cudaMalloc((void **)&d_st, nst * 4) || (ws && cudaMalloc(&d_ws, ws))) {
        FAIL("cudaMalloc\n");
        exit(1);
    }
    cudnn_standin_counts before, after;
    standin_counts(&before);
    cudaMemcpyAsync(dqkv_in, hqkv, nqkv * 2, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(d_do, hdo, no * 2, cudaMemcpyHostToDevice, s);
    cudaMemsetAsync(d_o, 0xff, no * 2, s); /* all-ones: NaN in bf16 and fp32, so what is not written shows */
    cudaMemsetAsync(d_dqkv, 0xff, nqkv * 2, s);
    cudaMemsetAsync(d_st, 0xff, nst * 4, s);
    if (cudnn_sdpa_forward(a, dqkv_in, d_o, d_st, d_ws, s, why, sizeof why) ||
        cudnn_sdpa_backward(a, dqkv_in, d_o, d_do, d_st, d_dqkv, d_ws, s, why, sizeof why)) {
        FAIL("B=%d T=%d H=%d hd=%d: %s\n", B, T, H, hd, why);
        return;
    }
    cudaMemcpyAsync(ho, d_o, no * 2, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(hdqkv, d_dqkv, nqkv * 2, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(hst, d_st, nst * 4, cudaMemcpyDeviceToHost, s);
    if (cudaStreamSynchronize(s) != cudaSuccess) FAIL("B=%d T=%d H=%d hd=%d: stream error\n", B, T, H, hd);
    standin_counts(&after);
    if (after.executions_run - before.executions_run != 2)
        FAIL("B=%d T=%d H=%d hd=%d: %ld graphs ran on the stand-in, 2 expected\n", B, T, H, hd,
             after.executions_run - before.executions_run);

    double *q = malloc(sizeof(double) * T * hd * 4), *k = q + T * hd, *v = k + T * hd, *g = v + T * hd;
    double *o = malloc(sizeof(double) * T * hd * 4), *dq = o + T * hd, *dk = dq + T * hd, *dv = dk + T * hd;
    double *lse = malloc(sizeof(double) * T), *P = malloc(sizeof(double) * T * T), *dP = malloc(sizeof(double) * T * T);
    errsum eo = {0, 0}, edq = {0, 0}, edk = {0, 0}, edv = {0, 0};
    double worst_lse = 0;
    size_t unwritten = 0;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            for (int t = 0; t < T; t++)
                for (int d = 0; d < hd; d++) {
                    const size_t base = ((size_t)b * T + t) * row + (size_t)h * hd + d;
                    q[t * hd + d] = from_bf16(hqkv[base]);
                    k[t * hd + d] = from_bf16(hqkv[base + D]);
                    v[t * hd + d] = from_bf16(hqkv[base + 2 * D]);
                    g[t * hd + d] = from_bf16(hdo[((size_t)b * T + t) * D + (size_t)h * hd + d]);
                }
            reference(T, hd, scale, q, k, v, g, o, lse, dq, dk, dv, P, dP);
            for (int t = 0; t < T; t++) {
                const double got = hst[((size_t)b * H + h) * T + t];
                if (!(fabs(got - lse[t]) <= worst_lse)) worst_lse = isnan(got) ? INFINITY : fabs(got - lse[t]);
                for (int d = 0; d < hd; d++) {
                    const size_t base = ((size_t)b * T + t) * row + (size_t)h * hd + d;
                    const uint16_t got_o = ho[((size_t)b * T + t) * D + (size_t)h * hd + d];
                    const uint16_t got_g[3] = {hdqkv[base], hdqkv[base + D], hdqkv[base + 2 * D]};
                    unwritten += (got_o & 0x7f80u) == 0x7f80u;
                    for (int c = 0; c < 3; c++) unwritten += (got_g[c] & 0x7f80u) == 0x7f80u;
                    acc(&eo, from_bf16(got_o), o[t * hd + d]);
                    acc(&edq, from_bf16(got_g[0]), dq[t * hd + d]);
                    acc(&edk, from_bf16(got_g[1]), dk[t * hd + d]);
                    acc(&edv, from_bf16(got_g[2]), dv[t * hd + d]);
                }
            }
        }
    /* bf16 outputs (relative rounding 2^-9) of fp32 work; the backward reads the bf16 O back */
    const double tol_o = 6e-3, tol_g = 1e-2, tol_lse = 1e-5; /* measured: about 2e-3, 2.5e-3, 3e-7 */
    printf("cudnn sdpa B=%d T=%d H=%d hd=%d %s: O %.2g, stats %.2g, dQ %.2g, dK %.2g, dV %.2g (rel L2 vs float64)\n", B,
           T, H, hd, det ? "deterministic" : "non-deterministic", rel(&eo), worst_lse, rel(&edq), rel(&edk), rel(&edv));
    if (unwritten) FAIL("B=%d T=%d H=%d hd=%d: %zu output elements unwritten or not finite\n", B, T, H, hd, unwritten);
    if (!(rel(&eo) <= tol_o))
        FAIL("B=%d T=%d H=%d hd=%d: O off by %.3g (at most %.3g)\n", B, T, H, hd, rel(&eo), tol_o);
    if (!(worst_lse <= tol_lse))
        FAIL("B=%d T=%d H=%d hd=%d: stats off by %.3g (at most %.3g)\n", B, T, H, hd, worst_lse, tol_lse);
    const struct {
        const char *name;
        const errsum *e;
    } grads[3] = {{"dQ", &edq}, {"dK", &edk}, {"dV", &edv}};
    for (int c = 0; c < 3; c++)
        if (!(rel(grads[c].e) <= tol_g))
            FAIL("B=%d T=%d H=%d hd=%d: %s off by %.3g (at most %.3g)\n", B, T, H, hd, grads[c].name, rel(grads[c].e),
                 tol_g);
    cudaStreamDestroy(s);
    cudaFree(dqkv_in), cudaFree(d_o), cudaFree(d_do), cudaFree(d_dqkv), cudaFree(d_st), cudaFree(d_ws);
    free(hqkv), free(hdo), free(ho), free(hdqkv), free(hst), free(q), free(o), free(lse), free(P), free(dP);
}

/* The stand-in's own checks: an output allocation too small for the tensor the graph writes is
 * refused at Execute, naming the tensor and how far past the allocation it reaches (in a child
 * process, which dies of it: the stand-in stops the program, as memcheck would). */
static void too_small_output_check(void)
{
    int fds[2];
    if (pipe(fds)) return;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        const int B = 2, T = 17, H = 2, hd = 16;
        char why[512];
        cudnn_sdpa *a = cudnn_sdpa_get(B, T, H, hd, 0.25f, 1, why, sizeof why);
        const size_t nqkv = (size_t)B * T * 3 * H * hd, no = (size_t)B * T * H * hd;
        void *qkv, *o, *ws = NULL;
        float *st;
        if (!a || cudaMalloc(&qkv, nqkv * 2) || cudaMalloc(&o, no * 2 - 64) ||
            cudaMalloc((void **)&st, (size_t)B * H * T * 4) || cudaMalloc(&ws, cudnn_sdpa_workspace(a) + 1))
            _exit(3);
        cudaMemsetAsync(qkv, 0, nqkv * 2, NULL);
        cudnn_sdpa_forward(a, qkv, o, st, ws, NULL, why, sizeof why);
        cudaDeviceSynchronize();
        _exit(0); /* not reached */
    }
    close(fds[1]);
    char out[4096];
    size_t n = 0;
    ssize_t got;
    while (n + 1 < sizeof out && (got = read(fds[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)got;
    out[n] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const int ok = WIFSIGNALED(status) && strstr(out, "cudnn stand-in: FATAL: Execute: tensor uid 4 (bf16)") &&
                   strstr(out, "reaches 64 bytes past its end");
    printf("output 64 bytes short: %s", ok ? strstr(out, "cudnn stand-in") : "not reported as expected\n");
    if (!ok)
        FAIL("a too-small output (status 0x%x): wanted the stand-in to stop naming the tensor, got:\n%s\n", status,
             out);
}

/* The workspace the glue reports is the built graphs' (issue 37, D5), in both backward modes, at
 * ViT-B's shapes (H=12, hd=64; T=197 at 224 px, 577 at 384 px) and at B=850 (an H100's
 * --batch-size auto): built, not run.  Against cuDNN's own sizing, as the frontend documents it:
 * the deterministic backward's dP scratch is B*H*pad64(T)*pad128(T) bf16, the other's fp32 dQ
 * accumulator B*H*T*hd floats (both beside a [B,H,T] fp32 row sum). */
static void workspace_check(void)
{
    const int shapes[][2] = {{128, 197}, {850, 197}, {32, 577}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int det = 1; det >= 0; det--) {
            const int64_t B = shapes[i][0], T = shapes[i][1], H = 12, hd = 64;
            char why[1024] = "";
            cudnn_sdpa *a = cudnn_sdpa_get((int)B, (int)T, (int)H, (int)hd, 0.125f, det, why, sizeof why);
            if (!a) {
                FAIL("workspace B=%lld T=%lld: cudnn_sdpa_get: %s\n", (long long)B, (long long)T, why);
                continue;
            }
            const int64_t rowsum = B * H * T * 4;
            const int64_t need = det ? B * H * ((T + 63) / 64 * 64) * ((T + 127) / 128 * 128) * 2 : B * H * T * hd * 4;
            const int64_t ws = (int64_t)cudnn_sdpa_workspace(a), slack = (int64_t)1 << 20;
            printf("workspace B=%lld T=%lld %s: %.1f MiB (dP or dQ accumulator %.1f MiB)\n", (long long)B, (long long)T,
                   det ? "deterministic" : "non-deterministic", ws / 1048576.0, need / 1048576.0);
            if (ws < need || ws > need + rowsum + slack)
                FAIL("workspace B=%lld T=%lld %s: %lld bytes, %lld to %lld expected\n", (long long)B, (long long)T,
                     det ? "deterministic" : "non-deterministic", (long long)ws, (long long)need,
                     (long long)(need + rowsum + slack));
        }
}

int main(void)
{
    setenv("INSTBENCH_CUDNN_LIBRARY", INSTBENCH_CUDNN_STANDIN, 0);
    char why[1024] = "";
    cudnn_sdpa_lib lib;
    if (!cudnn_sdpa_load || cudnn_sdpa_load(&lib, why, sizeof why)) {
        fprintf(stderr, "FAIL cudnn_sdpa_load: %s\n", cudnn_sdpa_load ? why : "not linked");
        return 1;
    }
    printf("cuDNN %d loaded from %s\n", lib.version, lib.path);
    void *h = dlopen(lib.path, RTLD_NOW | RTLD_NOLOAD);
    standin_counts = h ? (cudnn_standin_get_counts_fn)dlsym(h, "cudnn_standin_get_counts") : NULL;
    if (lib.version != 91900 || !standin_counts) {
        fprintf(stderr, "FAIL: %s is not the stand-in (version %d)\n", lib.path, lib.version);
        return 1;
    }
    /* the frontend's own dlopen of the CUDA runtime reaches the one this program runs on */
    Dl_info info;
    const char *rt = getenv("CUDNN_FRONTEND_CUDART_LIB_NAME");
    if (!dladdr((void *)&cudaGetDevice, &info) || !rt || strcmp(rt, info.dli_fname))
        FAIL("CUDNN_FRONTEND_CUDART_LIB_NAME is %s, not the runtime holding cudaGetDevice\n", rt ? rt : "unset");
    const int shapes[][4] = {
        {2, 17, 2, 16}, /* the first shape; each of the next four differs from it in one dim */
        {3, 17, 2, 16}, {2, 128, 2, 16}, {2, 17, 3, 16},
        {2, 17, 2, 32}, {3, 197, 3, 64}, /* ViT-B/16's sequence at 224 px, a head dim of 64 */
        {2, 17, 2, 16},                  /* the first again: from the cache */
    };
    const size_t n = sizeof shapes / sizeof shapes[0];
    cudnn_standin_counts c0, c1;
    standin_counts(&c0);
    for (size_t i = 0; i < n; i++) check_shape(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], 1);
    /* the non-deterministic backward (the frontend's fp32 dQ accumulator in the workspace): its
     * own graphs, the cache keyed by the mode (D7) */
    check_shape(2, 17, 2, 16, 0);
    check_shape(3, 197, 3, 64, 0);
    standin_counts(&c1);
    /* two graphs (forward, backward) per distinct shape and mode: built once, then reused */
    if (c1.graphs - c0.graphs != 2 * (long)(n - 1 + 2))
        FAIL("%ld operation graphs built for %zu distinct shapes and modes (2 each expected)\n", c1.graphs - c0.graphs,
             n - 1 + 2);
    char why2[256];
    if (cudnn_sdpa_get(2, 17, 2, 16, 1.0f / 4, 1, why2, sizeof why2) !=
        cudnn_sdpa_get(2, 17, 2, 16, 1.0f / 4, 1, why2, sizeof why2))
        FAIL("the same shape asked twice gave two graphs\n");
    if (cudnn_sdpa_get(2, 17, 2, 16, 1.0f / 4, 1, why2, sizeof why2) ==
        cudnn_sdpa_get(2, 17, 2, 16, 1.0f / 4, 0, why2, sizeof why2))
        FAIL("the deterministic and the non-deterministic backward share one cached graph\n");
    workspace_check();
    too_small_output_check();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("cuda_cudnn_sdpa: all passed\n");
    return 0;
}
