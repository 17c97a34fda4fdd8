/* backend: the training step for one device.  cpu/ is the reference; cuda/ mirrors it op for op.
 * Contract shared by bench/ (measure), cmd/cmd_verify.c and comm/. */
#ifndef INSTBENCH_BACKEND_H
#define INSTBENCH_BACKEND_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "instbench/model.h"
#include "instbench/precision.h"
#include "instbench/util.h"

typedef enum ib_optimizer { IB_OPT_ADAM = 0, IB_OPT_ADAMW = 1 } ib_optimizer;

typedef struct ib_optim_config {
    ib_optimizer kind;
    float lr, beta1, beta2, eps, weight_decay; /* torch defaults: 1e-3, 0.9, 0.999, 1e-8, 0 (adamw 1e-2) */
} ib_optim_config;

typedef struct ib_train_config {
    vit_config model;
    int batch_size; /* per device */
    ib_precision precision;
    ib_optim_config optim;
    int threads;     /* CPU: worker threads, 0 = all cores */
    int device;      /* CUDA: device ordinal */
    uint64_t seed;   /* parameter initialisation (timm-like init) */
    int cuda_graphs; /* CUDA, one rank without data parallelism: replay forward + backward as
                                * a CUDA graph from the second step on (measure --cuda-graphs) */
} ib_train_config;

void backend_default_optim(ib_optimizer kind, ib_optim_config *out);
const char *backend_precision_name(ib_precision p);
/* Names in enum order, NULL-terminated (the CLI's choices): "fp32", "bf16" / "adam", "adamw" /
 * the backends this tool knows, "cpu", "cuda" (usable here or not: their unavailable_reason). */
extern const char *const backend_precision_names[];
extern const char *const backend_optimizer_names[];
extern const char *const backend_names[];
const char *backend_optimizer_name(ib_optimizer k);

/* Called during backward when a contiguous range of the gradient block is final (reverse layer
 * order), so comm/ can start averaging it while earlier layers still compute (DDP buckets).
 * offset/count are in floats of the fp32 gradient block (same layout as the parameters). */
typedef int (*ib_grad_ready_fn)(void *user, size_t offset, size_t count);

typedef struct ib_backend ib_backend;
/* A GPU backend's attention library (cuDNN): what was loaded and, where it is not used, why. */
typedef struct ib_attention_library {
    char version[32];   /* "9.15.1"; "" when none was loaded */
    char path[512];     /* the file loaded; "" when none */
    char fallback[640]; /* why attention does not run through it; "" when it does (or fp32) */
    int deterministic;  /* attention runs through it: 1 its deterministic backward, 0 the other; -1 it does not */
} ib_attention_library;

/* How a created GPU backend's GEMMs ran (hardware.gemm in results), over the distinct GEMM shapes
 * its steps issued (dimensions, layout, dtypes and pointer alignment): in all, how many cuBLASLt
 * offered no algorithm for (cuBLAS ran them), and how many had their bias written into the output
 * by a kernel first (no bias epilogue).  The last two are slower roads than the library's own.
 * tuned: how many ran the fastest of the heuristic's algorithms as timed, not its first
 * (INSTBENCH_GEMM_TUNE=1; 0 without it). */
typedef struct ib_gemm_paths {
    int shapes, cublas_fallback, bias_kernel, tuned;
} ib_gemm_paths;

typedef struct ib_backend_ops ib_backend_ops;

/* The blocks of training state a checkpoint saves, each [P] in model_layout order: the fp32 master
 * weights, Adam's two fp32 moments, and the bf16 working copy of the weights (bf16 runs only). */
typedef enum ib_state_block {
    IB_STATE_PARAMS = 0,
    IB_STATE_ADAM_M,
    IB_STATE_ADAM_V,
    IB_STATE_WEIGHTS_BF16,
    IB_STATE_BLOCKS
} ib_state_block;
typedef struct ib_comm ib_comm; /* instbench/comm.h */

/* One created backend: one device's model, optimizer state and activations. */
struct ib_backend {
    const ib_backend_ops *ops; /* its backend's table: every call goes through it */
    ib_train_config cfg;
    model_layout layout;
    void *impl;
};

/* A backend's own data parallelism over this process's ranks (cuda: NCCL comms + DDP buckets).
 * Opaque; each backend that has one defines it. */
typedef struct ib_dp ib_dp;
typedef struct ib_dp_config {
    int nlocal;                        /* ranks (devices) in this process */
    int world_size;                    /* all ranks of the job */
    int first_rank;                    /* global rank of this process's first rank (0: it serves the rendezvous) */
    const char *master_addr;           /* where global rank 0's process listens (multi-process only) */
    int port;                          /* its rendezvous port */
    double timeout_s;                  /* for the whole rendezvous */
    size_t bucket_bytes;               /* 0: the backend's default (cuda: DDP's 25 MiB) */
    const volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM: the rendezvous gives up (NULL: none) */
    const char *workload;              /* "key=value" lines every process of the job must agree on (NULL: none) */
} ib_dp_config;

/* Where a backend's ranks run, which decides how measure shares the machine between them:
 * HOST: ranks are thread teams sharing the cores and host memory (the estimate counts host RAM and
 * the input buffers live in it); GPU: one device per rank, the estimate counts device memory. */
typedef enum ib_device_kind { IB_DEVICE_HOST = 0, IB_DEVICE_GPU = 1 } ib_device_kind;

/* One device as this process sees it: CUDA_VISIBLE_DEVICES applied and a MIG slice as its own
 * device with its own memory (what NVML, which sees whole boards, cannot say). */
typedef struct ib_device_desc {
    char name[256];
    uint64_t memory_bytes;  /* total */
    int cc_major, cc_minor; /* compute capability */
} ib_device_desc;

/* A backend: each exports one const table (cpu: cpu_backend_ops; cuda: its module's table, reached
 * through the core's loader entry in src/backend.c).  Nothing outside a backend and the registry
 * (src/backend.c) names one; callers ask the table. */
struct ib_backend_ops {
    const char *name; /* "cpu", "cuda": the --backend choice and the result's backend */
    ib_device_kind device;

    /* ---- the backend on this machine ---- */
    /* NULL when usable here; else why not (static storage): the module or a CUDA library that
     * cannot be loaded (dlerror's text), no GPU, a driver older than the runtime. */
    const char *(*unavailable_reason)(void);
    int (*device_count)(void); /* devices a rank can take (HOST: 1) */
    /* Device i < device_count(), without making it current (no context opened); NULL function for
     * HOST backends. */
    int (*device_describe)(int device, ib_device_desc *out, ib_error *err);
    /* Free memory of device i once this process's context on it exists (so the context's own
     * reservation is already taken): opens that context, so ask only for devices this process
     * will use.  NULL function for HOST backends. */
    int (*device_memory_free)(int device, uint64_t *bytes, ib_error *err);
    /* Whether device cfg->device can run cfg's precision at all (cuda: bf16 needs compute
     * capability 8.0+), asked before anything is planned, measured or allocated, without making
     * the device current: 0, or -1 with a usage error saying what to change.  NULL function:
     * every device can. */
    int (*device_check)(const ib_train_config *cfg, ib_error *err);
    /* How bf16 matmuls run: "native" or "emulated" (cpu without a oneDNN bf16 matmul: operands
     * widened to fp32); NULL function where the question does not arise. */
    const char *(*bf16_mode)(void);
    /* Bytes the backend will allocate for this config (params, grads, optimizer state,
     * activations), without creating it.  Linear in the batch (also past sizes the backend refuses
     * for other reasons); an invalid config (bad model, batch < 1 or > 2^20) gives
     * IB_MEMORY_REFUSED. */
    size_t (*memory_estimate)(const ib_train_config *cfg);
    /* How the backend computes attention for cfg: "cudnn" (cuDNN's fused SDPA, what PyTorch runs
     * on sm_90) or "unfused" (matmuls around a softmax, the scores and probabilities in memory); recorded in
     * results (hardware.attention) and by verify.  NULL function: "unfused".  Static strings.  The
     * CUDA backend decides on the device (loading cuDNN and checking it once per shape). */
    const char *(*attention_impl)(const ib_train_config *cfg);
    /* The attention library behind attention_impl(cfg) (hardware.cudnn in results): 0 with *out
     * filled, -1 where the backend has none to speak of (CPU).  NULL function: -1. */
    int (*attention_library)(const ib_train_config *cfg, ib_attention_library *out);
    /* The MFU denominator measured on this machine: FLOP/s reached on this config's GEMM shapes,
     * and a sentence saying so for the result's peak source.  STOP (may be NULL) ends it early
     * with an error.  NULL function: the peak comes from a datasheet (bench/peak.c's GPU table). */
    int (*peak_measure)(const ib_train_config *cfg, const volatile sig_atomic_t *stop, double *tflops, char *source,
                        size_t source_len, ib_error *err);
    /* The rate the backend's GEMM library reaches on this config's GEMM shapes on cfg->device, in
     * TFLOP/s, measured now (cuda: cuBLASLt, cuda/gemm_rate.h): the yardstick of
     * hardware.gemm_tflops_measured beside a datasheet peak.  NULL function: none (the CPU's
     * peak_measure is already that rate). */
    int (*gemm_rate)(const ib_train_config *cfg, const volatile sig_atomic_t *stop, double *tflops, ib_error *err);
    int (*create)(const ib_train_config *cfg, ib_backend **out, ib_error *err);

    /* ---- one created backend's step (NULL in the core's loader entry for the cuda module: a
     * backend it creates carries the module's own table) ---- */
    /* images: host float32 [B,3,H,W]; labels: host int32 [B] in [0, classes).  From memory of
     * host_alloc the copy may still be running when it returns (cuda: on a side stream, the step
     * waiting for it on the GPU): the batch must stay untouched until the step's synchronize. */
    int (*set_inputs)(ib_backend *b, const float *images, const int32_t *labels, ib_error *err);
    /* Host memory set_inputs copies from fastest (cuda: pinned, so the copy is a DMA that needs no
     * staging and does not hold up the host); NULL functions: plain malloc/free. */
    void *(*host_alloc)(ib_backend *b, size_t bytes);
    void (*host_free)(ib_backend *b, void *p);
    /* Forward (mean cross-entropy into *loss if non-NULL) then backward into the gradient block,
     * overwriting it.  on_grad_ready may be NULL. */
    int (*forward_backward)(ib_backend *b, float *loss, ib_grad_ready_fn on_grad_ready, void *user, ib_error *err);
    int (*forward)(ib_backend *b, float *loss, ib_error *err);
    int (*optimizer_step)(ib_backend *b, ib_error *err);          /* uses the (averaged) gradient block */
    int (*synchronize)(ib_backend *b, ib_error *err);             /* wait for queued device work */
    float *(*grad_block)(ib_backend *b);                          /* device pointer on GPU backends */
    int (*get_params)(ib_backend *b, float *host, ib_error *err); /* fp32 master block */
    int (*set_params)(ib_backend *b, const float *host, ib_error *err);
    int (*get_grads)(ib_backend *b, float *host, ib_error *err);
    int (*get_logits)(ib_backend *b, float *host, ib_error *err); /* [B, classes] fp32 */
    /* One state block into host memory (fp32 blocks: P floats; IB_STATE_WEIGHTS_BF16: P uint16),
     * synchronously, the device-to-host copy included on GPU backends: what a checkpoint fetches.
     * A block the run does not have (the bf16 copy of an fp32 run) is an error. */
    int (*get_state)(ib_backend *b, ib_state_block which, void *host, ib_error *err);
    /* The roads its GEMMs took so far (ib_gemm_paths): 0 with *out filled; NULL function where the
     * question does not arise (CPU: oneDNN has one road). */
    int (*gemm_paths)(ib_backend *b, ib_gemm_paths *out);
    void (*destroy)(ib_backend *b);

    /* ---- data parallelism the backend does itself.  dp_unavailable_reason NULL: it has none, its
     * ranks average through src/comm's host-memory allreduce (one process only).  The dp_*
     * functions are called through a created backend's table (b->ops). ---- */
    /* NULL when dp_create can work here; else why not (cuda: a module built without NCCL). */
    const char *(*dp_unavailable_reason)(void);
    /* backends[i] (created by this table) is local rank i. */
    int (*dp_create)(const ib_dp_config *c, ib_backend **backends, ib_dp **out, ib_error *err);
    /* Local rank i's step up to averaged gradients: forward_backward with the bucket hook, then the
     * rest of the allreduces.  *compute_end: when the compute stream finished (what follows until
     * return is the exposed communication). */
    int (*dp_step)(ib_dp *dp, int i, ib_backend *b, float *loss, double *compute_end, ib_error *err);
    /* Every rank calls it: *value becomes global rank 0's *value (a step-boundary decision). */
    int (*dp_agree)(ib_dp *dp, int i, int *value, ib_error *err);
    ib_comm *(*dp_comm)(ib_dp *dp, int i);
    /* Before dp_destroy, how this process's run ended: FAILURE NULL when every rank of it finished
     * the run (the other processes are told goodbye), else its error, which they are told (cuda:
     * over the liveness channel, comm.h).  Without this call dp_destroy reports an early stop.
     * NULL-safe. */
    void (*dp_finish)(ib_dp *dp, const ib_error *failure);
    void (*dp_destroy)(ib_dp *dp); /* NULL-safe */
};

#define IB_MEMORY_REFUSED ((size_t)1 << 62) /* huge enough never to fit, small enough not to wrap */

/* ---- the registry (src/backend.c) ---- */
/* The table named NAME ("cpu", "cuda"), usable or not; NULL for an unknown name. */
const ib_backend_ops *backend_find(const char *name);
/* measure's default: the first usable GPU backend, else cpu.  *skipped and *why (may be NULL) get
 * the last GPU backend passed over and why. */
const ib_backend_ops *backend_auto(const ib_backend_ops **skipped, const char **why);
/* The backend that runs on the host (cpu), which is always usable. */
const ib_backend_ops *backend_host(void);
/* backend_find + unavailable_reason + create, with the error naming the backend. */
int backend_create(const char *name, const ib_train_config *cfg, ib_backend **out, ib_error *err);
/* What this build's GPU backends are (`instbench --version`), one line each into out: built with
 * which CUDA and NCCL, and whether the module is beside the binary.  probe: also load the module
 * and ask the driver (versions, GPUs, or why none is usable). */
void backend_describe_gpu(int probe, char *out, size_t n);
/* ops->attention_library(cfg, out), or -1 where the backend has none. */
int backend_attention_library(const ib_backend_ops *ops, const ib_train_config *cfg, ib_attention_library *out);
/* ops->attention_impl(cfg), or "unfused" where the backend has none. */
const char *backend_attention(const ib_backend_ops *ops, const ib_train_config *cfg);
/* 1 when OPS averages across ranks itself and can here; *why (may be NULL) gets why not. */
int backend_dp_usable(const ib_backend_ops *ops, const char **why);

#endif
