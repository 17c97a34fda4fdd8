/* cuda: the CUDA backend as the core sees it.  The backend itself (src/cuda/, with kernels/) is a
 * separate shared module, libinstbench-cuda.so, loaded with dlopen only when something needs it
 * (src/backend.c), so the instbench executable links no CUDA library and runs where none is
 * installed.  The module exports one symbol, instbench_cuda_module(), which returns the const
 * table below; the core calls the backend only through it (cuda_module()).  The plain structs here
 * are shared by both sides: any change to them, to the table, or to backend.h / util.h structs the
 * table passes (ib_backend, ib_train_config, ib_error, ib_comm) bumps IB_CUDA_MODULE_ABI. */
#ifndef INSTBENCH_CUDA_H
#define INSTBENCH_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "instbench/backend.h"
#include "instbench/comm.h"
#include "instbench/util.h"

typedef struct cuda_device_info {
    char name[256];
    uint64_t memory_bytes, free_bytes;
    int cc_major, cc_minor;            /* compute capability */
    int sm_count;
} cuda_device_info;

typedef struct cuda_versions {
    char driver[32];    /* CUDA version the driver supports, "12.4"; "" when unknown */
    char runtime[32];   /* CUDA runtime linked in */
    char nccl[32];      /* "2.21.5"; "" without NCCL */
} cuda_versions;

#define CUDA_NCCL_ID_BYTES 128   /* NCCL_UNIQUE_ID_BYTES */
#define CUDA_DDP_BUCKET_BYTES ((size_t)25 << 20)   /* DDP's default bucket_cap_mb */

/* ---- data parallelism for bench/runner: comms + buckets for this process's cuda backends ---- */
typedef struct cuda_dp_config {
    int nlocal;              /* ranks (GPUs) in this process */
    int world_size;          /* all ranks of the job */
    int first_rank;          /* global rank of this process's first rank (0: it serves the NCCL id) */
    const char *master_addr; /* where global rank 0's process listens (multi-process only) */
    int port;                /* its rendezvous port */
    double timeout_s;        /* for the whole rendezvous */
    size_t bucket_bytes;     /* 0: CUDA_DDP_BUCKET_BYTES */
} cuda_dp_config;
typedef struct cuda_dp cuda_dp;

/* ---- the module's table ---- */
#define IB_CUDA_MODULE_ABI 1
#define IB_CUDA_MODULE_SYMBOL "instbench_cuda_module"
#define IB_CUDA_MODULE_FILE "libinstbench-cuda.so"

typedef struct ib_cuda_module {
    int abi_version;            /* IB_CUDA_MODULE_ABI the module was built with */
    /* sizes of the structs passed across, as the module was compiled (a second ABI guard) */
    size_t sizeof_backend, sizeof_train_config, sizeof_error, sizeof_comm;
    int cudart_version;         /* CUDART_VERSION the module was built against: 13000 */
    /* The module's copy of the core's log level (it links its own copy of src/util): the loader
     * writes the executable's ib_log_level here so -v reaches the module's messages too. */
    int *log_level;

    /* 1 when at least one GPU is usable; 0 with the reason in why (no driver, no GPU, driver
     * older than the runtime the module was built for). */
    int (*probe)(char *why, size_t why_size);
    int (*device_count)(void);   /* 0 when there is no driver or no GPU */
    int (*device_info)(int device, cuda_device_info *out, ib_error *err);
    void (*versions)(cuda_versions *out);   /* never fails: unknown facts stay "" */

    size_t (*memory_estimate)(const ib_train_config *cfg);   /* IB_MEMORY_REFUSED when invalid */
    int (*backend_create)(const ib_train_config *cfg, ib_backend **out, ib_error *err);

    /* Data parallelism over this process's cuda backends (NCCL comms + DDP buckets).  nccl_available
     * is 0 when the module was built without NCCL; dp_create then fails with a clear message. */
    int (*nccl_available)(void);
    /* backends[i] ("cuda", created already) is local rank i. */
    int (*dp_create)(const cuda_dp_config *c, ib_backend **backends, cuda_dp **out, ib_error *err);
    /* Local rank i's training step up to averaged gradients: forward_backward with the bucket hook,
     * then the rest of the allreduces.  *compute_end: when the compute stream finished (the time
     * after it until return is the exposed communication). */
    int (*dp_step)(cuda_dp *dp, int i, ib_backend *b, float *loss, double *compute_end, ib_error *err);
    /* Every rank calls it: *value becomes global rank 0's *value (a step-boundary decision). */
    int (*dp_agree)(cuda_dp *dp, int i, int *value, ib_error *err);
    ib_comm *(*dp_comm)(cuda_dp *dp, int i);
    void (*dp_destroy)(cuda_dp *dp);   /* NULL-safe */
} ib_cuda_module;

/* The module's only exported symbol: its table, or NULL when abi_version is not the one it was
 * built for. */
typedef const ib_cuda_module *(*ib_cuda_module_fn)(int abi_version);

/* The core's access (src/backend.c): loads the module on first call (thread-safe) from
 * $INSTBENCH_CUDA_MODULE if set, else IB_CUDA_MODULE_FILE in the executable's directory.  NULL
 * when it cannot be loaded; *why (if non-NULL) then says what is missing (dlerror's text: the
 * module file, or a CUDA library it needs) and stays valid for the life of the process. */
const ib_cuda_module *cuda_module(const char **why);
/* cuda_module() and probe() together: the table when the module loads and a GPU is usable. */
const ib_cuda_module *cuda_module_usable(const char **why);

#endif
