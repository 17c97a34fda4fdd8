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
#include "instbench/verify.h"

static int failures;

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

static void run(const char *path)
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
        rc = (s > 0 && cuda_vit_optimizer_step(&v, &err)) || cuda_vit_forward(&v, &err) ||
             cuda_vit_backward(&v, on_ready, &h, &err) || cuda_vit_read_loss(&v, &loss, &err);
        if (h.calls != model_grad_range_count(&cfg.model) || h.bad || h.next_end != 0) {
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

#ifdef CUDA_VIT_SIM
/* cuda_vit_sim: the same checks with the real kernels (tests/cudasim) and the real gemm.c on the
 * cuBLASLt stand-in, once through cuBLASLt and once with every GEMM falling back to cuBLAS. */
#include "cuda_cublaslt_standin.h"
extern long cudasim_launches, cudasim_threads_run;
extern char cudasim_problem[256];
#endif

int main(void)
{
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
