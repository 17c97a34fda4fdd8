/* cuda/attention_path: which attention the CUDA step runs, decided once per process and shape.
 *   cudnn    cuDNN's fused SDPA (cuda/cudnn_sdpa.h), bf16: the default wherever it passes every gate
 *   unfused  cuBLASLt batched GEMMs around a softmax kernel: fp32 always (exact for verify), and
 *            bf16 wherever cuDNN cannot run
 * INSTBENCH_CUDA_ATTENTION=cudnn|unfused asks for one; a path asked for that cannot run is an
 * error, not a silent fallback (a benchmark must measure what it was told to).  The built-in
 * flash-attention kernels (`fused`) are gone (issue 37): slower than both at every shape measured
 * on the H100 (docs/gpu-runs/2026-11-27-h100/attention_paths.tsv); asking for them is an error. */
#ifndef INSTBENCH_CUDA_ATTENTION_PATH_H
#define INSTBENCH_CUDA_ATTENTION_PATH_H

#include "instbench/backend.h"

enum { CUDA_ATT_UNFUSED = 0, CUDA_ATT_CUDNN = 2 };

typedef struct cuda_attention_choice {
    int path;                       /* CUDA_ATT_* */
    int cudnn_version;              /* cudnnGetVersion() of the library loaded; 0: none loaded */
    char cudnn_library[512];        /* its file */
    char why[640];                  /* why not cuDNN ("" when cuDNN runs) */
    int cudnn_deterministic;        /* cuDNN runs: 1 its backward is the deterministic one, 0 the other */
    char nondeterministic_why[320]; /* ... 0: why the deterministic one could not run ("" when asked) */
    size_t cudnn_workspace;         /* cuDNN runs: the workspace its built graphs need (the memory plan's) */
    int refused;                    /* 1: INSTBENCH_CUDA_ATTENTION asked for a path that cannot run (why says why) */
} cuda_attention_choice;

/* The decision for cfg on cfg->device, made before any memory is planned (the plan, the fit check
 * and --batch-size auto all plan for the path this answers): loads cuDNN, applies the gates
 * (cuDNN >= 9.15.1 where T is not a multiple of 128: older versions' backward gives wrong
 * gradients there, and PyTorch gates the same; a CUDA runtime >= 12.9 unless cudnn is asked for
 * by name, as PyTorch; the frontend's check_support), builds the graphs for the real shape
 * (deterministic backward first, else the non-deterministic one), and runs the start-up self-check
 * (one forward and backward at the real T, H, hd and a batch of at most 2 on random data, a few
 * heads compared with a float64 reference on the host, every output element written, a
 * deterministic backward bitwise repeatable; once per T, H, hd and mode).
 * Cached per (device, B, T, H, hd, precision, INSTBENCH_CUDA_ATTENTION, INSTBENCH_CUDNN_NONDETERMINISTIC):
 * every later call for the shape answers at once. */
void cuda_attention_choose(const ib_train_config *cfg, cuda_attention_choice *out);

/* The path INSTBENCH_CUDA_ATTENTION asks for: a CUDA_ATT_*, -1 when unset or empty, -2 when it
 * names none (*text, when TEXT is not NULL, gets the variable's value). */
int cuda_attention_asked(const char **text);
/* The name results carry (hardware.attention). */
const char *cuda_attention_name(int path);

#endif
