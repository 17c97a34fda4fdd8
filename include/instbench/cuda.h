/* cuda: the CUDA backend as the core sees it.  The backend itself (src/cuda/, with kernels/) is a
 * separate shared module, libinstbench-cuda.so, loaded with dlopen only when something needs it
 * (src/backend.c), so the instbench executable links no CUDA library and runs where none is
 * installed.  The module exports one symbol, instbench_cuda_module(), which returns the const
 * table below; the core reaches the backend only through it (the registry's loader entry in
 * src/backend.c).  The plain structs here are shared by both sides: any change to them, to the
 * table, or to the backend.h / util.h structs it passes (ib_backend, ib_backend_ops, ib_dp_config,
 * ib_train_config, ib_error, ib_comm) bumps IB_CUDA_MODULE_ABI. */
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
    int cc_major, cc_minor; /* compute capability */
    int sm_count;
} cuda_device_info;

typedef struct cuda_versions {
    char driver[32];  /* CUDA version the driver supports, "12.4"; "" when unknown */
    char runtime[32]; /* CUDA runtime linked in */
    char nccl[32];    /* "2.21.5"; "" without NCCL */
} cuda_versions;

#define CUDA_NCCL_ID_BYTES 128                   /* NCCL_UNIQUE_ID_BYTES */
#define CUDA_DDP_BUCKET_BYTES ((size_t)25 << 20) /* DDP's default bucket_cap_mb */

/* ---- the module's table ---- */
#define IB_CUDA_MODULE_ABI 12
#define IB_CUDA_MODULE_SYMBOL "instbench_cuda_module"
#define IB_CUDA_MODULE_FILE "libinstbench-cuda.so"

typedef struct ib_cuda_module {
    int abi_version; /* IB_CUDA_MODULE_ABI the module was built with */
    /* sizes of the structs passed across, as the module was compiled (a second ABI guard) */
    size_t sizeof_backend, sizeof_backend_ops, sizeof_train_config, sizeof_error, sizeof_comm;
    int cudart_version; /* CUDART_VERSION the module was built against: 13000 */
    /* The module's copy of the core's log level (it links its own copy of src/util): the loader
     * writes the executable's ib_log_level here so -v reaches the module's messages too. */
    int *log_level;

    int (*device_info)(int device, cuda_device_info *out, ib_error *err);
    void (*versions)(cuda_versions *out); /* never fails: unknown facts stay "" */

    /* The CUDA backend's own table (instbench/backend.h): what the core's loader entry forwards to,
     * and what every backend it creates carries. */
    const ib_backend_ops *ops;
} ib_cuda_module;

/* The module's only exported symbol: its table, or NULL when abi_version is not the one it was
 * built for. */
typedef const ib_cuda_module *(*ib_cuda_module_fn)(int abi_version);

#endif
