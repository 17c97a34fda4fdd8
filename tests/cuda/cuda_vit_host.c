/* cuda_vit_host: the CUDA backend's training step (src/cuda/vit.c) run on the CPU through
 * tests/fakes/cuda_host_shim.c, against the timm reference fixtures and the CPU backend.  It checks
 * everything vit.c decides (which buffer feeds which op, parameter offsets, GEMM shapes,
 * transposes, strides and the padded attention layout, bf16 cast points, op order, the optimizer
 * loop and the gradient-hook ranges) without a GPU.  Built with CUDA_VIT_SIM it is cuda_vit_sim:
 * the same step with the real .cu kernels (tests/fakes/cudasim) and the real gemm.c (on the cuBLASLt
 * stand-in) instead of the shim's loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/vit.h"
#include "cuda_host_runtime.h"
#include "instbench/verify.h"

static int failures;
static int use_graph; /* steps through cuda_vit_forward_backward_graph (eager, captured, replayed) */

typedef struct hook_log {
    size_t next_end; /* the previous range's start: ranges must descend without gaps */
    int calls, bad;
} hook_log;

static int on_ready(void *user, size_t off, size_t cnt)
{
    hook_log *h = user;
    if (off + cnt != h->next_end) h->bad++;
    h->next_end = off;
    h->calls++;
    return 0;
}

static void run_one(const char *path)
{
    verify_reference ref;
    ib_error err;
    if (verify_reference_load(path, &ref, &err)) {
        fprintf(stderr, "FAIL %s: %s\n", path, err.msg);
        failures++;
        return;
    }
    ib_train_config cfg = ref.cfg;
    cfg.device = 0;
    model_layout layout;
    cuda_vit v;
    if (model_layout_build(&cfg.model, &layout, &err) || cuda_vit_init(&v, &cfg, &layout, &err)) {
        fprintf(stderr, "FAIL %s: init: %s\n", path, err.msg);
        failures++;
        verify_reference_free(&ref);
        return;
    }
    const size_t P = layout.total, BC = (size_t)cfg.batch_size * cfg.model.num_classes;
    memcpy(v.buf.params, ref.params, P * sizeof(float));
    cuda_vit_refresh_bf16(&v, &err);
    memcpy(v.buf.images, ref.images,
           (size_t)cfg.batch_size * cfg.model.in_chans * cfg.model.img_size * cfg.model.img_size * sizeof(float));
    memcpy(v.buf.labels, ref.labels, (size_t)cfg.batch_size * sizeof(int32_t));
    v.have_inputs = 1;
    verify_outputs got = {
        .logits = malloc(BC * 4), .grads = malloc(P * 4), .losses = malloc(ref.steps * 4), .steps = ref.steps};
    int rc = 0;
    for (int s = 0; s < ref.steps && !rc; s++) {
        hook_log h = {P, 0, 0};
        float loss = 0;
        if (use_graph) /* no gradient hook: the ranges are not reported */
            rc = (s > 0 && cuda_vit_optimizer_step(&v, &err)) || cuda_vit_forward_backward_graph(&v, &err) ||
                 cuda_vit_read_loss(&v, &loss, &err);
        else
            rc = (s > 0 && cuda_vit_optimizer_step(&v, &err)) || cuda_vit_forward(&v, &err) ||
                 cuda_vit_backward(&v, on_ready, &h, &err) || cuda_vit_read_loss(&v, &loss, &err);
        if (!use_graph && (h.calls != model_grad_range_count(&cfg.model) || h.bad || h.next_end != 0)) {
            fprintf(stderr, "FAIL %s: gradient hook: %d calls (want %d), %d out of order, ends at %zu\n", path, h.calls,
                    model_grad_range_count(&cfg.model), h.bad, h.next_end);
            failures++;
        }
        /* the loss is read once forward is done; backward may still be queued (ordered streams) */
        if (!rc && cudaStreamSynchronize(v.stream) != cudaSuccess) {
            fprintf(stderr, "FAIL %s: cudaStreamSynchronize after step %d\n", path, s);
            failures++;
        }
        if (s == 0) {
            memcpy(got.logits, v.buf.logits, BC * 4);
            memcpy(got.grads, v.buf.grads, P * 4);
            got.loss = loss;
        }
        got.losses[s] = loss;
    }
    if (rc) {
        fprintf(stderr, "FAIL %s: step: %s\n", path, err.msg);
        failures++;
    } else {
        verify_tolerance tol;
        verify_default_tolerance(cfg.precision, &tol);
        verify_report rep;
        verify_outputs cpu;
        double secs;
        /* against timm, and against the CPU backend (its outputs as the expected values) */
        if (verify_compare(&ref, &ref.expected, &got, &tol, &rep, &err) == 0) {
            if (!rep.pass) {
                fprintf(stderr, "FAIL %s: %zu checks against timm out of tolerance, first:", path, rep.failed);
                for (size_t i = 0; i < rep.count; i++)
                    if (!rep.checks[i].pass) {
                        fprintf(stderr, " %s (%s %.3g)\n", rep.checks[i].name, verify_metric_name(rep.checks[i].metric),
                                rep.checks[i].value);
                        break;
                    }
                failures++;
            }
            verify_report_free(&rep);
        }
        /* fp32: both backends run the same ops in the same order, so far tighter than against timm;
         * bf16: what verify --compare-backend allows */
        verify_tolerance tight;
        verify_pair_tolerance(cfg.precision, &tight);
        if (cfg.precision == IB_PREC_FP32) tight.logits_limit = tight.grads_limit = tight.losses_limit = 2e-5;
        if (verify_run_backend("cpu", &ref, cfg.precision, 1, &cpu, &secs, &err) == 0) {
            if (verify_compare(&ref, &cpu, &got, &tight, &rep, &err) == 0) {
                if (getenv("CUDA_VIT_HOST_VERBOSE"))
                    for (size_t i = 0; i < rep.count; i++)
                        fprintf(stderr, "  %-32s rel_l2 %.3g max_rel %.3g\n", rep.checks[i].name,
                                rep.checks[i].err.rel_l2, rep.checks[i].err.max_rel);
                if (!rep.pass) {
                    fprintf(stderr, "FAIL %s: %zu checks against the CPU backend out of tolerance\n", path, rep.failed);
                    failures++;
                }
                verify_report_free(&rep);
            }
            verify_outputs_free(&cpu);
        } else {
            fprintf(stderr, "FAIL %s: cpu backend: %s\n", path, err.msg);
            failures++;
        }
        printf("%s: loss %.6f (timm %.6f), %d steps, last %.6f (timm %.6f)\n", path, got.loss, ref.expected.loss,
               ref.steps, got.losses[ref.steps - 1], ref.expected.losses[ref.steps - 1]);
    }
    verify_outputs_free(&got);
    cuda_vit_free(&v);
    model_layout_free(&layout);
    verify_reference_free(&ref);
}

/* CUDA_VIT_FAIL_FAST (tests/cuda/mutation_check.sh): stop at the first failure, which is all a
 * mutation needs to be caught, instead of running every remaining case. */
static void run(const char *path)
{
    run_one(path);
    if (failures && getenv("CUDA_VIT_FAIL_FAST")) {
        fprintf(stderr, "%d failure(s); CUDA_VIT_FAIL_FAST: stopping\n", failures);
        exit(1);
    }
}

#ifdef CUDA_VIT_SIM
/* cuda_vit_sim: the same checks with the real kernels (tests/fakes/cudasim) and the real gemm.c on the
 * cuBLASLt stand-in, once through cuBLASLt and once with every GEMM falling back to cuBLAS. */
#include "cuda_cublaslt_standin.h"
#include "cuda/kernels.h"
#include "cpu/ops.h"
#include <math.h>
extern long cudasim_launches, cudasim_threads_run;
extern char cudasim_problem[256];

#endif

#ifdef CUDA_VIT_SIM
#include <sys/wait.h>
#include <unistd.h>
/* A kernel that reads past its allocation (store_act_kernel told of 2048 floats where its source
 * has 1000) is stopped at the first bad read, as memcheck stops it, and the report names the
 * allocation, the offset, the kernel, the block and the thread: in a child process, which dies of it. */
static void out_of_bounds_check(void)
{
    int fds[2];
    if (pipe(fds)) return;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        float *src, *dst;
        cudaStream_t s;
        if (cudaMalloc((void **)&src, 1000 * sizeof(float)) || cudaMalloc((void **)&dst, 2048 * sizeof(float)) ||
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
            _exit(3);
        cudaMemsetAsync(src, 0, 1000 * sizeof(float), s);
        cuk_store_act(dst, IB_PREC_FP32, src, 2048, s);
        cudaStreamSynchronize(s);
        _exit(0); /* not reached: the read past src faults */
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
    const char *want[] = {"out-of-bounds device memory read", "of the 4000-byte allocation", "bytes past its end",
                          "in kernel store_act_kernel, block (", "thread ("};
    int ok = WIFSIGNALED(status);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) ok = ok && strstr(out, want[i]);
    printf("out-of-bounds read: %s", ok ? out : "not reported as expected\n");
    if (!ok) {
        fprintf(
            stderr,
            "FAIL out-of-bounds read (status 0x%x): wanted the allocation, offset, kernel, block and thread in:\n%s\n",
            status, out);
        failures++;
    }
}

/* Fresh device and pinned memory hold signalling NaNs in fp32 and in bf16 (what a GPU leaves there
 * is undefined: a kernel that reads it must not get zeros), and cudaMemset defines it. */
static void poison_check(void)
{
    uint32_t *dev, *host;
    cudaStream_t s;
    if (cudaMalloc((void **)&dev, 1024) || cudaMallocHost((void **)&host, 1024) ||
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) {
        fprintf(stderr, "FAIL poison: allocation\n");
        failures++;
        return;
    }
    int bad = 0;
    for (int i = 0; i < 256; i++)
        for (int k = 0; k < 2; k++) {
            const uint32_t w = k ? host[i] : dev[i];
            const uint16_t lo = (uint16_t)w, hi = (uint16_t)(w >> 16);
            /* fp32 sNaN: exponent all ones, quiet bit clear, mantissa not zero; bf16 likewise */
            bad += (w & 0x7fc00000u) != 0x7f800000u || !(w & 0x003fffffu);
            bad += (lo & 0x7fc0u) != 0x7f80u || !(lo & 0x3fu) || (hi & 0x7fc0u) != 0x7f80u || !(hi & 0x3fu);
        }
    cudaMemsetAsync(dev, 0, 1024, s);
    cudaStreamSynchronize(s);
    for (int i = 0; i < 256; i++) bad += dev[i] != 0;
    printf("fresh device and pinned memory: %s\n", bad ? "not poisoned" : "signalling NaNs, defined by cudaMemset");
    if (bad) {
        fprintf(stderr,
                "FAIL poison: %d words of fresh memory are not signalling NaNs (or not zero after cudaMemset)\n", bad);
        failures++;
    }
    cudaStreamDestroy(s);
    cudaFree(dev);
    cudaFreeHost(host);
}
#endif

#ifdef CUDA_VIT_SIM
/* The qkv bias gradient of the cuDNN path, column sums of a bf16 dy (cuk_bias_backward_act), at a
 * width that is no multiple of the block and more rows than chunks, against a double sum here. */
static void bias_act_check(int M, int N)
{
    bf16 *dy;
    float *db, *partial;
    if (cudaMalloc((void **)&dy, (size_t)M * N * 2) || cudaMalloc((void **)&db, (size_t)N * 4) ||
        cudaMalloc((void **)&partial, cuk_colsum_partial_floats(N) * 4)) {
        fprintf(stderr, "FAIL bias_act: cudaMalloc\n");
        failures++;
        return;
    }
    uint64_t x = 0x9e3779b9u + (uint64_t)M * 7 + N;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        dy[i] = cpu_bf16_from_f32((float)((x >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f);
    }
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const int rc = cuk_bias_backward_act(dy, IB_PREC_BF16, db, M, N, partial, s) != cudaSuccess ||
                   cudaStreamSynchronize(s) != cudaSuccess;
    cudaStreamDestroy(s);
    double worst = 0;
    for (int j = 0; j < N && !rc; j++) {
        double want = 0;
        for (int r = 0; r < M; r++) want += cpu_f32_from_bf16(dy[(size_t)r * N + j]);
        const double e = fabs(db[j] - want) / (1.0 + fabs(want));
        if (!(e <= worst)) worst = e;
    }
    printf("bias gradient of a bf16 dy, %d x %d: worst error %.2g\n", M, N, worst);
    if (rc || !(worst < 1e-5)) {
        fprintf(stderr, "FAIL bias_act %d x %d: %s, worst error %.3g\n", M, N, rc ? "launch failed" : "wrong sums",
                worst);
        failures++;
    }
    cudaFree(dy), cudaFree(db), cudaFree(partial);
}
#endif

int main(int argc, char **argv)
{
#ifdef CUDA_VIT_SIM
#endif
    (void)argc, (void)argv;
    const char *refs[] = {"data/ref_a_adam_fp32.safetensors", "data/ref_a_adam_bf16.safetensors",
                          "data/ref_b_adamw_fp32.safetensors", "data/ref_b_adamw_bf16.safetensors"};
#ifdef CUDA_VIT_SIM
    for (int road = 0; road < 2; road++) {
        standin_reset();
        standin.heuristic = road ? STANDIN_HEURISTIC_NOT_SUPPORTED : STANDIN_HEURISTIC_ALGO;
        printf("GEMMs through %s:\n", road ? "the cuBLAS fallback" : "cuBLASLt");
        for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) run(refs[i]);
        if (standin.violation[0]) {
            fprintf(stderr, "FAIL: cuBLASLt stand-in: %s\n", standin.violation);
            failures++;
        }
        if ((road ? standin.blas_gemms : standin.lt_matmuls) == 0) {
            fprintf(stderr, "FAIL: no GEMM went through %s\n", road ? "cuBLAS" : "cuBLASLt");
            failures++;
        }
    }
    /* the bf16 unfused path by name (where cuDNN cannot run) */
    printf("bf16 with unfused attention:\n");
    setenv("INSTBENCH_CUDA_ATTENTION", "unfused", 1);
    run("data/ref_a_adam_bf16.safetensors");
    run("data/ref_b_adamw_bf16.safetensors");
    unsetenv("INSTBENCH_CUDA_ATTENTION");
    /* CUDA graphs: step 1 eager, step 2 captured and launched, step 3 replayed; the losses of
     * steps 2 and 3 come out of the graph and must match timm's */
    printf("forward + backward as a CUDA graph:\n");
    use_graph = 1;
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) run(refs[i]);
    use_graph = 0;
    bias_act_check(300, 300);
    out_of_bounds_check();
    poison_check();
    if (cudasim_problem[0]) {
        fprintf(stderr, "FAIL: cudasim: %s\n", cudasim_problem);
        failures++;
    }
    printf("%ld kernel launches, %ld thread runs\n", cudasim_launches, cudasim_threads_run);
#else
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) run(refs[i]);
#endif
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
#ifdef CUDA_VIT_SIM
    printf("cuda_vit_sim: all passed\n");
#else
    printf("cuda_vit_host: all passed\n");
#endif
    return 0;
}
