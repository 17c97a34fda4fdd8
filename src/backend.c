/* backend: the registry of backends (cpu built in, cuda loaded as a module on first use), and the
 * shared optimizer defaults.  The only place besides the backends themselves that names one. */
#include "instbench/backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef INSTBENCH_HAVE_NCCL
#include <nccl.h> /* NCCL_MAJOR/MINOR/PATCH: the version built against (header only, no library) */
#endif

#include "instbench/cpu.h"
#include "instbench/cuda.h"

void backend_default_optim(ib_optimizer kind, ib_optim_config *out)
{
    /* torch.optim.Adam / AdamW defaults */
    out->kind = kind;
    out->lr = 1e-3f;
    out->beta1 = 0.9f;
    out->beta2 = 0.999f;
    out->eps = 1e-8f;
    out->weight_decay = kind == IB_OPT_ADAMW ? 1e-2f : 0.0f;
}

const char *const backend_precision_names[] = {"fp32", "bf16", NULL};
const char *const backend_optimizer_names[] = {"adam", "adamw", NULL};
const char *const backend_names[] = {"cpu", "cuda", NULL}; /* the registry's order (below) */

const char *backend_precision_name(ib_precision p) { return backend_precision_names[p == IB_PREC_BF16]; }
const char *backend_optimizer_name(ib_optimizer k) { return backend_optimizer_names[k == IB_OPT_ADAMW]; }

/* ---- the CUDA module ----
 * The CUDA backend lives in libinstbench-cuda.so (src/cuda/, its .cu kernels in kernels/),
 * dlopened here on first use, so the executable itself needs no CUDA library: `rank`, `prices` and
 * CPU measurements run on a machine without them, and startup does not pay for loading cuBLAS.
 *
 * How the module gets the core helpers it calls (ib_error_set, ib_log, model layout, the TCP
 * rendezvous): it links its own copies of those objects (the util, model and comm libraries),
 * kept private by a version script that exports only instbench_cuda_module (src/cuda/module.map).
 * The alternative, exporting them from the executable (ENABLE_EXPORTS) for the module to bind
 * against, would tie the module to whichever program loads it: every test program linking the
 * module libraries statically would need its symbols exported too, a program without them would
 * fail at dlopen, and the executable's dynamic symbol table (startup cost) would grow by every
 * core function.  The price of private copies is duplicated global state; the only one the module reads is ib_log_level,
 * which the loader copies into the module (table->log_level).
 *
 * The host-shim tests (tests/cuda/cuda.cmake) compile the src/cuda sources, module.c included, into their own
 * programs: the weak reference below is then already resolved, and no file is loaded. */
extern const ib_cuda_module *instbench_cuda_module(int abi_version) __attribute__((weak));

#define IB_STR_(x) #x
#define IB_STR(x) IB_STR_(x)

static struct {
    pthread_once_t load_once;
    const ib_cuda_module *m;
    char why[8192]; /* why m is NULL */
} cuda_state = {PTHREAD_ONCE_INIT, NULL, ""};

/* The module's path: $INSTBENCH_CUDA_MODULE, else beside the executable (/proc/self/exe). */
static int cuda_module_path(char *out, size_t n)
{
    const char *env = getenv("INSTBENCH_CUDA_MODULE");
    if (env && *env) return snprintf(out, n, "%s", env) < (int)n ? 0 : -1;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    return snprintf(out, n, "%s/%s", exe, IB_CUDA_MODULE_FILE) < (int)n ? 0 : -1;
}

static const ib_cuda_module *cuda_module_check(const ib_cuda_module *m, const char *path)
{
    if (!m) {
        snprintf(cuda_state.why, sizeof cuda_state.why,
                 "the CUDA module %s was built for another version of instbench (module ABI differs from %d): "
                 "use the libinstbench-cuda.so built with this binary",
                 path, IB_CUDA_MODULE_ABI);
        return NULL;
    }
    if (m->abi_version != IB_CUDA_MODULE_ABI || m->sizeof_backend != sizeof(ib_backend) ||
        m->sizeof_backend_ops != sizeof(ib_backend_ops) || m->sizeof_train_config != sizeof(ib_train_config) ||
        m->sizeof_error != sizeof(ib_error) || m->sizeof_comm != sizeof(ib_comm)) {
        snprintf(cuda_state.why, sizeof cuda_state.why,
                 "the CUDA module %s does not match this binary (ABI %d, struct sizes differ): use the "
                 "libinstbench-cuda.so built with this binary",
                 path, m->abi_version);
        return NULL;
    }
    return m;
}

static void cuda_module_load(void)
{
    if (instbench_cuda_module) { /* linked in (host-shim tests) */
        cuda_state.m = cuda_module_check(instbench_cuda_module(IB_CUDA_MODULE_ABI), "(linked in)");
        return;
    }
    char path[4096];
    if (cuda_module_path(path, sizeof path)) {
        snprintf(cuda_state.why, sizeof cuda_state.why,
                 "cannot tell where the CUDA module is (no /proc/self/exe); set INSTBENCH_CUDA_MODULE");
        return;
    }
    double t0 = util_now_seconds();
    /* RTLD_LOCAL: the module's symbols (its private copies of core helpers included) never
     * interpose on the executable's; RTLD_NOW: a missing CUDA symbol fails here, not mid-run. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
#ifdef INSTBENCH_HAVE_CUDA
        const char *hint = "";
#else
        const char *hint = " (this binary was built without CUDA: build with -DINSTBENCH_CUDA=ON for the module)";
#endif
        /* dlerror names what is missing: the module file itself, or a CUDA library it needs
         * ("libcublasLt.so.13: cannot open shared object file: No such file or directory") */
        snprintf(cuda_state.why, sizeof cuda_state.why, "cannot load the CUDA module: %s%s", e ? e : path, hint);
        return;
    }
    ib_cuda_module_fn entry = (ib_cuda_module_fn)dlsym(h, IB_CUDA_MODULE_SYMBOL);
    if (!entry) {
        snprintf(cuda_state.why, sizeof cuda_state.why, "%s is not an instbench CUDA module (no %s)", path,
                 IB_CUDA_MODULE_SYMBOL);
        dlclose(h);
        return;
    }
    cuda_state.m = cuda_module_check(entry(IB_CUDA_MODULE_ABI), path);
    if (!cuda_state.m) {
        dlclose(h);
        return;
    }
    /* never dlclosed: backends and comms it creates point into it until the process exits */
    ib_debug("cuda: loaded %s (%.1f ms)", path, (util_now_seconds() - t0) * 1e3);
}

static const ib_cuda_module *cuda_module(const char **why)
{
    pthread_once(&cuda_state.load_once, cuda_module_load);
    const ib_cuda_module *m = cuda_state.m;
    if (m && m->log_level) *m->log_level = ib_log_level;
    if (!m && why) *why = cuda_state.why;
    return m;
}

/* ---- the loader entry: the registry's "cuda", forwarding to the module's own table once it
 * loads.  A backend the module creates carries the module's table, so the step and dp_* entries
 * (called through a created backend's ops) stay NULL here. ---- */
static const char *cuda_unavailable_reason(void)
{
    const char *why = "";
    const ib_cuda_module *m = cuda_module(&why);
    return m ? m->ops->unavailable_reason() : why;
}

static int cuda_device_count(void)
{
    const ib_cuda_module *m = cuda_module(NULL);
    return m ? m->ops->device_count() : 0;
}

static int cuda_device_describe(int device, ib_device_desc *out, ib_error *err)
{
    const char *why = "";
    const ib_cuda_module *m = cuda_module(&why);
    return m ? m->ops->device_describe(device, out, err)
             : ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda': %s", why);
}

static int cuda_device_memory_free(int device, uint64_t *bytes, ib_error *err)
{
    const char *why = "";
    const ib_cuda_module *m = cuda_module(&why);
    *bytes = 0;
    return m ? m->ops->device_memory_free(device, bytes, err)
             : ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda': %s", why);
}

static int cuda_device_check(const ib_train_config *cfg, ib_error *err)
{
    const char *why = "";
    const ib_cuda_module *m = cuda_module(&why);
    if (!m) return ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda': %s", why);
    return m->ops->device_check ? m->ops->device_check(cfg, err) : 0;
}

static size_t cuda_memory_estimate(const ib_train_config *cfg)
{
    const ib_cuda_module *m = cuda_module(NULL);
    return m ? m->ops->memory_estimate(cfg) : IB_MEMORY_REFUSED; /* no module: never fits */
}

static const char *cuda_attention_impl(const ib_train_config *cfg)
{
    const ib_cuda_module *m = cuda_module(NULL);
    return m && m->ops->attention_impl ? m->ops->attention_impl(cfg) : "unfused";
}

static int cuda_attention_library(const ib_train_config *cfg, ib_attention_library *out)
{
    const ib_cuda_module *m = cuda_module(NULL);
    return m && m->ops->attention_library ? m->ops->attention_library(cfg, out) : -1;
}

static int cuda_gemm_rate(const ib_train_config *cfg, const volatile sig_atomic_t *stop, double *tflops, ib_error *err)
{
    const ib_cuda_module *m = cuda_module(NULL);
    if (!m || !m->ops->gemm_rate) return ib_error_set(err, IB_EXIT_RUNTIME, "the CUDA module measures no GEMM rate");
    return m->ops->gemm_rate(cfg, stop, tflops, err);
}

static int cuda_create(const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    *out = NULL;
    const char *why = cuda_unavailable_reason();
    if (why) return ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda': %s", why);
    return cuda_module(NULL)->ops->create(cfg, out, err);
}

static const char *cuda_dp_unavailable_reason(void)
{
    const char *why = "";
    const ib_cuda_module *m = cuda_module(&why);
    return m ? m->ops->dp_unavailable_reason() : why;
}

static const ib_backend_ops cuda_loader_ops = {
    .name = "cuda",
    .device = IB_DEVICE_GPU,
    .unavailable_reason = cuda_unavailable_reason,
    .device_count = cuda_device_count,
    .device_describe = cuda_device_describe,
    .device_memory_free = cuda_device_memory_free,
    .device_check = cuda_device_check,
    .memory_estimate = cuda_memory_estimate,
    .attention_impl = cuda_attention_impl,
    .attention_library = cuda_attention_library,
    .gemm_rate = cuda_gemm_rate,
    .create = cuda_create,
    .dp_unavailable_reason = cuda_dp_unavailable_reason,
};

/* ---- the registry: in backend_names' order ---- */
static const ib_backend_ops *const registry[] = {&cpu_backend_ops, &cuda_loader_ops};
#define REGISTRY_SIZE (sizeof registry / sizeof registry[0])

const ib_backend_ops *backend_find(const char *name)
{
    for (size_t i = 0; name && i < REGISTRY_SIZE; i++)
        if (!strcmp(registry[i]->name, name)) return registry[i];
    return NULL;
}

const ib_backend_ops *backend_host(void)
{
    for (size_t i = 0; i < REGISTRY_SIZE; i++)
        if (registry[i]->device == IB_DEVICE_HOST) return registry[i];
    return NULL;
}

const ib_backend_ops *backend_auto(const ib_backend_ops **skipped, const char **why)
{
    const ib_backend_ops *host = NULL;
    for (size_t i = 0; i < REGISTRY_SIZE; i++) {
        const char *no = registry[i]->unavailable_reason();
        if (registry[i]->device == IB_DEVICE_HOST) {
            if (!host && !no) host = registry[i];
        } else if (!no) {
            return registry[i];
        } else {
            if (skipped) *skipped = registry[i];
            if (why) *why = no;
        }
    }
    return host;
}

int backend_create(const char *name, const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    *out = NULL;
    const ib_backend_ops *ops = backend_find(name);
    if (!ops) return ib_error_set(err, IB_EXIT_USAGE, "unknown backend '%s' (cpu, cuda)", name ? name : "");
    const char *why = ops->unavailable_reason();
    if (why) return ib_error_set(err, IB_EXIT_RUNTIME, "backend '%s': %s", ops->name, why);
    return ops->create(cfg, out, err);
}

void backend_describe_gpu(int probe, char *out, size_t n)
{
#ifdef INSTBENCH_HAVE_CUDA
    char path[4096] = "";
    const int found = cuda_module_path(path, sizeof path) == 0 && access(path, R_OK) == 0;
#ifdef INSTBENCH_HAVE_NCCL
    const char *with_nccl = ", NCCL " IB_STR(NCCL_MAJOR) "." IB_STR(NCCL_MINOR) "." IB_STR(NCCL_PATCH);
#else
    const char *with_nccl = ", without NCCL";
#endif
    /* the module a run would load: the one INSTBENCH_CUDA_MODULE names, when it names one */
    const char *env = getenv("INSTBENCH_CUDA_MODULE");
    int k = env && *env ? snprintf(out, n, "cuda: built with CUDA %s%s; module %s (INSTBENCH_CUDA_MODULE)%s",
                                   INSTBENCH_CUDA_BUILD_VERSION, with_nccl, path, found ? "" : " missing")
                        : snprintf(out, n, "cuda: built with CUDA %s%s; module %s %s", INSTBENCH_CUDA_BUILD_VERSION,
                                   with_nccl, IB_CUDA_MODULE_FILE, found ? "beside the binary" : "missing");
    if (!probe || k < 0 || (size_t)k >= n) return;
    const char *why = cuda_unavailable_reason();
    const ib_cuda_module *m = cuda_module(NULL);
    cuda_versions v = {0};
    if (m) m->versions(&v);
    if (why) snprintf(out + k, n - (size_t)k, "; not usable: %s", why);
    else {
        const int gpus = m->ops->device_count();
        snprintf(out + k, n - (size_t)k, "; driver supports CUDA %s, runtime %s, %d GPU%s",
                 v.driver[0] ? v.driver : "unknown", v.runtime[0] ? v.runtime : "unknown", gpus, gpus == 1 ? "" : "s");
    }
#else
    (void)probe;
    snprintf(out, n, "cuda: not in this build (configure with -DINSTBENCH_CUDA=ON where nvcc is installed)");
#endif
}

int backend_dp_usable(const ib_backend_ops *ops, const char **why)
{
    const char *no = !ops->dp_unavailable_reason ? "its ranks average through host memory, within one process"
                                                 : ops->dp_unavailable_reason();
    if (no && why) *why = no;
    return !no;
}

int backend_attention_library(const ib_backend_ops *ops, const ib_train_config *cfg, ib_attention_library *out)
{
    memset(out, 0, sizeof *out);
    return ops->attention_library ? ops->attention_library(cfg, out) : -1;
}

const char *backend_attention(const ib_backend_ops *ops, const ib_train_config *cfg)
{
    return ops->attention_impl ? ops->attention_impl(cfg) : "unfused";
}
