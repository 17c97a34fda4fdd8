/* cuda/gemm_rate (issue 37, item 9): the GEMM rate a GPU row records is the timed loop's.  Run on
 * the cuBLASLt stand-in with CUBLASLT_STANDIN_GFLOPS=R, a device whose every GEMM takes exactly
 * 2 m n k / R ns of its virtual clock: the figure must come out at R, however loaded the machine
 * (the probe reads the device's time between two events, not the host's clock; on the host's
 * clock it read 70 at 100 on a busy machine), and the GEMMs run must be this model's Linear
 * layers, counted here from timm's VisionTransformer independently of the probe: per block
 * qkv (D -> 3D), proj (D -> D), fc1 (D -> F), fc2 (F -> D) on B*T rows, the patch embedding
 * (C*P*P -> D on B*N rows, no input gradient) and the head (D -> classes on B rows), each as a
 * forward, a weight gradient and an input gradient: 3 x 2 M out in FLOPs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gemm_rate.h"
#include "cuda/kernels.h"
#include "cuda_cublaslt_standin.h"
#include "instbench/model.h"

static int failures;

/* gemm.c's cuBLAS fallback writes the bias with a kernel; the stand-in's heuristic never falls back
 * here, so any call is a fault of the probe */
cudaError_t cuk_fill_bias(void *C, ib_precision dt, const void *bias, int M, int N, int ldc, cudaStream_t s)
{
    (void)C, (void)dt, (void)bias, (void)M, (void)N, (void)ldc, (void)s;
    failures++;
    fprintf(stderr, "FAIL: the probe fell back to cuBLAS\n");
    return cudaErrorInvalidValue;
}

#define CHECK(cond, ...)                           \
    do {                                           \
        if (!(cond)) {                             \
            fprintf(stderr, "FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                   \
            failures++;                            \
        }                                          \
    } while (0)

/* FLOPs of one step's Linear GEMMs (forward, dW, dx) for vit_tiny_patch16_224 (T 197 tokens, N 196
 * patches, D 192, F 768, 1000 classes, 12 blocks) with BT token rows, BN patch rows, Bh head rows */
static double step_flops(double BT, double BN, double Bh)
{
    const double D = 192, F = 768, C = 1000, K = 3 * 16 * 16, L = 12;
    const double blocks = L * BT * (D * 3 * D + D * D + D * F + F * D);
    return 3 * 2 * blocks + 2 * 2 * BN * K * D + 3 * 2 * Bh * D * C;
}

static double rate_at(const ib_train_config *cfg, const char *gflops, double *counted)
{
    setenv("CUBLASLT_STANDIN_GFLOPS", gflops, 1);
    standin_reset();
    ib_error err = {0};
    double fps = -1;
    const int rc = cuda_gemm_rate(cfg, 0.2, NULL, &fps, &err);
    CHECK(rc == 0 && fps > 0, "GFLOPS=%s: rc %d, %g FLOP/s: %s", gflops, rc, fps, err.msg);
    CHECK(!standin.violation[0], "GFLOPS=%s: stand-in: %s", gflops, standin.violation);
    *counted = standin.lt_flops;
    return fps;
}

int main(void)
{
    ib_train_config cfg;
    memset(&cfg, 0, sizeof cfg);
    ib_error err;
    if (model_preset("vit_tiny_patch16_224", &cfg.model, &err)) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    cfg.batch_size = 8, cfg.precision = IB_PREC_BF16, cfg.device = 0;

    double c1 = 0, c2 = 0;
    const double r1 = rate_at(&cfg, "100", &c1) / 1e9, r2 = rate_at(&cfg, "400", &c2) / 1e9;
    printf("stand-in at 100 GFLOP/s: measured %.1f; at 400: %.1f\n", r1, r2);
    /* exact but for cudaEventElapsedTime's float milliseconds */
    CHECK(fabs(r1 - 100) < 0.01, "at 100 GFLOP/s the probe says %.4f", r1);
    CHECK(fabs(r2 - 400) < 0.04, "at 400 GFLOP/s the probe says %.4f", r2);

    /* the GEMMs run: whole steps of this model's Linear layers (one untimed round and at least one
     * timed), nothing else */
    const int B = cfg.batch_size;
    const double per = step_flops(B * 197.0, B * 196.0, B), rounds = c1 / per;
    CHECK(rounds >= 2 && fabs(rounds - round(rounds)) < 1e-9,
          "the probe ran %.4f steps' worth of GEMM FLOPs (%.6g "
          "of %.6g per step): not this model's Linear layers",
          rounds, c1, per);

    /* rows past the cap are neither allocated nor run: a huge batch runs capped steps */
    cfg.batch_size = 4096; /* B*T = 806,912 token rows, B*N = 802,816 patch rows */
    double c3 = 0;
    rate_at(&cfg, "100000", &c3);
    const double cap = CUDA_GEMM_RATE_MAX_ROWS, capped = step_flops(cap, cap, 4096), r3 = c3 / capped;
    CHECK(r3 >= 2 && fabs(r3 - round(r3)) < 1e-9,
          "batch 4096: %.6g FLOPs run, not whole steps of %.6g (rows capped "
          "at %.0f)",
          c3, capped, cap);

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("cuda_gemm_rate: all checks passed\n");
    return failures ? 1 : 0;
}
