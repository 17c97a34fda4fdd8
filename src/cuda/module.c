/* cuda/module: the CUDA module's entry point (libinstbench-cuda.so).  The core dlopens the module
 * and calls instbench_cuda_module(IB_CUDA_MODULE_ABI) for this table; nothing else is exported
 * (src/cuda/module.map).  The host-shim tests link this file into their programs directly, where
 * the core's loader finds the entry point already linked in (src/backend.c). */
#include "cuda/api.h"

#include <cuda_runtime_api.h>

static const ib_cuda_module table = {
    .abi_version = IB_CUDA_MODULE_ABI,
    .sizeof_backend = sizeof(ib_backend),
    .sizeof_backend_ops = sizeof(ib_backend_ops),
    .sizeof_train_config = sizeof(ib_train_config),
    .sizeof_error = sizeof(ib_error),
    .sizeof_comm = sizeof(ib_comm),
    .cudart_version = CUDART_VERSION,
    .log_level = &ib_log_level,
    .device_info = cuda_device_info_get,
    .versions = cuda_versions_get,
    .ops = &cuda_backend_ops,
};

__attribute__((visibility("default"))) const ib_cuda_module *instbench_cuda_module(int abi_version)
{
    return abi_version == IB_CUDA_MODULE_ABI ? &table : NULL;
}
