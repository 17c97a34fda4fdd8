/* cuda/cudnn_sdpa: attention through cuDNN's fused scaled-dot-product attention (forward and
 * backward), the kernels PyTorch's SDPA runs on sm_90 (issue 30).  Built with NVIDIA's
 * cudnn-frontend (header-only C++) in its dynamic-loading mode: the module links no cuDNN, and
 * cudnn_sdpa_load() finds libcudnn.so.9 at run time (the newest of the machine's own, a CUDA
 * toolkit's and a Python install's site-packages/nvidia/cudnn/lib).
 *
 * Layouts, all bf16 except the statistics (B batch, T tokens, H heads, hd head dim):
 *   qkv   [B,T,3,H,hd]  the qkv Linear's output as it lies: q, k and v are read through strides
 *   o     [B,T,H,hd]    = softmax(q k^T * scale) v, i.e. att [B,T,D] with its heads merged
 *   stats [B,H,T] fp32  per row max + log(sum exp), saved by the forward for the backward
 *   dqkv  [B,T,3,H,hd]  dq, dk, dv written back into the qkv layout (the qkv Linear's dy)
 * Graphs are built once per shape and device (a process-wide cache) in the eager first step and
 * replayed inside the step's CUDA graph; execution only enqueues on the given stream.
 *
 * The functions are declared weak in the callers that may be linked without this translation unit
 * (a build with no cudnn-frontend headers, and the host test programs): there they are NULL and
 * attention runs on the built-in path, saying why. */
#ifndef INSTBENCH_CUDA_CUDNN_SDPA_H
#define INSTBENCH_CUDA_CUDNN_SDPA_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Weak for the callers (see above); the definitions in cudnn_sdpa.cpp are strong. */
#if defined(__GNUC__) && !defined(INSTBENCH_CUDNN_SDPA_IMPL)
#define CUDNN_SDPA_FN __attribute__((weak))
#else
#define CUDNN_SDPA_FN
#endif

typedef struct cudnn_sdpa_lib {
    int version;    /* cudnnGetVersion(): 91501 for 9.15.1; 0 when not loaded */
    char path[512]; /* the file the loader mapped */
    int candidates; /* cuDNN 9 libraries found (the one loaded among them) */
} cudnn_sdpa_lib;

/* Loads cuDNN once per process: INSTBENCH_CUDNN_LIBRARY names a file; else every libcudnn.so.9
 * found is a candidate (the loader's own pick through LD_LIBRARY_PATH and its cache, $CUDA_HOME/lib64
 * and lib, /usr/local/cuda/lib64, /usr/local/cuda-* /lib64 and lib, the distribution's library
 * folders, the folder of the libcudart this module runs on, the site-packages of the usual Python
 * installs), each opened only long enough to ask cudnnGetVersion(), and the newest cuDNN 9 is the
 * one kept: the first found may be an old toolkit's that shadows a newer one.
 * INSTBENCH_CUDNN_SEARCH_ROOT (a test hook, as the sweep's INSTBENCH_USERDATA_ROOT) is a fake `/`
 * under which the fixed folders are looked for; the loader's own pick is then left out.
 * 0 with *lib filled, or -1 with the reason in why. */
CUDNN_SDPA_FN int cudnn_sdpa_load(cudnn_sdpa_lib *lib, char *why, size_t why_len);

typedef struct cudnn_sdpa cudnn_sdpa;

/* The forward and backward graphs for one shape on the current device, built (validate,
 * check_support, plans) or found in the cache (keyed by the shape and DETERMINISTIC).
 * DETERMINISTIC 1: the backward that gives the same gradients bit for bit, run after run (cuDNN
 * lowers it to the dP-workspace form, whose engines not every GPU and release has); 0: the
 * fp32-dQ-accumulator form (atomics; what PyTorch runs).  NULL with the reason in why when cuDNN
 * cannot run this shape so. */
CUDNN_SDPA_FN cudnn_sdpa *cudnn_sdpa_get(int B, int T, int H, int hd, float scale, int deterministic, char *why,
                                         size_t why_len);
/* Workspace bytes the larger of the two graphs needs (one buffer serves both), as the built graphs
 * report it (the plans' own and the frontend's dQ accumulator). */
CUDNN_SDPA_FN size_t cudnn_sdpa_workspace(const cudnn_sdpa *a);
CUDNN_SDPA_FN int cudnn_sdpa_forward(const cudnn_sdpa *a, const void *qkv, void *o, float *stats, void *workspace,
                                     cudaStream_t s, char *why, size_t why_len);
CUDNN_SDPA_FN int cudnn_sdpa_backward(const cudnn_sdpa *a, const void *qkv, const void *o, const void *dO,
                                      const float *stats, void *dqkv, void *workspace, cudaStream_t s, char *why,
                                      size_t why_len);

#ifdef __cplusplus
}
#endif

#endif
