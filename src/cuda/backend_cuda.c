/* cuda/backend_cuda: the ib_backend interface over cuda_vit, plus device facts for sysinfo. */
#include "cuda/api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#ifdef INSTBENCH_HAVE_NCCL
#include <nccl.h>
#endif

#include "cuda/attention_path.h"
#include "cuda/check.h"
#include "cuda/gemm_rate.h"
#include "cuda/vit.h"
#include "instbench/backend_impl.h"

static cuda_vit *impl(ib_backend *b) { return (cuda_vit *)b->impl; }

int cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* no driver / no device: not an error for the caller */
        return 0;
    }
    return n;
}

/* Facts about one device without making it current: cudaSetDevice would create a context there
 * (CUDA 12+ does so eagerly), so every per-GPU process probing device d would also hold a context
 * (and its memory) on the device it switched back to.  Free memory needs a context, so it is read
 * only for the device already current in this thread (0 = unknown otherwise). */
int cuda_device_info_get(int device, cuda_device_info *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    CUDA_TRY(cudaDeviceGetAttribute(&out->cc_major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_TRY(cudaDeviceGetAttribute(&out->cc_minor, cudaDevAttrComputeCapabilityMinor, device));
    CUDA_TRY(cudaDeviceGetAttribute(&out->sm_count, cudaDevAttrMultiProcessorCount, device));
    struct cudaDeviceProp p; /* the name and total memory: driver queries, no context */
    CUDA_TRY(cudaGetDeviceProperties(&p, device));
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->memory_bytes = p.totalGlobalMem;
    int cur = -1;
    size_t fr = 0, tot = 0;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == device && cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        out->free_bytes = fr;
    cudaGetLastError();
    return 0;
}

static int device_describe(int device, ib_device_desc *out, ib_error *err)
{
    cuda_device_info di;
    memset(out, 0, sizeof *out);
    if (cuda_device_info_get(device, &di, err)) return -1;
    snprintf(out->name, sizeof out->name, "%s", di.name);
    out->memory_bytes = di.memory_bytes;
    out->cc_major = di.cc_major, out->cc_minor = di.cc_minor;
    return 0;
}

static int device_memory_free(int device, uint64_t *bytes, ib_error *err)
{
    size_t fr = 0, tot = 0;
    *bytes = 0;
    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaFree(NULL)); /* the context exists from here on (lazy before CUDA 12) */
    CUDA_TRY(cudaMemGetInfo(&fr, &tot));
    *bytes = fr;
    return 0;
}

static void version_str(int v, char *out, size_t n)
{
    snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10); /* 12040 -> "12.4" */
}

/* Whether a GPU is usable, and if not why.  A driver older than the runtime this module was built
 * against is the common failure after a toolkit upgrade (or on an old AMI): cudaGetDeviceCount
 * then fails with cudaErrorInsufficientDriver, which must not read as "no GPU".  A driver that is
 * older only in the minor version still runs (CUDA minor version compatibility) as long as the
 * device count succeeds, so only a failing query is reported as a driver problem. */
static int probe(char *why, size_t why_size)
{
    int n = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    cudaGetLastError();
    if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0; /* 0: no driver installed */
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
    cudaGetLastError();
    char dv[32] = "", rv[32] = "";
    version_str(drv, dv, sizeof dv);
    version_str(rt, rv, sizeof rv);
    if (e == cudaSuccess && n > 0) {
        if (drv > 0 && rt > 0 && drv < rt)
            ib_debug("cuda: the driver supports CUDA %s, older than this build's runtime %s (minor version "
                     "compatibility)",
                     dv, rv);
        return 1;
    }
    if (e == cudaErrorInsufficientDriver && drv == 0)
        snprintf(why, why_size, "no NVIDIA driver is installed or loaded (libcuda.so.1), so no usable GPU found");
    else if (e == cudaErrorInsufficientDriver || (e != cudaSuccess && drv > 0 && rt > 0 && drv < rt))
        snprintf(why, why_size, "the NVIDIA driver supports CUDA %s but this build needs CUDA %s: update the driver",
                 dv, rv);
    else if (e != cudaSuccess)
        snprintf(why, why_size, "no usable GPU found (%s: %s)", cudaGetErrorName(e), cudaGetErrorString(e));
    else snprintf(why, why_size, "no usable GPU found (the driver sees no device)");
    return 0;
}

void cuda_versions_get(cuda_versions *out)
{
    memset(out, 0, sizeof *out);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) version_str(v, out->driver, sizeof out->driver);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess && v > 0) version_str(v, out->runtime, sizeof out->runtime);
    cudaGetLastError();
#ifdef INSTBENCH_HAVE_NCCL
    /* NCCL >= 2.9 encodes major*10000 + minor*100 + patch */
    if (ncclGetVersion(&v) == ncclSuccess && v > 0)
        snprintf(out->nccl, sizeof out->nccl, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
#endif
}

void *cuda_backend_stream(ib_backend *b) { return (void *)impl(b)->stream; }
int cuda_backend_device(ib_backend *b) { return impl(b)->device; }

static int pinned(const void *p);

static int set_inputs(ib_backend *b, const float *images, const int32_t *labels, ib_error *err)
{
    cuda_vit *v = impl(b);
    const vit_config *c = &v->cfg.model;
    const int B = v->plan.B;
    if (model_plan_check_labels(&v->plan, labels, err)) return -1;
    CUDA_TRY(cudaSetDevice(v->device));
    const size_t px = (size_t)B * c->in_chans * c->img_size * c->img_size;
    if (!pinned(images) || !pinned(labels)) {
        /* pageable: stream-ordered after the previous step; the call returns once the host buffer
         * has been staged, so the caller may reuse it */
        CUDA_TRY(cudaMemcpyAsync(v->buf.images, images, px * sizeof(float), cudaMemcpyHostToDevice, v->stream));
        CUDA_TRY(
            cudaMemcpyAsync(v->buf.labels, labels, (size_t)B * sizeof(int32_t), cudaMemcpyHostToDevice, v->stream));
        v->have_inputs = 1;
        return 0;
    }
    /* pinned (host_alloc: the data pipeline's slots): a DMA on the copy stream, after the work
     * queued so far has read the previous batch; the step waits for it on the GPU, not the host */
    CUDA_TRY(cudaEventRecord(v->inputs_free, v->stream));
    CUDA_TRY(cudaStreamWaitEvent(v->copy_stream, v->inputs_free, 0));
    CUDA_TRY(cudaMemcpyAsync(v->buf.images, images, px * sizeof(float), cudaMemcpyHostToDevice, v->copy_stream));
    CUDA_TRY(
        cudaMemcpyAsync(v->buf.labels, labels, (size_t)B * sizeof(int32_t), cudaMemcpyHostToDevice, v->copy_stream));
    CUDA_TRY(cudaEventRecord(v->inputs_ready, v->copy_stream));
    CUDA_TRY(cudaStreamWaitEvent(v->stream, v->inputs_ready, 0));
    v->have_inputs = 1;
    return 0;
}

/* page-locked host memory (cudaMallocHost), which a copy reads by DMA without staging */
static int pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); /* an unregistered pointer may leave an error behind on old runtimes */
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

static void *host_alloc(ib_backend *b, size_t bytes)
{
    void *p = NULL;
    if (cudaSetDevice(impl(b)->device) != cudaSuccess || cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

static void host_free(ib_backend *b, void *p)
{
    cudaSetDevice(impl(b)->device);
    cudaFreeHost(p);
}

static int forward_backward(ib_backend *b, float *loss, ib_grad_ready_fn cb, void *user, ib_error *err)
{
    cuda_vit *v = impl(b);
    if (v->cfg.cuda_graphs && !cb) { /* data parallelism's bucket hooks run eagerly */
        if (cuda_vit_forward_backward_graph(v, err)) return -1;
    } else if (cuda_vit_forward(v, err) || cuda_vit_backward(v, cb, user, err)) {
        return -1;
    }
    /* read after backward is queued, so the GPU never idles while the host waits for the loss */
    return loss ? cuda_vit_read_loss(v, loss, err) : 0;
}

static int forward(ib_backend *b, float *loss, ib_error *err)
{
    cuda_vit *v = impl(b);
    if (cuda_vit_forward(v, err)) return -1;
    return loss ? cuda_vit_read_loss(v, loss, err) : 0;
}

static int optimizer_step(ib_backend *b, ib_error *err) { return cuda_vit_optimizer_step(impl(b), err); }

static int synchronize(ib_backend *b, ib_error *err)
{
    CUDA_TRY(cudaSetDevice(impl(b)->device));
    CUDA_TRY(cudaStreamSynchronize(impl(b)->stream));
    return 0;
}

static float *grad_block(ib_backend *b) { return impl(b)->buf.grads; }

static int gemm_paths(ib_backend *b, ib_gemm_paths *out)
{
    cuda_gemm_paths(impl(b)->gemm, &out->shapes, &out->cublas_fallback, &out->bias_kernel, &out->tuned);
    return 0;
}

/* Copies ride the compute stream (it is non-blocking: the legacy stream would not order them). */
static int copy_out(ib_backend *b, float *host, const float *dev, size_t n, ib_error *err)
{
    CUDA_TRY(cudaSetDevice(impl(b)->device));
    CUDA_TRY(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, impl(b)->stream));
    return synchronize(b, err);
}

static int get_params(ib_backend *b, float *host, ib_error *err)
{
    return copy_out(b, host, impl(b)->buf.params, b->layout.total, err);
}

static int get_grads(ib_backend *b, float *host, ib_error *err)
{
    return copy_out(b, host, impl(b)->buf.grads, b->layout.total, err);
}

static int get_logits(ib_backend *b, float *host, ib_error *err)
{
    cuda_vit *v = impl(b);
    return copy_out(b, host, v->buf.logits, (size_t)v->plan.B * v->plan.C, err);
}

/* A checkpoint's blocks (measure's checkpoint timing): the same stream-ordered copy as get_params. */
static int get_state(ib_backend *b, ib_state_block which, void *host, ib_error *err)
{
    size_t bytes;
    const void *src = backend_state_block(&impl(b)->buf, which, b->layout.total, &bytes, err);
    if (!src) return -1;
    CUDA_TRY(cudaSetDevice(impl(b)->device));
    CUDA_TRY(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, impl(b)->stream));
    return synchronize(b, err);
}

static int set_params(ib_backend *b, const float *host, ib_error *err)
{
    cuda_vit *v = impl(b);
    CUDA_TRY(cudaSetDevice(v->device));
    CUDA_TRY(cudaMemcpyAsync(v->buf.params, host, b->layout.total * sizeof(float), cudaMemcpyHostToDevice, v->stream));
    if (cuda_vit_refresh_bf16(v, err)) return -1;
    return synchronize(b, err);
}

static void destroy(ib_backend *b)
{
    if (b) {
        cudaSetDevice(impl(b)->device);
        cuda_vit_free(impl(b));
    }
    backend_impl_free(b);
}

static int check_config(const ib_train_config *cfg, ib_error *err)
{
    if (model_plan_check(&cfg->model, cfg->batch_size, cfg->precision, err)) return -1;
    if (cfg->device < 0) return ib_error_set(err, IB_EXIT_USAGE, "device ordinal %d is negative", cfg->device);
    /* GEMM dimensions and batch counts are 32-bit in cuBLASLt and in the kernels' launch math */
    const double BT = (double)cfg->batch_size * model_seq_len(&cfg->model);
    const double widest = BT * (model_mlp_hidden(&cfg->model) > 3 * cfg->model.embed_dim ? model_mlp_hidden(&cfg->model)
                                                                                         : 3 * cfg->model.embed_dim);
    if (widest > 2147483647.0 || BT * model_seq_len(&cfg->model) * cfg->model.num_heads > 1e12)
        return ib_error_set(err, IB_EXIT_USAGE, "batch %d is too large for this model on the CUDA backend",
                            cfg->batch_size);
    return 0;
}

const char *cuda_backend_attention(const ib_train_config *cfg)
{
    cuda_attention_choice c;
    cuda_attention_choose(cfg, &c);
    return cuda_attention_name(c.path);
}

static int cuda_backend_attention_library(const ib_train_config *cfg, ib_attention_library *out)
{
    cuda_attention_choice c;
    cuda_attention_choose(cfg, &c);
    memset(out, 0, sizeof *out);
    if (c.cudnn_version)
        snprintf(out->version, sizeof out->version, "%d.%d.%d", c.cudnn_version / 10000, c.cudnn_version / 100 % 100,
                 c.cudnn_version % 100);
    snprintf(out->path, sizeof out->path, "%s", c.cudnn_library);
    snprintf(out->fallback, sizeof out->fallback, "%s", c.path == CUDA_ATT_CUDNN ? "" : c.why);
    out->deterministic = c.path == CUDA_ATT_CUDNN ? c.cudnn_deterministic : -1;
    return 0;
}

size_t cuda_backend_memory_estimate(const ib_train_config *cfg)
{
    ib_error err;
    model_plan p;
    return check_config(cfg, &err) || cuda_vit_plan(cfg, &p, &err) ? IB_MEMORY_REFUSED : model_plan_footprint(&p);
}

/* cuda_vit_init as backend_impl_create calls it (a failed one leaves nothing behind) */
static int init_impl(void *v, const ib_train_config *cfg, const model_layout *layout, ib_error *err)
{
    return cuda_vit_init(v, cfg, layout, err);
}

static int device_check(const ib_train_config *cfg, ib_error *err)
{
    const int n = cuda_device_count();
    if (cfg->device < 0 || cfg->device >= n)
        return ib_error_set(err, IB_EXIT_RUNTIME, "CUDA device %d requested but %d GPU%s visible", cfg->device, n,
                            n == 1 ? " is" : "s are");
    if (cfg->precision == IB_PREC_BF16) {
        /* bf16 GEMMs need Ampere's tensor cores; cuBLAS has none on Turing (T4, g4dn) */
        cuda_device_info di;
        if (cuda_device_info_get(cfg->device, &di, err)) return -1;
        if (di.cc_major * 10 + di.cc_minor < IB_BF16_MIN_COMPUTE_CAPABILITY)
            return ib_error_set(err, IB_EXIT_USAGE,
                                "GPU %d (%s, compute capability %d.%d) has no bf16 matmuls (%d.%d+ needed): use "
                                "--precision fp32",
                                cfg->device, di.name, di.cc_major, di.cc_minor, IB_BF16_MIN_COMPUTE_CAPABILITY / 10,
                                IB_BF16_MIN_COMPUTE_CAPABILITY % 10);
    }
    return 0;
}

int cuda_backend_create(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    *out = NULL;
    if (check_config(cfg, err) || device_check(cfg, err)) return -1;
    return backend_impl_create(&cuda_backend_ops, cfg, sizeof(cuda_vit), init_impl, out, err);
}

static struct {
    pthread_once_t once;
    char why[1024]; /* "" when a GPU is usable */
} probed = {PTHREAD_ONCE_INIT, ""};

static void probe_once(void)
{
    if (probe(probed.why, sizeof probed.why)) probed.why[0] = '\0';
}

static const char *unavailable_reason(void)
{
    pthread_once(&probed.once, probe_once);
    return probed.why[0] ? probed.why : NULL;
}

/* cuBLASLt's rate on this config's GEMMs (cuda/gemm_rate.h), over INSTBENCH_GPU_GEMM_SECONDS
 * (default 0.5 s: a few hundred GEMMs on a datacenter GPU; tests shorten it, which makes the
 * figure noisier, not biased). */
static int gemm_rate(const ib_train_config *cfg, const volatile sig_atomic_t *stop, double *tflops, ib_error *err)
{
    double seconds = 0.5, fps = 0;
    const char *env = getenv("INSTBENCH_GPU_GEMM_SECONDS");
    if (env && env[0] && util_parse_double(env, 0.001, 60, &seconds) != 0) seconds = 0.5;
    if (cuda_gemm_rate(cfg, seconds, stop, &fps, err)) return -1;
    *tflops = fps / 1e12;
    return 0;
}

static const char *dp_unavailable_reason(void)
{
    return comm_nccl_available() ? NULL : "this CUDA module was built without NCCL (no multi-GPU averaging)";
}

const ib_backend_ops cuda_backend_ops = {
    .name = "cuda",
    .device = IB_DEVICE_GPU,
    .unavailable_reason = unavailable_reason,
    .device_count = cuda_device_count,
    .device_describe = device_describe,
    .device_memory_free = device_memory_free,
    .device_check = device_check,
    .memory_estimate = cuda_backend_memory_estimate,
    .attention_impl = cuda_backend_attention,
    .attention_library = cuda_backend_attention_library,
    .gemm_rate = gemm_rate,
    .create = cuda_backend_create,
    .set_inputs = set_inputs,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .forward_backward = forward_backward,
    .forward = forward,
    .optimizer_step = optimizer_step,
    .synchronize = synchronize,
    .grad_block = grad_block,
    .get_params = get_params,
    .set_params = set_params,
    .get_grads = get_grads,
    .get_logits = get_logits,
    .get_state = get_state,
    .gemm_paths = gemm_paths,
    .destroy = destroy,
    .dp_unavailable_reason = dp_unavailable_reason,
    .dp_create = cuda_dp_create,
    .dp_step = cuda_dp_step,
    .dp_agree = cuda_dp_agree,
    .dp_comm = cuda_dp_comm,
    .dp_finish = cuda_dp_finish,
    .dp_destroy = cuda_dp_destroy,
};
