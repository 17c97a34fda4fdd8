/* cuda_vit_host: the CUDA backend's training step (src/cuda/vit.c) run on the CPU through
 * tests/cuda_host_shim.c, against the timm reference fixtures and the CPU backend.  It checks
 * everything vit.c decides (which buffer feeds which op, parameter offsets, GEMM shapes,
 * transposes, strides and the padded attention layout, bf16 cast points, op order, the optimizer
 * loop and the gradient-hook ranges) without a GPU.  Built with CUDA_VIT_SIM it is cuda_vit_sim:
 * the same step with the real .cu kernels (tests/cudasim) and the real gemm.c (on the cuBLASLt
 * stand-in) instead of the shim's loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/vit.h"
#include "cuda_host_runtime.h"
#include "instbench/verify.h"

static int failures;
static int use_graph;   /* steps through cuda_vit_forward_backward_graph (eager, captured, replayed) */

typedef struct hook_log {
    size_t next_end;   /* the previous range's start: ranges must descend without gaps */
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
    verify_outputs got = {.logits = malloc(BC * 4), .grads = malloc(P * 4), .losses = malloc(ref.steps * 4),
                          .steps = ref.steps};
    int rc = 0;
    for (int s = 0; s < ref.steps && !rc; s++) {
        hook_log h = {P, 0, 0};
        float loss = 0;
        if (use_graph)   /* no gradient hook: the ranges are not reported */
            rc = (s > 0 && cuda_vit_optimizer_step(&v, &err)) || cuda_vit_forward_backward_graph(&v, &err) ||
                 cuda_vit_read_loss(&v, &loss, &err);
        else
            rc = (s > 0 && cuda_vit_optimizer_step(&v, &err)) || cuda_vit_forward(&v, &err) ||
                 cuda_vit_backward(&v, on_ready, &h, &err) || cuda_vit_read_loss(&v, &loss, &err);
        if (!use_graph && (h.calls != model_grad_range_count(&cfg.model) || h.bad || h.next_end != 0)) {
            fprintf(stderr, "FAIL %s: gradient hook: %d calls (want %d), %d out of order, ends at %zu\n", path,
                    h.calls, model_grad_range_count(&cfg.model), h.bad, h.next_end);
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
                        fprintf(stderr, "  %-32s rel_l2 %.3g max_rel %.3g\n", rep.checks[i].name, rep.checks[i].err.rel_l2,
                                rep.checks[i].err.max_rel);
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

/* CUDA_VIT_FAIL_FAST (scripts/mutation_check.sh): stop at the first failure, which is all a
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
/* cuda_vit_sim: the same checks with the real kernels (tests/cudasim) and the real gemm.c on the
 * cuBLASLt stand-in, once through cuBLASLt and once with every GEMM falling back to cuBLAS. */
#include "cuda_cublaslt_standin.h"
#include "cuda/kernels.h"
#include "cpu/ops.h"
#include <math.h>
extern long cudasim_launches, cudasim_threads_run;
extern char cudasim_problem[256];

static double rel_l2(const double *want, const float *got, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += (got[i] - want[i]) * (got[i] - want[i]), den += want[i] * want[i];
    return sqrt(num / (den > 0 ? den : 1));
}

/* The fused attention kernels on their own, at shapes the fixtures do not reach (head dims 64 and
 * 72, which pad to 64 and 128 and take the other tile configurations; 197 tokens as ViT-B/16 has;
 * several key and query tiles), against attention computed here in double precision from the same
 * bf16 q, k, v and dO: out and the gradients within bf16 rounding, lse within fp32 rounding. */
static void attention_kernels_check(int B, int T, int H, int hd)
{
    const size_t D = (size_t)H * hd, n3 = (size_t)B * T * 3 * D, n1 = (size_t)B * T * D, nr = (size_t)B * H * T;
    bf16 *qkv, *att, *datt;
    float *lse, *dlt, *dqkv;
    if (cudaMalloc((void **)&qkv, n3 * 2) || cudaMalloc((void **)&att, n1 * 2) || cudaMalloc((void **)&datt, n1 * 2) ||
        cudaMalloc((void **)&lse, nr * 4) || cudaMalloc((void **)&dlt, nr * 4) || cudaMalloc((void **)&dqkv, n3 * 4)) {
        fprintf(stderr, "FAIL attention kernels: cudaMalloc\n");
        failures++;
        return;
    }
    uint64_t x = 0x1234567u + (uint64_t)T * 131 + hd;
    for (size_t i = 0; i < n3 + n1; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const float u = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 4.0f - 2.0f;
        if (i < n3) qkv[i] = cpu_bf16_from_f32(u);
        else datt[i - n3] = cpu_bf16_from_f32(u * 0.1f);
    }
    const float scale = 1.0f / sqrtf((float)hd);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int rc = cuk_attention_fused_forward(qkv, att, lse, B, T, H, hd, scale, s) != cudaSuccess ||
             cuk_attention_fused_backward(qkv, att, datt, lse, dlt, dqkv, B, T, H, hd, scale, s) != cudaSuccess ||
             cudaStreamSynchronize(s) != cudaSuccess;
    cudaStreamDestroy(s);
    /* the reference: softmax(q k^T scale) v and its gradients, in double */
    double *o = calloc(n1, sizeof *o), *g = calloc(n3, sizeof *g), *L = calloc(nr, sizeof *L);
    double *p = malloc((size_t)T * sizeof *p), *dp = malloc((size_t)T * sizeof *dp);
    float *got_o = malloc(n1 * sizeof *got_o);
#define Q(b, t, w, h, d) (double)cpu_f32_from_bf16(qkv[(((size_t)(b) * T + (t)) * 3 + (w)) * D + (size_t)(h) * hd + (d)])
#define G(b, t, h, d) (double)cpu_f32_from_bf16(datt[((size_t)(b) * T + (t)) * D + (size_t)(h) * hd + (d)])
#define GI(b, t, w, h, d) g[(((size_t)(b) * T + (t)) * 3 + (w)) * D + (size_t)(h) * hd + (d)]
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double mx = -INFINITY, sum = 0, dot = 0;
                for (int j = 0; j < T; j++) {
                    double z = 0;
                    for (int d = 0; d < hd; d++) z += Q(b, t, 0, h, d) * Q(b, j, 1, h, d);
                    p[j] = z * scale, mx = p[j] > mx ? p[j] : mx;
                }
                for (int j = 0; j < T; j++) sum += (p[j] = exp(p[j] - mx));
                for (int j = 0; j < T; j++) p[j] /= sum;
                L[((size_t)b * H + h) * T + t] = mx + log(sum);
                for (int d = 0; d < hd; d++) {
                    double z = 0;
                    for (int j = 0; j < T; j++) z += p[j] * Q(b, j, 2, h, d);
                    o[((size_t)b * T + t) * D + (size_t)h * hd + d] = z;
                }
                for (int j = 0; j < T; j++) {
                    double z = 0;
                    for (int d = 0; d < hd; d++) z += G(b, t, h, d) * Q(b, j, 2, h, d);
                    dp[j] = z, dot += p[j] * z;
                }
                for (int j = 0; j < T; j++) {
                    const double ds = p[j] * (dp[j] - dot) * scale;
                    for (int d = 0; d < hd; d++) {
                        GI(b, t, 0, h, d) += ds * Q(b, j, 1, h, d);
                        GI(b, j, 1, h, d) += ds * Q(b, t, 0, h, d);
                        GI(b, j, 2, h, d) += p[j] * G(b, t, h, d);
                    }
                }
            }
#undef Q
#undef G
#undef GI
    for (size_t i = 0; i < n1; i++) got_o[i] = cpu_f32_from_bf16(att[i]);
    const double e_o = rel_l2(o, got_o, n1), e_g = rel_l2(g, dqkv, n3), e_l = rel_l2(L, lse, nr);
    printf("fused attention B=%d T=%d H=%d hd=%d: out rel L2 %.2g, dq/dk/dv %.2g, lse %.2g\n", B, T, H, hd, e_o, e_g, e_l);
    if (rc || !(e_o < 1e-2) || !(e_g < 2e-2) || !(e_l < 1e-5)) {
        fprintf(stderr, "FAIL attention kernels B=%d T=%d H=%d hd=%d: %s out %.3g, grads %.3g, lse %.3g\n", B, T, H, hd,
                rc ? "launch failed;" : "", e_o, e_g, e_l);
        failures++;
    }
    free(o), free(g), free(L), free(p), free(dp), free(got_o);
    cudaFree(qkv), cudaFree(att), cudaFree(datt), cudaFree(lse), cudaFree(dlt), cudaFree(dqkv);
}
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
        _exit(0);   /* not reached: the read past src faults */
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
        fprintf(stderr, "FAIL out-of-bounds read (status 0x%x): wanted the allocation, offset, kernel, block and thread in:\n%s\n",
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
        fprintf(stderr, "FAIL poison: %d words of fresh memory are not signalling NaNs (or not zero after cudaMemset)\n", bad);
        failures++;
    }
    cudaStreamDestroy(s);
    cudaFree(dev);
    cudaFreeHost(host);
}

/* cuda_vit_sim --trace FIXTURE OUT: the launches and cuBLASLt matmuls of one training step
 * (forward, backward, optimizer) on FIXTURE's config into OUT (CUDASIM_TRACE's format), for
 * scripts/gpu_traffic_model.py --check-trace. */
static int trace_step(const char *path, const char *out)
{
    verify_reference ref;
    ib_error err;
    model_layout layout;
    cuda_vit v;
    if (verify_reference_load(path, &ref, &err)) return fprintf(stderr, "%s: %s\n", path, err.msg), 1;
    if (model_layout_build(&ref.cfg.model, &layout, &err) || cuda_vit_init(&v, &ref.cfg, &layout, &err))
        return fprintf(stderr, "%s: init: %s\n", path, err.msg), 1;
    memcpy(v.buf.params, ref.params, layout.total * sizeof(float));
    memcpy(v.buf.images, ref.images, (size_t)ref.cfg.batch_size * ref.cfg.model.in_chans * ref.cfg.model.img_size *
                                         ref.cfg.model.img_size * sizeof(float));
    memcpy(v.buf.labels, ref.labels, (size_t)ref.cfg.batch_size * sizeof(int32_t));
    v.have_inputs = 1;
    remove(out);
    setenv("CUDASIM_TRACE", out, 1);
    const int rc = cuda_vit_forward(&v, &err) || cuda_vit_backward(&v, NULL, NULL, &err) ||
                   cuda_vit_optimizer_step(&v, &err) || cudaStreamSynchronize(v.stream) != cudaSuccess;
    unsetenv("CUDASIM_TRACE");
    if (rc) fprintf(stderr, "%s: step: %s\n", path, err.msg);
    cuda_vit_free(&v);
    model_layout_free(&layout);
    verify_reference_free(&ref);
    return rc;
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
        fprintf(stderr, "FAIL bias_act %d x %d: %s, worst error %.3g\n", M, N, rc ? "launch failed" : "wrong sums", worst);
        failures++;
    }
    cudaFree(dy), cudaFree(db), cudaFree(partial);
}
#endif

/* The fused path only where the loaded fused kernels were compiled for 8.0+ (issue 25): a build
 * with only compute_75 code JIT-compiled on an A100 has trapping (once: empty) fused kernels, and
 * a GPU of compute capability 8.0+ must not be taken as proof of 8.0+ code. */
static void fused_needs_sm80_code(void)
{
    ib_train_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.precision = IB_PREC_BF16, cfg.model.embed_dim = 64, cfg.model.num_heads = 2, cfg.device = 1;
    const int want[] = {90, 80, 75, 86};
    setenv("INSTBENCH_CUDA_ATTENTION", "fused", 1);   /* the fused kernels run only when asked for */
    for (int i = 0; i < 4; i++) {
        shim_code_version = want[i];
        const int fused = cuda_vit_attention_fused(&cfg);
        if (fused != (want[i] >= 80)) {
            fprintf(stderr, "FAIL: fused kernels compiled for %d.%d: fused attention %s\n", want[i] / 10, want[i] % 10,
                    fused ? "chosen" : "refused");
            failures++;
        }
    }
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != 0) {
        fprintf(stderr, "FAIL: asking device 1's kernels left device %d current, not 0\n", cur);
        failures++;
    }
    unsetenv("INSTBENCH_CUDA_ATTENTION");
    shim_code_version = 90;
}

int main(int argc, char **argv)
{
#ifdef CUDA_VIT_SIM
    if (argc == 4 && !strcmp(argv[1], "--trace")) return trace_step(argv[2], argv[3]);
#endif
    (void)argc, (void)argv;
    fused_needs_sm80_code();
    if (failures && getenv("CUDA_VIT_FAIL_FAST")) return 1;
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
    /* each bf16 attention path by name: unfused (where cuDNN cannot run) and the fused kernels
     * (INSTBENCH_CUDA_ATTENTION=fused only: slower than unfused at every shape measured) */
    static const char *const paths[] = {"unfused", "fused"};
    for (int i = 0; i < 2; i++) {
        printf("bf16 with %s attention:\n", paths[i]);
        setenv("INSTBENCH_CUDA_ATTENTION", paths[i], 1);
        run("data/ref_a_adam_bf16.safetensors");
        run("data/ref_b_adamw_bf16.safetensors");
    }
    unsetenv("INSTBENCH_CUDA_ATTENTION");
    /* CUDA graphs: step 1 eager, step 2 captured and launched, step 3 replayed; the losses of
     * steps 2 and 3 come out of the graph and must match timm's */
    printf("forward + backward as a CUDA graph:\n");
    use_graph = 1;
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) run(refs[i]);
    use_graph = 0;
    bias_act_check(300, 300);
    attention_kernels_check(1, 197, 1, 64);
    attention_kernels_check(2, 19, 2, 72);
    attention_kernels_check(1, 40, 3, 9);
    out_of_bounds_check();
    poison_check();
    if (cudasim_problem[0]) {
        fprintf(stderr, "FAIL: cudasim: %s\n", cudasim_problem);
        failures++;
    }
    printf("%ld kernel launches, %ld thread runs\n", cudasim_launches, cudasim_threads_run);
#else
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) run(refs[i]);
    setenv("INSTBENCH_CUDA_ATTENTION", "fused", 1);   /* the fused kernels' shim, asked for by name */
    run("data/ref_a_adam_bf16.safetensors");
    run("data/ref_b_adamw_bf16.safetensors");
    unsetenv("INSTBENCH_CUDA_ATTENTION");
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
