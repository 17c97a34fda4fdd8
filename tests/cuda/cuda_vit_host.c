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

#include "cuda/attention_path.h"
#include "cuda/vit.h"
#include "cuda_host_runtime.h"
#include "instbench/verify.h"

static int failures;
static int use_graph;     /* steps through cuda_vit_forward_backward_graph (eager, captured, replayed) */
static int run_attn_path; /* the attention path (CUDA_ATT_*) of run_ref's last step */

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

/* The step on REF's weights and batch against the CPU backend, and against timm where REF holds
 * timm's outputs (a fixture's; a synthetic REF, shapes_check's, has none).  PATH names it. */
static void run_ref(const char *path, const verify_reference *ref_in, int vs_timm)
{
    const verify_reference ref = *ref_in;
    ib_error err;
    run_attn_path = -1;
    ib_train_config cfg = ref.cfg;
    cfg.device = 0;
    model_layout layout;
    cuda_vit v;
    if (model_layout_build(&cfg.model, &layout, &err) || cuda_vit_init(&v, &cfg, &layout, &err)) {
        fprintf(stderr, "FAIL %s: init: %s\n", path, err.msg);
        failures++;
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
        if (vs_timm && verify_compare(&ref, &ref.expected, &got, &tol, &rep, &err) == 0) {
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
        if (vs_timm)
            printf("%s: loss %.6f (timm %.6f), %d steps, last %.6f (timm %.6f)\n", path, got.loss, ref.expected.loss,
                   ref.steps, got.losses[ref.steps - 1], ref.expected.losses[ref.steps - 1]);
        else
            printf("%s: loss %.6f, %d step%s, attention %s\n", path, got.loss, ref.steps, ref.steps == 1 ? "" : "s",
                   v.attn_path == CUDA_ATT_CUDNN ? "cuDNN" : "unfused");
    }
    run_attn_path = v.attn_path;
    verify_outputs_free(&got);
    cuda_vit_free(&v);
    model_layout_free(&layout);
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
    run_ref(path, &ref, 1);
    verify_reference_free(&ref);
}

/* CUDA_VIT_FAIL_FAST (tests/cuda/mutation_check.sh): stop at the first failure, which is all a
 * mutation needs to be caught, instead of running every remaining case. */
static void fail_fast(void)
{
    if (failures && getenv("CUDA_VIT_FAIL_FAST")) {
        fprintf(stderr, "%d failure(s); CUDA_VIT_FAIL_FAST: stopping\n", failures);
        exit(1);
    }
}

static void run(const char *path)
{
    run_one(path);
    fail_fast();
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
        cuk_store_act(dst, IB_PREC_FP32, src, 2048, s); /* 16-byte accesses: store_act_vec_kernel */
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
                          "in kernel store_act_vec_kernel, block (", "thread ("};
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
/* A float uniform in [-1, 1) from the state *x (xorshift) */
static float next_uniform(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return (float)((*x >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* n floats of next_uniform */
static void fill_uniform(float *a, size_t n, uint64_t *x)
{
    for (size_t i = 0; i < n; i++) a[i] = next_uniform(x);
}

/* A rule the cuBLASLt stand-in saw broken since its last reset is a failure. */
static void standin_violation_check(void)
{
    if (standin.violation[0]) {
        fprintf(stderr, "FAIL: cuBLASLt stand-in: %s\n", standin.violation);
        failures++;
    }
}

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
    for (size_t i = 0; i < (size_t)M * N; i++) dy[i] = cpu_bf16_from_f32(next_uniform(&x));
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

/* max |got - want| over max |want| (0 for two zero vectors), N elements at stride ld */
static double rel_err(const float *got, const float *want, int rows, int N, ptrdiff_t ld)
{
    double e = 0, m = 1e-30;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < N; j++) {
            const double g = got[r * ld + j], w = want[r * ld + j];
            if (!(fabs(g - w) <= e)) e = fabs(g - w);
            if (fabs(w) > m) m = fabs(w);
        }
    return e / m;
}

/* The LayerNorm kernels (forward with the residual add; backward with dw, db and the next Linear's
 * dy: bias column sums and act copy) against src/cpu/layernorm.c, the CPU backend's: every float4
 * width (D = 36 ... 900 take 1 ... 8 float4 per lane), the scalar kernels (D not a multiple of 4,
 * D over 1024), padded rows (the final norm's class-token rows lie T*D apart), fp32 and bf16 (where
 * the residual and dy are bf16 too, as the Linears around the norm write them).
 * NEXT: 0 nothing of the next Linear, 1 its bias sums and (bf16) act copy, 2 the act copy alone. */
static void layernorm_check(int R, int D, int pad, ib_precision dt, int next)
{
    const ptrdiff_t xs = D + pad; /* x rows; dx rows dense when the Linear's dy is finished here */
    const ptrdiff_t dxs = next ? D : xs;
    const size_t nx = (size_t)R * xs, es = ib_precision_size(dt);
    float *x_in, *res, *x_out, *w, *b, *mean, *rstd, *dy, *dx, *dw, *db, *ndb, *partial;
    void *y, *nact;
    const size_t part = cuk_layernorm_partial_floats(D);
    if (cudaMalloc((void **)&x_in, nx * 4) || cudaMalloc((void **)&res, nx * 4) ||
        cudaMalloc((void **)&x_out, nx * 4) || cudaMalloc((void **)&w, D * 4) || cudaMalloc((void **)&b, D * 4) ||
        cudaMalloc((void **)&mean, R * 4) || cudaMalloc((void **)&rstd, R * 4) ||
        cudaMalloc((void **)&dy, (size_t)R * D * 4) || cudaMalloc((void **)&dx, nx * 4) ||
        cudaMalloc((void **)&dw, D * 4) || cudaMalloc((void **)&db, D * 4) || cudaMalloc((void **)&ndb, D * 4) ||
        cudaMalloc((void **)&partial, part * 4) || cudaMalloc(&y, (size_t)R * D * es) ||
        cudaMalloc(&nact, (size_t)R * D * es)) {
        fprintf(stderr, "FAIL layernorm: cudaMalloc\n");
        failures++;
        return;
    }
    uint64_t st = 0x51ed27u + (uint64_t)R * 131 + (uint64_t)D * 7 + (uint64_t)pad + 2u * (uint64_t)dt + (uint64_t)next;
    fill_uniform(x_in, nx, &st), fill_uniform(res, nx, &st), fill_uniform(w, D, &st), fill_uniform(b, D, &st);
    fill_uniform(dy, (size_t)R * D, &st), fill_uniform(dx, nx, &st);
    for (int d = 0; d < D; d++) w[d] += 1.0f; /* as timm's init: weights near 1 */
    /* the residual and dy in the act dtype: under bf16 rounded copies, which both sides read */
    void *res_a = res, *dy_a = dy;
    if (dt == IB_PREC_BF16 &&
        (cudaMalloc(&res_a, nx * 2) != cudaSuccess || cudaMalloc(&dy_a, (size_t)R * D * 2) != cudaSuccess)) {
        fprintf(stderr, "FAIL layernorm: cudaMalloc\n");
        failures++;
        return;
    }
    if (dt == IB_PREC_BF16) {
        for (size_t i = 0; i < nx; i++) ((bf16 *)res_a)[i] = cpu_bf16_from_f32(res[i]);
        for (size_t i = 0; i < (size_t)R * D; i++) ((bf16 *)dy_a)[i] = cpu_bf16_from_f32(dy[i]);
    }
    /* the CPU's copies: same inputs, its own outputs */
    float *cx = malloc(nx * 4), *cy = malloc((size_t)R * D * 4), *cm = malloc(R * 4), *cr = malloc(R * 4),
          *cdx = malloc(nx * 4), *cdw = malloc(D * 4), *cdb = malloc(D * 4), *cndb = malloc(D * 4),
          *cact = malloc((size_t)R * D * 4), *gy = malloc((size_t)R * D * 4), *gact = malloc((size_t)R * D * 4);
    void *cyraw = malloc((size_t)R * D * es), *cactraw = malloc((size_t)R * D * es);
    memcpy(cdx, dx, nx * 4);
    cpu_layernorm_forward(x_in, res_a, cx, w, b, cyraw, dt, cm, cr, R, D, xs);
    cpu_layernorm_backward(dy_a, dt, cx, cm, cr, w, cdx, dxs, cdw, cdb, R, D, xs,
                           next && dt == IB_PREC_BF16 ? cactraw : NULL, dt, next == 1 ? cndb : NULL);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int rc = cuk_layernorm_forward(x_in, res_a, x_out, w, b, y, dt, mean, rstd, R, D, xs, s) != cudaSuccess ||
             cuk_layernorm_backward(dy_a, dt, x_out, mean, rstd, w, dx, dxs, dw, db, R, D, xs,
                                    next && dt == IB_PREC_BF16 ? nact : NULL, dt, next == 1 ? ndb : NULL, partial,
                                    s) != cudaSuccess ||
             cudaStreamSynchronize(s) != cudaSuccess;
    cudaStreamDestroy(s);
    double worst = 0;
    const char *what = "";
#define WORST(name, e)                               \
    do {                                             \
        const double e_ = (e);                       \
        if (!(e_ <= worst)) worst = e_, what = name; \
    } while (0)
    if (!rc) {
        for (size_t i = 0; i < (size_t)R * D; i++) {
            gy[i] = dt == IB_PREC_BF16 ? cpu_f32_from_bf16(((bf16 *)y)[i]) : ((float *)y)[i];
            cy[i] = dt == IB_PREC_BF16 ? cpu_f32_from_bf16(((bf16 *)cyraw)[i]) : ((float *)cyraw)[i];
        }
        WORST("x_out", rel_err(x_out, cx, R, D, xs));
        WORST("mean", rel_err(mean, cm, 1, R, 0));
        WORST("rstd", rel_err(rstd, cr, 1, R, 0));
        /* bf16: a value next to a rounding boundary may round either way, one bf16 step (2^-8) */
        WORST("y", rel_err(gy, cy, R, D, D) / (dt == IB_PREC_BF16 ? 8e2 : 1));
        WORST("dx", rel_err(dx, cdx, R, D, dxs));
        WORST("dw", rel_err(dw, cdw, 1, D, 0));
        WORST("db", rel_err(db, cdb, 1, D, 0));
        if (next == 1) WORST("next db", rel_err(ndb, cndb, 1, D, 0));
        if (next && dt == IB_PREC_BF16) {
            for (size_t i = 0; i < (size_t)R * D; i++)
                gact[i] = cpu_f32_from_bf16(((bf16 *)nact)[i]), cact[i] = cpu_f32_from_bf16(((bf16 *)cactraw)[i]);
            WORST("next act", rel_err(gact, cact, R, D, D) / 8e2);
        }
    }
#undef WORST
    printf("layernorm R=%d D=%d%s %s%s: worst error %.2g (%s)\n", R, D, pad ? " padded rows" : "",
           dt == IB_PREC_BF16 ? "bf16" : "fp32",
           next == 1 ? ", next Linear's dy"
           : next    ? ", next Linear's act copy alone"
                     : "",
           worst, what);
    if (rc || !(worst < 1e-5)) {
        fprintf(stderr, "FAIL layernorm R=%d D=%d: %s, worst error %.3g in %s\n", R, D,
                rc ? "launch failed" : "differs from the CPU backend", worst, what);
        failures++;
    }
    free(cx), free(cy), free(cm), free(cr), free(cdx), free(cdw), free(cdb), free(cndb), free(cact), free(gy),
        free(gact), free(cyraw), free(cactraw);
    cudaFree(x_in), cudaFree(res), cudaFree(x_out), cudaFree(w), cudaFree(b), cudaFree(mean), cudaFree(rstd);
    cudaFree(dy), cudaFree(dx), cudaFree(dw), cudaFree(db), cudaFree(ndb), cudaFree(partial), cudaFree(y),
        cudaFree(nact);
    if (dt == IB_PREC_BF16) cudaFree(res_a), cudaFree(dy_a);
}

/* GELU forward on a length the vector kernels do not take (n % 4 != 0) and ones they do (n % 8:
 * eight bf16 a thread), bf16 in and out (fc1's h as autocast keeps it), against the CPU backend's. */
static void gelu_check(size_t n)
{
    bf16 *h, *a;
    float *hf = malloc(n * 4);
    if (!hf || cudaMalloc((void **)&h, n * 2) || cudaMalloc((void **)&a, n * 2)) {
        fprintf(stderr, "FAIL gelu: cudaMalloc\n");
        failures++;
        free(hf);
        return;
    }
    uint64_t st = 0xbadc0ffeu + n;
    fill_uniform(hf, n, &st);
    for (size_t i = 0; i < n; i++) h[i] = cpu_bf16_from_f32(hf[i] * 4.0f);
    free(hf);
    bf16 *want = malloc(n * 2);
    cpu_gelu_forward(h, want, IB_PREC_BF16, n);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const int rc = cuk_gelu_forward(h, a, IB_PREC_BF16, n, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess;
    cudaStreamDestroy(s);
    size_t off = 0; /* elements more than one bf16 step from the CPU's */
    for (size_t i = 0; i < n && !rc; i++) {
        const float g = cpu_f32_from_bf16(a[i]), w = cpu_f32_from_bf16(want[i]);
        off += !(fabsf(g - w) <= fabsf(w) * (1.0f / 128) + 1e-30f);
    }
    printf("gelu forward, %zu elements: %zu off by more than one bf16 step\n", n, off);
    if (rc || off) {
        fprintf(stderr, "FAIL gelu %zu: %s\n", n, rc ? "launch failed" : "differs from the CPU backend");
        failures++;
    }
    free(want);
    cudaFree(h), cudaFree(a);
}

/* The fp32 -> bf16 copy (the bf16 weight copy at init; the LayerNorm backward's scalar path) on a
 * length the vector kernel takes and one it does not, bit for bit against the CPU's rounding:
 * random values, ties to even both ways, a NaN and infinities. */
static void store_act_check(size_t n)
{
    float *src;
    bf16 *dst;
    if (cudaMalloc((void **)&src, n * 4) || cudaMalloc((void **)&dst, n * 2)) {
        fprintf(stderr, "FAIL store_act: cudaMalloc\n");
        failures++;
        return;
    }
    uint64_t st = 0x5eedu + n;
    fill_uniform(src, n, &st);
    const uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x7fc00001u, 0x7f800000u, 0xff800000u, 0x80000000u};
    for (size_t i = 0; i < sizeof special / sizeof *special && i < n; i++) memcpy(&src[i], &special[i], 4);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const int rc =
        cuk_store_act(dst, IB_PREC_BF16, src, n, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess;
    cudaStreamDestroy(s);
    size_t off = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const bf16 want = cpu_bf16_from_f32(src[i]);
        /* NaN: any quiet NaN will do, as torch's */
        off += isnan(src[i]) ? !isnan(cpu_f32_from_bf16(dst[i])) : dst[i] != want;
    }
    printf("fp32 -> bf16 copy, %zu elements: %zu differ from the CPU's rounding\n", n, off);
    if (rc || off) {
        fprintf(stderr, "FAIL store_act %zu: %s\n", n, rc ? "launch failed" : "differs from the CPU backend");
        failures++;
    }
    cudaFree(src), cudaFree(dst);
}

/* One step of the real models' shapes (timm's presets at DEPTH blocks, batch B, one step) against
 * the CPU backend, on timm-like initial weights and a random batch: the widths (ViT-S 384, ViT-B 768,
 * ViT-L 1024), the heads (6, 12, 16 of 64) and the token counts (197 at 224 px, 577 at 384 px:
 * odd, the T x T rows padded to 200 and 584) of the runs a GPU session makes, which the fixtures'
 * small models do not reach.  bf16 takes the attention path a GPU with cuDNN takes unless UNFUSED. */
static void shape_check(const char *preset, int img, int depth, int B, ib_precision prec, int unfused)
{
    verify_reference ref;
    ib_error err;
    memset(&ref, 0, sizeof ref);
    if (model_preset(preset, &ref.cfg.model, &err)) {
        fprintf(stderr, "FAIL %s: %s\n", preset, err.msg);
        failures++;
        return;
    }
    ref.cfg.model.img_size = img, ref.cfg.model.depth = depth;
    ref.cfg.batch_size = B, ref.cfg.precision = prec, ref.cfg.seed = 7;
    backend_default_optim(IB_OPT_ADAM, &ref.cfg.optim);
    ref.steps = 1;
    const vit_config *c = &ref.cfg.model;
    const size_t nimg = (size_t)B * c->in_chans * img * img;
    if (model_layout_build(c, &ref.layout, &err) || !(ref.params = malloc(ref.layout.total * 4)) ||
        !(ref.images = malloc(nimg * 4)) || !(ref.labels = malloc((size_t)B * 4))) {
        fprintf(stderr, "FAIL %s: setting up\n", preset);
        failures++;
        verify_reference_free(&ref);
        return;
    }
    model_init_params(c, &ref.layout, ref.params, ref.cfg.seed);
    uint64_t st = 0x5a17u + (uint64_t)img * 31 + (uint64_t)B;
    fill_uniform(ref.images, nimg, &st);
    for (int i = 0; i < B; i++) ref.labels[i] = (int32_t)((uint64_t)(next_uniform(&st) + 1.0f) * 499u) % c->num_classes;
    char name[160];
    snprintf(name, sizeof name, "%s at %d px (T=%d), depth %d, batch %d, %s%s", preset, img, model_seq_len(c), depth, B,
             prec == IB_PREC_BF16 ? "bf16" : "fp32", unfused ? ", unfused attention" : "");
    if (unfused) setenv("INSTBENCH_CUDA_ATTENTION", "unfused", 1);
    const int before = failures;
    run_ref(name, &ref, 0);
    unsetenv("INSTBENCH_CUDA_ATTENTION");
    /* the stand-in of cuDNN takes every one of these shapes (head dim 64), as cuDNN does on a GPU;
     * unfused asked for is unfused, even at a shape that ran cuDNN before in this process */
    const int want = prec == IB_PREC_BF16 && !unfused ? CUDA_ATT_CUDNN : CUDA_ATT_UNFUSED;
    if (failures == before && run_attn_path != want) {
        fprintf(stderr, "FAIL %s: attention ran %s, not %s\n", name, cuda_attention_name(run_attn_path),
                cuda_attention_name(want));
        failures++;
    }
    verify_reference_free(&ref);
    fail_fast();
}

/* cuda_vit_sim shapes: the real models' shapes alone (ctest cuda_vit_shapes, about 35 s) */
static void shapes_check(void)
{
    standin_reset();
    for (int p = 0; p < 2; p++) {
        const ib_precision prec = p ? IB_PREC_FP32 : IB_PREC_BF16;
        /* ViT-S: 6 heads, batch 1 over 2 blocks (the second block's norms add the first's fc2
         * output; each block's saved attention statistics, 6 x 197 floats, follow the previous
         * block's); the tiny model of gpu_check.sh's realistic step (3 heads, batch 4); ViT-B at 224
         * px; ViT-S at 384 px, 577 tokens; ViT-L's 1024 wide, 16 heads under bf16 only (the GPU
         * session's precision: fp32 adds 5 s and no width the others lack) */
        shape_check("vit_small_patch16_224", 224, 2, 1, prec, 0);
        shape_check("vit_tiny_patch16_224", 224, 1, 4, prec, 0);
        shape_check("vit_base_patch16_224", 224, 1, 1, prec, 0);
        shape_check("vit_small_patch16_224", 384, 1, 1, prec, 0);
        if (prec == IB_PREC_BF16) shape_check("vit_large_patch16_224", 224, 1, 1, prec, 0);
    }
    shape_check("vit_base_patch16_224", 224, 1, 1, IB_PREC_BF16, 1); /* bf16 where cuDNN refuses */
    standin_violation_check();
}
#endif

#ifdef CUDA_VIT_SIM
/* cuda_vit_sim: the kernels on their own, then the fixtures REFS (N) on every road */
static void run_all_sim(const char *const *refs, size_t n)
{
    /* the kernels on their own first: seconds, where a training run takes several (a mutation in
     * a kernel is caught here under CUDA_VIT_FAIL_FAST) */
    bias_act_check(300, 300);
    bias_act_check(1100, 300); /* 5 rows a chunk: a full group of the float4 kernel's unrolled rows and a tail */
    /* N a multiple of 8: the kernel of eight bf16 a lane, its last warp one lane wide; 37 rows,
     * an odd count of one-row chunks, leave the last block's second chunk out */
    bias_act_check(1100, 776);
    bias_act_check(37, 264);
    /* 1 ... 8 float4 per lane (every instance of the float4 kernels), then the scalar kernels */
    const int widths[] = {36, 132, 260, 388, 516, 644, 772, 900, 30, 1028};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        layernorm_check(37, widths[i], 0, i % 2 ? IB_PREC_FP32 : IB_PREC_BF16, 1);
        layernorm_check(5, widths[i], 8, IB_PREC_BF16, 0);
    }
    /* more rows than chunks x warps: each warp strides over several rows (ViT-B b128: 99 rows a
     * chunk, 12 or 13 a warp), its column sums carried from row to row */
    layernorm_check(2400, 36, 0, IB_PREC_BF16, 1);
    layernorm_check(37, 36, 0, IB_PREC_BF16, 2); /* the act copy without the bias sums: float4 */
    layernorm_check(37, 30, 0, IB_PREC_BF16, 2); /* and scalar */
    gelu_check(1002);
    gelu_check(1004); /* four bf16 a thread */
    gelu_check(1000); /* eight */
    store_act_check(1002);
    store_act_check(1000);
    fail_fast();
    /* CUDA graphs: step 1 eager, step 2 captured and launched, step 3 replayed; the losses of
     * steps 2 and 3 come out of the graph and must match timm's.  Before the eager runs below (a
     * mutation of the capture is caught in seconds), on the cuBLAS fallback as it has always run. */
    standin_reset();
    standin.heuristic = STANDIN_HEURISTIC_NOT_SUPPORTED;
    printf("forward + backward as a CUDA graph:\n");
    use_graph = 1;
    for (size_t i = 0; i < n; i++) run(refs[i]);
    use_graph = 0;
    standin_violation_check();
    fail_fast();
    for (int road = 0; road < 2; road++) {
        standin_reset();
        standin.heuristic = road ? STANDIN_HEURISTIC_NOT_SUPPORTED : STANDIN_HEURISTIC_ALGO;
        printf("GEMMs through %s:\n", road ? "the cuBLAS fallback" : "cuBLASLt");
        for (size_t i = 0; i < n; i++) run(refs[i]);
        standin_violation_check();
        if ((road ? standin.blas_gemms : standin.lt_matmuls) == 0) {
            fprintf(stderr, "FAIL: no GEMM went through %s\n", road ? "cuBLAS" : "cuBLASLt");
            failures++;
        }
    }
    /* the bf16 unfused path by name (where cuDNN cannot run) */
    printf("bf16 with unfused attention:\n");
    setenv("INSTBENCH_CUDA_ATTENTION", "unfused", 1);
    for (int i = 0; i < 2; i++) { /* fixture a ran cuDNN above: asked now, it runs unfused */
        const char *path = i ? "data/ref_b_adamw_bf16.safetensors" : "data/ref_a_adam_bf16.safetensors";
        run(path);
        if (run_attn_path != CUDA_ATT_UNFUSED) {
            fprintf(stderr, "FAIL %s: INSTBENCH_CUDA_ATTENTION=unfused, and attention ran %s\n", path,
                    cuda_attention_name(run_attn_path));
            failures++;
        }
    }
    unsetenv("INSTBENCH_CUDA_ATTENTION");
    out_of_bounds_check();
    poison_check();
}
#endif

int main(int argc, char **argv)
{
    const char *refs[] = {"data/ref_a_adam_fp32.safetensors", "data/ref_a_adam_bf16.safetensors",
                          "data/ref_b_adamw_fp32.safetensors", "data/ref_b_adamw_bf16.safetensors"};
#ifdef CUDA_VIT_SIM
    if (argc > 1 && !strcmp(argv[1], "shapes")) shapes_check();
    else run_all_sim(refs, sizeof refs / sizeof refs[0]);
    if (cudasim_problem[0]) {
        fprintf(stderr, "FAIL: cudasim: %s\n", cudasim_problem);
        failures++;
    }
    printf("%ld kernel launches, %ld thread runs\n", cudasim_launches, cudasim_threads_run);
#else
    (void)argc, (void)argv;
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
