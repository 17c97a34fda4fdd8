/* backend: the factory over the compiled-in backends, and the shared optimizer defaults. */
#include "instbench/backend.h"

#include <string.h>

#include "instbench/cpu.h"

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

const char *backend_precision_name(ib_precision p) { return p == IB_PREC_BF16 ? "bf16" : "fp32"; }
const char *backend_optimizer_name(ib_optimizer k) { return k == IB_OPT_ADAMW ? "adamw" : "adam"; }

#ifdef INSTBENCH_HAVE_CUDA
/* Provided by src/cuda/ when the CUDA backend is built. */
int cuda_backend_create(const ib_train_config *cfg, ib_backend **out, ib_error *err);
int cuda_backend_is_available(void);
size_t cuda_backend_memory_estimate(const ib_train_config *cfg);
#endif

int backend_create(const char *name, const ib_train_config *cfg, ib_backend **out, ib_error *err)
{
    *out = NULL;
    if (name && !strcmp(name, "cpu")) return cpu_backend_create(cfg, out, err);
    if (name && !strcmp(name, "cuda")) {
#ifdef INSTBENCH_HAVE_CUDA
        if (!cuda_backend_is_available())
            return ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda': no usable GPU found");
        return cuda_backend_create(cfg, out, err);
#else
        return ib_error_set(err, IB_EXIT_RUNTIME, "backend 'cuda' is not built into this binary (CPU-only build)");
#endif
    }
    return ib_error_set(err, IB_EXIT_USAGE, "unknown backend '%s' (cpu, cuda)", name ? name : "");
}

int backend_is_available(const char *name)
{
    if (name && !strcmp(name, "cpu")) return 1;
#ifdef INSTBENCH_HAVE_CUDA
    if (name && !strcmp(name, "cuda")) return cuda_backend_is_available();
#endif
    return 0;
}

size_t backend_memory_estimate(const ib_train_config *cfg)
{
    return cpu_backend_memory_estimate(cfg);
}

size_t backend_memory_estimate_for(const char *name, const ib_train_config *cfg)
{
    if (name && !strcmp(name, "cuda")) {
#ifdef INSTBENCH_HAVE_CUDA
        return cuda_backend_memory_estimate(cfg);
#else
        return IB_MEMORY_REFUSED;   /* not built: never fits */
#endif
    }
    return cpu_backend_memory_estimate(cfg);
}
