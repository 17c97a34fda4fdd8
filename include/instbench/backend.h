/* backend: the training step for one device.  cpu/ is the reference; cuda/ mirrors it op for op.
 * Contract shared by bench/ (measure), cmd/verify.c and comm/. */
#ifndef INSTBENCH_BACKEND_H
#define INSTBENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "instbench/model.h"
#include "instbench/precision.h"
#include "instbench/util.h"

typedef enum ib_optimizer { IB_OPT_ADAM = 0, IB_OPT_ADAMW = 1 } ib_optimizer;

typedef struct ib_optim_config {
    ib_optimizer kind;
    float lr, beta1, beta2, eps, weight_decay;   /* torch defaults: 1e-3, 0.9, 0.999, 1e-8, 0 (adamw 1e-2) */
} ib_optim_config;

typedef struct ib_train_config {
    vit_config model;
    int batch_size;            /* per device */
    ib_precision precision;
    ib_optim_config optim;
    int threads;               /* CPU: worker threads, 0 = all cores */
    int device;                /* CUDA: device ordinal */
    uint64_t seed;             /* parameter initialisation (timm-like init) */
} ib_train_config;

void backend_default_optim(ib_optimizer kind, ib_optim_config *out);
const char *backend_precision_name(ib_precision p);
/* Names in enum order, NULL-terminated (the CLI's choices): "fp32", "bf16" / "adam", "adamw" /
 * the backends this tool knows, "cpu", "cuda" (whether one is usable here: backend_is_available). */
extern const char *const backend_precision_names[];
extern const char *const backend_optimizer_names[];
extern const char *const backend_names[];
const char *backend_optimizer_name(ib_optimizer k);

/* Called during backward when a contiguous range of the gradient block is final (reverse layer
 * order), so comm/ can start averaging it while earlier layers still compute (DDP buckets).
 * offset/count are in floats of the fp32 gradient block (same layout as the parameters). */
typedef int (*ib_grad_ready_fn)(void *user, size_t offset, size_t count);

typedef struct ib_backend ib_backend;
struct ib_backend {
    const char *name;          /* "cpu", "cuda" */
    ib_train_config cfg;
    model_layout layout;
    void *impl;

    /* images: host float32 [B,3,H,W]; labels: host int32 [B] in [0, classes). */
    int (*set_inputs)(ib_backend *b, const float *images, const int32_t *labels, ib_error *err);
    /* Forward (mean cross-entropy into *loss if non-NULL) then backward into the gradient block,
     * overwriting it.  on_grad_ready may be NULL. */
    int (*forward_backward)(ib_backend *b, float *loss, ib_grad_ready_fn on_grad_ready, void *user,
                            ib_error *err);
    int (*forward)(ib_backend *b, float *loss, ib_error *err);
    int (*optimizer_step)(ib_backend *b, ib_error *err);   /* uses the (averaged) gradient block */
    int (*synchronize)(ib_backend *b, ib_error *err);      /* wait for queued device work */
    float *(*grad_block)(ib_backend *b);                   /* device pointer on GPU backends */
    int (*get_params)(ib_backend *b, float *host, ib_error *err);   /* fp32 master block */
    int (*set_params)(ib_backend *b, const float *host, ib_error *err);
    int (*get_grads)(ib_backend *b, float *host, ib_error *err);
    int (*get_logits)(ib_backend *b, float *host, ib_error *err);   /* [B, classes] fp32 */
    void (*destroy)(ib_backend *b);
};

int backend_create(const char *name, const ib_train_config *cfg, ib_backend **out, ib_error *err);
int backend_is_available(const char *name);   /* "cpu" always; "cuda" when its module loads and a GPU is usable */
/* NULL when available; else why not (static storage), e.g. the module or a CUDA library that
 * cannot be loaded (dlerror's text), no GPU, or a driver older than the CUDA runtime. */
const char *backend_unavailable_reason(const char *name);
/* How NAME runs bf16 matmuls on this machine: "native" or "emulated" (cpu: oneDNN has no bf16
 * matmul here, operands are widened to fp32); NULL where the question does not arise (cuda). */
const char *backend_bf16_mode(const char *name);
/* 1 when NAME averages gradients across ranks itself (cuda: NCCL in its module) rather than
 * through src/comm's host-memory averaging; backend_own_comm_usable: and that comm is here (the
 * module loads and was built with NCCL). */
int backend_has_own_comm(const char *name);
int backend_own_comm_usable(const char *name);
/* Bytes the backend will allocate for this config (params, grads, optimizer state, activations).
 * Linear in the batch (also past sizes the backend refuses for other reasons); an invalid config
 * (bad model, batch < 1 or > 2^20) gives IB_MEMORY_REFUSED: huge enough never to fit, small enough
 * that adding a few buffers cannot wrap around. */
#define IB_MEMORY_REFUSED ((size_t)1 << 62)
size_t backend_memory_estimate(const ib_train_config *cfg);   /* the CPU backend's */
size_t backend_memory_estimate_for(const char *name, const ib_train_config *cfg);   /* by backend name */

#endif
